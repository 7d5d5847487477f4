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

namespace scalebench::contrast {

constexpr double kFastestRowS = 0.5;
// Seconds a single-core repeat should take on a node of `cores` cores: kFastestRowS per core (the
// multi-thread row's ideal speed-up), 6 s at least, 15 s at most.
double single_core_repeat_s(int cores);
// The probes' sizes, the fallback and the scaling are the workload's (workload.hpp, ContrastSizing).

}  // namespace scalebench::contrast
