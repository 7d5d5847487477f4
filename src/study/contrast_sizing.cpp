#include "study/contrast_sizing.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace scalebench::study {

double single_core_repeat_s(int cores) { return std::clamp(kFastestRowS * cores, 6.0, 15.0); }

std::string scaled_gemm_n(double probe_n, double probe_s, double seconds) {
  const double n = probe_s > 0 ? probe_n * std::cbrt(seconds / probe_s) : probe_n;
  const double rounded = std::floor(n / 256) * 256;
  return fmt::format("{:.0f}", std::clamp(rounded, 512.0, 32768.0));
}

std::string scaled_samples(double probe_samples, double probe_s, double seconds) {
  const double s = probe_s > 0 ? probe_samples * seconds / probe_s : probe_samples;
  const double clamped = std::clamp(s, 1e6, 1e12);
  int exponent = static_cast<int>(std::floor(std::log10(clamped))) - 1;
  auto mantissa = static_cast<long>(std::floor(clamped / std::pow(10.0, exponent)));
  if (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  return fmt::format("{}e{}", mantissa, exponent);
}

}  // namespace scalebench::study
