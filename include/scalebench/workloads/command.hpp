#pragma once
// How a workload's subcommand (`scalebench gemm`, `scalebench montecarlo`) parses and runs, so
// that bad input and failures behave the same for every workload:
//  1. The workload declares its options on the subcommand (Workload::add_command) with the shared
//     run options (add_run_options) and returns a WorkloadCommand.
//  2. After parsing, run_workload_command() builds the checked configuration before MPI_Init on
//     every rank; a UsageError there is printed by the launcher's rank 0 and every rank exits
//     with the same code (nothing collective started).
//  3. MPI is initialised and the configuration runs (run_mpi_command). An AgreedError (see
//     agree()) is printed once by rank 0 and returned as the exit code by every rank. Any other
//     failure on one rank is printed with host and rank and ends the job with MPI_Abort(code): no
//     rank is left waiting. Exit 0 when the result verified, 4 when it did not.
// `scalebench predict <workload>` and `study --predict` build the same configuration and ask the
// command for the model's prediction instead (prediction.hpp).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

#include "scalebench/base/error.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/topology/placement.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/prediction.hpp"

namespace scalebench {

// "scalebench: error: <message>" on stderr.
void print_error(const std::string& message);
// Prints on the launcher's rank 0 only (usable before MPI_Init).
bool is_launch_root();

// argc/argv as main received them (run_mpi_command needs them for MPI_Init).
void set_main_args(int argc, char** argv);
int& main_argc();
char**& main_argv();

// `validate` before MPI_Init, then `body` on every rank, as the header comment says; returns the
// exit code.
int run_mpi_command(int& argc, char**& argv, const std::function<void()>& validate,
                    const std::function<int(const Communicator&)>& body);

// An option given an empty value ("--lookahead ''", "--auto-memory-per-node="): UsageError naming
// it ("<option> is empty"), for `app` and every subcommand parsed under it. One rule for every
// option that takes a value: an empty one never means "as if not given"; a bare `--overlap` is on.
void refuse_empty_values(const CLI::App& app);

// An option whose value was left out, so that the parser took the next word, another option of
// the command, as its value ("--json --quiet" would write a file named --quiet; "--out-dir
// --dry-run" would run for real): UsageError naming both. `args` are the words after the program's
// name; "--json=--quiet" (one word) is a value given on purpose and stays.
void refuse_options_taken_as_values(const CLI::App& app, const std::vector<std::string>& args);

// The options every workload subcommand takes, declared and checked once. Numbers are kept as
// given and parsed by parse.hpp (decimal, ranges checked, "-1" is no seed).
struct RunOptions {
  std::string threads;
  std::string pin = "auto";
  std::string reps = "5";
  std::string warmup = "1";
  std::string seed = "42";
  std::string json;
  bool dry_run = false, quiet = false, share_gpu = false;
};
// The help lines that differ between the workloads.
struct RunOptionHelp {
  std::string threads, seed, dry_run, share_gpu;
};
void add_run_options(CLI::App* app, RunOptions& o, const RunOptionHelp& help);
// The shared options, parsed and range-checked (UsageError naming the option).
struct ParsedRunOptions {
  int threads = 0;  // 0 when not given
  PinPolicy pin = PinPolicy::automatic;
  int reps = 5, warmup = 1;
  std::uint64_t seed = 42;
  std::optional<std::string> json;
};
ParsedRunOptions parse_run_options(const RunOptions& o, const CLI::App& app);

// Copies the shared options into a workload's configuration (GemmConfig, MonteCarloConfig).
template <class Config>
void apply_run_options(const RunOptions& o, const CLI::App& app, Config& cfg) {
  const ParsedRunOptions p = parse_run_options(o, app);
  cfg.threads = p.threads;
  cfg.pin = p.pin;
  cfg.reps = p.reps;
  cfg.warmup = p.warmup;
  cfg.seed = p.seed;
  cfg.dry_run = o.dry_run;
  cfg.quiet = o.quiet;
  cfg.share_gpu = o.share_gpu;
  cfg.json_path = p.json;
}

// A workload's parsed subcommand.
class WorkloadCommand {
 public:
  virtual ~WorkloadCommand() = default;
  // Builds the checked configuration from the parsed options (UsageError otherwise); first.
  virtual void configure() = 0;
  // The configuration's --json file, when given.
  virtual std::optional<std::string> json_path() const = 0;
  // Runs the configuration on every rank of `comm`; true when the result verified.
  virtual bool run(const Communicator& comm) const = 0;
  // The model's prediction of the configuration on the machine `p` describes, laid out as `m`
  // (`p` must outlive the prediction's functions).
  virtual PredictedWorkload predict(const Profile& p, const MachineLayout& m) const = 0;
};

// The command of a workload whose configuration is a `Config`: `make` builds it after parsing,
// `run` runs it (its result has `ok`), `predict` predicts it.
template <class Config, class Result>
class ConfigCommand final : public WorkloadCommand {
 public:
  using Make = std::function<Config()>;
  using Run = Result (*)(const Config&, const Communicator&);
  using Predict = PredictedWorkload (*)(const Config&, const Profile&, const MachineLayout&);
  ConfigCommand(Make make_config, Run run_config, Predict predict_config)
      : make_(std::move(make_config)), run_(run_config), predict_(predict_config) {}
  void configure() override { cfg_ = make_(); }
  std::optional<std::string> json_path() const override { return cfg_.json_path; }
  bool run(const Communicator& comm) const override { return run_(cfg_, comm).ok; }
  PredictedWorkload predict(const Profile& p, const MachineLayout& m) const override { return predict_(cfg_, p, m); }

 private:
  Make make_;
  Run run_;
  Predict predict_;
  Config cfg_;
};

// Configures and runs `command` under MPI (main_argc/main_argv); returns the exit code.
int run_workload_command(WorkloadCommand& command);

}  // namespace scalebench
