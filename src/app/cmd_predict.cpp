// `scalebench predict gemm|montecarlo`: the model's answer for a run here or on a machine a
// saved profile describes, scaled to N nodes × R ranks × G GPUs (docs/model.md, "predict").
// Nothing is computed and MPI is not started.
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/drivers/study.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench::app {
namespace {

using nlohmann::json;

struct PredictOptions {
  int nodes = 1, ranks_per_node = 1, gpus_per_node = -1;
  std::string profile, inter_gbps, inter_latency_us, price_per_hour;
};

void add_predict_options(CLI::App* app, PredictOptions& o) {
  app->add_option("--nodes", o.nodes, "Nodes of the machine predicted for [1]");
  app->add_option("--ranks-per-node", o.ranks_per_node, "MPI ranks per node (placed by blocks) [1]");
  app->add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node [the profile's GPU count, 0 without]");
  app->add_option(
      "--profile", o.profile,
      "Machine profile (from `scalebench calibrate`, possibly of another machine) [SCALEBENCH_PROFILE, else "
      "the default place]");
  app->add_option("--inter-node-gbps", o.inter_gbps, "Override the inter-node link bandwidth, GB/s");
  app->add_option("--inter-node-latency-us", o.inter_latency_us, "Override the inter-node link latency, microseconds");
  app->add_option("--price-per-hour", o.price_per_hour, "Price of one node-hour: adds the cost per job");
}

// The profile with the link overrides applied, and the layout.
std::pair<Profile, MachineLayout> machine_of(const PredictOptions& o) {
  if (o.nodes < 1) throw UsageError(fmt::format("--nodes {} must be at least 1", o.nodes));
  if (o.ranks_per_node < 1) throw UsageError(fmt::format("--ranks-per-node {} must be at least 1", o.ranks_per_node));
  if (o.gpus_per_node < -1) throw UsageError(fmt::format("--gpus-per-node {} must be 0 or more", o.gpus_per_node));
  std::optional<double> gbps, latency;
  if (!o.inter_gbps.empty()) gbps = parse_real("--inter-node-gbps", o.inter_gbps);
  if (!o.inter_latency_us.empty()) latency = parse_real("--inter-node-latency-us", o.inter_latency_us);
  if ((gbps && *gbps <= 0) || (latency && *latency < 0)) {
    throw UsageError("--inter-node-gbps must be > 0 and --inter-node-latency-us >= 0");
  }
  Profile p = load_profile(o.profile.empty() ? default_profile_path() : o.profile);
  if (gbps || latency) {
    if (!p.inter_node && !(gbps && latency)) {
      throw UsageError(fmt::format("profile {} has no inter-node link: give both --inter-node-gbps and "
                                   "--inter-node-latency-us",
                                   p.source));
    }
    Link l = p.inter_node.value_or(Link{});
    if (gbps) l.bandwidth_Bps = *gbps * 1e9;
    if (latency) l.latency_s = *latency * 1e-6;
    p.inter_node = l;
  }
  MachineLayout m{o.nodes, o.ranks_per_node,
                  o.gpus_per_node >= 0 ? o.gpus_per_node : (p.gpu.present ? p.gpu.count : 0)};
  return {std::move(p), m};
}

json phases_json(const Prediction& pred) {
  json ph = json::object();
  for (const auto& [name, s] : pred.phases) ph[name] = s;
  return ph;
}

// What a workload contributes: its prediction on any layout, and its variants on one core and one GPU.
struct PredictedWorkload {
  std::string what;  // the configuration in words
  std::string unit;  // "GFLOP/s" or "samples/s"
  double work = 0;   // flops or samples of one end-to-end
  bool gpu = false;  // a GPU backend
  int threads = 1;
  int repeats = 1;  // warm-up + timed repeats of one job
  std::function<Prediction(const MachineLayout&)> here;
  std::function<Prediction(const MachineLayout&)> one_core;
  std::function<Prediction(const MachineLayout&)> one_gpu;
  // The smallest size at which one GPU beats a whole node's cores, as text.
  std::function<std::string()> crossover;
};

std::optional<double> try_seconds(const std::function<Prediction(const MachineLayout&)>& f, const MachineLayout& m) {
  try {
    return f(m).end_to_end;
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

// The smallest size in [lo, hi] (geometric steps of 2^(1/8)) at which `gpu` is faster than `cpu`.
std::optional<double> crossover_size(double lo, double hi, const std::function<std::optional<double>(double)>& gpu,
                                     const std::function<std::optional<double>(double)>& cpu) {
  for (double x = lo; x <= hi; x *= std::pow(2.0, 0.125)) {
    const auto g = gpu(x), c = cpu(x);
    if (!g || !c) return std::nullopt;
    if (*g < *c) return x;
  }
  return std::nullopt;
}

int report(const PredictedWorkload& w, const Profile& p, const MachineLayout& m, const PredictOptions& o,
           const std::optional<std::string>& json_path) {
  const Prediction pred = w.here(m);
  const double e2e = pred.end_to_end;
  json out = {{"subcommand", "predict"},
              {"workload", w.what},
              {"profile", {{"path", p.source}, {"host", p.host}, {"created_at", p.created_at}}},
              {"layout",
               {{"nodes", m.nodes},
                {"ranks_per_node", m.ranks_per_node},
                {"gpus_per_node", m.gpus_per_node},
                {"threads_per_rank", w.threads}}},
              {"phases", phases_json(pred)},
              {"end_to_end_s", e2e},
              {"rate", e2e > 0 ? w.work / e2e : 0.0},
              {"rate_unit", w.unit},
              {"notes", pred.notes}};
  std::string text = fmt::format("scalebench predict {}  on {} node(s) x {} rank(s) x {} thread(s), {} GPU(s)/node\n"
                                 "profile {} (host {}, {})\n{:<12}{:>14}\n",
                                 w.what, m.nodes, m.ranks_per_node, w.threads, m.gpus_per_node, p.source, p.host,
                                 p.created_at, "phase", "predicted s");
  for (const auto& [name, s] : pred.phases) text += fmt::format("{:<12}{:>14.6f}\n", name, s);
  text += fmt::format("{:<12}{:>14.6f}   ({:.4g} {})\n", phase::end_to_end, e2e, e2e > 0 ? w.work / e2e : 0.0, w.unit);
  const double cores = static_cast<double>(m.ranks()) * w.threads;
  const double gpus = static_cast<double>(m.nodes) * m.gpus_per_node;
  auto against = [&](const char* key, const char* label, const std::function<Prediction(const MachineLayout&)>& f,
                     double units) {
    const auto base = try_seconds(f, {1, 1, key == std::string("one_gpu") ? 1 : 0});
    if (!base || e2e <= 0) {
      out[key] = nullptr;
      text += fmt::format("against {}: no figures in the profile\n", label);
      return;
    }
    const double speedup = *base / e2e;
    out[key] = {{"end_to_end_s", *base}, {"speedup", speedup}, {"efficiency", units > 0 ? speedup / units : 0.0}};
    text += fmt::format("against {}: {:.6f} s -> speed-up {:.2f}x", label, *base, speedup);
    text += units > 0 ? fmt::format(", efficiency {:.1f}% over {} {}\n", 100.0 * speedup / units, units,
                                    w.gpu ? "GPU(s)" : "core(s)")
                      : "\n";
  };
  against("one_core", "one core", w.one_core, w.gpu ? 0.0 : cores);
  against("one_gpu", "one GPU", w.one_gpu, w.gpu ? gpus : 0.0);
  const std::string cross = w.crossover();
  out["crossover"] = cross;
  text += fmt::format("CPU/GPU crossover: {}\n", cross);
  if (!o.price_per_hour.empty()) {
    const double price = parse_real("--price-per-hour", o.price_per_hour);
    if (price < 0) throw UsageError("--price-per-hour must be >= 0");
    const double job_h = e2e * w.repeats / 3600.0;
    const double node_h = m.nodes * job_h, gpu_h = w.gpu ? gpus * job_h : 0.0;
    out["cost"] = {{"job_repeats", w.repeats},
                   {"node_hours", node_h},
                   {"gpu_hours", gpu_h},
                   {"price_per_node_hour", price},
                   {"cost", node_h * price}};
    text += fmt::format("cost per job ({} repeats): {:.6g} node-hours, {:.6g} GPU-hours, {:.6g} at {} per node-hour\n",
                        w.repeats, node_h, gpu_h, node_h * price, price);
  }
  std::fputs(text.c_str(), stdout);
  if (json_path) write_json_atomic(*json_path, out);
  return 0;
}

PredictedWorkload gemm_prediction(const GemmConfig& cfg_in, const Profile& p, const MachineLayout& m) {
  GemmConfig cfg = cfg_in;
  if (cfg.backend == GemmBackendKind::naive) cfg.threads = 1;
  if (cfg.threads <= 0) cfg.threads = std::max(1, p.cores / m.ranks_per_node);
  const auto& s = cfg.shape;
  PredictedWorkload w;
  w.what = fmt::format("gemm {}x{}x{} {} {}{}{}", s.m, s.n, s.k, to_string(cfg.precision), to_string(cfg.backend),
                       cfg.backend == GemmBackendKind::cublas ? " transport " + to_string(cfg.transport) : "",
                       cfg.overlap    ? " overlap"
                       : cfg.resident ? " resident"
                                      : "");
  w.unit = "GFLOP/s";
  w.work = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) * 1e-9;
  w.gpu = cfg.backend == GemmBackendKind::cublas;
  w.threads = cfg.threads;
  w.repeats = cfg.reps + cfg.warmup;
  w.here = [&p, cfg](const MachineLayout& l) { return predict_gemm(p, cfg, l); };
  const Precision cpu_precision = cfg.precision == Precision::fp64 ? Precision::fp64 : Precision::fp32;
  auto variant = [cfg](GemmBackendKind b, Precision prec, int threads) {
    GemmConfig c = cfg;
    c.backend = b;
    c.precision = prec;
    c.threads = threads;
    c.transport = Transport::mpi;
    c.overlap = c.resident = false;
    return c;
  };
  w.one_core = [&p, c = variant(GemmBackendKind::openblas, cpu_precision, 1)](const MachineLayout& l) {
    return predict_gemm(p, c, l);
  };
  w.one_gpu = [&p, c = variant(GemmBackendKind::cublas, cfg.precision, 1)](const MachineLayout& l) {
    return predict_gemm(p, c, l);
  };
  w.crossover = [&p, variant, cpu_precision, gpu_precision = cfg.precision] {
    auto square = [&](GemmConfig c, double n, int gpus) -> std::optional<double> {
      c.shape = {std::llround(n), std::llround(n), std::llround(n)};
      return try_seconds([&](const MachineLayout& l) { return predict_gemm(p, c, l); }, {1, 1, gpus});
    };
    const auto x = crossover_size(
        64, 65536, [&](double n) { return square(variant(GemmBackendKind::cublas, gpu_precision, 1), n, 1); },
        [&](double n) { return square(variant(GemmBackendKind::openblas, cpu_precision, p.cores), n, 0); });
    return x ? fmt::format("square n >= {} ({}: one GPU with its copies beats one node's {} cores)", std::llround(*x),
                           to_string(gpu_precision), p.cores)
             : std::string("none found for n in [64, 65536] (or no GPU figures in the profile)");
  };
  return w;
}

PredictedWorkload montecarlo_prediction(const MonteCarloConfig& cfg_in, const Profile& p, const MachineLayout& m) {
  MonteCarloConfig cfg = cfg_in;
  resolve_defaults(cfg);
  if (cfg.backend != McBackendKind::cpu) cfg.threads = 1;  // naive is one thread; GPU backends one host thread
  if (cfg.threads <= 0) cfg.threads = std::max(1, p.cores / m.ranks_per_node);
  PredictedWorkload w;
  w.what = fmt::format("montecarlo {} {} samples {}", to_string(cfg.problem), to_string(cfg.backend), cfg.samples);
  w.unit = "samples/s";
  w.work = static_cast<double>(cfg.samples);
  w.gpu = cfg.backend == McBackendKind::cuda || cfg.backend == McBackendKind::curand;
  w.threads = cfg.threads;
  w.repeats = cfg.reps + cfg.warmup;
  w.here = [&p, cfg](const MachineLayout& l) { return predict_montecarlo(p, cfg, l); };
  auto variant = [cfg](McBackendKind b, int threads) {
    MonteCarloConfig c = cfg;
    c.backend = b;
    c.threads = threads;
    return c;
  };
  w.one_core = [&p, c = variant(McBackendKind::cpu, 1)](const MachineLayout& l) { return predict_montecarlo(p, c, l); };
  w.one_gpu = [&p, c = variant(McBackendKind::cuda, 1)](const MachineLayout& l) { return predict_montecarlo(p, c, l); };
  w.crossover = [&p, variant] {
    auto at = [&](MonteCarloConfig c, double samples, int gpus) -> std::optional<double> {
      c.samples = std::max<std::int64_t>(c.chunk_size, std::llround(samples / 4) * 4);
      return try_seconds([&](const MachineLayout& l) { return predict_montecarlo(p, c, l); }, {1, 1, gpus});
    };
    const auto x = crossover_size(
        1e3, 1e13, [&](double n) { return at(variant(McBackendKind::cuda, 1), n, 1); },
        [&](double n) { return at(variant(McBackendKind::cpu, p.cores), n, 0); });
    return x ? fmt::format("samples >= {:.3g} (one GPU beats one node's {} cores)", *x, p.cores)
             : std::string("none found for samples in [1e3, 1e13] (or no GPU figures in the profile)");
  };
  return w;
}

template <class MakeConfig, class MakeWorkload>
int run_predict(const PredictOptions& o, const MakeConfig& make_config, const MakeWorkload& make_workload) {
  try {
    auto cfg = make_config();
    const auto [p, m] = machine_of(o);
    const PredictedWorkload w = make_workload(cfg, p, m);
    if (cfg.json_path) check_output_path(*cfg.json_path);
    return report(w, p, m, o, cfg.json_path);
  } catch (const Error& e) {
    print_error(e.what());
    return static_cast<int>(e.code());
  }
}

// One study run's workload arguments parsed with the workload's own options.
template <class Config>
Config parse_run(const std::function<std::function<Config()>(CLI::App*)>& add_options, const StudyRun& run) {
  CLI::App parser;
  const auto make = add_options(&parser);
  std::vector<std::string> args(run.workload_argv.rbegin(), run.workload_argv.rend() - 1);  // CLI11: reversed
  try {
    parser.parse(args);
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  return make();
}

std::string study_line(const PredictedWorkload& w, const StudyRun& run, const MachineLayout& m) {
  const Prediction pred = w.here(m);
  const auto base = try_seconds(w.one_core, {1, 1, 0});
  phase::KindSums sums;
  for (const auto& [name, seconds] : pred.phases) sums.add(name, seconds);
  return fmt::format("{:>4} {:>5} {:>5} {:>7}  {:>11.4f} {:>16} {:>9}  {:.3f}/{:.3f}/{:.3f}  {}\n", run.index,
                     run.nodes, run.ranks, w.threads, pred.end_to_end,
                     fmt::format("{:.4g} {}", pred.end_to_end > 0 ? w.work / pred.end_to_end : 0.0, w.unit),
                     base ? fmt::format("{:.2f}x", *base / pred.end_to_end) : "-", sums.computation, sums.communication,
                     sums.transfer, run.key);
}

// The model's prediction of a study run, by the study's workload (workload.hpp's names).
using StudyPredictor = std::function<PredictedWorkload(const StudyRun&, const Profile&, const MachineLayout&)>;
const std::map<std::string, StudyPredictor>& study_predictors() {
  static const std::map<std::string, StudyPredictor> by_name = {
      {"gemm",
       [](const StudyRun& run, const Profile& p, const MachineLayout& m) {
         return gemm_prediction(parse_run<GemmConfig>(add_gemm_options, run), p, m);
       }},
      {"montecarlo", [](const StudyRun& run, const Profile& p, const MachineLayout& m) {
         return montecarlo_prediction(parse_run<MonteCarloConfig>(add_montecarlo_options, run), p, m);
       }}};
  return by_name;
}

}  // namespace

int print_study_prediction(const std::string& file, const std::string& profile_path) {
  try {
    const StudySpec spec = load_study(file);
    const std::vector<StudyRun> runs = plan_study(spec);
    PredictOptions o;
    o.profile = profile_path;
    const Profile p = machine_of(o).first;
    std::string table =
        fmt::format("scalebench study {} --predict: {} runs predicted from profile {} (host {}); nothing "
                    "was run\n{:>4} {:>5} {:>5} {:>7}  {:>11} {:>16} {:>9}  {:<22} {}\n",
                    spec.name, runs.size(), p.source, p.host, "#", "nodes", "ranks", "threads", "predicted s", "rate",
                    "vs 1 core", "compute/comm/transfer", "run");
    for (const auto& run : runs) {
      const MachineLayout m{run.nodes, run.ranks_per_node, p.gpu.present ? p.gpu.count : 0};
      try {
        const auto predictor = study_predictors().find(spec.workload);
        if (predictor == study_predictors().end()) {
          throw UsageError(fmt::format("the model has no prediction for workload {}", spec.workload));
        }
        table += study_line(predictor->second(run, p, m), run, m);
      } catch (const UsageError& e) {
        table += fmt::format("{:>4} {:>5} {:>5}  cannot predict: {}  {}\n", run.index, run.nodes, run.ranks, e.what(),
                             run.key);
      }
    }
    std::fputs(table.c_str(), stdout);
    return 0;
  } catch (const Error& e) {
    print_error(e.what());
    return static_cast<int>(e.code());
  }
}

Subcommand register_predict(CLI::App& root) {
  auto* app = root.add_subcommand(
      "predict",
      "Predict a gemm or montecarlo run from a machine profile, on this machine or one the profile describes: "
      "phases, end-to-end, speed-up and efficiency against one core and one GPU, the CPU/GPU crossover, cost");
  app->require_subcommand(1);
  auto o = std::make_shared<PredictOptions>();
  auto* gemm = app->add_subcommand("gemm", "Predict `scalebench gemm` with these options (run-only options such as "
                                           "--pin, --seed, --verify are accepted and ignored; --json writes the "
                                           "prediction)");
  auto* mc = app->add_subcommand("montecarlo", "Predict `scalebench montecarlo` with these options (--json writes the "
                                               "prediction)");
  const auto make_gemm = add_gemm_options(gemm);
  const auto make_mc = add_montecarlo_options(mc);
  add_predict_options(gemm, *o);
  add_predict_options(mc, *o);
  return {app, [=] {
            if (gemm->parsed()) return run_predict(*o, make_gemm, gemm_prediction);
            return run_predict(*o, make_mc, montecarlo_prediction);
          }};
}

}  // namespace scalebench::app
