#pragma once
// The workload seam: what the drivers (contrast, study) and the CLI need to know of a workload —
// its name, its subcommand (options, configuration, run, the model's prediction), the option that
// sets its size and the work a size means, the arguments of each contrast row, how the contrast
// sizes it (and the contrast's options for that), and the figures its run records give — behind
// one interface, found by name in one registry. Drivers never test a workload's name; a new workload
// is a folder src/workloads/<name>/ and one line in src/workloads/registry.cpp
// (docs/architecture.md, "Adding a workload").
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/topology/placement.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace scalebench {

class Communicator;
class WorkloadCommand;    // command.hpp
struct Profile;           // model.hpp
struct CalibrateOptions;  // model.hpp

// What the drivers' tables show of one run record.
struct RunFigures {
  int ranks = 0, threads = 0;                        // threads per rank
  bool gpu = false;                                  // the run's backend is a GPU's
  double time_s = 0;                                 // median end to end (compute when there is none)
  double rate = 0;                                   // end to end, in rate_unit
  double compute_rate = 0;                           // over the compute phase alone
  std::string rate_unit;                             // "GFLOP/s", "samples/s"
  double compute_s = 0, comm_s = 0, transfer_s = 0;  // medians of the phases of each kind (phases.hpp)
  int resources() const noexcept { return gpu ? ranks : ranks * (threads > 0 ? threads : 1); }  // cores or GPUs
};

// Where a row of the contrast's gpu mode runs: one GPU, every GPU of the node (two or more), or
// every GPU when there are several, else one.
enum class GpuSpan { one, every, widest };
struct GpuRow {
  std::string label;  // "" for the gpu mode's own row, else the row's name ("multi-gpu")
  GpuSpan span = GpuSpan::one;
};

// One contrast row, as the workload is asked to run it.
struct ContrastRun {
  Mode mode = Mode::naive;
  std::string label;      // "" or one of gpu_rows()' labels
  bool gpu = false;       // one rank per GPU (the gpu mode's rows; multinode with the gpu layout)
  int ranks = 1;          // in all
  std::string size;       // the value of size_key() for this row
  std::string precision;  // the contrast's --precision (for workloads that have one)
  int reps = 3, warmup = 1;
  std::string peer{};  // the contrast's --peer: a library timed beside the CPU rows ("" none; gemm: scalapack)
};

// An option of `scalebench contrast` that a workload brings: its name ("--n") and help line.
struct ContrastOption {
  std::string name, help;
};

// How the contrast sizes a workload's rows when no size is given (study/contrast_sizing.hpp): a
// quick probe run, scaled by scaled_size(); and the contrast's options that give the sizes.
struct ContrastSizing {
  double cpu_probe = 0, gpu_probe = 0;  // the probes' sizes: a second or two anywhere
  std::string fallback;                 // when a probe cannot run, and for --dry-run
  std::string naive;                    // the naive row's size (about a second)
  // The sizes of the CPU rows, the GPU rows and the naive row ("--n", "--gpu-n", "--naive-n").
  ContrastOption cpu_option, gpu_option, naive_option;
  // The help of the contrast's --precision (ContrastRun::precision), declared after this
  // workload's size options; empty: the workload has no precision. One workload at most has one.
  std::string precision_help;
};

class Workload {
 public:
  virtual ~Workload() = default;
  // The subcommand that runs it and the "subcommand" of its records ("gemm").
  virtual std::string_view name() const = 0;
  // Its subcommand's line in `scalebench --help`, and the line of `scalebench predict <name>`.
  virtual std::string_view description() const = 0;
  virtual std::string_view predict_description() const = 0;
  // Declares the subcommand's options on `app` (its own and add_run_options'); the returned
  // command is configured and run, or predicted, after `app` parsed (command.hpp).
  virtual std::shared_ptr<WorkloadCommand> add_command(CLI::App& app) const = 0;
  // The option that sets its size ("n"), the work of one repeat at a size (gemm n^3; compared
  // only between runs of one workload), and a size as the tables write it ("n=4096").
  virtual std::string_view size_key() const = 0;
  virtual double work_per_repeat(double size) const = 0;
  virtual std::string size_text(const std::string& size) const = 0;
  // The figures the tables show, from one of its run records.
  virtual RunFigures figures(const nlohmann::json& record) const = 0;
  // Contrast: the gpu mode's rows (the first the mode's own, label ""); a row's arguments
  // (subcommand first; the contrast adds --json); the sizing, and the size taking about `seconds`
  // a repeat when a probe of size `probe` took `probe_s`.
  virtual std::vector<GpuRow> gpu_rows() const = 0;
  virtual std::vector<std::string> contrast_args(const ContrastRun& run) const = 0;
  virtual ContrastSizing contrast_sizing() const = 0;
  virtual std::string scaled_size(double probe, double probe_s, double seconds) const = 0;
  // `scalebench calibrate`: what the workload measures of the machine beyond the shared figures,
  // into `p` (gemm: what its panel algorithm's lookahead hides); collective over `comm`, every
  // rank of the calibration, after the MPI figures; `say` prints a progress line. None by default.
  virtual void calibrate(Profile& /*p*/, const Communicator& /*comm*/, const CalibrateOptions& /*o*/,
                         const std::function<void(const std::string&)>& /*say*/) const {}
};

// Every registered workload, in registration order (src/workloads/registry.cpp).
const std::vector<const Workload*>& workloads();
// The workload named `name`; nullptr when none is.
const Workload* find_workload(std::string_view name);
// The same; UsageError "unknown <what> 'x'; use gemm or montecarlo" when none is.
const Workload& workload(std::string_view name, std::string_view what = "workload");
// The registered names, "gemm, montecarlo" with `last` before the last one ("gemm or montecarlo").
std::string workload_names(std::string_view last = " or ");

// The number at `path` in a record, 0 when absent or not a number.
double record_number(const nlohmann::json& record, std::initializer_list<const char*> path);
// The figures every workload shares, from its record: ranks, threads, gpu (its config's backend
// is one of `gpu_backends`), times and the phase kinds' medians; rates are left to the workload.
RunFigures common_figures(const nlohmann::json& record, std::initializer_list<std::string_view> gpu_backends);

}  // namespace scalebench
