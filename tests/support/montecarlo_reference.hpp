#pragma once
// The single-process answer of a Monte Carlo configuration: every chunk computed here with the
// CPU backend on `threads` threads and folded over the chunk tree. The reference that rank-count,
// thread-count and GPU tests compare with, bit for bit.
#include "scalebench/cpu/montecarlo.hpp"

inline scalebench::McOutcome cpu_reference(scalebench::MonteCarloConfig cfg, int threads) {
  using namespace scalebench;
  cfg.backend = McBackendKind::cpu;
  cfg.share_gpu = false;  // a GPU-only option: the reference runs on the CPU
  resolve_defaults(cfg);
  validate(cfg);
  auto kernel = make_cpu_montecarlo(threads);
  PhaseRecorder setup, rec;
  kernel->prepare(cfg, {0, chunk_count(cfg)}, setup);
  const McPartial part = kernel->run(rec);
  if (cfg.problem == McProblem::pi) return estimate_pi(part.hits, cfg.samples);
  ChunkTree tree;
  for (const auto& n : part.nodes) tree.push(n);
  return estimate_option(cfg, tree.total(), cfg.samples);
}
