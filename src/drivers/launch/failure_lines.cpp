// Why a step failed, from its log: scalebench's own error, else the launcher's cause lines (srun,
// Open MPI, PMIx, the remote shell) rather than the generic trailers printed after them.
#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "results/files.hpp"
#include "results/results_dir.hpp"
#include "scalebench/drivers/launch.hpp"

namespace scalebench {

namespace {

constexpr std::size_t kShown = 3, kMaxChars = 400;
constexpr std::size_t npos = std::string::npos;

// Phrases of the trailers every failure prints, whatever its cause (lower case): Open MPI's abort
// banner and summary, srun's per-task exit lines.
constexpr std::array<std::string_view, 12> kGeneric = {"an error occurred in mpi_init",
                                                       "on a null communicator",
                                                       "mpi_errors_are_fatal",
                                                       "potentially your mpi job",
                                                       "local abort before mpi_init",
                                                       "primary job",
                                                       "per user-direction",
                                                       "exited with non-zero status",
                                                       "the first process to do so",
                                                       "exited with exit code",
                                                       "job step aborted: waiting",
                                                       "please configure as appropriate"};
// Words of a cause (lower case).
constexpr std::array<std::string_view, 18> kCause = {"error",
                                                     "unreachable",
                                                     "not built with",
                                                     "not enough",
                                                     "exited on signal",
                                                     "killed",
                                                     "cannot",
                                                     "can't",
                                                     "unable",
                                                     "failed",
                                                     "refused",
                                                     "no such",
                                                     "not found",
                                                     "not known",
                                                     "permission denied",
                                                     "more processors requested",
                                                     "could not",
                                                     "timed out"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has_any(const std::string& lowered, const auto& phrases) {
  return std::any_of(phrases.begin(), phrases.end(), [&](std::string_view p) { return lowered.find(p) != npos; });
}

// Open MPI's help texts sit between rules of dashes (74 of them).
bool is_rule(const std::string& line) { return line.size() >= 40 && line.find_first_not_of('-') == npos; }

// A help text's first paragraph up to its first full stop: what happened, not the advice after it.
std::string first_sentence(const std::string& paragraph) {
  const auto stop = paragraph.find(". ");
  return stop == npos ? paragraph : paragraph.substr(0, stop + 1);
}

// Words separated by one space: the help texts align their values with runs of spaces.
std::string squeezed(const std::string& line) {
  std::istringstream words(line);
  std::string out;
  for (std::string w; words >> w;) out += (out.empty() ? w : " " + w);
  return out;
}

// "Key: value" of a help text's detail lines ("Component: nosuch", "Local host: node1"), else "".
std::string detail(const std::string& squeezed_line) {
  const auto colon = squeezed_line.find(": ");
  if (colon == npos || colon == 0 || colon > 24) return "";
  const bool plain_key = std::all_of(squeezed_line.begin(), squeezed_line.begin() + static_cast<long>(colon),
                                     [](unsigned char c) { return std::isalpha(c) || c == ' ' || c == '_'; });
  return plain_key ? squeezed_line : "";
}

// One Open MPI help text: the first sentence of its first paragraph, with its detail lines.
struct HelpText {
  std::string paragraph, first, details;
  void add(const std::string& line) {
    const std::string words = squeezed(line);
    if (const std::string kv = detail(words); !kv.empty()) {
      end_paragraph();  // the details end the paragraph they follow
      details += (details.empty() ? "" : "; ") + kv;
    } else if (words.empty()) {
      end_paragraph();
    } else if (first.empty()) {
      paragraph += (paragraph.empty() ? "" : " ") + words;
    }
  }
  void end_paragraph() {
    if (first.empty() && !paragraph.empty()) first = first_sentence(paragraph);
    paragraph.clear();
  }
  std::string message() {
    end_paragraph();
    if (details.empty()) return first;
    return (first.ends_with(':') ? first.substr(0, first.size() - 1) : first) + " (" + details + ")";
  }
};

// The log as messages: each line outside a help text, and each help text as one (HelpText).
std::vector<std::string> log_messages(std::istream& in) {
  std::vector<std::string> out;
  std::optional<HelpText> help;
  auto close = [&] {
    if (const std::string m = help->message(); !m.empty()) out.push_back(m);
    help.reset();
  };
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (is_rule(line)) {
      if (help)
        close();
      else
        help.emplace();
    } else if (help) {
      help->add(line);
    } else if (const auto start = line.find_first_not_of(" \t");
               start != npos && line.find_first_not_of(" \t-*=", start) != npos) {
      out.push_back(line.substr(start));
    }
  }
  if (help) close();
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

// The word of `m` after the first `marker` (after `after`, when given), without the punctuation
// that ends it; "" when there is none.
std::string word_after(const std::string& m, std::string_view marker, std::string_view after = "") {
  const auto from = after.empty() ? 0 : m.find(after);
  if (from == npos) return "";
  const auto at = m.find(marker, from);
  if (at == npos) return "";
  std::istringstream rest(m.substr(at + marker.size()));
  std::string word;
  rest >> word;
  while (!word.empty() && std::string_view(".,;:)").find(word.back()) != std::string_view::npos) word.pop_back();
  return word;
}

// The host a message says was lost: Open MPI 4.1's "lost communication with a remote daemon"
// ("Remote daemon: [[1,0],1] on node node2") and "... with the following daemon" ("Node: node2"),
// or the remote shell's words for a connection that died ("Connection to node2 closed by remote
// host.", "Timeout, server node2 not responding."); "" when it names none.
std::string lost_host_named(const std::string& m) {
  if (m.find("lost communication with") != npos) {
    const std::string remote = word_after(m, " on node ", "Remote daemon");
    return remote.empty() ? word_after(m, "Node: ") : remote;
  }
  if (m.find(" closed") != npos) return word_after(m, "Connection to ");
  if (m.find("not responding") != npos) return word_after(m, "Timeout, server ");
  if (m.find("did not answer for") != npos) return word_after(m, "host ");  // the test cluster's agent
  return "";
}

// A host lost while the run was under way, as one line naming it. Open MPI 4.1 says so directly
// when its daemon's link drops ("ORTE has lost communication with a remote daemon"); when the
// remote shell that holds the daemon ends, it prints its start-up text ("ORTE was unable to
// reliably start one or more daemons") even mid-run (docs/cluster.md), which is a loss when the
// run was under way: the remote shell said its connection timed out or closed, or a progress line
// of scalebench's ("scalebench gemm: repeat 2/6 done") came before it.
std::optional<std::string> lost_host_line(const std::vector<std::string>& messages) {
  bool under_way = false, daemon_ended = false, lost = false;
  std::string host;
  for (const auto& m : messages) {
    if (m.starts_with("scalebench ") && m.find(": repeat ") != npos) under_way = true;
    if (m.find("lost communication with") != npos) lost = true;
    if (m.find("unable to reliably start one or more daemons") != npos) daemon_ended = true;
    if (const std::string h = lost_host_named(m); !h.empty() && host.empty()) {
      host = h;
      under_way = true;  // a connection that timed out or closed was made first
    }
  }
  if (!lost && !(daemon_ended && under_way)) return std::nullopt;
  const std::string cause = "the host went down, or its network link or Open MPI's daemon there failed";
  if (host.empty()) return "a remote host was lost during the run (" + cause + "; the launcher named no host)";
  return "host " + host + " was lost during the run (" + cause + ")";
}

}  // namespace

std::string failure_lines(const std::string& log_path) {
  std::string own = results::last_error_line(log_path);
  if (!own.empty()) return own;
  std::istringstream in(results::read_run_output(log_path, "run log"));
  const std::vector<std::string> messages = log_messages(in);
  if (std::optional<std::string> lost = lost_host_line(messages)) return *lost;
  std::vector<const std::string*> causes, all;
  for (const auto& m : messages) {
    all.push_back(&m);
    const std::string l = lower(m);
    if (has_any(l, kCause) && !has_any(l, kGeneric)) causes.push_back(&m);
  }
  return causes.empty() ? join_distinct(all, true) : join_distinct(causes, false);
}

}  // namespace scalebench
