#include "results/jsonl.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "results/record_check.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/json_field.hpp"
#include "scalebench/base/output_file.hpp"

namespace scalebench::results {
namespace {

// Closes the file when it goes (and so releases its lock).
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool ends_without_newline(int fd, off_t size) {
  char last = '\n';
  return size > 0 && ::pread(fd, &last, 1, size - 1) == 1 && last != '\n';
}

// Writes all of `text` at the end; false (errno set) on a failed or short write.
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

void append_jsonl(const std::string& path, const nlohmann::json& line) {
  check_results_file(path);  // a link or a device in its place is refused, and so is a linked folder
  // O_NOFOLLOW: a link put there since is refused too (ELOOP), never appended through.
  const Fd f{::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644)};
  if (f.fd < 0) {
    throw ResourceError(fmt::format("cannot append to {}: {}", path,
                                    errno == ELOOP
                                        ? "it is a symbolic link; remove it (results are never written "
                                          "through a link)"
                                        : std::string(std::strerror(errno)) + "; check the folder is writable"));
  }
  struct stat st {};
  if (::flock(f.fd, LOCK_EX) != 0 || ::fstat(f.fd, &st) != 0) {
    throw ResourceError(fmt::format("cannot lock {}: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) throw ResourceError(fmt::format("cannot append to {}: it is not a regular file", path));
  std::string text;
  if (ends_without_newline(f.fd, st.st_size)) text += '\n';  // close a line an earlier crash cut
  text += json_text(line);
  text += '\n';
  if (!write_all(f.fd, text) || ::fsync(f.fd) != 0) {
    const int err = errno;
    const bool cut = ::ftruncate(f.fd, st.st_size) == 0;
    throw ResourceError(fmt::format("cannot append to {}: {}; {}; free space and run the study again (every run "
                                    "recorded before is kept)",
                                    path, std::strerror(err),
                                    cut ? "the file is as it was before this run" : "cutting it back failed too"));
  }
}

namespace {

// Nothing but JSON's whitespace: a line that is ignored, not counted.
bool blank(const std::string& text) { return text.find_first_not_of(" \t\r") == std::string::npos; }

// The line parsed (discarded when it is not JSON); `twice` set to a key an object holds twice.
nlohmann::json parse_line(const std::string& text, std::string& twice) {
  std::vector<std::set<std::string>> keys;
  const nlohmann::json::parser_callback_t note_keys = [&](int, nlohmann::json::parse_event_t e, nlohmann::json& v) {
    if (e == nlohmann::json::parse_event_t::object_start) keys.emplace_back();
    if (e == nlohmann::json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (e == nlohmann::json::parse_event_t::key && !keys.empty() && !keys.back().insert(v.get<std::string>()).second &&
        twice.empty()) {
      twice = v.get<std::string>();
    }
    return true;
  };
  return nlohmann::json::parse(text, note_keys, false);
}

// The line's own fields, then its record's (record_check.hpp); JsonFieldError names the first wrong.
void check_line_fields(const nlohmann::json& j) {
  const JsonField f(j, JsonOrigin{"runs.jsonl line", ""});
  (void)f.text("key");
  (void)f.text("status");
  for (const char* k : {"reason", "record_path", "study"}) (void)f.text_or(k, "");
  (void)f.flag_or("launch_failed", false);
  if (f.has("command") && !f.at("command").is_string()) (void)f.texts("command");
  if (f.has("record")) check_run_record(f.sub("record"));
  // A finished run is one whose record was read back: "ok" without one would count as done and
  // show a time of nothing.
  if (f.at("status") == "ok" && !(f.has("record") && f.sub("record").has("phases"))) {
    f.fail("record", "must be the run's record with its phases when status is \"ok\"");
  }
  // A run whose check failed exits 4 and is written as failed: its times measure no correct result.
  if (f.at("status") == "ok" && !f.sub("record").flag_or("ok", true)) {
    f.fail("record", "is of a run that failed its check (\"ok\": false) while status is \"ok\"");
  }
}

}  // namespace

std::string json_text_problem(const std::string& text, nlohmann::json& value) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) return "starts with a byte-order mark";
  if (const int depth = json_text_depth(text); depth > kMaxJsonDepth) {
    return fmt::format("nests {} levels deep, more than {}", depth, kMaxJsonDepth);
  }
  std::string twice;
  value = parse_line(text, twice);
  if (value.is_discarded()) {
    return "is not valid JSON (cut short, garbled, not UTF-8, NaN or Infinity, or a number beyond a double's range)";
  }
  if (!twice.empty()) return fmt::format("holds the key \"{}\" twice in one object", twice.substr(0, 80));
  return "";
}

std::string runs_line_problem(const std::string& text, nlohmann::json& line) {
  if (std::string why = json_text_problem(text, line); !why.empty()) return why;
  if (!line.is_object()) return fmt::format("is {}, not a JSON object", json_kind(line));
  try {
    check_line_fields(line);
  } catch (const JsonFieldError& e) {
    return e.field();
  }
  // Absent is null or false: the readers index these without looking first.
  if (!line.contains("record")) line["record"] = nullptr;
  if (!line.contains("launch_failed") || line["launch_failed"].is_null()) line["launch_failed"] = false;
  return "";
}

JsonlContents read_jsonl(const std::string& path, const std::string& origin) {
  JsonlContents out;
  if (!check_input_file(path, origin)) return out;
  const std::string text = read_input_file(path, origin);
  int number = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    ++number;
    if (blank(line)) continue;
    nlohmann::json j;
    if (std::string why = runs_line_problem(line, j); why.empty()) {
      out.lines.push_back(std::move(j));
    } else {
      out.unusable.push_back(number);
      out.why.push_back(std::move(why));
    }
  }
  return out;
}

}  // namespace scalebench::results
