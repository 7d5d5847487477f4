#pragma once
// runs.jsonl: one JSON object a line, only ever appended to. An append is all or nothing (a
// failed or short write is cut back off), so a full disk or a crash never glues two runs together;
// the reader keeps every complete line and reports the ones it cannot use.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench::results {

// Appends `line` and a newline in one write under an exclusive lock, flushed to disk. A last line
// left unterminated by an earlier crash is first closed with a newline (so it stays a line of its
// own). On any failure the file is cut back to its earlier length and ResourceError says why.
void append_jsonl(const std::string& path, const nlohmann::json& line);

struct JsonlContents {
  std::vector<nlohmann::json> lines;  // every line that is used (below)
  std::vector<int> unusable;          // 1-based numbers of the lines that are not (cut, garbled, wrong)
  std::vector<std::string> why;       // for each of those, what is wrong with it
};
// Deeper than this, JSON text is not a record or a line a driver wrote (a record nests some 6 levels).
inline constexpr int kMaxJsonDepth = 64;

// The JSON rule of every record and runs.jsonl line read back: "" when `text` is, on its own, valid
// JSON (UTF-8, no NaN or Infinity, no number beyond a double's range, no key twice in one object,
// no byte-order mark, at most kMaxJsonDepth levels deep, nothing after the value) and `value` is it;
// else what is wrong with it ("holds the key \"n\" twice in one object").
std::string json_text_problem(const std::string& text, nlohmann::json& value);

// The one rule for a runs.jsonl line, shared with tools/report.py (docs/output.md, "Reading
// runs.jsonl"): a line is used when it is, on its own, valid JSON (UTF-8, no NaN or Infinity, no
// number beyond a double's range, no key twice in one object, no byte-order mark, at most 64
// levels deep) and an object whose "key" and "status" are strings, whose "reason", "record_path",
// "study" are strings, "launch_failed" a boolean, "command" a string or a list of strings, and
// "record" an object (its fields as record_check.hpp checks them), each when present and not null;
// a line whose status is "ok" has a record with its phases, and that record's "ok" is not false.
// "" when `text` is used (and `line` is it, "record" null and "launch_failed" false when absent),
// else what is wrong with it ("status must be a string (got a number)").
std::string runs_line_problem(const std::string& text, nlohmann::json& line);
// Reads `path` (missing: empty) as input_file.hpp reads any file (a folder, FIFO or device is
// refused with ResourceError naming `origin`, e.g. "runs.jsonl of results/x"). Every line
// runs_line_problem refuses (a torn last line among them) is counted in `unusable`, with why; a
// line of nothing but spaces, tabs or carriage returns is skipped and not counted.
JsonlContents read_jsonl(const std::string& path, const std::string& origin);

}  // namespace scalebench::results
