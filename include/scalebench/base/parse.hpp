#pragma once
// Parsing of command-line numbers with one-line errors that name the option. Decimal only (no
// hex or octal, no blanks, no trailing characters); every option takes its numbers through these.
#include <cstdint>
#include <string>

namespace scalebench {

// A whole number > 0: "4096", "1e9", "1_000_000". Throws UsageError naming `option` otherwise.
std::int64_t parse_positive_count(const std::string& option, const std::string& text);
// A whole number in [lo, hi] ("-1", "8", "1_000"). Throws UsageError naming the range otherwise.
std::int64_t parse_integer(const std::string& option, const std::string& text, std::int64_t lo, std::int64_t hi);
// A whole number in [0, 2^64-1]; "-1" is an error, not 2^64-1. Throws UsageError otherwise.
std::uint64_t parse_unsigned(const std::string& option, const std::string& text);
// A finite real number. Throws UsageError naming `option` otherwise.
double parse_real(const std::string& option, const std::string& text);

}  // namespace scalebench
