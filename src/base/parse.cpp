#include "scalebench/base/parse.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"

namespace scalebench {
namespace {

bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

// The text with its digit separators removed, or "" when it is not written as a number is: a
// separator only between two digits (`1_000_000`; not `_64`, `64_`, `1__0` or `1_e9`) and no
// leading plus sign (`+64`). "" is refused by every caller.
std::string without_underscores(const std::string& text) {
  if (!text.empty() && text[0] == '+') return {};
  std::string s;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch != '_') {
      s += ch;
    } else if (i == 0 || i + 1 == text.size() || !is_digit(text[i - 1]) || !is_digit(text[i + 1])) {
      return {};
    }
  }
  return s;
}

bool only_chars(const std::string& s, const char* allowed) { return s.find_first_not_of(allowed) == std::string::npos; }

}  // namespace

std::int64_t parse_positive_count(const std::string& option, const std::string& text) {
  const std::string s = without_underscores(text);
  const auto bad = [&](const char* why) {
    return UsageError(
        fmt::format("{} must be a whole number > 0 (got '{}'{}); e.g. {} 4096", option, text, why, option));
  };
  // Decimal only: no hex, no octal, no leading blanks, no "inf"/"nan".
  if (s.empty() || !only_chars(s, "0123456789+-.eE")) throw bad("");
  char* end = nullptr;
  errno = 0;
  if (only_chars(s, "0123456789+-")) {
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (*end != '\0') throw bad("");
    if (errno == ERANGE) throw bad(": too large, the limit is 9223372036854775807");
    if (v <= 0) throw bad("");
    return v;
  }
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) throw bad("");
  if (v != std::floor(v)) throw bad(": not whole");
  if (v <= 0) throw bad("");
  if (v >= 0x1p63) throw bad(": too large, the limit is 9223372036854775807");
  return static_cast<std::int64_t>(v);
}

std::int64_t parse_integer(const std::string& option, const std::string& text, std::int64_t lo, std::int64_t hi) {
  const std::string s = without_underscores(text);
  const auto bad = [&] {
    return UsageError(fmt::format("{} must be a whole number in [{}, {}] (got '{}')", option, lo, hi, text));
  };
  if (s.empty() || !only_chars(s, "0123456789+-")) throw bad();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE || v < lo || v > hi) throw bad();
  return v;
}

std::uint64_t parse_unsigned(const std::string& option, const std::string& text) {
  const std::string s = without_underscores(text);
  if (s.empty() || !only_chars(s, "0123456789")) {
    throw UsageError(fmt::format("{} must be a whole number in [0, {}] (got '{}')", option,
                                 std::numeric_limits<std::uint64_t>::max(), text));
  }
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) {
    throw UsageError(fmt::format("{} must be a whole number in [0, {}] (got '{}': too large)", option,
                                 std::numeric_limits<std::uint64_t>::max(), text));
  }
  return v;
}

double parse_real(const std::string& option, const std::string& text) {
  const auto bad = [&] {
    return UsageError(fmt::format("{} must be a finite decimal number (got '{}')", option, text));
  };
  // Decimal only: strtod would also take hex, leading blanks, "inf" and "nan"; no leading plus.
  if (text.empty() || text[0] == '+' || !only_chars(text, "0123456789+-.eE")) throw bad();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) throw bad();
  return v;
}

}  // namespace scalebench
