#include "compare/compare_table.hpp"

#include <fmt/format.h>

#include "report/figure_text.hpp"

namespace scalebench::compare {
namespace {

// "0.001234", at most 4 significant digits, for the seconds columns.
std::string seconds_text(double s) { return fmt::format("{:.4g}", s); }

// A ratio with three decimals, or four significant digits far from 1 (figure_text.hpp).
std::string ratio_text(double v) { return report::fixed_text(v, 3); }

std::string ratio_text(const PhaseComparison& p) { return p.ratio ? ratio_text(*p.ratio) : "-"; }

std::string interval_text(const PhaseComparison& p) {
  return p.interval ? fmt::format("[{}, {}]", ratio_text(p.interval->lo), ratio_text(p.interval->hi)) : "-";
}

// The phases whose verdict is the run's, as "compute ×1.20, gather ×1.31".
std::string moved_phases(const RunComparison& r) {
  std::string s;
  for (const PhaseComparison& p : r.phases) {
    if (p.verdict != r.verdict || (r.verdict != Verdict::slower && r.verdict != Verdict::faster)) continue;
    s += fmt::format("{}{} ×{}", s.empty() ? "" : ", ", p.phase, ratio_text(p));
  }
  return s.empty() ? "" : " (" + s + ")";
}

std::string keys_line(const char* what, const std::vector<std::string>& keys) {
  if (keys.empty()) return "";
  std::string s = fmt::format("{} ({}):", what, keys.size());
  for (const std::string& k : keys) s += "\n  " + k;
  return s + "\n";
}

}  // namespace

std::string rule_text(const CompareOptions& o) {
  return fmt::format("slower or faster at a ratio of medians beyond {:g}% and Mann–Whitney p < {:g}",
                     o.min_change * 100, o.p_max);
}

nlohmann::json options_json(const CompareOptions& o) {
  return {{"min_change", o.min_change},
          {"p_max", o.p_max},
          {"confidence", o.confidence},
          {"phases", o.phases},
          {"test", "Mann–Whitney U, two-sided"},
          {"interval", "Hodges–Lehmann interval of the ratio B/A (shift of log times)"}};
}

std::string comparison_header(const Side& a, const Side& b, const CompareOptions& o) {
  return fmt::format("scalebench compare: A {} ({}, {} runs), B {} ({}, {} runs)\n"
                     "B against A: ratio of medians B/A with its {:g}% Hodges–Lehmann interval; {}\n",
                     a.path, a.kind, a.runs.size(), b.path, b.kind, b.runs.size(), o.confidence * 100, rule_text(o));
}

std::string run_block(const RunComparison& r, const CompareOptions& o) {
  std::string s = fmt::format("\n{}{}: {}{}\n", r.key, r.key_b != r.key ? fmt::format(" / B: {}", r.key_b) : "",
                              verdict_name(r.verdict), moved_phases(r));
  s += fmt::format("  {:<12} {:>11} {:>11} {:>7}  {:<18} {:>9} {:>7}  {}\n", "phase", "A median s", "B median s", "B/A",
                   fmt::format("{:g}% interval", o.confidence * 100), "p", "repeats", "verdict");
  for (const PhaseComparison& p : r.phases) {
    s += fmt::format("  {:<12} {:>11} {:>11} {:>7}  {:<18} {:>9.2g} {:>7}  {}\n", p.phase, seconds_text(p.median_a),
                     seconds_text(p.median_b), ratio_text(p), interval_text(p), p.test.p,
                     fmt::format("{}/{}", p.a.size(), p.b.size()), verdict_name(p.verdict));
  }
  if (r.predicted_ratio) s += fmt::format("  model: predicted end to end B/A {}\n", ratio_text(*r.predicted_ratio));
  for (const ContextDifference& d : r.context) s += fmt::format("  differs: {}: {} -> {}\n", d.what, d.a, d.b);
  return s;
}

std::string unmatched_lines(const Side& a, const Side& b, const std::vector<std::string>& only_a,
                            const std::vector<std::string>& only_b) {
  const std::string s = keys_line("only in A", only_a) + keys_line("only in B", only_b) +
                        keys_line("no ok run in A", a.not_ok) + keys_line("no ok run in B", b.not_ok);
  return s.empty() ? s : "\n" + s;
}

}  // namespace scalebench::compare
