// Machine profiles: the JSON file `scalebench calibrate` writes (docs/model.md, "The profile"),
// where it lives, and whether it still describes this machine and build.
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {
namespace {

using nlohmann::json;

json link_json(const Link& l) {
  return {{"latency_us", l.latency_s * 1e6}, {"bandwidth_GBps", l.bandwidth_Bps * 1e-9}};
}

json optional_link_json(const std::optional<Link>& l) { return l ? link_json(*l) : json(nullptr); }

json rates_json(const std::vector<ThreadRate>& rates) {
  json a = json::array();
  for (const auto& r : rates) a.push_back({{"threads", r.threads}, {"per_s", r.per_s}});
  return a;
}

// The deepest nesting of objects and lists in JSON text (strings skipped), so that a hostile
// file is refused before the parser and the value's destructor recurse through it.
int json_nesting(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// Reading: every value is checked for kind and range, and every message names the file and the
// value's JSON path ("mpi.intra_node.bandwidth_GBps"), so a hand-edited or damaged profile fails
// with one clear line instead of giving negative or infinite predictions.
class Reader {
 public:
  Reader(const json& j, const std::string& file, std::string path) : j_(j), file_(file), path_(std::move(path)) {}
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw UsageError(fmt::format("profile {}: {} {}; run `scalebench calibrate` again", file_, path_of(key), what));
  }
  std::string path_of(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const json& at(const std::string& key) const {
    if (!j_.is_object()) throw UsageError(fmt::format("profile {}: {} must be an object", file_, where()));
    if (!j_.contains(key)) fail(key, "is missing");
    return j_.at(key);
  }
  Reader sub(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_object()) fail(key, fmt::format("must be an object (got {})", kind_of(v)));
    check_size(key, v);
    return Reader(v, file_, path_of(key));
  }
  // A list's entries, each a Reader named "key[i]".
  std::vector<Reader> list(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_array()) fail(key, fmt::format("must be a list (got {})", kind_of(v)));
    check_size(key, v);
    std::vector<Reader> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.emplace_back(v[i], file_, fmt::format("{}[{}]", path_of(key), i));
    return out;
  }
  // The keys of an object (precisions, problems, backends, collectives).
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : j_.items()) out.push_back(k);
    return out;
  }
  double number(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_number()) fail(key, fmt::format("must be a number (got {})", kind_of(v)));
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(key, "must be a finite number");
    return d;
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
  // A whole number in [lo, hi].
  std::int64_t count(const std::string& key, std::int64_t lo, std::int64_t hi) const {
    const double d = number(key);
    if (d != std::floor(d)) fail(key, fmt::format("must be a whole number (got {})", at(key).dump()));
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
      fail(key, fmt::format("must be a whole number in [{}, {}] (got {})", lo, hi, at(key).dump()));
    }
    return static_cast<std::int64_t>(d);
  }
  int threads(const std::string& key) const { return static_cast<int>(count(key, 1, kProfileMaxThreads)); }
  std::int64_t side(const std::string& key) const { return count(key, 1, kInt32Max); }
  std::string text(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(key, fmt::format("must be a string (got {})", kind_of(v)));
    return v.get<std::string>();
  }
  bool flag(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_boolean()) fail(key, fmt::format("must be true or false (got {})", kind_of(v)));
    return v.get<bool>();
  }
  bool has(const std::string& key) const { return j_.is_object() && j_.contains(key) && !j_.at(key).is_null(); }
  const json& raw() const { return j_; }
  std::string where() const { return path_.empty() ? "the top level" : path_; }
  Link link(const std::string& key) const {
    const Reader r = sub(key);
    return {r.latency_us("latency_us") * 1e-6, r.rate("bandwidth_GBps") * 1e9};
  }
  std::vector<ThreadRate> rates(const std::string& key) const {
    std::vector<ThreadRate> out;
    for (const Reader& r : list(key)) out.push_back({r.threads("threads"), r.rate("per_s")});
    return out;
  }
  // (n, GFLOP/s) points: naive_gflops and the GPU's gemm_gflops.
  std::vector<std::pair<std::int64_t, double>> sized_rates(const std::string& key) const {
    std::vector<std::pair<std::int64_t, double>> out;
    for (const Reader& r : list(key)) out.emplace_back(r.side("n"), r.rate("gflops"));
    return out;
  }

 private:
  static std::string kind_of(const json& v) {
    if (v.is_number()) return "a number";
    return v.type_name();
  }
  void check_size(const std::string& key, const json& v) const {
    if (v.size() > kProfileMaxEntries) {
      fail(key, fmt::format("holds {} entries; a profile holds at most {}", v.size(), kProfileMaxEntries));
    }
  }
  const json& j_;
  const std::string& file_;
  std::string path_;
};

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
  for (const std::string& prec : gemm.keys()) out.gemm_gflops[prec] = gemm.sized_rates(prec);
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
  for (const auto& [prec, list] : g.gemm_gflops) {
    for (const auto& [n, gf] : list) gemm[prec].push_back({{"n", n}, {"gflops", gf}});
  }
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

}  // namespace

json to_json(const Profile& p) {
  json blas = json::object();
  for (const auto& [prec, points] : p.blas) {
    for (const auto& b : points) {
      blas[prec].push_back(
          {{"threads", b.threads}, {"m", b.shape.m}, {"n", b.shape.n}, {"k", b.shape.k}, {"gflops", b.gflops}});
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
  for (const auto& [prec, pts] : p.naive_gflops) {
    for (const auto& [n, gf] : pts) naive[prec].push_back({{"n", n}, {"gflops", gf}});
  }
  json triad = json::array();
  for (const auto& r : p.triad_Bps) triad.push_back({{"threads", r.threads}, {"GBps", r.per_s * 1e-9}});
  return {{"profile_version", kProfileVersion},
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
}

Profile profile_from_json(const json& j, const std::string& source) {
  const Reader r(j, source, "");
  if (!j.is_object()) throw UsageError(fmt::format("profile {} must be a JSON object (got {})", source, j.type_name()));
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
  if (!p.versions.is_object() && !p.versions.is_null()) r.fail("versions", "must be an object");
  p.hwloc = r.has("hwloc") ? r.sub("hwloc").raw() : json::object();
  p.cores = r.threads("cores");
  const Reader blas = r.sub("blas");
  for (const std::string& prec : blas.keys()) {
    for (const Reader& b : blas.list(prec)) {
      p.blas[prec].push_back({b.threads("threads"), {b.side("m"), b.side("n"), b.side("k")}, b.rate("gflops")});
    }
  }
  if (r.has("naive_gflops")) {
    const Reader naive = r.sub("naive_gflops");
    for (const std::string& prec : naive.keys()) p.naive_gflops[prec] = naive.sized_rates(prec);
  }
  for (const Reader& t : r.sub("memory").list("triad"))
    p.triad_Bps.push_back({t.threads("threads"), t.rate("GBps") * 1e9});
  const Reader mpi = r.sub("mpi");
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
  if (const int depth = json_nesting(text); depth > kProfileMaxDepth) {
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
  if (p.host != host) return fmt::format("it was calibrated on {}, not {}", p.host, host);
  auto field = [](const json& v, const char* key) { return v.contains(key) ? v.at(key).dump() : std::string("null"); };
  for (const char* key : {"scalebench", "compiler", "build_type", "mpi_library"}) {
    if (field(p.versions, key) != field(versions, key)) {
      return fmt::format("its {} version {} differs from this run's {}", key, field(p.versions, key),
                         field(versions, key));
    }
  }
  const auto blas_config = [](const json& v) {
    return v.contains("openblas") && v.at("openblas").contains("config") ? v.at("openblas").at("config").dump()
                                                                         : "null";
  };
  if (blas_config(p.versions) != blas_config(versions)) {
    return fmt::format("its OpenBLAS build {} differs from this run's {}", blas_config(p.versions),
                       blas_config(versions));
  }
  return "";
}

}  // namespace scalebench
