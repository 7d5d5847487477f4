#pragma once
// Input files (docs/output.md, "Input files"): every file scalebench reads because a user named
// it (an option, an environment variable, a study file, a record a driver wrote) is read one
// way. Its kind is checked on the opened descriptor before any byte is read: a regular file (or
// a link to one) is read; a FIFO, a device, a socket or a folder is refused, with the kind
// named, since a FIFO would block forever and /dev/zero never ends. The read is bounded: a file
// larger than the limit is refused before it is read. The message names the file and where its
// path came from ("--profile", "SCALEBENCH_PROFILE", "the study's runs.jsonl").
#include <cstddef>
#include <string>
#include <string_view>

namespace scalebench {

// Large enough for any profile, hostfile, study file, record or runs.jsonl scalebench writes.
inline constexpr std::size_t default_input_limit = std::size_t{256} << 20;

// The kind of what `path` names, for messages: "a regular file", "a folder", "a FIFO",
// "a character device", "a block device", "a socket", "a symbolic link"; "" if nothing is there.
std::string path_kind(const std::string& path);

// The whole file. Throws UsageError for an empty path; ResourceError naming `origin` and the path
// when it is missing, unreadable, not a regular file or larger than `max_bytes`.
std::string read_input_file(const std::string& path, std::string_view origin,
                            std::size_t max_bytes = default_input_limit);

// Whether `path` exists (after links); throws as read_input_file when it exists but is not a
// regular file that can be read. Used to check inputs before any work.
bool check_input_file(const std::string& path, std::string_view origin);

}  // namespace scalebench
