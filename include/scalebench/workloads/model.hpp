#pragma once
// The performance model: a machine profile (what `scalebench calibrate` measured) and the time
// each phase of a gemm or Monte Carlo run should take on a machine of N nodes × R ranks × G GPUs.
// docs/model.md states every formula and assumption; the code follows it term by term.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/problem/montecarlo.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

namespace scalebench {

// 2: tf32 GPU rates timed in tf32 math mode (version 1 timed fp32), naive rates by size.
inline constexpr int kProfileVersion = 2;

// How far a figure's timed repeats lay around the median the model computes with: the slowest
// repeat's rate was median·(1 − below), the fastest median·(1 + above). Zero (a profile written
// before spreads were kept, or a figure timed once): a zero-width band (docs/model.md, "Bands").
struct Spread {
  double below = 0;
  double above = 0;
  bool empty() const noexcept { return below <= 0 && above <= 0; }
};
// The spread of repeats that took `min_s`, `median_s` and `max_s` seconds (a rate is work / time).
Spread spread_of_times(double min_s, double median_s, double max_s);

// A link under the alpha-beta model: a message of b bytes takes latency + b / bandwidth.
struct Link {
  double latency_s = 0;
  double bandwidth_Bps = 0;
  Spread spread{};  // of the bandwidth
  double seconds(double bytes) const { return latency_s + (bandwidth_Bps > 0 ? bytes / bandwidth_Bps : 0.0); }
};

// One measured BLAS rate: `threads` threads on an m×n×k block.
struct BlasPoint {
  int threads = 1;
  GemmShape shape;
  double gflops = 0;  // the median repeat's
  Spread spread{};
};

// One measured collective fitted to latency + moved_bytes / bandwidth at a rank count and layout.
struct CollectiveFit {
  int ranks = 0;
  int nodes = 1;
  Link link;
};

// What a panel algorithm's host lookahead (panels broadcast ahead while one multiplies) saved on
// this machine, as GEMM's calibration measured it (gemm/gemm_calibrate.hpp; docs/model.md): on `ranks` ranks over
// `nodes` nodes with `depth` panels in flight, the time it took off a repeat as a fraction of the blocking broadcasts'
// time (their broadcast phase); negative where it added time. The model takes a lookahead's broadcast phase as the
// blocking one's times (1 - hidden).
struct LookaheadFit {
  int ranks = 0;
  int nodes = 1;
  int depth = 0;
  double hidden = 0;
};
// A lookahead may hide at most all of the broadcasts; what it adds is kept to ten times them (a
// figure beyond is a measurement gone wrong, refused on reading).
inline constexpr double kLookaheadMinHidden = -10;
inline constexpr double kLookaheadMaxHidden = 1;

// A rate measured at a thread count (Monte Carlo: work units per second, docs/model.md).
struct ThreadRate {
  int threads = 1;
  double per_s = 0;
  Spread spread{};
};

struct GpuProfile {
  bool present = false;
  std::string reason;  // why absent
  std::string name;
  int count = 0;  // GPUs per node as calibrated
  Link h2d_pinned, h2d_pageable, d2h_pinned, d2h_pageable;
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> gemm_gflops;  // precision -> (n, GFLOP/s)
  std::map<std::string, std::vector<Spread>> gemm_spread;  // precision -> the spread of each gemm_gflops point
  std::optional<Link> nccl_intra;                          // NCCL inside a node (NVLink or PCIe)
  std::map<std::string, std::map<std::string, double>>
      montecarlo;  // problem -> backend (cuda, curand) -> units/s per GPU
};

// What calibrate's energy counters read (docs/model.md, "Energy"): mean watts of one node's CPU
// packages and DRAM (RAPL) while idle and while each kernel ran on every core, and of one GPU
// (NVML) while idle and while cuBLAS multiplied. A part without a counter keeps the reason.
struct CpuPower {
  bool present = false;
  std::string reason;                          // why absent ("no powercap tree at ...")
  std::string source;                          // the counters read ("RAPL: package-0, package-0/dram")
  double idle_w = 0;                           // the node, nothing running
  std::map<std::string, double> blas_w;        // precision -> BLAS on every core of the node
  std::map<std::string, double> montecarlo_w;  // problem -> the cpu kernel on every core
};
struct GpuPower {
  bool present = false;
  std::string reason;
  std::string source;
  double idle_w = 0;                     // one GPU, nothing running
  std::map<std::string, double> gemm_w;  // precision -> one GPU multiplying
};
struct PowerProfile {
  bool recorded = false;  // false: a profile written before calibrate read power
  CpuPower cpu;
  GpuPower gpu;
};

struct Profile {
  std::string host;
  std::string created_at;
  std::string source;                                  // the file it was read from
  nlohmann::json versions;                             // as a record's "versions"
  nlohmann::json hwloc;                                // packages, numa_domains, cores, pus, gpus
  int cores = 1;                                       // cores of one node
  std::map<std::string, std::vector<BlasPoint>> blas;  // precision -> points
  // precision -> the triple loop's rate by square size n (its cache behaviour changes with n)
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> naive_gflops;
  std::map<std::string, std::vector<Spread>> naive_spread;  // precision -> the spread of each naive point
  std::vector<ThreadRate> triad_Bps;                        // STREAM triad bandwidth by threads
  Link intra_node;                                          // MPI point-to-point, two ranks on one node
  std::optional<Link> inter_node;                           // MPI point-to-point between nodes (absent: not measured)
  std::map<std::string, std::vector<CollectiveFit>> collectives;  // bcast, scatterv, gatherv, reduce
  std::vector<LookaheadFit> lookahead;  // mpi.lookahead: a panel lookahead's saving (empty: not measured)
  std::map<std::string, std::map<std::string, std::vector<ThreadRate>>> montecarlo;  // problem -> backend -> rates
  GpuProfile gpu;
  // What the profile is valid for (docs/model.md, "Valid for"): host, build, MPI library, BLAS
  // build and kernel, GPU model and driver; empty in a profile written before it was kept.
  nlohmann::json valid_for = nlohmann::json::object();
  // How calibrate was launched: {"launcher", "ranks", "binding"} (empty in older profiles).
  nlohmann::json launch = nlohmann::json::object();
  std::vector<std::string> warnings;  // what calibrate found doubtful (a point that stayed collapsed)
  // The check runs calibrate ended with: {"what", "predicted_s", "low_s", "high_s", "measured_s", "miss"}.
  nlohmann::json checks = nlohmann::json::array();
  PowerProfile power;  // optional in the file ("power"): absent in profiles written before it
};

// The same for this process: its host, build, MPI library, BLAS and first visible GPU.
nlohmann::json profile_valid_for_here();

// What a profile made here and now would be valid for: `versions` as a run record's, `gpu` as
// gpu_info() gives it for the first visible GPU (null when none).
nlohmann::json profile_valid_for(const std::string& host, const nlohmann::json& versions, const nlohmann::json& gpu);

// What a profile may hold (docs/model.md, "The profile"). Every figure is checked on reading, so
// the model never computes with a negative, zero, infinite or absurd one: rates (GFLOP/s, GB/s,
// units/s) in [kProfileMinRate, kProfileMaxRate], latencies in [0, kProfileMaxLatencyUs]
// microseconds, thread, core and GPU counts whole in [1, kProfileMaxThreads], matrix sides whole
// in [1, 2^31-1], collective rank counts whole in [1, kModelMaxRanks]; at most
// kProfileMaxEntries entries in any list or object, kProfileMaxDepth levels of nesting and
// kProfileMaxBytes bytes in the file.
inline constexpr double kProfileMinRate = 1e-9;
inline constexpr double kProfileMaxRate = 1e18;
inline constexpr double kProfileMaxLatencyUs = 1e9;
inline constexpr std::int64_t kProfileMaxThreads = std::int64_t{1} << 20;
inline constexpr std::size_t kProfileMaxEntries = 4096;
inline constexpr int kProfileMaxDepth = 16;
inline constexpr std::size_t kProfileMaxBytes = std::size_t{16} << 20;
// Watts in a profile's "power" section lie in [0, kProfileMaxWatts] (a node of ten megawatts is
// a typing error, not a machine).
inline constexpr double kProfileMaxWatts = 1e7;
// A spread's fractions ("spread": {"below", "above"}) lie in [0, kProfileMaxSpread]; below < 1.
inline constexpr double kProfileMaxSpread = 1000;
// The most ranks (nodes x ranks per node) the model predicts for (predict and study --predict
// refuse more). Ranks with the same work behind the same link are evaluated once per class, so a
// prediction's time and memory hardly grow with the count (docs/model.md, "Limits").
inline constexpr std::int64_t kModelMaxRanks = std::int64_t{1} << 22;
// The most GPUs per node the model predicts for.
inline constexpr std::int64_t kModelMaxGpusPerNode = 1024;

nlohmann::json to_json(const Profile& p);
// Throws UsageError naming the file and the value's JSON path ("mpi.intra_node.bandwidth_GBps")
// when a required part is missing, of the wrong kind, or out of the ranges above.
Profile profile_from_json(const nlohmann::json& j, const std::string& source);
// Reads (input_file.hpp: regular files only, at most kProfileMaxBytes, never blocking) and
// checks a profile file; `origin` names where its path came from ("--profile",
// "SCALEBENCH_PROFILE"). ResourceError when unreadable or not a regular file, UsageError when
// malformed.
Profile load_profile(const std::string& path, std::string_view origin = "--profile");

// Where this host's profile lives: SCALEBENCH_PROFILE, else $XDG_CACHE_HOME/scalebench/
// profile-<host>.json, else $HOME/.cache/scalebench/profile-<host>.json.
std::string default_profile_path();
// The same path with where it came from: "SCALEBENCH_PROFILE" or kDefaultProfileOrigin.
inline constexpr std::string_view kDefaultProfileOrigin = "the default profile place";
struct ProfileSource {
  std::string path;
  std::string origin;
};
ProfileSource default_profile_source();
// Why a profile does not describe this run's machine and build ("" when it does): other host, or
// other scalebench version, compiler, build type, CUDA build, MPI library, OpenBLAS build or
// BLAS kernel, as the profile's valid_for names them (what valid_for does not name: its host and
// versions).
std::string profile_mismatch(const Profile& p, const std::string& host, const nlohmann::json& versions);
// The same against everything profile_valid_for() names, the GPU model and driver included
// (`here` as profile_valid_for() gives it for this machine).
std::string profile_mismatch(const Profile& p, const nlohmann::json& here);
// Reads this host's profile from the default place and refuses a stale one: UsageError (exit 2)
// "profile F is stale: <why>; run `scalebench calibrate` again".
Profile load_current_profile(const ProfileSource& source);
// Why a profile must be made at `source` ("" when the one there is current for this host and
// build): there is none, it cannot be read or used ("it cannot be used: gpu.name must be a string
// (got a number)"), or it is stale (calibrate --if-stale's rule, and the contrast's).
std::string why_calibrate(const ProfileSource& source);
// why_calibrate's answer when no file is there.
inline constexpr std::string_view kNoProfile = "there is none";

// How the ranks sit on the machine: ranks are placed by blocks (ranks 0..R-1 on node 0, ...).
struct MachineLayout {
  int nodes = 1;
  int ranks_per_node = 1;
  int gpus_per_node = 0;
  int ranks() const noexcept { return nodes * ranks_per_node; }
  int node_of(int rank) const noexcept { return ranks_per_node > 0 ? rank / ranks_per_node : 0; }
};

// ---- Building blocks (each in docs/model.md) ------------------------------------------------------
// The link between rank 0 and `rank`.
Link link_to(const Profile& p, const MachineLayout& m, int rank);
// The slowest link any message crosses: inter-node when nodes > 1.
Link slowest_link(const Profile& p, const MachineLayout& m);
double bcast_seconds(const Profile& p, const MachineLayout& m, double bytes);
// The MPI transport's relay among ranks that each sit behind their own link (node leaders): a chain
// of segments (mpi.hpp relay_bytes) from 3 ranks and kRelayMinSegments segments on, else
// bcast_seconds.
double relay_seconds(const Profile& p, const MachineLayout& m, double bytes);
// What ranks [first, first + count) each receive (scatterv) or send (gatherv): a collective's
// messages by class of ranks, so that its cost does not grow with the rank count.
struct RankBytes {
  int first = 0;
  int count = 1;
  double bytes = 0;
};
// `bytes`: ranks in order, each at most once; root 0's own part stays in place.
double scatterv_seconds(const Profile& p, const MachineLayout& m, const std::vector<RankBytes>& bytes);
double gatherv_seconds(const Profile& p, const MachineLayout& m, const std::vector<RankBytes>& bytes);
// A reduction (or all-reduce) of a few bytes: latency rounds of a binomial tree.
double small_reduce_seconds(const Profile& p, const MachineLayout& m, int messages);
// BLAS GFLOP/s at `threads` threads on a block (interpolated over shapes, then threads).
double blas_gflops(const Profile& p, Precision prec, double threads, const GemmShape& block);
double gpu_gemm_gflops(const Profile& p, Precision prec, const GemmShape& block);
// The triple loop's GFLOP/s on one core on a block (interpolated over its measured sizes).
double naive_gemm_gflops(const Profile& p, Precision prec, const GemmShape& block);
// Interpolates rates measured by thread count at `threads` (capped at the profile's cores).
double rate_at_threads(const std::vector<ThreadRate>& rates, double threads, int cores);

// ---- Predictions ---------------------------------------------------------------------------------
struct Prediction {
  std::vector<std::pair<std::string, double>> phases;  // phase -> seconds (as the record names them)
  double end_to_end = 0;
  // The band of end-to-end: the same model on the profile's slowest and fastest repeats
  // (docs/model.md, "Bands"); low <= end_to_end <= high. Both 0: not computed (band() then
  // answers the zero-width band at end_to_end).
  double low = 0;
  double high = 0;
  std::vector<std::string> notes;  // assumptions that applied
  double phase(const std::string& name) const;
  std::pair<double, double> band() const;
};

// How far `measured` seconds lie outside the prediction's band, as a fraction of the predicted
// end-to-end (0 inside the band).
double miss_outside_band(const Prediction& pred, double measured);
// A miss is flagged when the measured end-to-end lies more than kPredictionTolerance of the
// prediction outside its band.
bool prediction_flagged(const Prediction& pred, double measured);
// Every rate of `p` at its slowest (fast = false) or fastest repeat; links' bandwidths too.
Profile profile_at_bound(const Profile& p, bool fast);
// True when some figure of `p` carries a spread.
bool profile_has_spread(const Profile& p);

// `cfg.threads` must be resolved (> 0). Throws UsageError when the profile lacks what the
// configuration needs (e.g. GPU figures for --backend cublas) or the layout is beyond
// kModelMaxRanks. Every phase of the answer is finite and >= 0 and end-to-end finite and > 0:
// anything else is a bug in the model, thrown as an Error of code internal (exit 1), never
// returned as a number (check_prediction).
Prediction predict_gemm(const Profile& p, const GemmConfig& cfg, const MachineLayout& m);
Prediction predict_montecarlo(const Profile& p, const MonteCarloConfig& cfg, const MachineLayout& m);
// Throws Error(internal) naming `what` and the phase when a phase is negative, NaN or infinite or
// end-to-end is not > 0; returns `pred` unchanged otherwise.
const Prediction& check_prediction(const Prediction& pred, const std::string& what);
// UsageError naming the options when `m` has more than kModelMaxRanks ranks or more than
// kModelMaxGpusPerNode GPUs per node, or a count below 1 (`nodes_option`, `ranks_option` name
// where the counts came from: "--nodes", "the study's nodes").
void check_layout(const MachineLayout& m, const std::string& nodes_option = "--nodes",
                  const std::string& ranks_option = "--ranks-per-node");

// ---- Energy (docs/model.md, "Energy") -------------------------------------------------------------
// The kernel whose power a run's compute phase draws.
enum class PowerDevice { cpu, gpu };
struct EnergyKernel {
  PowerDevice device = PowerDevice::cpu;
  std::string kind;  // "blas", "naive", "montecarlo" (CPU); "gemm", "montecarlo" (GPU)
  std::string key;   // the precision ("fp64") of a multiply, the problem ("pi") of a Monte Carlo
};

struct EnergyPrediction {
  bool available = false;
  std::string reason;  // why not (no power data in the profile, and why)
  double run_j = 0;    // one end-to-end, every node
  double job_j = 0;    // repeats × run_j
  int repeats = 1;     // warm-up + timed repeats of one job
  double kwh = 0;      // of the job
  // The watts used: per node (CPU) and per GPU, while the kernel computes and otherwise.
  double cpu_compute_w = 0, cpu_idle_w = 0, gpu_compute_w = 0, gpu_idle_w = 0;
  bool cpu_counted = false, gpu_counted = false;
  int gpus_computing = 0;          // GPUs per node the kernel keeps busy
  std::vector<std::string> notes;  // assumptions that applied, parts not counted
};
inline constexpr double kJoulesPerKwh = 3.6e6;

// The energy of a job of `repeats` end-to-end runs of `pred` on `m`, its ranks running `threads`
// threads each: every node draws its idle watts for end-to-end and its kernel's watts during
// compute (CPU: idle + (kernel − idle) × busy cores / cores; GPU: the kernel's watts on the GPUs
// the ranks drive, idle watts on the others). Unavailable, with the reason, when the profile has
// no power figure for the kernel's device.
EnergyPrediction predict_energy(const Profile& p, const Prediction& pred, const EnergyKernel& kernel,
                                const MachineLayout& m, int threads, int repeats);

// ---- Records -------------------------------------------------------------------------------------
// The layout a record's rank_info describes (ranks per node from the hosts, rank 0's node first).
MachineLayout layout_of_record(const nlohmann::json& record);
// Predicted against measured: {"profile", "phases": {name: {predicted_s, measured_s, ratio}},
// "end_to_end": {...}, "miss", "worst_phase", "notes"}; `measured` from record["phases"]. A
// prediction whose end-to-end is not a finite time > 0 is never a match: the answer is then
// {"available": false, "reason"}.
nlohmann::json compare_with_record(const Prediction& pred, const nlohmann::json& record, const std::string& source);
// The model's prediction of the configuration a run holds in memory, on a profile and a layout
// (a workload's `predict`: the function `scalebench predict <workload>` answers with).
using RecordPredictor = std::function<Prediction(const Profile&, const MachineLayout&)>;
// Adds "prediction" to a run record (rank 0, after "phases"): `predict` on the profile for this
// host, when present and current, and the layout the record's ranks ran on, against the measured
// phases; otherwise {"available": false, "reason"} and, when a profile was found but is stale or
// unreadable (or SCALEBENCH_PROFILE names a missing file), a line in `warnings`. Never throws: a
// run is never failed by its prediction.
void attach_prediction(nlohmann::json& record, nlohmann::json& warnings, const RecordPredictor& predict);

// A miss over this fraction is flagged in tables.
inline constexpr double kPredictionTolerance = 0.15;

}  // namespace scalebench

namespace scalebench {

// ---- Calibration (`scalebench calibrate`; docs/model.md, "Calibration") -------------------------
struct CalibrateOptions {
  bool quick = false;  // smaller sizes, shorter timings (CI: under a minute on two cores)
  bool quiet = false;  // no progress lines
  bool check = true;   // end with one short predicted-and-timed check run per backend
};
// Collective over `comm`: rank 0 times BLAS, the triple loop, memory bandwidth, the Monte Carlo
// kernels and (when one is visible) the GPU while the others wait without spinning; then every
// rank joins the MPI point-to-point and collective timings. The result is valid on rank 0.
// Ends (unless !o.check) with one short check run per backend it calibrated, predicted from the
// new profile and timed (Profile::checks; docs/model.md, "The check").
Profile calibrate_machine(const Communicator& comm, const CalibrateOptions& o);

// How this process was launched, for the profile and calibrate's first line: {"launcher":
// "mpirun" | "srun" | "singleton", "ranks", "binding": "none" | "bound", "cpus_allowed", "cpus"}.
nlohmann::json launch_description(int ranks);

}  // namespace scalebench
