#include "results/record_check.hpp"

#include <limits>

#include <fmt/format.h>

#include "scalebench/base/phases.hpp"

namespace scalebench::results {
namespace {

constexpr std::int64_t kMaxRecordCount = std::numeric_limits<int>::max();

// A rate, joules, watts or a ratio: a number in [0, kMaxFigure].
void nonnegative(const JsonField& f, std::string_view key) { (void)f.number_in_or(key, 0, kMaxFigure, "a number", 0); }
// A model's time: seconds in [0, kMaxSeconds].
void predicted_seconds(const JsonField& f, std::string_view key) {
  (void)f.number_in_or(key, 0, kMaxSeconds, "seconds", 0);
}
void measured_seconds(const JsonField& f, std::string_view key) {
  if (f.has(key)) check_measured_seconds(f, key);
}
void optional_text(const JsonField& f, std::string_view key) { (void)f.text_or(key, ""); }
void optional_count(const JsonField& f, std::string_view key) { (void)f.whole_or(key, 0, kMaxRecordCount, 0); }

// A string, or a list of strings.
void text_or_texts(const JsonField& f, std::string_view key) {
  if (f.has(key) && !f.at(key).is_string()) (void)f.texts(key);
}

// {"median_s": seconds} objects by name ("phases"; a peer's pre_distributed, end_to_end).
void timed(const JsonField& t) { measured_seconds(t, "median_s"); }

// Each phase's median and, where kept, the slowest rank's time of each repeat (what compare tests).
void check_phases(const JsonField& r) {
  if (!r.has("phases")) return;
  const JsonField phases = r.sub("phases");
  for (const std::string& name : phases.keys()) {
    const JsonField p = phases.sub(name);
    timed(p);
    if (!p.has("per_repeat_max_s")) continue;
    for (const JsonField& t : p.list("per_repeat_max_s")) check_measured_seconds(t, "");
  }
}

void check_prediction(const JsonField& r) {
  if (!r.has("prediction")) return;
  const JsonField p = r.sub("prediction");
  if (!p.flag("available")) return;
  const JsonField e = p.sub(phase::end_to_end);
  predicted_seconds(e, "predicted_s");
  measured_seconds(e, "measured_s");
  nonnegative(p, "miss");
  (void)p.flag_or("flagged", false);
  optional_text(p, "worst_phase");
}

void check_energy(const JsonField& r) {
  if (!r.has("energy")) return;
  const JsonField e = r.sub("energy");
  for (const char* k : {"run_j", "mean_w", "gflop_per_j", "j_per_1e9_samples", "per_result_j", "timed_mean_w"}) {
    nonnegative(e, k);
  }
  // The timed interval's joules (a record that gives them; null where too short for the counters).
  if (e.has("timed_j")) {
    const JsonField t = e.sub("timed_j");
    for (const char* k : {"median", "min", "max"}) nonnegative(t, k);
  }
  optional_text(e, "covers");
  for (const char* side : {"cpu", "gpu"}) {
    if (!e.has(side)) continue;
    const JsonField s = e.sub(side);
    (void)s.flag_or("counted", false);
    optional_text(s, "reason");
  }
}

void check_peers(const JsonField& r) {
  if (!r.has("peers") || !r.sub("peers").has("scalapack")) return;
  const JsonField p = r.sub("peers").sub("scalapack");
  optional_text(p, "call");
  optional_count(p, "block_width");
  const JsonField variants = p.sub("variants");
  for (const char* v : {"tuned", "shipped"}) {
    const JsonField variant = variants.sub(v);
    optional_count(variant, "k_step");
    timed(variant.sub("pre_distributed"));
    timed(variant.sub(phase::end_to_end));
    nonnegative(variant, "ratio_run_vs_peer");
    nonnegative(variant, "ratio_end_to_end_run_vs_peer");
  }
}

// What the report shows of the machine and build.
void check_context(const JsonField& r) {
  text_or_texts(r, "hosts");
  optional_text(r, "cpu_model");
  if (r.has("gpus")) {
    const JsonField g = r.sub("gpus");
    (void)g.flag_or("used", false);
    optional_text(g, "reason");
    if (g.has("devices")) {
      for (const JsonField& d : g.list("devices")) {
        if (!d.raw().is_object()) d.fail("", "must be an object (got " + json_kind(d.raw()) + ")");
        for (const char* k : {"host", "uuid", "name", "driver_release"}) optional_text(d, k);
      }
    }
  }
  if (r.has("versions")) {
    const JsonField v = r.sub("versions");
    for (const char* k : {"scalebench", "git", "git_source", "mpi_library", "nccl"}) optional_text(v, k);
    if (v.has("openblas") && !v.at("openblas").is_string()) optional_text(v.sub("openblas"), "config");
    if (v.has("cuda") && v.at("cuda").is_object()) {
      for (const char* k : {"runtime", "driver", "cublas"}) optional_text(v.sub("cuda"), k);
    }
  }
  if (r.has("comm_bound")) nonnegative(r.sub("comm_bound"), "moved_to_bound");
}

}  // namespace

void check_measured_seconds(const JsonField& t, std::string_view key) {
  const nlohmann::json& v = key.empty() ? t.raw() : t.at(key);
  if (!v.is_number()) t.fail(key, fmt::format("must be a number (got {})", json_kind(v)));
  const double s = v.get<double>();
  if (s == 0 || (s >= kMinSeconds && s <= kMaxSeconds)) return;
  t.fail(key, fmt::format("must be a measured time: 0 or seconds in [{:g}, {:g}] (got {})", kMinSeconds, kMaxSeconds,
                          v.dump()));
}

void check_run_record(const JsonField& record) {
  const JsonField& r = record;
  if (!r.raw().is_object()) r.fail("", "must be an object (got " + json_kind(r.raw()) + ")");
  optional_text(r, "subcommand");
  // argv of rank 0, as the run wrote it: compare keys a bare record by its options.
  if (r.has("command_line")) (void)r.texts("command_line");
  optional_count(r, "ranks");
  (void)r.flag_or("ok", false);
  if (r.has("config")) {
    const JsonField c = r.sub("config");
    optional_text(c, "backend");
    optional_count(c, "threads_per_rank");
  }
  check_phases(r);
  if (r.has("rates")) {
    const JsonField rates = r.sub("rates");
    for (const char* k : {"compute_gflops", "end_to_end_gflops", "samples_per_s", "end_to_end_samples_per_s"}) {
      nonnegative(rates, k);
    }
  }
  check_prediction(r);
  check_energy(r);
  check_peers(r);
  check_context(r);
}

}  // namespace scalebench::results
