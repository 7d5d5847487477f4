#pragma once
// The sharded Monte Carlo: π by quarter-circle hits, European and arithmetic-average Asian options
// under geometric Brownian motion. Configuration, the random-number layout every backend follows,
// the fixed-order reduction that makes estimates independent of the rank/thread/GPU count, the
// per-rank kernel interface (its CPU kernels: cpu/montecarlo.hpp; the driver:
// workloads/distributed_montecarlo.hpp).
//
// Layout (the contract between backends; docs/montecarlo.md has the full text):
//  * Random word j of sample i is a pure function of (seed, i, j): Philox4x32-10 with key
//    (seed mod 2^32, seed div 2^32) and a counter derived from (i, j, problem) — never from the
//    rank, thread or device.
//  * [0, samples) is cut into chunks of `chunk_size` samples (fixed per problem, not per run
//    shape). Ranks take contiguous chunk ranges; threads or GPU blocks take chunks inside them.
//  * π counts hits in integers. Option sums are kept per chunk in double and combined over a
//    fixed binary tree on chunk indices (ChunkTree), so the estimate is bit-identical for any
//    number of ranks, threads or GPUs.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/mpi/timing.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {

class Communicator;

enum class McProblem { pi, european, asian };
enum class McBackendKind { naive, cpu, cuda, curand };
// cuRAND host-API generator of --backend curand.
enum class McCurandGenerator { philox, xorwow };
enum class OptionKind { call, put };
enum class ControlVariate { none, geometric };

std::string to_string(McProblem p);
std::string to_string(McBackendKind b);
std::string to_string(OptionKind o);
std::string to_string(ControlVariate c);
std::string to_string(McCurandGenerator g);
// Each throws UsageError naming the option and the accepted values.
McProblem parse_mc_problem(const std::string& s);
McBackendKind parse_mc_backend(const std::string& s);
OptionKind parse_option_kind(const std::string& s);
ControlVariate parse_control_variate(const std::string& s);
McCurandGenerator parse_curand_generator(const std::string& s);
// cuda and curand run on GPUs (one per rank).
bool uses_gpu(McBackendKind b);

// Geometric Brownian motion under the risk-neutral measure, and the contract.
struct MarketParams {
  double spot = 100.0;
  double strike = 100.0;
  double rate = 0.05;     // continuously compounded risk-free rate
  double sigma = 0.2;     // volatility
  double maturity = 1.0;  // years
};

struct MonteCarloConfig {
  McProblem problem = McProblem::pi;
  McBackendKind backend = McBackendKind::cpu;
  std::int64_t samples = 0;     // paths (options) or points (π); 0 = default_samples(problem)
  std::int64_t chunk_size = 0;  // samples per chunk; 0 = default_chunk_size(problem)
  std::uint64_t seed = 42;
  MarketParams market;
  OptionKind option = OptionKind::call;
  int steps = 252;  // Asian fixings at T/steps, 2T/steps, ..., T
  ControlVariate control_variate = ControlVariate::none;
  int threads = 0;                       // CPU threads per rank; 0 = resolve (see setup_rank)
  std::string threads_source;            // which setting decided `threads`
  PinPolicy pin = PinPolicy::automatic;  // --pin (docs/placement.md)
  int reps = 5;
  int warmup = 1;
  bool dry_run = false;
  bool quiet = false;
  bool share_gpu = false;  // cuda, curand: allow several ranks per GPU
  // curand: samples per batch of device arrays (0 = from the GPU's free memory), and the generator.
  std::int64_t batch = 0;
  McCurandGenerator curand_generator = McCurandGenerator::philox;
  std::optional<std::string> json_path;
  // The options the command line gave ("--spot", ...), whatever their value. validate() refuses
  // an option the problem or backend does not read when it was given, the default's value
  // included. A configuration built in code carries every field: there only a value that asks
  // for something unread is refused (a control variate, a batch, a cuRAND generator).
  std::set<std::string> given_options;
};

// π 1e9 points; European 1e7 paths; Asian 1e5 paths (x steps normals).
std::int64_t default_samples(McProblem p);
// π 2^20 points; European 2^14 paths; Asian 2^8 paths. Always a multiple of 4.
std::int64_t default_chunk_size(McProblem p);
// Fills samples and chunk_size when 0. Idempotent.
void resolve_defaults(MonteCarloConfig& cfg);
// Throws UsageError for values that can never work, whatever the machine (after resolve_defaults),
// and for inputs the z-test cannot judge (see "What the check can judge" below).
void validate(const MonteCarloConfig& cfg);
// "name=value" words of every setting all ranks must share (agree_on_configuration in mpi.hpp),
// after resolve_defaults; per-rank settings (threads, pin, json, quiet) are left out.
std::string configuration_fields(const MonteCarloConfig& cfg);

// ---- Random-number layout ---------------------------------------------------------------------
// Counter word 3 separates the problems' streams.
inline constexpr std::uint32_t kPhiloxTagPi = 0;
inline constexpr std::uint32_t kPhiloxTagEuropean = 1;
inline constexpr std::uint32_t kPhiloxTagAsian = 2;
//  π:        point i uses words (2(i mod 2), 2(i mod 2)+1) of block (i div 2, 0, tag) as x, y;
//            a hit is x² + y² < 2^64 in exact integer arithmetic.
//  European: path i uses normal (i mod 4) of block (i div 4, 0, tag).
//  Asian:    path i, step j uses normal (j mod 4) of block (i, j div 4, tag).
//  A block's four words w0..w3 give four normals by Box–Muller on the pairs (w0,w1), (w2,w3):
//  u = (w_even + 1/2)·2^-32, θ = int32(w_odd)·π·2^-31, normals √(-2 ln u)·(cos θ, sin θ).
//  (block (a, b, tag) = counter words (a mod 2^32, a div 2^32, b, tag).)

// ---- Closed forms --------------------------------------------------------------------------------
double normal_cdf(double x);
double black_scholes(const MarketParams& m, OptionKind o);
// Geometric-average Asian option with `steps` equally spaced fixings (t_k = kT/steps, k = 1..steps).
double geometric_asian(const MarketParams& m, OptionKind o, int steps);
// The law of the geometric average G of `steps` equally spaced fixings: ln G is normal, E[G] is
// `forward` and Var(ln G) is `log_variance` (what geometric_asian prices, and what the check's
// sample moments are computed from).
struct GeometricAverageLaw {
  double forward = 0, log_variance = 0;
};
GeometricAverageLaw geometric_average_law(const MarketParams& m, int steps);

// ---- Fixed-order reduction -----------------------------------------------------------------------
// Sums a block of samples contributes (option problems). y: the option's payoff; x: the geometric
// Asian payoff of the same path (Asian only). Payoffs are undiscounted.
inline constexpr int kSumY = 0, kSumYY = 1, kSumX = 2, kSumXX = 3, kSumXY = 4, kSumCount = 5;
struct McSums {
  std::array<double, kSumCount> v{};
  McSums& operator+=(const McSums& o) {
    for (int k = 0; k < kSumCount; ++k) v[k] += o.v[k];
    return *this;
  }
};
// left + right, component by component, in that order.
McSums combine(const McSums& left, const McSums& right);

// Node (level, index) of the binary tree over chunk indices covers chunks
// [index·2^level, (index+1)·2^level); its value is left child + right child; leaves are chunks.
struct TreeNode {
  int level = 0;
  std::int64_t index = 0;
  McSums sums;
  std::int64_t first() const { return index << level; }
  std::int64_t end() const { return (index + 1) << level; }
};

// Builds the tree's value from aligned blocks pushed in chunk order. Any cut of [0, chunks) into
// contiguous ranges, each folded separately and the folds pushed in order, gives the same total to
// the bit: every node is formed only from its two children. The total pads past the last chunk
// with zeros (x + 0 is exact).
class ChunkTree {
 public:
  // `node` must start where the previous one ended and be aligned (first() multiple of 2^level).
  void push(const TreeNode& node);
  void push_leaf(std::int64_t chunk, const McSums& sums) { push(TreeNode{0, chunk, sums}); }
  // The current cover of the pushed range: at most 2·log2(chunks) nodes, in chunk order.
  const std::vector<TreeNode>& nodes() const noexcept { return stack_; }
  // Value of the zero-padded root. Requires the pushed range to start at chunk 0.
  McSums total() const;
  bool empty() const noexcept { return stack_.empty(); }

 private:
  std::vector<TreeNode> stack_;
};

// Aligned blocks of at most 2^max_level chunks that cover [first, last), in order: the work
// units a rank hands to its threads.
std::vector<std::pair<std::int64_t, int>> dyadic_blocks(std::int64_t first, std::int64_t last, int max_level);

// Serialised nodes (for gathering to rank 0).
std::string serialize_nodes(const std::vector<TreeNode>& nodes);
std::vector<TreeNode> deserialize_nodes(const std::string& bytes);

// ---- Per-rank kernels ----------------------------------------------------------------------------
struct ChunkRange {
  std::int64_t first = 0;  // first chunk
  std::int64_t last = 0;   // one past the last chunk
};

// What one rank computed.
struct McPartial {
  std::int64_t hits = 0;         // π: hits among the rank's points
  std::vector<TreeNode> nodes;   // options (cpu, cuda): the fold of the rank's chunks, in order
  McSums plain;                  // naive, curand: plain sums in the rank's own order
  std::int64_t plain_count = 0;  // naive, curand: samples this rank drew
};

class McKernel {
 public:
  virtual ~McKernel() = default;
  virtual std::string name() const = 0;
  // Once before the repeats: threads, device, context, buffers. May record set-up phases.
  virtual void prepare(const MonteCarloConfig& cfg, ChunkRange range, PhaseRecorder& setup) = 0;
  // One estimate's share of this rank. Records "compute" (device backends also "d2h").
  virtual McPartial run(PhaseRecorder& rec) = 0;
  virtual nlohmann::json describe() const = 0;
};

// On the CPU: make_cpu_montecarlo (cpu/montecarlo.hpp); on a GPU: make_gpu_montecarlo and
// make_gpu_library_montecarlo, the Monte Carlo workload's own
// (src/workloads/montecarlo/gpu_montecarlo.hpp).

// ---- Estimates -----------------------------------------------------------------------------------
struct McEstimate {
  double estimate = 0;
  double std_error = 0;
  double closed_form = 0;  // of the checked quantity
  double z = 0;            // (checked estimate - closed_form) / its std_error
};

// Final estimate from the reduced sums.
struct McOutcome {
  std::int64_t samples = 0;
  McEstimate main;                    // π, the option price (Asian: arithmetic, with CV if chosen)
  std::string checked_quantity;       // what z compares with its closed form
  McEstimate checked;                 // π / European: = main; Asian: geometric average, same paths
  std::optional<McEstimate> plain;    // Asian with control variate: the estimate without it
  double cv_beta = 0;                 // Asian with control variate
  bool ok = false;                    // |checked.z| <= kZLimit (and the Asian AM-GM bound holds)
  std::vector<std::string> failures;  // one line each
};
// |z| above this fails: P(|Z| > 4) = 6.3e-5 for a correct estimate.
inline constexpr double kZLimit = 4.0;
inline constexpr double kZ95 = 1.959963984540054;

// ---- What the check can judge (validate() refuses the rest; docs/montecarlo.md) ---------------------
// Moments of one checked sample Y, undiscounted, from closed forms: π: Y = 4·hit; European: the
// option's payoff on S_T; Asian: the geometric-average option's payoff (the checked quantity). An
// option's Y is a call or put on a lognormal L: its forward and log-variance are given too.
struct SampleMoments {
  double nonzero = 0;       // P(Y > 0)
  double mean = 0;          // E[Y]
  double second = 0;        // E[Y²]
  double forward = 0;       // options: E[L] (European: S·e^{rT}; Asian: E[G])
  double log_variance = 0;  // options: Var(ln L)
};
SampleMoments checked_sample_moments(const MonteCarloConfig& cfg);
// N samples weigh in the z-test as N·min(P(Y > 0), E[Y]²/E[Y²]) ones of constant size would (π:
// N·π/4). Fewer than this many and the normal approximation behind kZLimit fails: measured false
// alarms at 100 are 6e-4 (π, exact) to 9e-4 (options with σ²T <= 1), 5e-3 at σ²T = 4, against
// 6.3e-5; at 10 they are 1-3e-2.
inline constexpr double kMinEffectiveSamples = 100;

McOutcome estimate_pi(std::int64_t hits, std::int64_t samples);
McOutcome estimate_option(const MonteCarloConfig& cfg, const McSums& s, std::int64_t n);

// Chunk range of `rank` out of `ranks`: contiguous, the first (chunks mod ranks) ranks get one more.
ChunkRange rank_chunks(std::int64_t chunks, int rank, int ranks);
std::int64_t chunk_count(const MonteCarloConfig& cfg);

}  // namespace scalebench
