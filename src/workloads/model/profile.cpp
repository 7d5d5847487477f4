// Machine profiles: the JSON file `scalebench calibrate` writes (docs/model.md, "The profile"),
// where it lives, and whether it still describes this machine and build.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/energy.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/json_field.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {
namespace {

using nlohmann::json;

// A spread is written only when measured: an old reader sees the profile it knows.
void add_spread(json& j, const Spread& s) {
  if (!s.empty()) j["spread"] = {{"below", s.below}, {"above", s.above}};
}

json link_json(const Link& l) {
  json j = {{"latency_us", l.latency_s * 1e6}, {"bandwidth_GBps", l.bandwidth_Bps * 1e-9}};
  add_spread(j, l.spread);
  return j;
}

json optional_link_json(const std::optional<Link>& l) { return l ? link_json(*l) : json(nullptr); }

json rates_json(const std::vector<ThreadRate>& rates) {
  json a = json::array();
  for (const auto& r : rates) {
    json e = {{"threads", r.threads}, {"per_s", r.per_s}};
    add_spread(e, r.spread);
    a.push_back(e);
  }
  return a;
}

// Reading: every value goes through JsonField (json_field.hpp), checked for kind and range, and
// every message names the file and the value's JSON path ("mpi.intra_node.bandwidth_GBps"), so a
// hand-edited or damaged profile fails with one clear line instead of giving negative or infinite
// predictions. Reader adds the profile's own figures (rates, latencies, watts, spreads).
class Reader : public JsonField {
 public:
  explicit Reader(JsonField f) : JsonField(std::move(f)) {}
  Reader sub(const std::string& key) const { return Reader(JsonField::sub(key)); }
  // A list's entries, each a Reader named "key[i]".
  std::vector<Reader> list(const std::string& key) const {
    std::vector<Reader> out;
    for (JsonField& f : JsonField::list(key)) out.emplace_back(std::move(f));
    return out;
  }
  // A rate (GFLOP/s, GB/s, units/s): finite, > 0 and within the model's arithmetic.
  double rate(const std::string& key) const {
    const double d = number(key);
    if (d <= 0) fail(key, fmt::format("must be a rate > 0 (got {})", at(key).dump()));
    if (d < kProfileMinRate || d > kProfileMaxRate) {
      fail(key, fmt::format("= {} is outside [{:g}, {:g}], the rates the model computes with", at(key).dump(),
                            kProfileMinRate, kProfileMaxRate));
    }
    return d;
  }
  // A latency in microseconds: finite, >= 0, at most kProfileMaxLatencyUs.
  double latency_us(const std::string& key) const {
    const double d = number(key);
    if (d < 0 || d > kProfileMaxLatencyUs) {
      fail(key, fmt::format("must be a time in [0, {:g}] microseconds (got {})", kProfileMaxLatencyUs, at(key).dump()));
    }
    return d;
  }
  // Mean watts: finite, in [0, kProfileMaxWatts] (a counter that did not move while idle reads 0).
  double watts(const std::string& key) const { return number_in(key, 0, kProfileMaxWatts, "watts"); }
  // An object of watts by name (precision, problem).
  std::map<std::string, double> watts_by_name(const std::string& key) const {
    std::map<std::string, double> out;
    if (!has(key)) return out;
    const Reader r = sub(key);
    for (const std::string& name : r.keys()) out[name] = r.watts(name);
    return out;
  }
  // A whole number in [lo, hi].
  std::int64_t count(const std::string& key, std::int64_t lo, std::int64_t hi) const { return whole(key, lo, hi); }
  int threads(const std::string& key) const { return static_cast<int>(count(key, 1, kProfileMaxThreads)); }
  std::int64_t side(const std::string& key) const { return count(key, 1, kInt32Max); }
  // A fraction in [0, kProfileMaxSpread].
  double fraction(const std::string& key) const { return number_in(key, 0, kProfileMaxSpread, "a fraction"); }
  // The optional "spread" of this figure (zero when absent: a profile written before spreads).
  Spread spread() const {
    if (!has("spread")) return {};
    const Reader s = sub("spread");
    const double below = s.fraction("below");
    if (below >= 1) s.fail("below", fmt::format("must be below 1: a rate above 0 (got {})", s.at("below").dump()));
    return {below, s.fraction("above")};
  }
  Link link(const std::string& key) const {
    const Reader r = sub(key);
    return {r.latency_us("latency_us") * 1e-6, r.rate("bandwidth_GBps") * 1e9, r.spread()};
  }
  std::vector<ThreadRate> rates(const std::string& key) const {
    std::vector<ThreadRate> out;
    for (const Reader& r : list(key)) out.push_back({r.threads("threads"), r.rate("per_s"), r.spread()});
    return out;
  }
  // The spreads of the entries of a sized_rates list, in order.
  std::vector<Spread> spreads(const std::string& key) const {
    std::vector<Spread> out;
    for (const Reader& r : list(key)) out.push_back(r.spread());
    return out;
  }
  // (n, GFLOP/s) points: naive_gflops and the GPU's gemm_gflops.
  std::vector<std::pair<std::int64_t, double>> sized_rates(const std::string& key) const {
    std::vector<std::pair<std::int64_t, double>> out;
    for (const Reader& r : list(key)) out.emplace_back(r.side("n"), r.rate("gflops"));
    return out;
  }
};

// What profile_mismatch reads of "valid_for": its GPU's name and driver as strings (the versions are
// compared as JSON text, whatever their kind).
void check_valid_for(const Reader& v) {
  (void)v.text_or("host", "");
  if (!v.has("gpu")) return;
  const Reader g = v.sub("gpu");
  (void)g.text_or("name", "");
  (void)g.text_or("driver_version", "");
}

// (n, GFLOP/s) points with the spread kept beside them.
json sized_json(const std::vector<std::pair<std::int64_t, double>>& list,
                const std::map<std::string, std::vector<Spread>>& spreads, const std::string& prec) {
  json out = json::array();
  const auto it = spreads.find(prec);
  for (std::size_t i = 0; i < list.size(); ++i) {
    json e = {{"n", list[i].first}, {"gflops", list[i].second}};
    if (it != spreads.end() && i < it->second.size()) add_spread(e, it->second[i]);
    out.push_back(e);
  }
  return out;
}

GpuProfile gpu_from_json(const Reader& g) {
  GpuProfile out;
  out.present = g.flag("present");
  if (!out.present) {
    out.reason = g.has("reason") ? g.text("reason") : "";
    return out;
  }
  out.name = g.text("name");
  out.count = g.threads("count");
  out.h2d_pinned = g.link("h2d_pinned");
  out.h2d_pageable = g.link("h2d_pageable");
  out.d2h_pinned = g.link("d2h_pinned");
  out.d2h_pageable = g.link("d2h_pageable");
  const Reader gemm = g.sub("gemm_gflops");
  for (const std::string& prec : gemm.keys()) {
    out.gemm_gflops[prec] = gemm.sized_rates(prec);
    out.gemm_spread[prec] = gemm.spreads(prec);
  }
  if (g.has("nccl_intra")) out.nccl_intra = g.link("nccl_intra");
  if (g.has("montecarlo")) {
    const Reader mc = g.sub("montecarlo");
    for (const std::string& problem : mc.keys()) {
      const Reader backends = mc.sub(problem);
      for (const std::string& backend : backends.keys()) out.montecarlo[problem][backend] = backends.rate(backend);
    }
  }
  return out;
}

json gpu_json(const GpuProfile& g) {
  if (!g.present) return {{"present", false}, {"reason", g.reason}};
  json gemm = json::object();
  for (const auto& [prec, list] : g.gemm_gflops) gemm[prec] = sized_json(list, g.gemm_spread, prec);
  return {{"present", true},
          {"name", g.name},
          {"count", g.count},
          {"h2d_pinned", link_json(g.h2d_pinned)},
          {"h2d_pageable", link_json(g.h2d_pageable)},
          {"d2h_pinned", link_json(g.d2h_pinned)},
          {"d2h_pageable", link_json(g.d2h_pageable)},
          {"gemm_gflops", gemm},
          {"nccl_intra", optional_link_json(g.nccl_intra)},
          {"montecarlo", g.montecarlo}};
}

// "power": {"cpu": {...}, "gpu": {...}}, each {"present": false, "reason"} or its figures.
json power_json(const PowerProfile& w) {
  const auto absent = [](const std::string& reason) { return json{{"present", false}, {"reason", reason}}; };
  json cpu = w.cpu.present ? json{{"present", true},
                                  {"source", w.cpu.source},
                                  {"idle_w", w.cpu.idle_w},
                                  {"blas_w", w.cpu.blas_w},
                                  {"montecarlo_w", w.cpu.montecarlo_w}}
                           : absent(w.cpu.reason);
  json gpu = w.gpu.present
                 ? json{{"present", true}, {"source", w.gpu.source}, {"idle_w", w.gpu.idle_w}, {"gemm_w", w.gpu.gemm_w}}
                 : absent(w.gpu.reason);
  return {{"cpu", cpu}, {"gpu", gpu}};
}

// The node's CPU packages: hwloc's count, else one per core (a package has a core), in [1, cores].
double cpu_packages(const Profile& p) {
  const json n = p.hwloc.is_object() && p.hwloc.contains("packages") ? p.hwloc.at("packages") : json();
  const double packages = n.is_number_integer() ? n.get<double>() : p.cores;
  return std::clamp(packages, 1.0, static_cast<double>(p.cores));
}

// Watts (Reader::watts) of at most `most`: a figure above what the counters can draw is a bad
// reading stored, not a machine.
double watts_at_most(const Reader& r, const std::string& key, double most, const std::string& of) {
  const double w = r.watts(key);
  if (w > most) r.fail(key, fmt::format("= {:g} W is more than the {:g} W {} can draw", w, most, of));
  return w;
}

std::map<std::string, double> watts_by_name_at_most(const Reader& r, const std::string& key, double most,
                                                    const std::string& of) {
  std::map<std::string, double> out;
  if (!r.has(key)) return out;
  const Reader named = r.sub(key);
  for (const std::string& name : named.keys()) out[name] = watts_at_most(named, name, most, of);
  return out;
}

PowerProfile power_from_json(const Reader& r, const Profile& p) {
  PowerProfile w;
  w.recorded = true;
  // The most the counters can draw (energy.hpp): each package and its DRAM at their ceilings.
  const double packages = cpu_packages(p);
  const double cpu_most = packages * (kMaxPackageWatts + kMaxDramWatts);
  const std::string node = fmt::format("{:g} CPU package(s) and their DRAM", packages);
  const Reader cpu = r.sub("cpu");
  w.cpu.present = cpu.flag("present");
  if (w.cpu.present) {
    w.cpu.source = cpu.has("source") ? cpu.text("source") : "";
    w.cpu.idle_w = watts_at_most(cpu, "idle_w", cpu_most, node);
    w.cpu.blas_w = watts_by_name_at_most(cpu, "blas_w", cpu_most, node);
    w.cpu.montecarlo_w = watts_by_name_at_most(cpu, "montecarlo_w", cpu_most, node);
  } else {
    w.cpu.reason = cpu.text("reason");
  }
  const Reader gpu = r.sub("gpu");
  w.gpu.present = gpu.flag("present");
  if (w.gpu.present) {
    w.gpu.source = gpu.has("source") ? gpu.text("source") : "";
    w.gpu.idle_w = watts_at_most(gpu, "idle_w", kMaxGpuWatts, "one GPU");
    w.gpu.gemm_w = watts_by_name_at_most(gpu, "gemm_w", kMaxGpuWatts, "one GPU");
  } else {
    w.gpu.reason = gpu.text("reason");
  }
  return w;
}

}  // namespace

json to_json(const Profile& p) {
  json blas = json::object();
  for (const auto& [prec, points] : p.blas) {
    for (const auto& b : points) {
      json e = {{"threads", b.threads}, {"m", b.shape.m}, {"n", b.shape.n}, {"k", b.shape.k}, {"gflops", b.gflops}};
      add_spread(e, b.spread);
      blas[prec].push_back(e);
    }
  }
  json collectives = json::object();
  for (const auto& [name, fits] : p.collectives) {
    for (const auto& f : fits) {
      json e = link_json(f.link);
      e["ranks"] = f.ranks;
      e["nodes"] = f.nodes;
      collectives[name].push_back(e);
    }
  }
  json mc = json::object();
  for (const auto& [problem, backends] : p.montecarlo) {
    for (const auto& [backend, rates] : backends) mc[problem][backend] = rates_json(rates);
  }
  json naive = json::object();
  for (const auto& [prec, pts] : p.naive_gflops) naive[prec] = sized_json(pts, p.naive_spread, prec);
  json triad = json::array();
  for (const auto& r : p.triad_Bps) {
    json e = {{"threads", r.threads}, {"GBps", r.per_s * 1e-9}};
    add_spread(e, r.spread);
    triad.push_back(e);
  }
  json j = {{"profile_version", kProfileVersion},
            {"host", p.host},
            {"created_at", p.created_at},
            {"versions", p.versions},
            {"hwloc", p.hwloc},
            {"cores", p.cores},
            {"blas", blas},
            {"naive_gflops", naive},
            {"memory", {{"triad", triad}}},
            {"mpi",
             {{"intra_node", link_json(p.intra_node)},
              {"inter_node", optional_link_json(p.inter_node)},
              {"collectives", collectives}}},
            {"montecarlo", mc},
            {"gpu", gpu_json(p.gpu)}};
  if (!p.lookahead.empty()) {
    json fits = json::array();
    for (const auto& f : p.lookahead) {
      fits.push_back({{"ranks", f.ranks}, {"nodes", f.nodes}, {"depth", f.depth}, {"hidden", f.hidden}});
    }
    j["mpi"]["lookahead"] = fits;
  }
  if (!p.valid_for.empty()) j["valid_for"] = p.valid_for;
  if (!p.launch.empty()) j["launch"] = p.launch;
  if (!p.warnings.empty()) j["warnings"] = p.warnings;
  if (!p.checks.empty()) j["checks"] = p.checks;
  if (p.power.recorded) j["power"] = power_json(p.power);
  return j;
}

namespace {

// The profile's mpi section: the links, the collectives' fits and what a lookahead hid.
void mpi_from_json(const Reader& mpi, Profile& p) {
  p.intra_node = mpi.link("intra_node");
  if (mpi.has("inter_node")) p.inter_node = mpi.link("inter_node");
  if (mpi.has("collectives")) {
    const Reader collectives = mpi.sub("collectives");
    for (const std::string& name : collectives.keys()) {
      for (const Reader& f : collectives.list(name)) {
        const auto ranks = static_cast<int>(f.count("ranks", 1, kModelMaxRanks));
        const auto nodes = static_cast<int>(f.count("nodes", 1, ranks));
        p.collectives[name].push_back(
            {ranks, nodes, {f.latency_us("latency_us") * 1e-6, f.rate("bandwidth_GBps") * 1e9}});
      }
    }
  }
  if (mpi.has("lookahead")) {
    for (const Reader& f : mpi.list("lookahead")) {
      const auto ranks = static_cast<int>(f.count("ranks", 1, kModelMaxRanks));
      p.lookahead.push_back({ranks, static_cast<int>(f.count("nodes", 1, ranks)),
                             static_cast<int>(f.count("depth", 1, kMaxLookahead)),
                             f.number_in("hidden", kLookaheadMinHidden, kLookaheadMaxHidden,
                                         "the fraction of the blocking broadcasts a lookahead hid")});
    }
  }
}

}  // namespace

Profile profile_from_json(const json& j, const std::string& source) {
  const Reader r(JsonField(j, {"profile " + source, "run `scalebench calibrate` again", kProfileMaxEntries}));
  if (!j.is_object()) throw UsageError(fmt::format("profile {} must be a JSON object (got {})", source, json_kind(j)));
  const json& version = r.at("profile_version");
  if (!version.is_number_integer() || version.get<std::int64_t>() != kProfileVersion) {
    throw UsageError(
        fmt::format("profile {} has version {}, this scalebench reads {}; run `scalebench calibrate` again", source,
                    version.dump(), kProfileVersion));
  }
  Profile p;
  p.source = source;
  p.host = r.text("host");
  p.created_at = r.text("created_at");
  p.versions = r.at("versions");
  if (!p.versions.is_object() && !p.versions.is_null()) {
    r.fail("versions", fmt::format("must be an object (got {})", json_kind(p.versions)));
  }
  p.hwloc = r.has("hwloc") ? r.sub("hwloc").raw() : json::object();
  p.cores = r.threads("cores");
  const Reader blas = r.sub("blas");
  for (const std::string& prec : blas.keys()) {
    for (const Reader& b : blas.list(prec)) {
      p.blas[prec].push_back(
          {b.threads("threads"), {b.side("m"), b.side("n"), b.side("k")}, b.rate("gflops"), b.spread()});
    }
  }
  if (r.has("naive_gflops")) {
    const Reader naive = r.sub("naive_gflops");
    for (const std::string& prec : naive.keys()) {
      p.naive_gflops[prec] = naive.sized_rates(prec);
      p.naive_spread[prec] = naive.spreads(prec);
    }
  }
  for (const Reader& t : r.sub("memory").list("triad"))
    p.triad_Bps.push_back({t.threads("threads"), t.rate("GBps") * 1e9, t.spread()});
  mpi_from_json(r.sub("mpi"), p);
  if (r.has("montecarlo")) {
    const Reader mc = r.sub("montecarlo");
    for (const std::string& problem : mc.keys()) {
      const Reader backends = mc.sub(problem);
      for (const std::string& backend : backends.keys()) p.montecarlo[problem][backend] = backends.rates(backend);
    }
  }
  if (r.has("gpu")) {
    p.gpu = gpu_from_json(r.sub("gpu"));
  } else {
    p.gpu.reason = "not calibrated";
  }
  if (r.has("valid_for")) {
    check_valid_for(r.sub("valid_for"));
    p.valid_for = r.sub("valid_for").raw();
  }
  if (r.has("launch")) p.launch = r.sub("launch").raw();
  if (r.has("warnings")) {
    p.warnings = r.texts("warnings");
  }
  if (r.has("checks")) {
    (void)r.list("checks");
    p.checks = r.at("checks");
  }
  if (r.has("power")) p.power = power_from_json(r.sub("power"), p);
  return p;
}

Profile load_profile(const std::string& path, std::string_view origin) {
  std::string text;
  try {
    text = read_input_file(path, origin, kProfileMaxBytes);
  } catch (const ResourceError& e) {
    if (!path_kind(path).empty()) throw;  // there, but not a readable regular file: said as is
    throw ResourceError(std::string(e.what()) + "; run `scalebench calibrate` or pass --profile FILE");
  }
  if (const int depth = json_text_depth(text); depth > kProfileMaxDepth) {
    throw UsageError(fmt::format("profile {} (from {}) nests {} levels deep; a profile nests at most {}; run "
                                 "`scalebench calibrate` again",
                                 path, origin, depth, kProfileMaxDepth));
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("profile {} (from {}) is not valid JSON ({}); run `scalebench calibrate` again", path,
                                 origin, e.what()));
  }
  try {
    return profile_from_json(j, path);
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("profile {} (from {}) is malformed ({}); run `scalebench calibrate` again", path,
                                 origin, e.what()));
  }
}

ProfileSource default_profile_source() {
  if (const char* p = std::getenv("SCALEBENCH_PROFILE"); p && *p) return {p, "SCALEBENCH_PROFILE"};
  return {default_profile_path(), std::string(kDefaultProfileOrigin)};
}

std::string default_profile_path() {
  if (const char* p = std::getenv("SCALEBENCH_PROFILE"); p && *p) return p;
  std::string dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = x;
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::string(h) + "/.cache";
  } else {
    dir = ".cache";
  }
  return fmt::format("{}/scalebench/profile-{}.json", dir, host_name());
}

std::string profile_mismatch(const Profile& p, const std::string& host, const json& versions) {
  // What the profile says it is valid for: valid_for (as calibrate writes it from its host and
  // versions), and for what it does not name (a profile from before valid_for was kept), its host
  // and versions.
  json then = p.versions.is_object() ? p.versions : json::object();
  for (const auto& [key, value] : p.valid_for.items()) then[key] = value;
  const std::string then_host = p.valid_for.contains("host") && p.valid_for.at("host").is_string()
                                    ? p.valid_for.at("host").get<std::string>()
                                    : p.host;
  if (then_host != host) return fmt::format("it was calibrated on {}, not {}", then_host, host);
  auto field = [](const json& v, const char* key) {
    return v.is_object() && v.contains(key) ? v.at(key).dump() : std::string("null");
  };
  for (const char* key : {"scalebench", "compiler", "build_type", "cuda_built", "mpi_library"}) {
    if (field(then, key) != field(versions, key)) {
      return fmt::format("its {} version {} differs from this run's {}", key, field(then, key), field(versions, key));
    }
  }
  const auto blas = [](const json& v, const char* key) {
    return v.is_object() && v.contains("openblas") && v.at("openblas").contains(key) ? v.at("openblas").at(key).dump()
                                                                                     : "null";
  };
  if (blas(then, "config") != blas(versions, "config")) {
    return fmt::format("its OpenBLAS build {} differs from this run's {}", blas(then, "config"),
                       blas(versions, "config"));
  }
  if (blas(then, "core") != blas(versions, "core")) {
    return fmt::format("its BLAS kernel {} differs from this run's {}", blas(then, "core"), blas(versions, "core"));
  }
  return "";
}

json profile_valid_for(const std::string& host, const json& versions, const json& gpu) {
  json out = {{"host", host}};
  for (const char* key : {"scalebench", "git", "compiler", "build_type", "cuda_built", "mpi_library"}) {
    out[key] = versions.is_object() && versions.contains(key) ? versions.at(key) : json(nullptr);
  }
  const json blas = versions.is_object() && versions.contains("openblas") ? versions.at("openblas") : json::object();
  out["openblas"] = {{"config", blas.value("config", std::string())}, {"core", blas.value("core", std::string())}};
  out["gpu"] = gpu.is_object() ? json{{"name", gpu.value("name", std::string())},
                                      {"driver_version", gpu.value("driver_version", std::string())}}
                               : json(nullptr);
  return out;
}

std::string profile_mismatch(const Profile& p, const json& here) {
  if (std::string why = profile_mismatch(p, here.value("host", std::string()), here); !why.empty()) return why;
  const json none = nullptr;
  const json& now = here.contains("gpu") ? here.at("gpu") : none;
  // A profile from before valid_for was kept names its GPU model only.
  const json then = p.valid_for.contains("gpu") ? p.valid_for.at("gpu")
                    : p.gpu.present             ? json{{"name", p.gpu.name}}
                                                : json(nullptr);
  const auto text = [](const json& g, const char* key) {
    return g.is_object() && g.contains(key) && g.at(key).is_string() ? g.at(key).get<std::string>() : std::string();
  };
  if (then.is_null() && !now.is_null()) {
    return fmt::format("it was calibrated without a GPU; this machine has a {}", text(now, "name"));
  }
  if (!then.is_null() && now.is_null()) {
    return fmt::format("it was calibrated with a {}; no GPU is visible here", text(then, "name"));
  }
  if (then.is_null()) return "";
  if (text(then, "name") != text(now, "name")) {
    return fmt::format("it was calibrated on GPU model {}, this machine's is {}", text(then, "name"),
                       text(now, "name"));
  }
  if (then.contains("driver_version") && text(then, "driver_version") != text(now, "driver_version")) {
    return fmt::format("it was calibrated with GPU driver {}, this machine's is {}", text(then, "driver_version"),
                       text(now, "driver_version"));
  }
  return "";
}

Profile load_current_profile(const ProfileSource& source) {
  Profile p = load_profile(source.path, source.origin);
  if (const std::string why = profile_mismatch(p, profile_valid_for_here()); !why.empty()) {
    throw UsageError(fmt::format("profile {} (from {}) is stale: {}; run `scalebench calibrate` again", source.path,
                                 source.origin, why));
  }
  return p;
}

std::string why_calibrate(const ProfileSource& source) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(source.path, ec))) return std::string(kNoProfile);
  // A profile that cannot be used is as stale as an old one: the calibration that follows replaces it.
  try {
    return profile_mismatch(load_profile(source.path, source.origin), profile_valid_for_here());
  } catch (const JsonFieldError& e) {
    return "it cannot be used: " + e.field();
  } catch (const Error& e) {
    return e.what();
  }
}

Spread spread_of_times(double min_s, double median_s, double max_s) {
  if (!(min_s > 0) || !(median_s > 0) || !(max_s > 0)) return {};
  // A rate is work / time: the slowest repeat gives the lowest rate.
  return {std::clamp(1.0 - median_s / max_s, 0.0, 0.99), std::clamp(median_s / min_s - 1.0, 0.0, kProfileMaxSpread)};
}

namespace {

double at_bound(double rate, const Spread& s, bool fast) { return rate * (fast ? 1.0 + s.above : 1.0 - s.below); }

void bound_link(Link& l, bool fast) { l.bandwidth_Bps = at_bound(l.bandwidth_Bps, l.spread, fast); }

void bound_rates(std::vector<ThreadRate>& rates, bool fast) {
  for (auto& r : rates) r.per_s = at_bound(r.per_s, r.spread, fast);
}

void bound_sized(std::map<std::string, std::vector<std::pair<std::int64_t, double>>>& rates,
                 const std::map<std::string, std::vector<Spread>>& spreads, bool fast) {
  for (auto& [prec, list] : rates) {
    const auto it = spreads.find(prec);
    if (it == spreads.end()) continue;
    for (std::size_t i = 0; i < list.size() && i < it->second.size(); ++i) {
      list[i].second = at_bound(list[i].second, it->second[i], fast);
    }
  }
}

}  // namespace

Profile profile_at_bound(const Profile& p, bool fast) {
  Profile out = p;
  for (auto& [prec, points] : out.blas) {
    for (auto& b : points) b.gflops = at_bound(b.gflops, b.spread, fast);
  }
  bound_sized(out.naive_gflops, out.naive_spread, fast);
  bound_rates(out.triad_Bps, fast);
  bound_link(out.intra_node, fast);
  if (out.inter_node) bound_link(*out.inter_node, fast);
  for (auto& [name, fits] : out.collectives) {
    for (auto& f : fits) bound_link(f.link, fast);
  }
  for (auto& [problem, backends] : out.montecarlo) {
    for (auto& [backend, rates] : backends) bound_rates(rates, fast);
  }
  bound_sized(out.gpu.gemm_gflops, out.gpu.gemm_spread, fast);
  bound_link(out.gpu.h2d_pinned, fast);
  bound_link(out.gpu.h2d_pageable, fast);
  bound_link(out.gpu.d2h_pinned, fast);
  bound_link(out.gpu.d2h_pageable, fast);
  if (out.gpu.nccl_intra) bound_link(*out.gpu.nccl_intra, fast);
  return out;
}

bool profile_has_spread(const Profile& p) {
  const auto any = [](const auto& list) {
    return std::any_of(list.begin(), list.end(), [](const auto& x) { return !x.spread.empty(); });
  };
  const auto any_spread = [](const std::map<std::string, std::vector<Spread>>& m) {
    return std::any_of(m.begin(), m.end(), [](const auto& kv) {
      return std::any_of(kv.second.begin(), kv.second.end(), [](const Spread& s) { return !s.empty(); });
    });
  };
  for (const auto& [prec, points] : p.blas) {
    if (any(points)) return true;
  }
  for (const auto& [problem, backends] : p.montecarlo) {
    for (const auto& [backend, rates] : backends) {
      if (any(rates)) return true;
    }
  }
  for (const auto& [name, fits] : p.collectives) {
    for (const auto& f : fits) {
      if (!f.link.spread.empty()) return true;
    }
  }
  const GpuProfile& g = p.gpu;
  return any(p.triad_Bps) || any_spread(p.naive_spread) || any_spread(g.gemm_spread) || !p.intra_node.spread.empty() ||
         (p.inter_node && !p.inter_node->spread.empty()) || !g.h2d_pinned.spread.empty() ||
         !g.h2d_pageable.spread.empty() || !g.d2h_pinned.spread.empty() || !g.d2h_pageable.spread.empty() ||
         (g.nccl_intra && !g.nccl_intra->spread.empty());
}

}  // namespace scalebench
