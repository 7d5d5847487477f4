#include "compare/compare_output.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/drivers/report.hpp"

namespace scalebench::compare {

void write_outputs(const nlohmann::json& doc, const CompareOptions& o) {
  if (!o.json_path.empty()) {
    // A path given on the command line need not be UTF-8: such bytes are written as U+FFFD.
    write_file_atomic(o.json_path, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
  if (o.report_path.empty()) return;
  // The page is drawn by the report script the binary carries (report.hpp), not written here: one
  // escaping of every string, one stylesheet, one output-file rule (a regular file replaced whole,
  // a device or FIFO written in place, a FIFO nobody reads refused) and one handling of stop
  // signals serve every page scalebench writes; and `tools/report --compare FILE` draws a saved
  // --json again. The figures are a few bars and lines, drawn as SVG without matplotlib.
  const ReportOutcome r = write_compare_report(doc, o.report_path);
  for (const std::string& w : r.warnings) std::fprintf(stderr, "%s\n", w.c_str());
  if (r.exit_code != 0) {
    const std::string named = "--report " + o.report_path;
    throw Error(r.exit_code == 2 ? ExitCode::usage : ExitCode::resource,
                r.message.find(named) != std::string::npos ? r.message
                                                           : fmt::format("{} not written: {}", named, r.message));
  }
  std::fprintf(stderr, "scalebench compare: report: %s\n", r.path.c_str());
}

}  // namespace scalebench::compare
