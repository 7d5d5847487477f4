#pragma once
// Numbers as the drivers' tables print them (study, contrast, compare): every finite value legible
// in a few characters — never inf, nan or a number of 300 digits, whatever a record the record rule
// accepted holds — and every figure derived by division guarded.
#include <optional>
#include <string>

namespace scalebench::report {

// `v` with `decimals` digits after the point where that shows it (0, or 10^-decimals <= |v| < 1e6:
// "0.0123", "41.70"), else four significant digits ("3.2e+21", "4.941e-324"); "-" where `v` is not
// finite.
std::string fixed_text(double v, int decimals);

// `v` as a signed percentage of whole percents ("+8%", "-23%"; "+1.2e+07%" beyond a million),
// "-" where `v` is not finite.
std::string signed_percent(double v);

// a / b where both are finite, b > 0 and the quotient is finite; none otherwise (a figure the
// table shows as "-", never inf or nan).
std::optional<double> finite_ratio(double a, double b);

}  // namespace scalebench::report
