#pragma once
// `scalebench report DIR`: one self-contained report.html (inline SVG figures, no network) for a
// contrast or a study folder, drawn by the report script the binary carries (tools/report.py)
// with a Python that has matplotlib. contrast and study write it at their end. The page of
// `scalebench compare --report` is drawn by the same script, from the comparison's JSON.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench {

// The bytes of tools/report.py, as built in.
std::string_view report_script();

struct ReportOutcome {
  int exit_code = 0;    // 0 written; 2 not a contrast or study folder, nothing finished, an input
                        // that is not valid (JSON, UTF-8, a field's type); 3 no Python with
                        // matplotlib, a Python that failed or wrote no page, an input that cannot
                        // be read (not a regular file), or the page cannot be written
  std::string path;     // the page written (it exists, and is not empty unless a device or FIFO)
  std::string message;  // one line: the report script's error, or what its Python did (exit_code != 0)
  // The script's warning lines, as it printed them (a runs.jsonl line left out).
  std::vector<std::string> warnings{};
};

// Writes `out` (empty: `folder`/report.html) by the output-file rule (output_file.hpp). The
// Python: SCALEBENCH_PYTHON (an error if it cannot be run), else python3 on PATH, else
// /usr/bin/python3 — the first of them that has matplotlib. A stop signal (SIGINT, SIGTERM,
// SIGHUP) while it draws stops the script, which leaves no partial page and no temporary file,
// and throws Stopped (exit code 128 + the signal). Temporary files go in TMPDIR (else /tmp) and
// are removed on every way out.
ReportOutcome write_report(const std::string& folder, const std::string& out = "");

// Writes `out`, the page of a comparison: `comparison` is the document `scalebench compare --json`
// writes, handed to the script in a temporary file of TMPDIR (else /tmp) that only this user can
// read, removed on every way out. As write_report otherwise (the output-file rule, stop signals,
// the Python's errors), but any Python will do: the page needs no matplotlib. Its error lines name
// the page `--report FILE`.
ReportOutcome write_compare_report(const nlohmann::json& comparison, const std::string& out);

// What the drivers do at their end: writes the report, or says on stderr why it could not (their
// results are written already and their exit code stays theirs; Stopped still goes through).
// `quiet`: no line on success.
void write_report_after_run(const std::string& folder, bool quiet);

}  // namespace scalebench
