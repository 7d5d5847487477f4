#pragma once
// `scalebench report DIR`: one self-contained report.html (inline SVG figures, no network) for a
// contrast or a study folder, drawn by the report script the binary carries (tools/report.py)
// with a Python that has matplotlib. contrast and study write it at their end.
#include <string>
#include <string_view>

namespace scalebench {

// The bytes of tools/report.py, as built in.
std::string_view report_script();

struct ReportOutcome {
  int exit_code = 0;    // 0 written; 2 not a contrast or study folder, nothing finished; 3 no Python
                        // with matplotlib, or the page cannot be written
  std::string path;     // the page written
  std::string message;  // the report script's error line (exit_code != 0)
};

// Writes `out` (empty: `folder`/report.html). The Python: SCALEBENCH_PYTHON, else python3 on PATH,
// else /usr/bin/python3 — the first of them that has matplotlib.
ReportOutcome write_report(const std::string& folder, const std::string& out = "");

// What the drivers do at their end: writes the report, or says on stderr why it could not (their
// results are written already and their exit code stays theirs). `quiet`: no line on success.
void write_report_after_run(const std::string& folder, bool quiet);

}  // namespace scalebench
