// The workload subcommands' shared options and their run under MPI (command.hpp).
#include "scalebench/workloads/command.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/mpi/peer_watchdog.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {
namespace {
// More BLAS or Monte Carlo threads than any node has cores is a typing error.
constexpr std::int64_t kMaxThreads = std::int64_t{1} << 16;
int g_argc = 0;
char** g_argv = nullptr;
}  // namespace

void set_main_args(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
}
int& main_argc() { return g_argc; }
char**& main_argv() { return g_argv; }

void print_error(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "scalebench: error: %s\n", printable(message).c_str());
  std::fflush(stderr);
}

void refuse_empty_values(const CLI::App& app) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0) continue;  // a flag given has a value ("true")
    const auto& results = option->results();
    if (std::any_of(results.begin(), results.end(), [](const std::string& r) { return r.empty(); })) {
      // By its long name: CLI11 names a hidden option (--auto-memory-per-node) "".
      const std::string name = option->get_lnames().empty() ? option->get_name() : "--" + option->get_lnames().front();
      throw UsageError(fmt::format("{} is empty; give it a value, or leave {} out for its default", name, name));
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) refuse_empty_values(*sub);
}

namespace {

// Every option's spellings ("--json", "-h") in `app` and the subcommands under it.
void option_words(const CLI::App& app, std::set<std::string>& words) {
  for (const CLI::Option* option : app.get_options()) {
    for (const auto& l : option->get_lnames()) words.insert("--" + l);
    for (const auto& s : option->get_snames()) words.insert("-" + s);
  }
  for (const CLI::App* sub : app.get_subcommands({})) option_words(*sub, words);
}

void refuse_taken(const CLI::App& app, const std::set<std::string>& words, const std::vector<std::string>& args) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0 || option->get_expected_min() == 0) continue;  // not given, or a flag
    for (const std::string& value : option->results()) {
      if (!words.contains(value)) continue;
      std::vector<std::string> spellings;
      for (const auto& l : option->get_lnames()) spellings.push_back("--" + l);
      for (const auto& s : option->get_snames()) spellings.push_back("-" + s);
      for (std::size_t i = 0; i + 1 < args.size(); ++i) {
        if (args[i] == "--") break;  // what follows is not options
        if (args[i + 1] != value || std::find(spellings.begin(), spellings.end(), args[i]) == spellings.end()) continue;
        throw UsageError(fmt::format("{} has no value: the word after it, {}, is an option; give {} a value (or "
                                     "write {}={} if that is the value)",
                                     args[i], value, args[i], args[i], value));
      }
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) refuse_taken(*sub, words, args);
}

}  // namespace

void refuse_options_taken_as_values(const CLI::App& app, const std::vector<std::string>& args) {
  std::set<std::string> words;
  option_words(app, words);
  refuse_taken(app, words, args);
}

void add_run_options(CLI::App* app, RunOptions& o, const RunOptionHelp& help) {
  app->add_option("--threads", o.threads, help.threads);
  app->add_option("--pin", o.pin,
                  "Bind each rank: none | core (its share of the node's cores) | numa (its NUMA domain, memory "
                  "bound) | gpu (cores near its GPU) | auto (gpu with a GPU, else numa when ranks fill the "
                  "domains, else core); a binding the launcher made is kept [auto]");
  app->add_option("--reps", o.reps, "Timed repeats, 1 to 2^30 with --warmup; medians are reported [5]");
  app->add_option("--warmup", o.warmup, "Untimed warm-up repeats, 0 to 2^30 with --reps [1]");
  app->add_option("--seed", o.seed, help.seed);
  app->add_option(
      "--json", o.json,
      "Write the run record to this file: replaced atomically (never a partial file); a link is followed; a "
      "device or pipe (/dev/null, /dev/stdout, a FIFO) is written in place");
  app->add_flag("--dry-run", o.dry_run, help.dry_run);
  app->add_flag("--quiet", o.quiet, "No table and no progress lines (errors still print)");
  app->add_flag("--share-gpu", o.share_gpu, help.share_gpu);
}

ParsedRunOptions parse_run_options(const RunOptions& o, const CLI::App& app) {
  ParsedRunOptions p;
  p.pin = parse_pin_policy(o.pin);
  if (app.count("--threads")) {
    p.threads = static_cast<int>(parse_integer("--threads", o.threads, 1, kMaxThreads));
  }
  // Together at most 2^30 (check_repeats), so that repeats + warm-up fit an int.
  const std::int64_t reps = parse_integer("--reps", o.reps, 1, kMaxRepeats);
  const std::int64_t warmup = parse_integer("--warmup", o.warmup, 0, kMaxRepeats);
  check_repeats(reps, warmup);
  p.reps = static_cast<int>(reps);
  p.warmup = static_cast<int>(warmup);
  p.seed = parse_unsigned("--seed", o.seed);
  if (app.count("--json")) {
    if (o.json.empty()) throw UsageError("--json needs a file name (got an empty string)");
    p.json = o.json;
  }
  return p;
}

bool is_launch_root() { return launcher_rank() == 0; }

namespace {

// HWLOC_XMLFILE before MPI_Init: Open MPI's own hwloc opens it too (a singleton's helper process
// would block on a FIFO for ever), so a file that is not a readable regular one is refused first.
void check_topology_file_variable() {
  const char* xml = std::getenv("HWLOC_XMLFILE");
  if (xml == nullptr || *xml == '\0') return;
  try {
    if (check_input_file(xml, "HWLOC_XMLFILE")) return;
  } catch (const Error& e) {
    throw UsageError(fmt::format("{}; or unset HWLOC_XMLFILE to use this machine", e.what()));
  }
  throw UsageError(fmt::format("HWLOC_XMLFILE names {}, which does not exist; or unset HWLOC_XMLFILE to use this "
                               "machine",
                               xml));
}

}  // namespace

int run_mpi_command(int& argc, char**& argv, const std::function<void()>& validate,
                    const std::function<int(const Communicator&)>& body) {
  // SCALEBENCH_PEER_TIMEOUT is read here, before MPI_Init, like the options: a bad value is one
  // usage line with no collective spent on it (rank 0's value applies across hosts).
  int peer_timeout_s = 0;
  try {
    check_topology_file_variable();
    validate();
    peer_timeout_s = peer_timeout_seconds_from_env();
  } catch (const Error& e) {
    if (is_launch_root()) print_error(e.what());
    return static_cast<int>(e.code());
  }

  // Declared before the environment so that it outlives MPI_Finalize: a host lost during it
  // still ends the run (docs/cluster.md).
  PeerWatchdog watchdog;
  MpiEnvironment env(argc, argv);
  Communicator world = Communicator::world();
  auto abort_with = [&](ExitCode code, const std::string& what) {
    std::fflush(stdout);
    std::fprintf(stderr, "scalebench: error on %s rank %d: %s\n", printable(host_name()).c_str(), world.rank(),
                 printable(what).c_str());
    std::fflush(stderr);
    if (world.size() > 1) MPI_Abort(MPI_COMM_WORLD, static_cast<int>(code));
    return static_cast<int>(code);
  };
  try {
    start_peer_watchdog(watchdog, world, peer_timeout_s);
    return body(world);
  } catch (const AgreedError& e) {
    if (world.is_root()) print_error(e.what());
    return static_cast<int>(e.code());
  } catch (const Error& e) {
    return abort_with(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return abort_with(ExitCode::resource, "out of host memory; use a smaller size or more ranks");
  } catch (const std::exception& e) {
    return abort_with(ExitCode::internal, fmt::format("internal error: {}", e.what()));
  }
}

int run_workload_command(WorkloadCommand& command) {
  return run_mpi_command(
      main_argc(), main_argv(), [&] { command.configure(); },
      [&](const Communicator& comm) {
        return command.run(comm) ? 0 : static_cast<int>(ExitCode::verification_failed);
      });
}

}  // namespace scalebench
