#pragma once
// `auto` for gemm's schedule options (--algorithm, --grid, --distribution, --transport,
// --overlap, --lookahead; docs/model.md, "auto: the model decides"): every option not given, or
// given as `auto`, is left open. Every combination of the open options is an alternative; each is
// first checked as the run checks it (the option rules, the rows per rank, the grid, NCCL in this
// build, shared windows on the nodes, host memory per node and GPU memory), then, with a machine
// profile, predicted by predict_gemm (summa2d's lookaheads from what calibrate measured they
// hide); the fastest predicted is taken. Without a profile (or when the model can predict none of
// them) the stated rules decide: the first feasible alternative in the rules' order. When none is
// feasible, options asked as `auto` make that an error of the choice; options only left open by
// default never refuse a run of their own: the rules' first alternative runs and the run's own
// check refuses it, as it would a pinned run. The answer is a pure function of the
// configuration, the layout, the facts and the profile, so every rank that holds them picks the
// same; the run computes it on rank 0 and broadcasts the index (resolve_gemm_auto).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/workloads/gemm/gemm_config.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {

class Communicator;

// What the machine offers an alternative, beyond the layout. Unknown facts refuse nothing.
struct ChoiceFacts {
  MachineLayout layout;
  bool device_transport = true;               // NCCL in this build (a run) or on the machine (predict)
  std::optional<std::string> shared_refusal;  // why shared windows cannot be made ("" : they can)
  std::optional<double> host_bytes_per_node;  // free host memory of the fullest node
  std::optional<double> gpu_bytes;            // memory of one GPU
};

struct GemmAlternative {
  GemmConfig cfg;                 // the configuration with this alternative's options
  bool feasible = true;           // the run would accept it
  std::optional<double> seconds;  // predicted end-to-end (model)
  std::string why;                // why refused, not ranked, taken or not
};

struct GemmChoice {
  bool by_model = false;                      // false: the rules decided
  std::string basis;                          // "profile <path>" or why the rules decided
  std::vector<GemmAlternative> alternatives;  // in enumeration order (gemm_alternatives)
  int taken = -1;                             // index into alternatives
  int ranks = 1;                              // of the layout chosen for
  const GemmConfig& chosen() const { return alternatives.at(static_cast<std::size_t>(taken)).cfg; }
};

// Every combination of the options `cfg.autos` leaves open, in a fixed order (the same on every
// rank); options not left open keep their value. Summa2D's grids under --grid auto: the
// factorisations of the rank count, the (at most kMaxAutoGrids) most square first; its lookaheads
// 0..kMaxAutoLookahead (0 first: of two alternatives predicted alike the blocking one is taken);
// its overlap, when open, is not enumerated (it is the lookahead). Row1d keeps the placeholder
// lookahead and no grid.
inline constexpr int kMaxAutoGrids = 16;
// Alternatives the model predicts within this fraction of the fastest are ties, and the rules'
// first of them is taken: a difference below the model's own accuracy is no evidence (on a 64-core
// node the model put Summa2D's lookaheads 0.2% apart where they measured 30% apart).
inline constexpr double kChoiceTieMargin = 0.03;
std::vector<GemmConfig> gemm_alternatives(const GemmConfig& cfg, int ranks);

// Why the run would refuse `alt` on this machine ("" when it would not).
std::string gemm_refusal(const GemmConfig& alt, const ChoiceFacts& facts);

// Ranks the alternatives: with a profile (`profile` non-null) by predicted end-to-end, else by the
// rules. When no alternative is feasible: UsageError (naming each refusal; ResourceError when
// memory alone refused them) if an option was asked as `auto`, else the rules' first. `threads` resolved as
// predict does when cfg.threads is 0. `no_profile` says why there is none (for the record).
GemmChoice choose_gemm(const GemmConfig& cfg, const ChoiceFacts& facts, const Profile* profile,
                       const std::string& no_profile = "no machine profile");

// The record's "choice" section (which options were asked as `auto` and which not given, how the
// choice was made, every alternative with its verdict and why), the ranking printed before the
// run (its first line alone where no option was asked as `auto`) and by predict.
nlohmann::json choice_json(const GemmChoice& c, const GemmAutoOptions& autos);
std::string choice_table(const GemmChoice& c, const GemmAutoOptions& autos);
std::string choice_line(const GemmChoice& c, const GemmAutoOptions& autos);
// "row1d 4x1 shared transport mpi no-overlap": an alternative's options in words.
std::string alternative_text(const GemmConfig& alt, int ranks);

// Collective over `comm`, whose ranks have agreed on `cfg` (agree_on_configuration): resolves cfg.autos as the run
// would see it (this build, the nodes' free memory and shared windows, the GPU's memory, this host's profile when
// current) on rank 0, broadcasts the choice; returns the configuration to run, with `choice` set on rank 0 and `autos`
// cleared. Prints the ranking on rank 0 unless quiet (its first line alone where no option was asked as
// `auto` and it is no --dry-run). An AgreedError (usage) on every rank when no alternative is
// feasible.
GemmConfig resolve_gemm_auto(const GemmConfig& cfg, const Communicator& comm);

}  // namespace scalebench
