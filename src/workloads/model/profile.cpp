// Machine profiles: the JSON file `scalebench calibrate` writes (docs/model.md, "The profile"),
// where it lives, and whether it still describes this machine and build.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
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

// Reading: every lookup names the key path it wanted, so a hand-edited profile fails clearly.
class Reader {
 public:
  Reader(const json& j, std::string where) : j_(j), where_(std::move(where)) {}
  const json& at(const std::string& key) const {
    if (!j_.is_object() || !j_.contains(key)) throw UsageError(fmt::format("{}: '{}' is missing", where_, key));
    return j_.at(key);
  }
  Reader sub(const std::string& key) const { return Reader(at(key), where_ + "." + key); }
  double number(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_number()) throw UsageError(fmt::format("{}.{} must be a number", where_, key));
    return v.get<double>();
  }
  std::string text(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_string()) throw UsageError(fmt::format("{}.{} must be a string", where_, key));
    return v.get<std::string>();
  }
  bool has(const std::string& key) const { return j_.is_object() && j_.contains(key) && !j_.at(key).is_null(); }
  const json& raw() const { return j_; }
  const std::string& where() const { return where_; }
  Link link(const std::string& key) const {
    const Reader r = sub(key);
    Link l{r.number("latency_us") * 1e-6, r.number("bandwidth_GBps") * 1e9};
    if (l.bandwidth_Bps <= 0 || l.latency_s < 0) {
      throw UsageError(fmt::format("{}.{}: bandwidth must be > 0 and latency >= 0", where_, key));
    }
    return l;
  }
  std::vector<ThreadRate> rates(const std::string& key) const {
    std::vector<ThreadRate> out;
    const json& a = at(key);
    if (!a.is_array()) throw UsageError(fmt::format("{}.{} must be a list", where_, key));
    for (std::size_t i = 0; i < a.size(); ++i) {
      const Reader r(a[i], fmt::format("{}.{}[{}]", where_, key, i));
      out.push_back({static_cast<int>(r.number("threads")), r.number("per_s")});
    }
    return out;
  }

 private:
  const json& j_;
  std::string where_;
};

GpuProfile gpu_from_json(const Reader& g) {
  GpuProfile out;
  out.present = g.at("present").get<bool>();
  if (!out.present) {
    out.reason = g.has("reason") ? g.text("reason") : "";
    return out;
  }
  out.name = g.text("name");
  out.count = static_cast<int>(g.number("count"));
  out.h2d_pinned = g.link("h2d_pinned");
  out.h2d_pageable = g.link("h2d_pageable");
  out.d2h_pinned = g.link("d2h_pinned");
  out.d2h_pageable = g.link("d2h_pageable");
  for (const auto& [prec, list] : g.at("gemm_gflops").items()) {
    for (const auto& pt : list)
      out.gemm_gflops[prec].emplace_back(pt.at("n").get<std::int64_t>(), pt.at("gflops").get<double>());
  }
  if (g.has("nccl_intra")) out.nccl_intra = g.link("nccl_intra");
  if (g.has("montecarlo")) {
    for (const auto& [problem, backends] : g.at("montecarlo").items()) {
      for (const auto& [backend, rate] : backends.items()) out.montecarlo[problem][backend] = rate.get<double>();
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
  const Reader r(j, fmt::format("profile {}", source));
  if (static_cast<int>(r.number("profile_version")) != kProfileVersion) {
    throw UsageError(
        fmt::format("profile {} has version {}, this scalebench reads {}; run `scalebench calibrate` again", source,
                    r.at("profile_version").dump(), kProfileVersion));
  }
  Profile p;
  p.source = source;
  p.host = r.text("host");
  p.created_at = r.text("created_at");
  p.versions = r.at("versions");
  p.hwloc = r.has("hwloc") ? r.at("hwloc") : json::object();
  p.cores = static_cast<int>(r.number("cores"));
  if (p.cores <= 0) throw UsageError(fmt::format("{}.cores must be > 0", r.where()));
  for (const auto& [prec, list] : r.at("blas").items()) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Reader b(list[i], fmt::format("{}.blas.{}[{}]", r.where(), prec, i));
      p.blas[prec].push_back({static_cast<int>(b.number("threads")),
                              {static_cast<std::int64_t>(b.number("m")), static_cast<std::int64_t>(b.number("n")),
                               static_cast<std::int64_t>(b.number("k"))},
                              b.number("gflops")});
    }
  }
  if (r.has("naive_gflops")) {
    for (const auto& [prec, list] : r.at("naive_gflops").items()) {
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Reader b(list[i], fmt::format("{}.naive_gflops.{}[{}]", r.where(), prec, i));
        p.naive_gflops[prec].emplace_back(static_cast<std::int64_t>(b.number("n")), b.number("gflops"));
      }
    }
  }
  const Reader mem = r.sub("memory");
  for (const auto& t : mem.at("triad"))
    p.triad_Bps.push_back({t.at("threads").get<int>(), t.at("GBps").get<double>() * 1e9});
  const Reader mpi = r.sub("mpi");
  p.intra_node = mpi.link("intra_node");
  if (mpi.has("inter_node")) p.inter_node = mpi.link("inter_node");
  if (mpi.has("collectives")) {
    for (const auto& [name, fits] : mpi.at("collectives").items()) {
      for (std::size_t i = 0; i < fits.size(); ++i) {
        const Reader f(fits[i], fmt::format("{}.mpi.collectives.{}[{}]", r.where(), name, i));
        p.collectives[name].push_back({static_cast<int>(f.number("ranks")),
                                       static_cast<int>(f.number("nodes")),
                                       {f.number("latency_us") * 1e-6, f.number("bandwidth_GBps") * 1e9}});
      }
    }
  }
  if (r.has("montecarlo")) {
    const Reader mc = r.sub("montecarlo");
    for (const auto& [problem, backends] : mc.raw().items()) {
      const Reader pr = mc.sub(problem);
      for (const auto& [backend, rates] : backends.items()) p.montecarlo[problem][backend] = pr.rates(backend);
    }
  }
  if (r.has("gpu")) {
    p.gpu = gpu_from_json(r.sub("gpu"));
  } else {
    p.gpu.reason = "not calibrated";
  }
  return p;
}

Profile load_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw ResourceError(fmt::format("cannot read profile {}; run `scalebench calibrate` or pass --profile FILE", path));
  std::stringstream text;
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::exception& e) {
    throw UsageError(
        fmt::format("profile {} is not valid JSON ({}); run `scalebench calibrate` again", path, e.what()));
  }
  try {
    return profile_from_json(j, path);
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("profile {} is malformed ({}); run `scalebench calibrate` again", path, e.what()));
  }
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
