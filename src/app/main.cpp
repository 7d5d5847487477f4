// scalebench: how much faster does a computation get on more cores, NUMA domains, GPUs and
// nodes — and why. One binary, one subcommand per job.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/build_info.hpp"
#include "scalebench/base/env.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/gpu/device.hpp"
#include "scalebench/workloads/workload.hpp"

namespace {

// refuse_empty_values (command.hpp) before parsing, for "--name=": CLI11 would read it as "--name
// <the next word>", or say "1 required TEXT missing" without the name of a hidden option.
void refuse_empty_assignments(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return;  // what follows is not options
    if (arg.size() > 3 && arg.starts_with("--") && arg.find('=') == arg.size() - 1) {
      const std::string name(arg.substr(0, arg.size() - 1));
      throw scalebench::UsageError(
          fmt::format("{} is empty; give it a value, or leave {} out for its default", name, name));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace scalebench;
  register_builtin_devices();
  set_command_line(argc, argv);
  set_main_args(argc, argv);

  CLI::App root{"scalebench: measure and explain how a distributed GEMM and a sharded Monte Carlo scale "
                "over cores, NUMA domains, GPUs and nodes; every result verified."};
  root.require_subcommand(1);
  root.set_version_flag("--version",
                        fmt::format("scalebench {} (git {}{}, {}, CUDA {})", build_version(), build_git_hash(),
                                    std::string_view(build_git_source()) == "export" ? " exported" : "",
                                    build_compiler(), build_with_cuda() ? "on" : "off"));
  root.footer(
      "\n" + env_vars_help() + "\nExit codes:\n" + exit_code_table() +
      "\nRun `scalebench <subcommand> --help` for its options. Under mpirun as root set "
      "OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; more ranks than cores needs --oversubscribe.");

  std::vector<app::Subcommand> subs;
  for (const Workload* w : workloads()) subs.push_back(app::register_workload(root, *w));
  subs.push_back(app::register_topology(root));
  subs.push_back(app::register_contrast(root));
  subs.push_back(app::register_study(root));
  subs.push_back(app::register_report(root));
  subs.push_back(app::register_calibrate(root));
  subs.push_back(app::register_predict(root));
  subs.push_back(app::register_compare(root));
  for (auto& s : subs) {
    s.app->footer("\n" + env_vars_help() + "\nExit codes:\n" + exit_code_table());
  }

  try {
    refuse_empty_assignments(argc, argv);
  } catch (const Error& e) {
    if (is_launch_root()) print_error(e.what());
    return static_cast<int>(e.code());
  }
  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    if (is_launch_root()) return root.exit(e);
    return 0;
  } catch (const CLI::CallForAllHelp& e) {
    if (is_launch_root()) return root.exit(e);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    if (is_launch_root()) return root.exit(e);
    return 0;
  } catch (const CLI::ParseError& e) {
    if (is_launch_root()) {
      print_error(fmt::format("{}; run `scalebench --help` or `scalebench <subcommand> --help`", e.what()));
    }
    return static_cast<int>(ExitCode::usage);
  }
  try {
    refuse_empty_values(root);
    refuse_options_taken_as_values(root, std::vector<std::string>(argv + 1, argv + argc));
  } catch (const Error& e) {
    if (is_launch_root()) print_error(e.what());
    return static_cast<int>(e.code());
  }
  for (auto& s : subs) {
    if (s.app->parsed()) return app::run_guarded(s.run);
  }
  return static_cast<int>(ExitCode::usage);
}
