#pragma once
// Output files (docs/output.md, "Output files"): a regular file or a new path is replaced
// atomically (written beside it, then renamed: readers never see a partial file); a symbolic link
// is followed and its target treated the same; a character device or pipe (/dev/null,
// /dev/stdout, a FIFO) is written in place; a folder or anything else is refused.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace scalebench {

// Throws (UsageError for an empty path, ResourceError otherwise) when `path` cannot be written
// that way; call it before any work. `option` names the path in messages ("--json", "--csv").
void check_output_path(const std::string& path, std::string_view option = "--json");
// Writes `text` to `path` as described above; ResourceError naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& text);
void write_json_atomic(const std::string& path, const nlohmann::json& j);

// Files of a results folder (a contrast's or a study's: its tables, plan, logs, records, report),
// docs/output.md "Results folders": made in the folder itself, never through a symbolic link.
// Refused with ResourceError naming `path` and what is there: a symbolic link (live or dangling),
// a folder, FIFO, device or socket at `path`, or a folder of `path` that is itself a symbolic link
// or not a folder. Nothing is written outside the folder.
void check_results_file(const std::string& path);
// Writes `text` to `path` under check_results_file's rule: a fresh file made (O_EXCL) in the same
// folder, then renamed over `path` (a rename replaces a name, never a link's target).
void write_results_file(const std::string& path, const std::string& text);
void write_results_json(const std::string& path, const nlohmann::json& j);
// A results folder given by an option (`option` names it): refused (ResourceError) when it is a
// symbolic link, naming where it leads (other kinds are left to the caller's checks).
void check_results_folder(const std::string& dir, std::string_view option);

}  // namespace scalebench
