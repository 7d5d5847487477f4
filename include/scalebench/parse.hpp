#pragma once
// Parsing of command-line numbers with one-line errors that name the option.
#include <cstdint>
#include <string>

namespace scalebench {

// A whole number > 0: "4096", "1e9", "1_000_000". Throws UsageError naming `option` otherwise.
std::int64_t parse_positive_count(const std::string& option, const std::string& text);
// A finite real number. Throws UsageError naming `option` otherwise.
double parse_real(const std::string& option, const std::string& text);

}  // namespace scalebench
