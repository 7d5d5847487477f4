// `scalebench report DIR`: the self-contained report.html of a contrast or a study folder.
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/output_file.hpp"
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
                "study's baseline, joules per verified result by mode or against size when the records carry them, "
                "predicted against measured when the records carry predictions). Needs a Python "
                "with matplotlib (SCALEBENCH_PYTHON, python3, /usr/bin/python3). contrast and study write it at "
                "their end unless --no-report. Inputs must be regular files, their shape is checked. --out follows "
                "the output-file rule: a regular file or new path replaced atomically, a device or FIFO written in "
                "place, a folder, socket or block device refused. The page's path is the only thing on stdout. Exit "
                "codes: 0 written; 2 not a contrast or study folder, nothing finished in it, an input that is not "
                "valid (JSON, UTF-8, a field's type), an empty --out; 3 no Python with matplotlib or one that failed, "
                "an input that is not a regular file, the page cannot be written; 128+n stopped by signal n");
  app->add_option("folder", c->folder, "A contrast's folder (contrast.json) or a study's (summary.json)")->required();
  auto* out = app->add_option("--out", c->out,
                              "The page to write [FOLDER/report.html]: a regular file or a new path (replaced whole), "
                              "or a character device or FIFO (written in place)");
  Subcommand sub;
  sub.app = app;
  sub.run = [c, out]() {
    try {
      // The page's place is checked before any work (the script checks it again, for tools/report).
      if (out->count() > 0) check_output_path(c->out, "--out");
      const ReportOutcome r = write_report(c->folder, c->out);
      for (const std::string& w : r.warnings) std::fprintf(stderr, "%s\n", w.c_str());
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
