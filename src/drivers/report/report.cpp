#include "scalebench/drivers/report.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/drivers/process.hpp"

namespace scalebench {
namespace {

// The report script's limit; a Python that runs longer is stopped.
constexpr double kReportTimeoutS = 600;
// What is read back of the script's output (its error line is near the end).
constexpr std::size_t kLogLimit = std::size_t{16} << 20;

struct Python {
  std::string program;  // as run
  std::string shown;    // as messages name it: "SCALEBENCH_PYTHON=/x" or "python3"
  bool from_env = false;
};

// The Pythons to try, in order (see write_report).
std::vector<Python> python_candidates() {
  std::vector<Python> out;
  if (const char* p = std::getenv("SCALEBENCH_PYTHON"); p != nullptr && *p != '\0') {
    out.push_back({p, fmt::format("SCALEBENCH_PYTHON={}", p), true});
  }
  out.push_back({"python3", "python3", false});
  out.push_back({"/usr/bin/python3", "/usr/bin/python3", false});
  return out;
}

// Whether a StopSignals guard is live already: the drivers hold one while they run and call
// write_report under it; `scalebench report` holds none. Guards do not nest (each restores the
// handlers it replaced), so write_report makes one only where none is held.
bool stop_signals_held() {
  struct sigaction current {};
  ::sigaction(SIGTERM, nullptr, &current);
  return current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
}

// A temporary file in TMPDIR (else /tmp), removed when this goes out of scope: on success, on an
// error and on a stop signal alike (the drivers hold stop signals off while a StopSignals lives).
class TempFile {
 public:
  explicit TempFile(const std::string& stem) {
    const char* dir = std::getenv("TMPDIR");
    std::string path = fmt::format("{}/scalebench-report-{}-XXXXXX", dir != nullptr && *dir != '\0' ? dir : "/tmp",
                                   stem);
    const int fd = mkstemp(path.data());
    if (fd < 0) {
      throw ResourceError(fmt::format("cannot make a temporary file for the report script in {} (TMPDIR): {}",
                                      path.substr(0, path.rfind('/')), std::strerror(errno)));
    }
    close(fd);
    path_ = path;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  // Writes `text` into it whole; ResourceError naming TMPDIR when it cannot (a full disk).
  void write(const std::string& text) const {
    std::FILE* f = std::fopen(path_.c_str(), "w");
    const bool written = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int error = errno;
    if ((f != nullptr && std::fclose(f) != 0) || !written) {
      throw ResourceError(fmt::format("cannot write a temporary file for the report script, {} (TMPDIR): {}", path_,
                                      std::strerror(written ? errno : error)));
    }
  }

 private:
  std::string path_;
};

std::string read_back(const std::string& path, std::string_view what) {
  try {
    return read_input_file(path, what, kLogLimit);
  } catch (const Error& e) {
    return e.what();
  }
}

// The script's own error line ("scalebench report: error: …"); empty when it printed none.
std::string script_error(const std::string& log) {
  std::string error;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("scalebench report: error: ", 0) == 0) error = line.substr(26);
  }
  return error;
}

// The script's warning lines ("scalebench report: warning: …").
std::vector<std::string> script_warnings(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("scalebench report: warning: ", 0) == 0) out.push_back(line);
  }
  return out;
}

// The last line with something on it, for a Python that failed without the script's error line.
std::string last_line(const std::string& log) {
  std::string last;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.size() > 300 ? last.substr(0, 300) + "…" : last;
}

// What a Python that did not write the page did, as one message (exit code 3).
std::string failed_python(const Python& py, const StepOutcome& step, const std::string& said) {
  const std::string what = step.exit_code > 128 ? fmt::format("was killed by signal {}", step.exit_code - 128)
                                                : fmt::format("ended with exit status {}", step.exit_code);
  const std::string last = last_line(said);
  return fmt::format("the report script's Python {} {}{}", py.shown, what,
                     last.empty() ? " and printed nothing" : ": " + last);
}

// A Python that exited 0: the page it names in `page_path_file` must be there, and not empty when
// it is a regular file (a device or a FIFO is written in place and stays what it is).
ReportOutcome check_written(const Python& py, const std::string& page_path_file) {
  const std::string path = read_back(page_path_file, "the report script's page path");
  if (path.empty()) {
    return {3, "",
            fmt::format("the report script's Python {} exited 0 but printed no page path (is it a Python with "
                        "matplotlib?)",
                        py.shown)};
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return {3, "", fmt::format("the report script's Python {} named the page {}, which is missing", py.shown, path)};
  }
  if (S_ISREG(st.st_mode) && st.st_size == 0) {
    return {3, "", fmt::format("the report script's Python {} named the page {}, which is empty", py.shown, path)};
  }
  return {0, path, ""};
}

// Runs the report script with `args` under each Python in turn (see write_report) until one draws
// the page or fails for a reason another Python would not mend (`matplotlib`: whether the page
// needs it). A stop signal (with a StopSignals guard held) throws Stopped once the script has ended.
ReportOutcome run_report_script(const std::vector<std::string>& args, bool matplotlib) {
  const TempFile log("log");
  const TempFile page_path("page");
  ReportOutcome result{3, "",
                       fmt::format("no python3 found: install python3{} (tools/setup does)",
                                   matplotlib ? " and python3-matplotlib" : "")};
  for (const auto& py : python_candidates()) {
    if (!program_available(py.program)) {
      if (!py.from_env) continue;
      return {3, "",
              fmt::format("{}: no such program, or not executable; name a Python{}", py.shown,
                          matplotlib ? " with matplotlib" : "")};
    }
    // "--opt=value" and "--" before a folder: a name that starts with '-' stays a name.
    std::vector<std::string> argv{py.program, "-c", std::string(report_script()),
                                  "--page-path-file=" + page_path.path()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::FILE* truncate = std::fopen(log.path().c_str(), "w");
    if (truncate != nullptr) std::fclose(truncate);
    const StepOutcome step = run_step(argv, log.path(), kReportTimeoutS);
    throw_if_stopped("the report was stopped: no page written and nothing of it left behind (results written "
                     "before it are kept)");
    const std::string said = read_back(log.path(), "the report script's output");
    if (step.timed_out) {
      return {3, "", fmt::format("the report script's Python {} did not finish in {:g} s", py.shown, kReportTimeoutS)};
    }
    if (step.exit_code == 0) {
      ReportOutcome written = check_written(py, page_path.path());
      written.warnings = script_warnings(said);
      return written;
    }
    const std::string error = script_error(said);
    // Another Python may have matplotlib; any other failure is the folder's or the page's.
    if (step.exit_code == 3 && error.find("matplotlib is missing") != std::string::npos) {
      result = {3, "", error};
      continue;
    }
    if ((step.exit_code == 2 || step.exit_code == 3) && !error.empty()) {
      return {step.exit_code, "", error, script_warnings(said)};
    }
    return {3, "", failed_python(py, step, said)};
  }
  return result;
}

}  // namespace

ReportOutcome write_report(const std::string& folder, const std::string& out) {
  // A stop signal while the page is drawn goes to the script (it removes its temporary file), then
  // ends this report with 128 + the signal; the temporary files go on the way out.
  std::optional<StopSignals> stop_signals;
  if (!stop_signals_held()) stop_signals.emplace();
  std::vector<std::string> args;
  if (!out.empty()) args.push_back("--out=" + out);
  args.insert(args.end(), {"--", folder});
  return run_report_script(args, true);
}

ReportOutcome write_compare_report(const nlohmann::json& comparison, const std::string& out) {
  // Held before the temporary file is made: a stop signal cannot end the process between its
  // making and its removal.
  std::optional<StopSignals> stop_signals;
  if (!stop_signals_held()) stop_signals.emplace();
  const TempFile doc("compare");
  doc.write(comparison.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return run_report_script({"--compare=" + doc.path(), "--out=" + out, "--out-option=--report"}, false);
}

void write_report_after_run(const std::string& folder, bool quiet) {
  ReportOutcome r;
  try {
    r = write_report(folder);
  } catch (const Stopped&) {
    throw;
  } catch (const Error& e) {
    r = {3, "", e.what()};
  }
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
