#pragma once
// Reading JSON that a file holds (docs/output.md, "Input files"): a profile, a runs.jsonl line, a
// run record read back. Every field scalebench takes from such a file goes through JsonField, which
// checks the field's kind and range before using it. A wrong field is one JsonFieldError (a
// UsageError, exit 2) naming the file, the field's path ("mpi.intra_node.bandwidth_GBps",
// "runs[2].phases") and what was expected, never nlohmann's type_error (which would end the
// program as an internal error). A caller that treats a bad file as none (a record read back, a
// stale profile) catches JsonFieldError; the message is the same.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/base/error.hpp"

namespace scalebench {

class JsonFieldError : public UsageError {
 public:
  JsonFieldError(const std::string& message, std::string field) : UsageError(message), field_(std::move(field)) {}
  // What is wrong, without the file and the advice: "gpu.name must be a string (got a number)".
  const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

// Where the values came from, for messages: `file` names it ("profile /x/p.json", "runs.jsonl of
// results/s line 4"); `advice` is what to do about a bad one ("run `scalebench calibrate` again";
// empty: nothing); no object or list may hold more than `max_entries` entries.
struct JsonOrigin {
  std::string file;
  std::string advice;
  std::size_t max_entries = std::numeric_limits<std::size_t>::max();
};

// The JSON kind of `v` as a message says it: "a number", "a string", "a list", "an object",
// "true or false", "null".
std::string json_kind(const nlohmann::json& v);

// The deepest nesting of objects and lists in JSON text (strings skipped): a hostile file is
// refused by it before a parser or a value's destructor recurses through it.
int json_text_depth(std::string_view text);

// `j` as JSON text (indent as nlohmann's dump: -1 one line) for what scalebench writes: a string
// that is not UTF-8 (a path, a host name or an environment variable as the system gave it) is
// written with U+FFFD where its bad bytes were instead of failing the write.
std::string json_text(const nlohmann::json& j, int indent = -1);

// One object (or any value, for raw()) of a file, at a path inside it. Holds a reference to the
// value: the document must outlive every JsonField made from it.
class JsonField {
 public:
  JsonField(const nlohmann::json& value, JsonOrigin origin);
  JsonField(const nlohmann::json& value, std::shared_ptr<const JsonOrigin> origin, std::string path);

  // JsonFieldError "<file>: <path>.<key> <what>[; <advice>]" (`key` empty: this value itself).
  [[noreturn]] void fail(std::string_view key, std::string_view what) const;
  std::string path_of(std::string_view key) const;
  // This value's path, or "the top level".
  std::string where() const;
  const nlohmann::json& raw() const { return j_; }
  const JsonOrigin& origin() const { return *origin_; }

  // Whether this is an object holding `key` with a value other than null.
  bool has(std::string_view key) const;
  // The value under `key`: this must be an object, and `key` in it (else "is missing").
  const nlohmann::json& at(std::string_view key) const;
  // An object under `key`; a list under `key`, each entry a field named "key[i]".
  JsonField sub(std::string_view key) const;
  std::vector<JsonField> list(std::string_view key) const;
  // The keys of this object, in order.
  std::vector<std::string> keys() const;

  // A finite number; one in [lo, hi] (`what` says what it is: "watts", "a time in seconds").
  double number(std::string_view key) const;
  double number_in(std::string_view key, double lo, double hi, std::string_view what) const;
  // A whole number in [lo, hi].
  std::int64_t whole(std::string_view key, std::int64_t lo, std::int64_t hi) const;
  std::string text(std::string_view key) const;
  bool flag(std::string_view key) const;
  // A list of strings.
  std::vector<std::string> texts(std::string_view key) const;

  // The same, `fallback` when `key` is absent or null (a present value is checked as above).
  double number_or(std::string_view key, double fallback) const;
  double number_in_or(std::string_view key, double lo, double hi, std::string_view what, double fallback) const;
  std::int64_t whole_or(std::string_view key, std::int64_t lo, std::int64_t hi, std::int64_t fallback) const;
  std::string text_or(std::string_view key, std::string fallback) const;
  bool flag_or(std::string_view key, bool fallback) const;

 private:
  void check_entries(std::string_view key, const nlohmann::json& v) const;
  const nlohmann::json& j_;
  std::shared_ptr<const JsonOrigin> origin_;
  std::string path_;
};

}  // namespace scalebench
