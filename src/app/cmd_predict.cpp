// `scalebench predict <workload>`: the model's answer for a run here or on a machine a
// saved profile describes, scaled to N nodes × R ranks × G GPUs (docs/model.md, "predict").
// Nothing is computed and MPI is not started.
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/drivers/study.hpp"
#include "scalebench/workloads/command.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/prediction.hpp"
#include "scalebench/workloads/workload.hpp"

namespace scalebench::app {
namespace {

using nlohmann::json;

struct PredictOptions {
  std::string nodes = "1", ranks_per_node = "1", gpus_per_node;
  std::optional<std::string> profile;  // set when --profile was given (even empty)
  std::string inter_gbps, inter_latency_us, inter_mtu, price_per_hour;
  std::optional<std::string> energy_price;  // set when --energy-price was given (even empty)
};

// The bounds of the link overrides (the profile's own: model.hpp) and of the price.
constexpr double kMinGbps = 1e-6, kMaxGbps = 1e9, kMaxPrice = 1e12;
// --inter-node-mtu: IPv4's smallest datagram every host must take, to 64 KiB.
constexpr std::int64_t kMinMtu = 576, kMaxMtu = 65536, kDefaultMtu = 1500;

// The share of a rated link's bits that is payload when MPI or NCCL move data over TCP/IPv4 in
// Ethernet frames of this MTU: per frame MTU - 52 bytes of data (IPv4 20, TCP 20, its timestamps
// 12) in MTU + 14 bytes on the wire (the Ethernet header; what a switch port's rate and tc count).
// 1448 of 1514 at 1500 (95.6%), 8948 of 9014 at 9000. InfiniBand (MTU 4096, 26 bytes of
// headers) is within 1% of the 4096 figure.
double payload_share(std::int64_t mtu) { return static_cast<double>(mtu - 52) / static_cast<double>(mtu + 14); }

// The inter-node link the options give, as predicted: rated Gbit/s, the MTU, the payload rate.
struct LinkOverride {
  double rated_gbps = 0;
  std::int64_t mtu = kDefaultMtu;
  double payload_Bps() const { return rated_gbps * 1e9 / 8 * payload_share(mtu); }
};

// --energy-price: a positive finite number (money per kWh), within the price bound; none: 0.
double energy_price_of(const PredictOptions& o) {
  if (!o.energy_price) return 0;
  const std::string& text = *o.energy_price;
  const auto bad = [&] {
    return UsageError(
        fmt::format("--energy-price '{}' must be a positive finite price per kWh, at most {:g}", text, kMaxPrice));
  };
  double price = 0;
  try {
    price = parse_real("--energy-price", text);
  } catch (const UsageError&) {
    throw bad();
  }
  if (!(price > 0 && price <= kMaxPrice)) throw bad();
  return price;
}

// --price-per-hour: a finite number in [0, kMaxPrice] (money per node-hour); none: nullopt.
std::optional<double> price_per_hour_of(const PredictOptions& o) {
  if (o.price_per_hour.empty()) return std::nullopt;
  const auto bad = [&] {
    return UsageError(fmt::format("--price-per-hour {} must be in [0, {:g}], a finite price per node-hour",
                                  o.price_per_hour, kMaxPrice));
  };
  double price = 0;
  try {
    price = parse_real("--price-per-hour", o.price_per_hour);
  } catch (const UsageError&) {
    throw bad();
  }
  if (!(price >= 0 && price <= kMaxPrice)) throw bad();
  return price;
}

// Every figure of the answer is a finite number: one that is not (a size, repeat count and price
// whose product a double cannot hold) is refused by its field, never printed as inf or nan.
void check_finite(const json& j, const std::string& path) {
  if (j.is_number_float()) {
    finite_within("predict: " + path, j.get<double>(),
                  "; use a smaller size, fewer --reps or --warmup, fewer --nodes, or a smaller --price-per-hour or "
                  "--energy-price");
  }
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) check_finite(v, path.empty() ? k : path + "." + k);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) check_finite(j[i], fmt::format("{}[{}]", path, i));
  }
}

void add_predict_options(CLI::App* app, PredictOptions& o) {
  app->add_option("--nodes", o.nodes,
                  fmt::format("Nodes of the machine predicted for; nodes x ranks per node <= {} [1]", kModelMaxRanks));
  app->add_option("--ranks-per-node", o.ranks_per_node, "MPI ranks per node (placed by blocks) [1]");
  app->add_option("--gpus-per-node", o.gpus_per_node,
                  fmt::format("GPUs per node, 0 to {} [the profile's GPU count, 0 without]", kModelMaxGpusPerNode));
  app->add_option_function<std::string>(
      "--profile", [&o](const std::string& path) { o.profile = path; },
      "Machine profile (from `scalebench calibrate`, possibly of another machine) [SCALEBENCH_PROFILE, else "
      "the default place]");
  app->add_option("--inter-node-gbps", o.inter_gbps,
                  "Override the inter-node link bandwidth in Gbit/s, as links are rated (200 for HDR "
                  "InfiniBand: 25 GB/s)");
  app->add_option("--inter-node-latency-us", o.inter_latency_us, "Override the inter-node link latency, microseconds");
  app->add_option("--inter-node-mtu", o.inter_mtu,
                  fmt::format("MTU of the --inter-node-gbps link in bytes: data moves at (MTU - 52) / (MTU + 14) of "
                              "the rated rate, TCP/IPv4 in Ethernet frames (1448 of 1514 bytes at 1500; 9000: jumbo "
                              "frames; 4096 for InfiniBand), {} to {} [{}]",
                              kMinMtu, kMaxMtu, kDefaultMtu));
  app->add_option("--price-per-hour", o.price_per_hour, "Price of one node-hour: adds the cost per job");
  app->add_option_function<std::string>(
      "--energy-price", [&o](const std::string& price) { o.energy_price = price; },
      "Price of one kWh: adds the energy cost per job (the energy itself is given whenever the "
      "profile holds power figures)");
}

// The profile with the link overrides applied, and the layout.
// The layout the options ask for, every count and product checked (model.hpp, check_layout).
MachineLayout layout_of(const PredictOptions& o) {
  MachineLayout m;
  m.nodes = static_cast<int>(parse_integer("--nodes", o.nodes, 1, kModelMaxRanks));
  m.ranks_per_node = static_cast<int>(parse_integer("--ranks-per-node", o.ranks_per_node, 1, kModelMaxRanks));
  m.gpus_per_node = o.gpus_per_node.empty()
                        ? 0
                        : static_cast<int>(parse_integer("--gpus-per-node", o.gpus_per_node, 0, kModelMaxGpusPerNode));
  check_layout(m);
  return m;
}

// The profile --profile names (an empty one is refused), else SCALEBENCH_PROFILE's or the
// default place's, read as input_file.hpp reads any file a user names.
Profile profile_of(const PredictOptions& o) {
  if (o.profile) {
    if (o.profile->empty()) throw UsageError("--profile is empty; give the profile file `scalebench calibrate` wrote");
    return load_profile(*o.profile, "--profile");
  }
  // The default place holds this host's own profile: a stale one is refused, not used.
  const ProfileSource source = default_profile_source();
  if (source.origin == kDefaultProfileOrigin) return load_current_profile(source);
  return load_profile(source.path, source.origin);
}

// --inter-node-gbps with its MTU, checked; none when not given (an MTU alone is refused).
std::optional<LinkOverride> link_override(const PredictOptions& o) {
  if (o.inter_gbps.empty()) {
    if (!o.inter_mtu.empty())
      throw UsageError("--inter-node-mtu goes with --inter-node-gbps (the rated link it frames)");
    return std::nullopt;
  }
  LinkOverride l;
  l.rated_gbps = parse_real("--inter-node-gbps", o.inter_gbps);
  if (!(l.rated_gbps >= kMinGbps && l.rated_gbps <= kMaxGbps)) {
    throw UsageError(
        fmt::format("--inter-node-gbps {} must be in [{:g}, {:g}] Gbit/s", o.inter_gbps, kMinGbps, kMaxGbps));
  }
  if (!o.inter_mtu.empty()) l.mtu = parse_integer("--inter-node-mtu", o.inter_mtu, kMinMtu, kMaxMtu);
  return l;
}

std::pair<Profile, MachineLayout> machine_of(const PredictOptions& o) {
  MachineLayout m = layout_of(o);
  const std::optional<LinkOverride> link = link_override(o);
  std::optional<double> latency;
  if (!o.inter_latency_us.empty()) latency = parse_real("--inter-node-latency-us", o.inter_latency_us);
  if (latency && !(*latency >= 0 && *latency <= kProfileMaxLatencyUs)) {
    throw UsageError(
        fmt::format("--inter-node-latency-us {} must be in [0, {:g}]", o.inter_latency_us, kProfileMaxLatencyUs));
  }
  Profile p = profile_of(o);
  if (link || latency) {
    if (!p.inter_node && !(link && latency)) {
      throw UsageError(fmt::format("profile {} has no inter-node link: give both --inter-node-gbps and "
                                   "--inter-node-latency-us",
                                   p.source));
    }
    Link l = p.inter_node.value_or(Link{});
    if (link) l.bandwidth_Bps = link->payload_Bps();  // rated Gbit/s -> payload bytes/s
    if (latency) l.latency_s = *latency * 1e-6;
    p.inter_node = l;
  }
  if (o.gpus_per_node.empty()) {
    m.gpus_per_node = p.gpu.present ? p.gpu.count : 0;
    check_layout(m);
  }
  return {std::move(p), m};
}

json phases_json(const Prediction& pred) {
  json ph = json::object();
  for (const auto& [name, s] : pred.phases) ph[name] = s;
  return ph;
}

// The energy lines (docs/model.md, "Energy") and out["energy"]; `price` 0: no cost.
std::string energy_report(const PredictedWorkload& w, const Profile& p, const MachineLayout& m, const Prediction& pred,
                          double price, json& out) {
  const EnergyPrediction e = predict_energy(p, pred, w.kernel, m, w.threads, w.repeats);
  if (!e.available) {
    out["energy"] = {{"available", false}, {"reason", e.reason}};
    return fmt::format("energy: {}\n", e.reason);
  }
  json watts = json::object();
  if (e.cpu_counted) watts["cpu_per_node"] = {{"idle", e.cpu_idle_w}, {"compute", e.cpu_compute_w}};
  if (e.gpu_counted) {
    watts["gpu_each"] = {{"idle", e.gpu_idle_w},
                         {"compute", e.gpu_compute_w},
                         {"computing_per_node", e.gpus_computing}};
  }
  out["energy"] = {{"available", true},    {"run_j", e.run_j}, {"job_j", e.job_j}, {"job_repeats", e.repeats},
                   {"kwh_per_job", e.kwh}, {"watts", watts},   {"notes", e.notes}};
  std::string text = fmt::format("energy per job ({} repeats): {:.6g} J ({:.6g} J per run), {:.6g} kWh", e.repeats,
                                 e.job_j, e.run_j, e.kwh);
  if (price > 0) {
    out["energy"]["price_per_kwh"] = price;
    out["energy"]["cost_per_job"] = e.kwh * price;
    text += fmt::format(", {:.6g} at {} per kWh", e.kwh * price, price);
  }
  text += "\n";
  if (e.cpu_counted) {
    text += fmt::format("  CPU per node: {:.4g} W idle, {:.4g} W computing\n", e.cpu_idle_w, e.cpu_compute_w);
  }
  if (e.gpu_counted) {
    text += fmt::format("  GPU each: {:.4g} W idle, {:.4g} W computing ({} of {} per node computing)\n", e.gpu_idle_w,
                        e.gpu_compute_w, e.gpus_computing, m.gpus_per_node);
  }
  for (const auto& n : e.notes) text += fmt::format("  note: {}\n", n);
  return text;
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
              {"band_s", {pred.band().first, pred.band().second}},
              {"rate", e2e > 0 ? w.work / e2e : 0.0},
              {"rate_unit", w.unit},
              {"notes", pred.notes}};
  // A rated link given (--inter-node-gbps): what the model moves over it.
  std::string link_text;
  if (const std::optional<LinkOverride> link = link_override(o); link && m.nodes > 1) {
    out["inter_node_link"] = {{"rated_gbps", link->rated_gbps},
                              {"mtu", link->mtu},
                              {"payload_share", payload_share(link->mtu)},
                              {"payload_gbps", link->payload_Bps() * 8 / 1e9},
                              {"latency_us", p.inter_node ? p.inter_node->latency_s * 1e6 : 0.0}};
    link_text =
        fmt::format("inter-node link: {:g} Gbit/s rated, {:.4g} Gbit/s of data (MTU {}: {} of {} bytes a frame)\n",
                    link->rated_gbps, link->payload_Bps() * 8 / 1e9, link->mtu, link->mtu - 52, link->mtu + 14);
  }
  std::string text = fmt::format("scalebench predict {}  on {} node(s) x {} rank(s) x {} thread(s), {} GPU(s)/node\n"
                                 "profile {} (host {}, {})\n{}{:<12}{:>14}\n",
                                 w.what, m.nodes, m.ranks_per_node, w.threads, m.gpus_per_node, p.source, p.host,
                                 p.created_at, link_text, "phase", "predicted s");
  if (!w.choice.is_null()) out["choice"] = w.choice;  // `auto`: the ranking (choice.hpp), then the one taken
  text = w.choice_text + text;
  for (const auto& [name, s] : pred.phases) text += fmt::format("{:<12}{:>14.6f}\n", name, s);
  text += fmt::format("{:<12}{:>14.6f}   ({:.4g} {}), band [{:.6f}, {:.6f}]\n", phase::end_to_end, e2e,
                      e2e > 0 ? w.work / e2e : 0.0, w.unit, pred.band().first, pred.band().second);
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
  if (const std::optional<double> hourly = price_per_hour_of(o)) {
    const double price = *hourly;
    const double job_h = e2e * static_cast<double>(w.repeats) / 3600.0;
    const double node_h = m.nodes * job_h, gpu_h = w.gpu ? gpus * job_h : 0.0;
    out["cost"] = {{"job_repeats", w.repeats},
                   {"node_hours", node_h},
                   {"gpu_hours", gpu_h},
                   {"price_per_node_hour", price},
                   {"cost", node_h * price}};
    text += fmt::format("cost per job ({} repeats): {:.6g} node-hours, {:.6g} GPU-hours, {:.6g} at {} per node-hour\n",
                        w.repeats, node_h, gpu_h, node_h * price, price);
  }
  text += energy_report(w, p, m, pred, energy_price_of(o), out);
  check_finite(out, "");
  std::fputs(text.c_str(), stdout);
  if (json_path) write_json_atomic(*json_path, out);
  return 0;
}

int run_predict(const PredictOptions& o, WorkloadCommand& command) {
  try {
    command.configure();
    (void)energy_price_of(o);  // a bad price is refused before any profile is read
    (void)price_per_hour_of(o);
    const std::optional<std::string> json_path = command.json_path();
    if (json_path) check_output_path(*json_path);
    const auto [p, m] = machine_of(o);
    const PredictedWorkload w = command.predict(p, m);
    return report(w, p, m, o, json_path);
  } catch (const Error& e) {
    print_error(e.what());
    return static_cast<int>(e.code());
  }
}

// One study run predicted: its workload arguments parsed with the workload's own options.
PredictedWorkload predict_run(const Workload& workload, const StudyRun& run, const Profile& p, const MachineLayout& m) {
  CLI::App parser;
  const std::shared_ptr<WorkloadCommand> command = workload.add_command(parser);
  std::vector<std::string> args(run.workload_argv.rbegin(), run.workload_argv.rend() - 1);  // CLI11: reversed
  try {
    parser.parse(args);
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  refuse_empty_values(parser);
  command->configure();
  return command->predict(p, m);
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

}  // namespace

int print_study_prediction(const std::string& file, const std::string& profile_path) {
  try {
    const StudySpec spec = load_study(file);
    const std::vector<StudyRun> runs = plan_study(spec);
    PredictOptions o;
    if (!profile_path.empty()) o.profile = profile_path;
    const Profile p = machine_of(o).first;
    std::string table =
        fmt::format("scalebench study {} --predict: {} runs predicted from profile {} (host {}); nothing "
                    "was run\n{:>4} {:>5} {:>5} {:>7}  {:>11} {:>16} {:>9}  {:<22} {}\n",
                    spec.name, runs.size(), p.source, p.host, "#", "nodes", "ranks", "threads", "predicted s", "rate",
                    "vs 1 core", "compute/comm/transfer", "run");
    for (const auto& run : runs) {
      const MachineLayout m{run.nodes, run.ranks_per_node, p.gpu.present ? p.gpu.count : 0};
      try {
        check_layout(m, "the study's nodes", "ranks per node");
        const Workload* w = find_workload(spec.workload);
        if (w == nullptr) throw UsageError(fmt::format("the model has no prediction for workload {}", spec.workload));
        table += study_line(predict_run(*w, run, p, m), run, m);
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
      fmt::format("Predict a {} run from a machine profile, on this machine or one the profile describes: phases, "
                  "end-to-end, speed-up and efficiency against one core and one GPU, the CPU/GPU crossover, cost",
                  workload_names()));
  app->require_subcommand(1);
  auto o = std::make_shared<PredictOptions>();
  std::vector<std::pair<CLI::App*, std::shared_ptr<WorkloadCommand>>> commands;
  for (const Workload* w : workloads()) {
    auto* sub = app->add_subcommand(std::string(w->name()), std::string(w->predict_description()));
    commands.emplace_back(sub, w->add_command(*sub));
    add_predict_options(sub, *o);
  }
  return {app, [o, commands] {
            for (const auto& [sub, command] : commands) {
              if (sub->parsed()) return run_predict(*o, *command);
            }
            return static_cast<int>(ExitCode::usage);
          }};
}

}  // namespace scalebench::app
