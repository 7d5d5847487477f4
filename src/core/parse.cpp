#include "scalebench/parse.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace scalebench {

std::int64_t parse_positive_count(const std::string& option, const std::string& text) {
  std::string s;
  for (char ch : text) {
    if (ch != '_') s += ch;
  }
  const auto bad = [&](const char* why) {
    return UsageError(fmt::format("{} must be a whole number > 0 (got '{}'{}); e.g. {} 4096", option, text, why, option));
  };
  if (s.empty()) throw bad("");
  char* end = nullptr;
  errno = 0;
  const bool plain = s.find_first_not_of("0123456789+-") == std::string::npos;
  if (plain) {
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (*end != '\0') throw bad("");
    if (errno == ERANGE) throw bad(": too large");
    if (v <= 0) throw bad("");
    return v;
  }
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) throw bad("");
  if (v != std::floor(v)) throw bad(": not whole");
  if (v <= 0) throw bad("");
  if (v >= 9.2e18) throw bad(": too large");
  return static_cast<std::int64_t>(v);
}

double parse_real(const std::string& option, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) {
    throw UsageError(fmt::format("{} must be a number (got '{}')", option, text));
  }
  return v;
}

}  // namespace scalebench
