// Monte Carlo configuration: names, defaults, validation, threads per rank.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/problem/montecarlo.hpp"

namespace scalebench {

std::string to_string(McProblem p) {
  switch (p) {
    case McProblem::pi: return "pi";
    case McProblem::european: return "european";
    case McProblem::asian: return "asian";
  }
  return "?";
}
std::string to_string(McBackendKind b) {
  switch (b) {
    case McBackendKind::naive: return "naive";
    case McBackendKind::cpu: return "cpu";
    case McBackendKind::cuda: return "cuda";
    case McBackendKind::curand: return "curand";
  }
  return "?";
}
std::string to_string(OptionKind o) { return o == OptionKind::call ? "call" : "put"; }
std::string to_string(ControlVariate c) { return c == ControlVariate::none ? "none" : "geometric"; }
std::string to_string(McCurandGenerator g) { return g == McCurandGenerator::philox ? "philox" : "xorwow"; }
bool uses_gpu(McBackendKind b) { return b == McBackendKind::cuda || b == McBackendKind::curand; }

McProblem parse_mc_problem(const std::string& s) {
  if (s == "pi") return McProblem::pi;
  if (s == "european") return McProblem::european;
  if (s == "asian") return McProblem::asian;
  throw UsageError(fmt::format("unknown --problem '{}'; use pi, european or asian", s));
}
McBackendKind parse_mc_backend(const std::string& s) {
  if (s == "naive") return McBackendKind::naive;
  if (s == "cpu") return McBackendKind::cpu;
  if (s == "cuda") return McBackendKind::cuda;
  if (s == "curand") return McBackendKind::curand;
  throw UsageError(fmt::format("unknown --backend '{}'; use naive, cpu, cuda or curand", s));
}
OptionKind parse_option_kind(const std::string& s) {
  if (s == "call") return OptionKind::call;
  if (s == "put") return OptionKind::put;
  throw UsageError(fmt::format("unknown --option '{}'; use call or put", s));
}
ControlVariate parse_control_variate(const std::string& s) {
  if (s == "none") return ControlVariate::none;
  if (s == "geometric") return ControlVariate::geometric;
  throw UsageError(fmt::format("unknown --control-variate '{}'; use none or geometric", s));
}

McCurandGenerator parse_curand_generator(const std::string& s) {
  if (s == "philox") return McCurandGenerator::philox;
  if (s == "xorwow") return McCurandGenerator::xorwow;
  throw UsageError(fmt::format("unknown --curand-generator '{}'; use philox or xorwow", s));
}

std::int64_t default_samples(McProblem p) {
  switch (p) {
    case McProblem::pi: return 1'000'000'000;
    case McProblem::european: return 10'000'000;
    case McProblem::asian: return 100'000;
  }
  return 0;
}

std::int64_t default_chunk_size(McProblem p) {
  // Big enough that a chunk is worth a task (about a millisecond on one core), small enough that
  // a GPU gets thousands of blocks at the benchmark sizes (one block per chunk).
  switch (p) {
    case McProblem::pi: return std::int64_t{1} << 20;
    case McProblem::european: return std::int64_t{1} << 14;
    case McProblem::asian: return std::int64_t{1} << 8;
  }
  return 0;
}

void resolve_defaults(MonteCarloConfig& cfg) {
  if (cfg.samples == 0) cfg.samples = default_samples(cfg.problem);
  if (cfg.chunk_size == 0) cfg.chunk_size = default_chunk_size(cfg.problem);
}

namespace {
// The options only --backend curand reads, and what it cannot do.
void validate_curand(const MonteCarloConfig& cfg) {
  const bool curand = cfg.backend == McBackendKind::curand;
  if (cfg.batch < 0)
    throw UsageError(fmt::format("--batch must be >= 1 samples, or 0 for automatic (got {})", cfg.batch));
  if (cfg.batch != 0 && !curand) throw UsageError("--batch needs --backend curand");
  if (cfg.curand_generator != McCurandGenerator::philox && !curand) {
    throw UsageError("--curand-generator needs --backend curand");
  }
  // cuRAND's stream offset of sample i is 4·i at most (two draws of two offsets): it must fit.
  if (curand) {
    value_within("--samples", cfg.samples, kInt64Max / 4, "the most samples --backend curand's stream offsets hold",
                 "; use fewer samples");
  }
  if (curand && cfg.problem == McProblem::asian) {
    throw UsageError("--backend curand computes pi and european; use --backend cuda for asian");
  }
}
}  // namespace

void validate(const MonteCarloConfig& cfg) {
  if (cfg.samples < 2) {
    throw UsageError(
        fmt::format("--samples must be at least 2 (got {}): a standard error needs two samples", cfg.samples));
  }
  if (cfg.chunk_size < 4 || cfg.chunk_size % 4 != 0 || cfg.chunk_size > (std::int64_t{1} << 30)) {
    throw UsageError(fmt::format("--chunk-size must be a multiple of 4 in [4, 2^30] (got {})", cfg.chunk_size));
  }
  // Chunk counts round samples up to whole chunks: samples + chunk_size must fit in 64 bits.
  value_within("--samples", cfg.samples, kInt64Max - cfg.chunk_size,
               fmt::format("the largest count whole chunks of {} can cover", cfg.chunk_size));
  check_repeats(cfg.reps, cfg.warmup);
  if (cfg.threads < 0) throw UsageError(fmt::format("--threads must be >= 1 (got {})", cfg.threads));
  if (cfg.share_gpu && !uses_gpu(cfg.backend)) throw UsageError("--share-gpu needs --backend cuda or curand");
  validate_curand(cfg);
  if (cfg.problem == McProblem::pi) return;
  const auto& m = cfg.market;
  // Prices above 1e100 would overflow the sums of squared payoffs (the standard error).
  if (!(m.spot >= 0 && m.spot <= 1e100)) throw UsageError(fmt::format("--spot must be in [0, 1e100] (got {})", m.spot));
  if (!(m.strike >= 0 && m.strike <= 1e100)) {
    throw UsageError(fmt::format("--strike must be in [0, 1e100] (got {})", m.strike));
  }
  if (!(m.sigma > 0)) throw UsageError(fmt::format("--sigma must be > 0 (got {}); e.g. --sigma 0.2", m.sigma));
  if (!(m.maturity > 0))
    throw UsageError(fmt::format("--maturity must be > 0 years (got {}); e.g. --maturity 1", m.maturity));
  if (!std::isfinite(m.rate) || std::fabs(m.rate) > 10) {
    throw UsageError(fmt::format("--rate must be a yearly rate in [-10, 10] (got {}); e.g. --rate 0.05", m.rate));
  }
  if (m.sigma * std::sqrt(m.maturity) > 10) {
    throw UsageError(fmt::format("--sigma {} over --maturity {} gives a log-price spread above 10: payoffs overflow; "
                                 "use a smaller sigma or maturity",
                                 m.sigma, m.maturity));
  }
  if (cfg.problem == McProblem::asian) {
    if (cfg.steps < 1) throw UsageError(fmt::format("--steps must be >= 1 (got {})", cfg.steps));
    if (cfg.steps > (1 << 20)) throw UsageError(fmt::format("--steps must be <= 2^20 (got {})", cfg.steps));
  } else if (cfg.control_variate != ControlVariate::none) {
    throw UsageError("--control-variate applies to --problem asian only");
  }
}

std::string configuration_fields(const MonteCarloConfig& cfg) {
  const auto& m = cfg.market;
  return fmt::format(
      "problem={} backend={} samples={} chunk_size={} seed={} spot={} strike={} rate={} sigma={} "
      "maturity={} option={} steps={} control_variate={} reps={} warmup={} dry_run={} share_gpu={} batch={} "
      "curand_generator={}",
      to_string(cfg.problem), to_string(cfg.backend), cfg.samples, cfg.chunk_size, cfg.seed, m.spot, m.strike, m.rate,
      m.sigma, m.maturity, to_string(cfg.option), cfg.steps, to_string(cfg.control_variate), cfg.reps, cfg.warmup,
      cfg.dry_run, cfg.share_gpu, cfg.batch, to_string(cfg.curand_generator));
}

std::int64_t chunk_count(const MonteCarloConfig& cfg) { return (cfg.samples + cfg.chunk_size - 1) / cfg.chunk_size; }

ChunkRange rank_chunks(std::int64_t chunks, int rank, int ranks) {
  const std::int64_t base = chunks / ranks, extra = chunks % ranks;
  const std::int64_t first = rank * base + std::min<std::int64_t>(rank, extra);
  return {first, first + base + (rank < extra ? 1 : 0)};
}

}  // namespace scalebench
