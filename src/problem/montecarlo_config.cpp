// Monte Carlo configuration: names, defaults, validation, threads per rank.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <vector>

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

// Whether the command line gave `option` (whatever its value), or `differs` from its default.
// Configurations built in code carry every field, so code is judged by value only where a value
// asks for something (a control variate, a batch, a generator), never for a field left unread.
bool given(const MonteCarloConfig& cfg, const std::string& option, bool differs = false) {
  return differs || cfg.given_options.count(option) > 0;
}

// "--a", "--a and --b", "--a, --b and --c".
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return out;
}

// π reads no option model; european reads no fixings and no control variate.
void check_unread_options(const MonteCarloConfig& cfg) {
  if (cfg.problem == McProblem::asian) return;
  const bool pi = cfg.problem == McProblem::pi;
  std::vector<std::string> unread;
  for (const char* option : {"--option", "--spot", "--strike", "--rate", "--sigma", "--maturity"}) {
    if (pi && given(cfg, option)) unread.emplace_back(option);
  }
  if (given(cfg, "--steps")) unread.emplace_back("--steps");
  if (given(cfg, "--control-variate", cfg.control_variate != ControlVariate::none)) {
    unread.emplace_back("--control-variate");
  }
  if (unread.empty()) return;
  const bool one = unread.size() == 1;
  throw UsageError(pi ? fmt::format("{} {} to the option problems (european, asian), not to --problem pi: drop {}",
                                    listed(unread), one ? "applies" : "apply", one ? "it" : "them")
                      : fmt::format("{} {} to --problem asian only, not to --problem european: drop {} or use "
                                    "--problem asian",
                                    listed(unread), one ? "applies" : "apply", one ? "it" : "them"));
}

// The options only --backend curand reads, and what it cannot do.
void validate_curand(const MonteCarloConfig& cfg) {
  const bool curand = cfg.backend == McBackendKind::curand;
  if (cfg.batch < 0)
    throw UsageError(fmt::format("--batch must be >= 1 samples, or 0 for automatic (got {})", cfg.batch));
  if (given(cfg, "--batch", cfg.batch != 0) && !curand) {
    throw UsageError(fmt::format("--batch needs --backend curand (got --backend {}): drop it or use --backend curand",
                                 to_string(cfg.backend)));
  }
  if (given(cfg, "--curand-generator", cfg.curand_generator != McCurandGenerator::philox) && !curand) {
    throw UsageError(fmt::format("--curand-generator needs --backend curand (got --backend {}): drop it or use "
                                 "--backend curand",
                                 to_string(cfg.backend)));
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

// Spot, strike and the forward S·e^{rT} lie in [kMinPrice, kMaxPrice]: payoffs' squares (the sums
// behind the standard error) neither overflow (1e100 leaves e^{±2·9} of path spread and 2^63
// samples) nor underflow; 0 and subnormal prices are out.
constexpr double kMinPrice = 1e-100, kMaxPrice = 1e100;
// σ²T, the variance of ln S_T, at most this. A payoff's relative variance grows like e^{σ²T} and
// its tail faster (kurtosis like e^{4σ²T}): at equal effective samples (kMinEffectiveSamples) the
// z-test's false alarms, 1e-4 at σ²T <= 1, are 8e-4 at 4 and 2.5e-3 at 6 (measured at 1000
// effective samples), and grow on: the sample no longer shows the paths that carry the mean.
constexpr double kMaxLogVariance = 4;
// The in-the-money payoffs' spread, relative to the forward or strike they are computed from, at
// least this: below it the paths' differences are rounding (S_T is fp32 on the GPU: 6e-8) and the
// centred sum of squares behind the standard error is cancellation (σ = 1e-10 gave a standard
// error of 0 and z = -inf; a put struck at 1e8 times the spot, the same).
constexpr double kMinRelativeSpread = 1e-4;

bool price_within(double x) { return x >= kMinPrice && x <= kMaxPrice; }

void check_market(const MarketParams& m) {
  if (!price_within(m.spot)) {
    throw UsageError(fmt::format("--spot must be in [1e-100, 1e100] (got {}): squared payoffs must neither overflow "
                                 "nor underflow; e.g. --spot 100",
                                 m.spot));
  }
  if (!price_within(m.strike)) {
    throw UsageError(fmt::format("--strike must be in [1e-100, 1e100] (got {}): squared payoffs must neither "
                                 "overflow nor underflow; e.g. --strike 100",
                                 m.strike));
  }
  if (!(m.sigma > 0)) throw UsageError(fmt::format("--sigma must be > 0 (got {}); e.g. --sigma 0.2", m.sigma));
  if (!(m.maturity > 0))
    throw UsageError(fmt::format("--maturity must be > 0 years (got {}); e.g. --maturity 1", m.maturity));
  if (!std::isfinite(m.rate) || std::fabs(m.rate) > 10) {
    throw UsageError(fmt::format("--rate must be a yearly rate in [-10, 10] (got {}); e.g. --rate 0.05", m.rate));
  }
  const double log_variance = m.sigma * m.sigma * m.maturity;
  if (!(log_variance <= kMaxLogVariance)) {
    throw UsageError(fmt::format("--sigma {} over --maturity {} gives a log-price variance sigma^2*T = {:.4g}, above "
                                 "{}: the payoff's variance grows like exp(sigma^2*T) and no sample shows its tail; "
                                 "use a smaller sigma or maturity",
                                 m.sigma, m.maturity, log_variance, kMaxLogVariance));
  }
  const double forward = m.spot * std::exp(m.rate * m.maturity);
  if (!price_within(forward)) {
    throw UsageError(fmt::format("--spot {} at --rate {} over --maturity {} gives a forward S*exp(rT) = {:.4g} "
                                 "outside [1e-100, 1e100]: squared payoffs would overflow or underflow; use a smaller "
                                 "rate or maturity",
                                 m.spot, m.rate, m.maturity, forward));
  }
}

// The checked quantity's closed form, what its estimate is compared with (estimate_option).
double checked_closed_form(const MonteCarloConfig& cfg) {
  return cfg.problem == McProblem::european ? black_scholes(cfg.market, cfg.option)
                                            : geometric_asian(cfg.market, cfg.option, cfg.steps);
}

std::string checked_name(const MonteCarloConfig& cfg) {
  return fmt::format("{} {}", cfg.problem == McProblem::european ? "European" : "geometric-average Asian",
                     to_string(cfg.option));
}

// The estimate is compared with a finite positive closed form.
void check_closed_form(const MonteCarloConfig& cfg, const SampleMoments& y) {
  const double closed = checked_closed_form(cfg);
  if (!(std::isfinite(closed) && closed > 0)) {
    throw UsageError(fmt::format("the {} price is {} for --spot {} --strike {} --rate {} --sigma {} --maturity {}: "
                                 "the check compares with a finite positive closed form; bring --strike nearer the "
                                 "forward {:.4g}",
                                 checked_name(cfg), closed, cfg.market.spot, cfg.market.strike, cfg.market.rate,
                                 cfg.market.sigma, cfg.market.maturity, y.forward));
  }
}

// In-the-money payoffs differ by more than rounding (kMinRelativeSpread).
void check_spread(const MonteCarloConfig& cfg, const SampleMoments& y) {
  // Given Y > 0: E[Y | Y > 0] = mean/nonzero, E[Y² | Y > 0] = second/nonzero.
  const double in_mean = y.mean / y.nonzero;
  const double spread = std::sqrt(y.second / y.nonzero - in_mean * in_mean);
  const double scale = std::max(y.forward, cfg.market.strike);
  if (!(spread >= kMinRelativeSpread * scale)) {
    throw UsageError(fmt::format("--sigma {} over --maturity {} with --strike {} and a forward of {:.4g} leaves the {} "
                                 "payoffs a spread of {:.3g} of the prices, below {}: the paths' differences are lost "
                                 "to rounding; use a larger sigma or maturity, or bring --strike nearer the forward",
                                 cfg.market.sigma, cfg.market.maturity, cfg.market.strike, y.forward, checked_name(cfg),
                                 spread / scale, kMinRelativeSpread));
  }
}

// At least kMinEffectiveSamples effective samples (montecarlo.hpp).
void check_effective_samples(const MonteCarloConfig& cfg, const SampleMoments& y) {
  const double ratio = y.second > 0 ? y.mean * y.mean / y.second : 0.0;
  const double weight = std::min(y.nonzero, ratio);
  const double need = std::ceil(kMinEffectiveSamples / weight);
  const bool pi = cfg.problem == McProblem::pi;
  const std::string why =
      pi ? fmt::format("the z-test needs {} effective samples for its normal approximation (pi/4 per point)",
                       kMinEffectiveSamples)
         : fmt::format("the {} payoff is nonzero with probability {:.3g} and has E[Y^2]/E[Y]^2 = {:.4g}, so a path "
                       "weighs {:.3g}, and the z-test needs {} effective samples for its normal approximation",
                       checked_name(cfg), y.nonzero, 1 / ratio, weight, kMinEffectiveSamples);
  if (!(need < 0x1p63)) {
    throw UsageError(fmt::format("no --samples suffices for --problem {} with these market parameters: {}; bring "
                                 "--strike nearer the forward {:.4g}",
                                 to_string(cfg.problem), why, y.forward));
  }
  if (static_cast<double>(cfg.samples) < need) {
    throw UsageError(fmt::format("--samples must be at least {} for --problem {}{} (got {}): {}",
                                 static_cast<std::int64_t>(need), to_string(cfg.problem),
                                 pi ? "" : " with these market parameters", cfg.samples, why));
  }
}

// Moments of a call or put on a lognormal L with forward f and log-variance w, struck at k.
SampleMoments lognormal_payoff_moments(double f, double w, double k, OptionKind o) {
  const double s = std::sqrt(w);
  const double d1 = (std::log(f / k) + 0.5 * w) / s, d2 = d1 - s;
  const double sign = o == OptionKind::call ? 1.0 : -1.0;
  SampleMoments y;
  y.forward = f;
  y.log_variance = w;
  // E[L·1{in the money}] = f·N(±d1), E[L²·1{...}] = f²·e^w·N(±(d1 + s)), P = N(±d2).
  y.nonzero = normal_cdf(sign * d2);
  const double first = f * normal_cdf(sign * d1);
  const double square = f * f * std::exp(w) * normal_cdf(sign * (d1 + s));
  y.mean = sign * (first - k * y.nonzero);
  y.second = square - 2 * k * first + k * k * y.nonzero;
  return y;
}

}  // namespace

SampleMoments checked_sample_moments(const MonteCarloConfig& cfg) {
  const MarketParams& m = cfg.market;
  if (cfg.problem == McProblem::pi) {
    const double p = std::numbers::pi / 4;  // Y = 4·hit
    return {p, 4 * p, 16 * p, 0, 0};
  }
  if (cfg.problem == McProblem::european) {
    return lognormal_payoff_moments(m.spot * std::exp(m.rate * m.maturity), m.sigma * m.sigma * m.maturity, m.strike,
                                    cfg.option);
  }
  // The geometric average's law, as geometric_asian prices it.
  const GeometricAverageLaw g = geometric_average_law(m, cfg.steps);
  return lognormal_payoff_moments(g.forward, g.log_variance, m.strike, cfg.option);
}

void validate(const MonteCarloConfig& cfg) {
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
  check_unread_options(cfg);
  if (cfg.problem == McProblem::asian) {
    if (cfg.steps < 1) throw UsageError(fmt::format("--steps must be >= 1 (got {})", cfg.steps));
    if (cfg.steps > (1 << 20)) throw UsageError(fmt::format("--steps must be <= 2^20 (got {})", cfg.steps));
  }
  if (cfg.problem != McProblem::pi) check_market(cfg.market);
  const SampleMoments y = checked_sample_moments(cfg);
  if (cfg.problem != McProblem::pi) check_closed_form(cfg, y);
  check_effective_samples(cfg, y);
  if (cfg.problem != McProblem::pi) check_spread(cfg, y);
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
