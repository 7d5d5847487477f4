#include "report/figure_text.hpp"

#include <cmath>

#include <fmt/format.h>

namespace scalebench::report {
namespace {

// Beyond this magnitude a fixed-point figure would be a long row of digits.
constexpr double kFixedLimit = 1e6;

}  // namespace

std::string fixed_text(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  const double a = std::fabs(v);
  if (v == 0 || (a >= std::pow(10.0, -decimals) && a < kFixedLimit)) return fmt::format("{:.{}f}", v, decimals);
  return fmt::format("{:.4g}", v);
}

std::string signed_percent(double v) {
  if (!std::isfinite(v)) return "-";
  const double pct = 100 * v;
  if (std::fabs(pct) < kFixedLimit) return fmt::format("{:+.0f}%", pct);
  return fmt::format("{:+.4g}%", pct);
}

std::optional<double> finite_ratio(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b) || !(b > 0)) return std::nullopt;
  const double q = a / b;
  return std::isfinite(q) ? std::optional<double>(q) : std::nullopt;
}

}  // namespace scalebench::report
