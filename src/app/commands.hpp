#pragma once
// Each subcommand lives in its own src/app/cmd_<name>.cpp and registers itself here.
// A registered subcommand sets `run` to the function main() calls after parsing.
#include <functional>

#include <CLI/CLI.hpp>

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

}  // namespace scalebench::app
