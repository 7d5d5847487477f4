#pragma once
// Each subcommand lives in its own src/app/cmd_<name>.cpp and registers itself here; a workload's
// subcommand is the workload's own (workload.hpp), registered by register_workload. A registered
// subcommand sets `run` to the function main() calls after parsing.
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "scalebench/workloads/workload.hpp"

namespace scalebench::app {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;  // returns the process exit code
};

// `scalebench <workload>`: its options and run (command.hpp).
Subcommand register_workload(CLI::App& root, const Workload& w);
Subcommand register_topology(CLI::App& root);
Subcommand register_contrast(CLI::App& root);
Subcommand register_study(CLI::App& root);
Subcommand register_report(CLI::App& root);
Subcommand register_calibrate(CLI::App& root);
Subcommand register_predict(CLI::App& root);
Subcommand register_compare(CLI::App& root);

// `scalebench study FILE --predict`: every run of the study predicted from a machine profile
// (`profile_path`, empty: the default place); nothing runs. Returns the exit code.
int print_study_prediction(const std::string& file, const std::string& profile_path);

}  // namespace scalebench::app
