// Why a step failed, from its log: scalebench's own error, else the launcher's cause lines (srun,
// Open MPI, PMIx, the remote shell) rather than the generic trailers printed after them.
#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "scalebench/launch.hpp"
#include "study/files.hpp"

namespace scalebench {

namespace {

constexpr std::size_t kShown = 3, kMaxChars = 400;
constexpr std::size_t npos = std::string::npos;

// Phrases of the trailers every failure prints, whatever its cause (lower case): Open MPI's abort
// banner and summary, srun's per-task exit lines.
constexpr std::array<std::string_view, 12> kGeneric = {
    "an error occurred in mpi_init",  "on a null communicator",       "mpi_errors_are_fatal",
    "potentially your mpi job",       "local abort before mpi_init",  "primary job",
    "per user-direction",             "exited with non-zero status",  "the first process to do so",
    "exited with exit code",          "job step aborted: waiting",    "please configure as appropriate"};
// Words of a cause (lower case).
constexpr std::array<std::string_view, 18> kCause = {
    "error",   "unreachable", "not built with", "not enough",    "exited on signal", "killed",
    "cannot",  "can't",       "unable",         "failed",        "refused",          "no such",
    "not found", "not known", "permission denied", "more processors requested", "could not", "timed out"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has_any(const std::string& lowered, const auto& phrases) {
  return std::any_of(phrases.begin(), phrases.end(),
                     [&](std::string_view p) { return lowered.find(p) != npos; });
}

// Open MPI's help texts sit between rules of dashes (74 of them).
bool is_rule(const std::string& line) { return line.size() >= 40 && line.find_first_not_of('-') == npos; }

// A help text's first paragraph up to its first full stop: what happened, not the advice after it.
std::string first_sentence(const std::string& paragraph) {
  const auto stop = paragraph.find(". ");
  return stop == npos ? paragraph : paragraph.substr(0, stop + 1);
}

// The log as messages: each line outside a help text, and the first sentence of each help text.
std::vector<std::string> log_messages(std::istream& in) {
  std::vector<std::string> out;
  bool in_help = false, taken = false;
  std::string paragraph;
  auto take = [&] {
    if (!paragraph.empty() && !taken) out.push_back(first_sentence(paragraph));
    paragraph.clear();
    taken = true;
  };
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (is_rule(line)) {
      if (in_help) take();
      in_help = !in_help;
      taken = false;
      continue;
    }
    const auto start = line.find_first_not_of(" \t");
    if (!in_help) {
      if (start != npos && line.find_first_not_of(" \t-*=", start) != npos) out.push_back(line.substr(start));
    } else if (start == npos) {
      if (!paragraph.empty()) take();
    } else if (!taken) {
      std::istringstream words(line);  // one space between words: the texts align their values
      for (std::string w; words >> w;) {
        if (!paragraph.empty()) paragraph += ' ';
        paragraph += w;
      }
    }
  }
  if (in_help) take();
  return out;
}

// A message without its "[host:pid] " prefix: the same message from every rank is one.
std::string without_prefix(const std::string& m) {
  if (m.empty() || m[0] != '[') return m;
  const auto close = m.find("] ");
  return close == npos ? m : m.substr(close + 2);
}

// The first (or last) kShown distinct messages of `picked`, joined with " | ".
std::string join_distinct(const std::vector<const std::string*>& picked, bool from_end) {
  std::vector<const std::string*> shown;
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < picked.size() && shown.size() < kShown; ++i) {
    const std::string& m = *picked[from_end ? picked.size() - 1 - i : i];
    const std::string key = without_prefix(m);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    shown.push_back(&m);
  }
  if (from_end) std::reverse(shown.begin(), shown.end());
  std::string out;
  for (const auto* m : shown) {
    if (!out.empty()) out += " | ";
    out += *m;
  }
  return out.size() > kMaxChars ? out.substr(0, kMaxChars) + "…" : out;
}

}  // namespace

std::string failure_lines(const std::string& log_path) {
  const std::string own = study::last_error_line(log_path);
  if (!own.empty()) return own;
  std::ifstream in(log_path);
  const std::vector<std::string> messages = log_messages(in);
  std::vector<const std::string*> causes, all;
  for (const auto& m : messages) {
    all.push_back(&m);
    const std::string l = lower(m);
    if (has_any(l, kCause) && !has_any(l, kGeneric)) causes.push_back(&m);
  }
  return causes.empty() ? join_distinct(all, true) : join_distinct(causes, false);
}

}  // namespace scalebench
