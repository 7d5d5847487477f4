#include "scalebench/base/json_field.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace scalebench {

using nlohmann::json;

std::string json_kind(const json& v) {
  switch (v.type()) {
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "a number";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "a list";
    case json::value_t::object: return "an object";
    case json::value_t::boolean: return "true or false";
    case json::value_t::null: return "null";
    default: return "not a JSON value";
  }
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

int json_text_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

JsonField::JsonField(const json& value, JsonOrigin origin)
    : j_(value), origin_(std::make_shared<const JsonOrigin>(std::move(origin))) {}

JsonField::JsonField(const json& value, std::shared_ptr<const JsonOrigin> origin, std::string path)
    : j_(value), origin_(std::move(origin)), path_(std::move(path)) {}

void JsonField::fail(std::string_view key, std::string_view what) const {
  const std::string advice = origin_->advice.empty() ? std::string() : "; " + origin_->advice;
  std::string field = fmt::format("{} {}", key.empty() ? where() : path_of(key), what);
  throw JsonFieldError(fmt::format("{}: {}{}", origin_->file, field, advice), field);
}

std::string JsonField::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

std::string JsonField::where() const { return path_.empty() ? "the top level" : path_; }

bool JsonField::has(std::string_view key) const {
  if (!j_.is_object()) return false;
  const auto it = j_.find(key);
  return it != j_.end() && !it->is_null();
}

const json& JsonField::at(std::string_view key) const {
  if (!j_.is_object()) fail("", fmt::format("must be an object (got {})", json_kind(j_)));
  const auto it = j_.find(key);
  if (it == j_.end()) fail(key, "is missing");
  return *it;
}

void JsonField::check_entries(std::string_view key, const json& v) const {
  if (v.size() > origin_->max_entries) {
    fail(key, fmt::format("holds {} entries; at most {} are read", v.size(), origin_->max_entries));
  }
}

JsonField JsonField::sub(std::string_view key) const {
  const json& v = at(key);
  if (!v.is_object()) fail(key, fmt::format("must be an object (got {})", json_kind(v)));
  check_entries(key, v);
  return {v, origin_, path_of(key)};
}

std::vector<JsonField> JsonField::list(std::string_view key) const {
  const json& v = at(key);
  if (!v.is_array()) fail(key, fmt::format("must be a list (got {})", json_kind(v)));
  check_entries(key, v);
  std::vector<JsonField> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out.emplace_back(v[i], origin_, fmt::format("{}[{}]", path_of(key), i));
  return out;
}

std::vector<std::string> JsonField::keys() const {
  if (!j_.is_object()) fail("", fmt::format("must be an object (got {})", json_kind(j_)));
  std::vector<std::string> out;
  for (const auto& [k, v] : j_.items()) out.push_back(k);
  return out;
}

double JsonField::number(std::string_view key) const {
  const json& v = at(key);
  if (!v.is_number()) fail(key, fmt::format("must be a number (got {})", json_kind(v)));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(key, "must be a finite number");
  return d;
}

double JsonField::number_in(std::string_view key, double lo, double hi, std::string_view what) const {
  const double d = number(key);
  if (d < lo || d > hi) fail(key, fmt::format("must be {} in [{:g}, {:g}] (got {})", what, lo, hi, at(key).dump()));
  return d;
}

std::int64_t JsonField::whole(std::string_view key, std::int64_t lo, std::int64_t hi) const {
  const double d = number(key);
  const json& v = at(key);
  if (!v.is_number_integer() && d != std::floor(d)) fail(key, fmt::format("must be a whole number (got {})", v.dump()));
  // Compared as integers where they are (a double rounds 2^63 - 1 up to 2^63).
  const auto u = v.is_number_unsigned() ? v.get<std::uint64_t>() : 0;
  const bool inside = v.is_number_unsigned() ? hi >= 0 && u <= static_cast<std::uint64_t>(hi) &&
                                                   (lo <= 0 || u >= static_cast<std::uint64_t>(lo))
                      : v.is_number_integer()
                          ? v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi
                          : d >= static_cast<double>(lo) && d <= static_cast<double>(hi) && std::fabs(d) < 9.2e18;
  if (!inside) fail(key, fmt::format("must be a whole number in [{}, {}] (got {})", lo, hi, v.dump()));
  return v.is_number_integer() ? v.get<std::int64_t>() : static_cast<std::int64_t>(d);
}

std::string JsonField::text(std::string_view key) const {
  const json& v = at(key);
  if (!v.is_string()) fail(key, fmt::format("must be a string (got {})", json_kind(v)));
  return v.get<std::string>();
}

bool JsonField::flag(std::string_view key) const {
  const json& v = at(key);
  if (!v.is_boolean()) fail(key, fmt::format("must be true or false (got {})", json_kind(v)));
  return v.get<bool>();
}

std::vector<std::string> JsonField::texts(std::string_view key) const {
  std::vector<std::string> out;
  for (const JsonField& e : list(key)) {
    if (!e.raw().is_string()) e.fail("", fmt::format("must be a string (got {})", json_kind(e.raw())));
    out.push_back(e.raw().get<std::string>());
  }
  return out;
}

double JsonField::number_or(std::string_view key, double fallback) const { return has(key) ? number(key) : fallback; }

double JsonField::number_in_or(std::string_view key, double lo, double hi, std::string_view what,
                               double fallback) const {
  return has(key) ? number_in(key, lo, hi, what) : fallback;
}

std::int64_t JsonField::whole_or(std::string_view key, std::int64_t lo, std::int64_t hi, std::int64_t fallback) const {
  return has(key) ? whole(key, lo, hi) : fallback;
}

std::string JsonField::text_or(std::string_view key, std::string fallback) const {
  if (has(key)) return text(key);
  return fallback;
}

bool JsonField::flag_or(std::string_view key, bool fallback) const { return has(key) ? flag(key) : fallback; }

}  // namespace scalebench
