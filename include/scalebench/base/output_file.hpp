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

}  // namespace scalebench
