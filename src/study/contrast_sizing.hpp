#pragma once
// The contrast's default sizes, scaled from a quick measurement of this machine: the CPU rows
// from a single-core run (so that single-core takes single_core_repeat_s(cores) a repeat: long
// enough that multi-thread on every core still takes about kFastestRowS, short enough that its
// step stays under ~30 s... a minute with 3 repeats and a warm-up), the GPU rows from a one-GPU
// run (so that the fastest GPU row still takes about kFastestRowS a repeat). A GPU probe at a
// small size is dominated by fixed costs (launches, transfers that grow as n^2), so when it lands
// far below its target it is run once more at the scaled size. Pure functions; contrast.cpp runs
// the probes.
#include <string>

namespace scalebench::study {

constexpr double kFastestRowS = 0.5;
// Seconds a single-core repeat should take on a node of `cores` cores: kFastestRowS per core (the
// multi-thread row's ideal speed-up), 6 s at least, 15 s at most.
double single_core_repeat_s(int cores);
// What the probes run: small enough to take a second or two anywhere.
constexpr double kProbeGemmN = 512;
constexpr double kProbeSamples = 1e7;
constexpr double kProbeGpuGemmN = 4096;
constexpr double kProbeGpuSamples = 1e9;
// When a probe cannot run (or for --dry-run): the sizes used before measuring.
inline const std::string kFallbackGemmN = "2048";
inline const std::string kFallbackSamples = "1e8";

// gemm n (a multiple of 256, 512..32768) taking about `seconds` a repeat when the probe of size
// `probe_n` took `probe_s` a repeat (time grows as n^3).
std::string scaled_gemm_n(double probe_n, double probe_s, double seconds);
// Monte Carlo samples ("25e8": two significant digits, 1e6..1e12) taking about `seconds` a repeat (time
// grows as the samples).
std::string scaled_samples(double probe_samples, double probe_s, double seconds);

}  // namespace scalebench::study
