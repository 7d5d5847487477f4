// `scalebench <workload>` (gemm, montecarlo, ...): one configuration of a registered workload per
// launch, with the options the workload declares (workload.hpp, command.hpp).
#include <memory>
#include <string>

#include "commands.hpp"
#include "run_support.hpp"

namespace scalebench::app {

Subcommand register_workload(CLI::App& root, const Workload& w) {
  auto* app = root.add_subcommand(std::string(w.name()), std::string(w.description()));
  std::shared_ptr<WorkloadCommand> command = w.add_command(*app);
  return {app, [command] { return run_workload_command(*command); }};
}

}  // namespace scalebench::app
