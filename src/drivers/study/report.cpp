#include "scalebench/drivers/report.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/drivers/process.hpp"

namespace scalebench {
namespace {

// The Pythons to try, in order (see write_report).
std::vector<std::string> python_candidates() {
  std::vector<std::string> out;
  if (const char* p = std::getenv("SCALEBENCH_PYTHON"); p != nullptr && *p != '\0') out.emplace_back(p);
  out.emplace_back("python3");
  out.emplace_back("/usr/bin/python3");
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The script's own error line ("scalebench report: error: …"), else the last non-empty line.
std::string error_line(const std::string& log) {
  std::string last, error;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    last = line;
    if (line.rfind("scalebench report: error: ", 0) == 0) error = line.substr(26);
  }
  return error.empty() ? last : error;
}

}  // namespace

ReportOutcome write_report(const std::string& folder, const std::string& out) {
  char log_template[] = "/tmp/scalebench-report-XXXXXX";
  const int fd = mkstemp(log_template);
  if (fd < 0) return {3, "", "cannot make a temporary file for the report script's output"};
  close(fd);
  const std::string log = log_template;
  ReportOutcome result{3, "", "no python3 found: install python3 and python3-matplotlib (tools/setup does)"};
  for (const auto& python : python_candidates()) {
    if (!program_available(python)) continue;
    std::vector<std::string> argv{python, "-c", std::string(report_script()), folder};
    if (!out.empty()) argv.insert(argv.end(), {"--out", out});
    std::ofstream(log, std::ios::trunc).close();
    const StepOutcome step = run_step(argv, log, 600);
    const std::string said = slurp(log);
    if (step.exit_code == 0) {
      std::string path = said.substr(0, said.find('\n'));
      result = {0, path, ""};
      break;
    }
    result = {step.exit_code == 2 ? 2 : 3, "", error_line(said)};
    if (step.timed_out) result.message = "the report script did not finish in 600 s";
    // Another Python may have matplotlib; any other failure is the folder's or the page's.
    if (said.find("matplotlib is missing") == std::string::npos) break;
  }
  std::remove(log.c_str());
  return result;
}

void write_report_after_run(const std::string& folder, bool quiet) {
  const ReportOutcome r = write_report(folder);
  if (r.exit_code != 0) {
    std::fprintf(stderr,
                 "scalebench: warning: report.html not written: %s; the results are in %s (`scalebench "
                 "report %s` writes it later)\n",
                 r.message.c_str(), folder.c_str(), folder.c_str());
  } else if (!quiet) {
    std::fprintf(stderr, "scalebench: report: %s\n", r.path.c_str());
  }
}

}  // namespace scalebench
