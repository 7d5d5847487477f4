// `scalebench report DIR`: the self-contained report.html of a contrast or a study folder.
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/drivers/report.hpp"

namespace scalebench::app {

Subcommand register_report(CLI::App& root) {
  struct Cli {
    std::string folder, out;
  };
  auto c = std::make_shared<Cli>();
  auto* app = root.add_subcommand(
      "report", "Write one self-contained report.html for a contrast or a study folder: what ran and where (machine, "
                "versions, git hash, every command line), the table, and the figures as inline SVG (speed-up and "
                "efficiency with the ideal line, where the time goes, rate against size, the crossover against a "
                "study's baseline, predicted against measured when the records carry predictions). Needs a Python "
                "with matplotlib (SCALEBENCH_PYTHON, python3, /usr/bin/python3). contrast and study write it at "
                "their end unless --no-report");
  app->add_option("folder", c->folder, "A contrast's folder (contrast.json) or a study's (summary.json)")->required();
  app->add_option("--out", c->out, "The page to write [FOLDER/report.html]");
  Subcommand sub;
  sub.app = app;
  sub.run = [c]() {
    try {
      const ReportOutcome r = write_report(c->folder, c->out);
      if (r.exit_code != 0) {
        print_error(r.message);
        return r.exit_code == 2 ? static_cast<int>(ExitCode::usage) : static_cast<int>(ExitCode::resource);
      }
      std::printf("%s\n", r.path.c_str());
      return 0;
    } catch (const Error& e) {
      print_error(e.what());
      return static_cast<int>(e.code());
    }
  };
  return sub;
}

}  // namespace scalebench::app
