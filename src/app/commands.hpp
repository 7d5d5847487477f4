#pragma once
// Each subcommand lives in its own src/app/cmd_<name>.cpp and registers itself here.
// A registered subcommand sets `run` to the function main() calls after parsing.
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "scalebench/cpu/gemm.hpp"
#include "scalebench/cpu/montecarlo.hpp"

namespace scalebench::app {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;  // returns the process exit code
};

Subcommand register_gemm(CLI::App& root);
Subcommand register_montecarlo(CLI::App& root);
Subcommand register_topology(CLI::App& root);
Subcommand register_contrast(CLI::App& root);
Subcommand register_study(CLI::App& root);
Subcommand register_report(CLI::App& root);
Subcommand register_calibrate(CLI::App& root);
Subcommand register_predict(CLI::App& root);

// The workload options of gemm and montecarlo, declared on `app` (predict takes them too); the
// returned function builds the checked configuration after parsing (UsageError otherwise).
std::function<GemmConfig()> add_gemm_options(CLI::App* app);
std::function<MonteCarloConfig()> add_montecarlo_options(CLI::App* app);

// `scalebench study FILE --predict`: every run of the study predicted from a machine profile
// (`profile_path`, empty: the default place); nothing runs. Returns the exit code.
int print_study_prediction(const std::string& file, const std::string& profile_path);

}  // namespace scalebench::app
