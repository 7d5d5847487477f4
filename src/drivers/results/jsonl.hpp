#pragma once
// runs.jsonl: one JSON object a line, only ever appended to. An append is all or nothing (a
// failed or short write is cut back off), so a full disk or a crash never glues two runs together;
// the reader keeps every complete line and reports the ones it cannot use.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench::study {

// Appends `line` and a newline in one write under an exclusive lock, flushed to disk. A last line
// left unterminated by an earlier crash is first closed with a newline (so it stays a line of its
// own). On any failure the file is cut back to its earlier length and ResourceError says why.
void append_jsonl(const std::string& path, const nlohmann::json& line);

struct JsonlContents {
  std::vector<nlohmann::json> lines;  // every complete line that is a usable JSON object (below)
  std::vector<int> unusable;          // 1-based numbers of the lines that do not (cut, garbled)
};
// Reads `path` (missing: empty) as input_file.hpp reads any file (a folder, FIFO or device is
// refused with ResourceError naming `origin`, e.g. "runs.jsonl of results/x"). A torn last line (no
// newline, not valid JSON) counts as unusable, and so does a line that is JSON but not an object
// with a string "key" and "status" (and, when present, a string "reason" and "record_path", a
// boolean "launch_failed", an object or null "record").
JsonlContents read_jsonl(const std::string& path, const std::string& origin);

}  // namespace scalebench::study
