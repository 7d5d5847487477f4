// `scalebench calibrate`: short timed micro-benchmarks that fill a machine profile
// (docs/model.md, "Calibration"). Every figure is a median of timed repeats after a warm-up.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <hwloc.h>

#include "calibrate_steps.hpp"
#include "gemm/device_gemm.hpp"
#include "montecarlo/gpu_montecarlo.hpp"
#include "scalebench/base/build_info.hpp"
#include "scalebench/base/energy.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/cpu/montecarlo.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/gpu/gpu_calibrate.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/topology/topology.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/run_context.hpp"
#include "scalebench/workloads/workload.hpp"

namespace scalebench {
namespace {

using nlohmann::json;

// For the node figures rank 0 runs on every core of its node, whatever binding the launcher gave
// it (mpirun binds a rank to one core); the binding comes back when this ends. Move-less scope.
class WholeNodeBinding {
 public:
  WholeNodeBinding() {
    if (hwloc_topology_init(&topo_) != 0) return;
    if (hwloc_topology_load(topo_) != 0) return;
    saved_ = hwloc_bitmap_alloc();
    bound_ = hwloc_get_cpubind(topo_, saved_, HWLOC_CPUBIND_PROCESS) == 0 &&
             hwloc_set_cpubind(topo_, hwloc_topology_get_allowed_cpuset(topo_), HWLOC_CPUBIND_PROCESS) == 0;
    cores_ = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE);
  }
  ~WholeNodeBinding() {
    if (bound_) hwloc_set_cpubind(topo_, saved_, HWLOC_CPUBIND_PROCESS);
    if (saved_) hwloc_bitmap_free(saved_);
    if (topo_) hwloc_topology_destroy(topo_);
  }
  WholeNodeBinding(const WholeNodeBinding&) = delete;
  WholeNodeBinding& operator=(const WholeNodeBinding&) = delete;
  // Cores of the node (1 if hwloc could not tell).
  int cores() const noexcept { return cores_ > 0 ? cores_ : 1; }

 private:
  hwloc_topology_t topo_ = nullptr;
  hwloc_bitmap_t saved_ = nullptr;
  bool bound_ = false;
  int cores_ = 0;
};

// Seconds of idle before the node is timed (power.cpu.idle_w, power.gpu.idle_w), and of one GPU
// multiplying for its watts: NVML's energy counter moves about every 100 ms.
constexpr double kIdleSeconds = 1.0, kIdleQuickSeconds = 0.5, kGpuPowerSeconds = 1.0;

struct Budget {
  int min_reps;
  double min_seconds;  // keep repeating until this much was timed (at most 20 repeats)
};

// The fastest, median and slowest of timed repeats, in seconds.
struct Times {
  double min = 0, median = 0, max = 0;
  Spread spread() const { return spread_of_times(min, median, max); }
};

// One warm-up, then repeats until the budget is spent.
template <class Step>
Times timed(const Budget& b, Step step) {
  step();
  std::vector<double> t;
  double total = 0;
  while (static_cast<int>(t.size()) < b.min_reps || (total < b.min_seconds && t.size() < 20)) {
    const double t0 = wall_seconds();
    step();
    t.push_back(wall_seconds() - t0);
    total += t.back();
  }
  return {*std::min_element(t.begin(), t.end()), median_of(t), *std::max_element(t.begin(), t.end())};
}

template <class Step>
double median_seconds(const Budget& b, Step step) {
  return timed(b, step).median;
}

// ---- Power (docs/model.md, "Energy"): mean watts from the energy counters around a timing ----

// Mean watts of the meter's `kind` domains ("cpu": RAPL packages and DRAM, "gpu": NVML) between
// two readings; none, with the reason, when the interval is not counted (energy.hpp: a counter
// unreadable, stepped back or rising past what its domain can draw) or the mean is more than the
// domains can draw together. A figure from such an interval never reaches the profile.
struct Watts {
  std::optional<double> w;
  std::string why;
};

Watts mean_watts(const EnergyMeter& m, const std::string& kind, const EnergyReading& a, const EnergyReading& b) {
  const EnergyDelta j = joules_of_kind(m.domains(), energy_between(m.domains(), a, b), kind);
  if (!j.joules) return {std::nullopt, j.why};
  double most = 0;
  for (const EnergyDomain& d : m.domains()) {
    if (d.kind == kind) most += d.max_w;
  }
  const double seconds = std::max(1e-6, b.at_s - a.at_s);
  const double w = *j.joules / seconds;
  if (w > most) {
    return {std::nullopt, fmt::format("{:.6g} J in {:.3g} s is {:.4g} W, more than the {:g} W its counters can draw at "
                                      "most: not counted",
                                      *j.joules, seconds, w, most)};
  }
  return {w, ""};
}

// Where a timing's mean watts go: none when `meter` is null (no counter, or a series not at full node).
struct WattsProbe {
  const EnergyMeter* meter = nullptr;
  std::string kind = "cpu";
  Watts* watts = nullptr;
};

// `f()`, with the probe's mean watts over it kept.
template <class F>
auto metered(const WattsProbe& probe, F f) {
  if (probe.meter == nullptr || probe.watts == nullptr) return f();
  const EnergyReading a = probe.meter->read();
  auto result = f();
  *probe.watts = mean_watts(*probe.meter, probe.kind, a, probe.meter->read());
  return result;
}

// The counters' names: "RAPL: package-0, package-0/dram".
std::string meter_source(const EnergyMeter& m, const std::string& kind, const std::string& what) {
  std::string names;
  for (const EnergyDomain& d : m.domains()) {
    if (d.kind == kind) names += (names.empty() ? "" : ", ") + d.name;
  }
  return what + ": " + names;
}

class Progress {
 public:
  explicit Progress(bool on) : on_(on) {}
  template <class... Args>
  void line(fmt::format_string<Args...> f, Args&&... args) const {
    if (!on_) return;
    std::fputs(("calibrate: " + fmt::format(f, std::forward<Args>(args)...) + "\n").c_str(), stdout);
    std::fflush(stdout);
  }

 private:
  bool on_;
};

// A kernel's watts kept under `key` of `into`; not counted, a warning in the profile instead (the
// energy model then says that kernel's power is missing).
void keep_watts(Profile& p, const Progress& say, std::map<std::string, double>& into, const std::string& key,
                const Watts& w, const std::string& what) {
  if (w.w) {
    into[key] = *w.w;
    say.line("power: {}: {:.1f} W", what, *w.w);
    return;
  }
  const std::string warning = fmt::format("power: {}: {}", what, w.why.empty() ? "not read" : w.why);
  say.line("warning: {}", warning);
  p.warnings.push_back(warning);
}

TimedRate gemm_gflops(GemmBackendKind kind, Precision prec, int threads, const GemmShape& s, const Budget& b,
                      const WattsProbe& probe = {}) {
  const std::size_t e = host_element_bytes(prec);
  std::vector<unsigned char> a(static_cast<std::size_t>(s.m * s.k) * e), bm(static_cast<std::size_t>(s.k * s.n) * e),
      c(static_cast<std::size_t>(s.m * s.n) * e);
  auto fill = [&](std::vector<unsigned char>& v) {
    if (prec == Precision::fp64) {
      auto* d = reinterpret_cast<double*>(v.data());
      for (std::size_t i = 0; i < v.size() / 8; ++i) d[i] = 1.0 / static_cast<double>(i % 7 + 1);
    } else {
      auto* f = reinterpret_cast<float*>(v.data());
      for (std::size_t i = 0; i < v.size() / 4; ++i) f[i] = 1.0f / static_cast<float>(i % 7 + 1);
    }
  };
  fill(a);
  fill(bm);
  auto gemm = make_cpu_gemm(kind, threads);
  PhaseRecorder rec;
  gemm->prepare(s, prec, rec);
  const Times t = metered(probe, [&] { return timed(b, [&] { gemm->multiply(a.data(), bm.data(), c.data(), rec); }); });
  return {2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / t.median * 1e-9,
          t.spread()};
}

// STREAM triad a = b + s·c on `threads` threads over arrays past the caches; bytes = 3 words each.
ThreadRate triad_Bps(int threads, std::size_t n, const Budget& budget) {
  std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
  auto pass = [&] {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const std::size_t lo = n * t / threads, hi = n * (t + 1) / threads;
        for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0 * c[i];
      });
    }
    for (auto& th : pool) th.join();
  };
  const Times t = timed(budget, pass);
  return {threads, 3.0 * 8.0 * static_cast<double>(n) / t.median, t.spread()};
}

// Work units (samples; Asian: samples × steps) per second of one Monte Carlo kernel.
ThreadRate montecarlo_rate(McProblem problem, McBackendKind backend, int threads, const Budget& b,
                           const Communicator* self, const WattsProbe& probe = {}) {
  MonteCarloConfig cfg;
  cfg.problem = problem;
  cfg.backend = backend;
  cfg.threads = threads;
  resolve_defaults(cfg);
  cfg.samples = cfg.chunk_size * 4;
  for (;;) {
    const std::int64_t chunks = chunk_count(cfg);
    std::unique_ptr<McKernel> k = backend == McBackendKind::naive    ? make_naive_montecarlo(0, 1)
                                  : backend == McBackendKind::cpu    ? make_cpu_montecarlo(threads)
                                  : backend == McBackendKind::curand ? make_gpu_library_montecarlo(cfg, *self)
                                                                     : make_gpu_montecarlo(cfg, *self);
    PhaseRecorder setup, rec;
    k->prepare(cfg, {0, chunks}, setup);
    const double sec = median_seconds({1, 0.0}, [&] { k->run(rec); });
    if (sec >= b.min_seconds / 3 || cfg.samples >= (std::int64_t{1} << 40)) {
      const Times full = metered(probe, [&] { return timed(b, [&] { k->run(rec); }); });
      const double units = static_cast<double>(cfg.samples) * (problem == McProblem::asian ? cfg.steps : 1);
      return {threads, units / full.median, full.spread()};
    }
    cfg.samples *= std::max<std::int64_t>(2, static_cast<std::int64_t>(b.min_seconds / 3 / std::max(sec, 1e-4)));
  }
}

json hwloc_summary() {
  const Topology t = Topology::load();
  return {{"packages", t.packages().size()}, {"numa_domains", t.cpu_numa_domains().size()},
          {"cores", t.cores().size()},       {"pus", t.cpus().size()},
          {"gpus", t.gpus().size()},         {"cpu_model", cpu_model()}};
}

// BLAS on 1 thread and on every core: the base sizes, then larger ones (to 8192, where runs'
// blocks are on a many-core node: its rate keeps changing past 3072) while one multiply stays
// under a cap: on every core 2 s (--quick) or 3 s, so that the sizes the contrast and node-wide
// runs use are timed in --quick too (the rate at 1024 is not the rate at 4096 on a busy node);
// on one thread 0.25 s or 0.5 s. Every point repeated with its spread kept, a collapsed one
// re-timed (time_blas_series).
void calibrate_blas(Profile& p, const CalibrateOptions& o, const Progress& say, const EnergyMeter* meter,
                    const std::set<int>& thread_counts) {
  std::vector<std::int64_t> sides = o.quick ? std::vector<std::int64_t>{256, 512, 1024}
                                            : std::vector<std::int64_t>{512, 1024, 2048, 3072};
  const std::int64_t grow_from = sides.back();
  for (const std::int64_t n : {2048, 3072, 4096, 6144, 8192}) {
    if (n > grow_from) sides.push_back(n);
  }
  const Budget budget{3, o.quick ? 0.2 : 1.0};
  const Budget retime_budget{5, o.quick ? 0.4 : 2.0};
  // The first series starts on a core just woken from idle: half a second of the same multiply,
  // not kept, first. (A machine still busy from what ran before reads slow for longer than that;
  // the closing check catches it and times the figures again: run_checks.)
  (void)gemm_gflops(GemmBackendKind::openblas, Precision::fp64, 1, {1024, 1024, 1024}, {1, o.quick ? 0.5 : 1.0});
  for (Precision prec : {Precision::fp64, Precision::fp32}) {
    for (int t : thread_counts) {
      const std::string what = fmt::format("BLAS {} {} thread(s)", to_string(prec), t);
      const double cap = t == p.cores && t > 1 ? (o.quick ? 2.0 : 3.0) : (o.quick ? 0.25 : 0.5);
      // Watts of the node-wide series by size: the largest size's are the profile's.
      std::map<std::int64_t, Watts> watts;
      BlasSeries series = time_blas_series(what, t, sides, grow_from, cap, [&](std::int64_t n, int attempt) {
        const WattsProbe probe{t == p.cores ? meter : nullptr, "cpu", &watts[n]};
        const TimedRate r = gemm_gflops(GemmBackendKind::openblas, prec, t, {n, n, n},
                                        attempt == 0 ? budget : retime_budget, probe);
        say.line("{} {}^3: {:.1f} GFLOP/s (-{:.0f}% +{:.0f}%){}", what, n, r.gflops, r.spread.below * 100,
                 r.spread.above * 100, attempt > 0 ? " re-timed" : "");
        return r;
      });
      if (t == p.cores && meter != nullptr && !series.points.empty()) {
        const std::int64_t largest = series.points.back().shape.n;
        keep_watts(p, say, p.power.cpu.blas_w, to_string(prec), watts[largest],
                   fmt::format("{} at {}^3 ({})", what, largest, p.power.cpu.source));
      }
      auto& points = p.blas[to_string(prec)];
      points.erase(std::remove_if(points.begin(), points.end(), [&](const BlasPoint& q) { return q.threads == t; }),
                   points.end());
      points.insert(points.end(), series.points.begin(), series.points.end());
      std::stable_sort(points.begin(), points.end(),
                       [](const BlasPoint& a, const BlasPoint& b) { return a.threads < b.threads; });
      for (const auto& w : series.warnings) {
        say.line("warning: {}", w);
        p.warnings.push_back(w);
      }
    }
  }
}

// The Monte Carlo kernels' CPU rates (every problem, on 1 thread and every core) and the naive
// baseline's, replacing any earlier ones.
void calibrate_montecarlo_cpu(Profile& p, const CalibrateOptions& o, const Progress& say, const EnergyMeter* meter) {
  const Budget mc_budget{3, o.quick ? 0.15 : 0.6};
  for (McProblem problem : {McProblem::pi, McProblem::european, McProblem::asian}) {
    auto& rates = p.montecarlo[to_string(problem)];
    rates["cpu"].clear();
    rates["naive"].clear();
    Watts watts;
    for (int t : std::set<int>{1, p.cores}) {
      rates["cpu"].push_back(montecarlo_rate(problem, McBackendKind::cpu, t, mc_budget, nullptr,
                                             {t == p.cores ? meter : nullptr, "cpu", &watts}));
    }
    rates["naive"].push_back(montecarlo_rate(problem, McBackendKind::naive, 1, mc_budget, nullptr));
    say.line("Monte Carlo {}: cpu {:.3g}/s on {} thread(s), naive {:.3g}/s", to_string(problem),
             rates["cpu"].back().per_s, rates["cpu"].back().threads, rates["naive"].back().per_s);
    if (meter != nullptr) {
      keep_watts(p, say, p.power.cpu.montecarlo_w, to_string(problem), watts,
                 fmt::format("Monte Carlo {} cpu on {} thread(s)", to_string(problem), p.cores));
    }
  }
}

void calibrate_cpu(Profile& p, const CalibrateOptions& o, const Progress& say, const EnergyMeter* meter) {
  calibrate_blas(p, o, say, meter, {1, p.cores});
  std::set<int> thread_counts{1, p.cores};
  for (Precision prec : {Precision::fp64, Precision::fp32}) {
    // The triple loop slows down once B's columns no longer stay in cache: up to the contrast's
    // naive row (768; --quick timed only to 384 predicted it 96% fast), and with --quick also the
    // size its closing check runs (384).
    for (const std::int64_t nn :
         o.quick ? std::vector<std::int64_t>{128, 384, 768} : std::vector<std::int64_t>{256, 768}) {
      const TimedRate r = gemm_gflops(GemmBackendKind::naive, prec, 1, {nn, nn, nn}, {3, 0.1});
      p.naive_gflops[to_string(prec)].emplace_back(nn, r.gflops);
      p.naive_spread[to_string(prec)].push_back(r.spread);
      say.line("naive {} {}^3: {:.2f} GFLOP/s", to_string(prec), nn, r.gflops);
    }
  }
  const std::size_t words = o.quick ? (std::size_t{8} << 20) : (std::size_t{32} << 20);
  for (int t : thread_counts) {
    p.triad_Bps.push_back(triad_Bps(t, words, {5, 0.3}));
    say.line("memory triad {} thread(s): {:.1f} GB/s", t, p.triad_Bps.back().per_s * 1e-9);
  }
  calibrate_montecarlo_cpu(p, o, say, meter);
}

void calibrate_gpu_part(Profile& p, const CalibrateOptions& o, const Progress& say, const Communicator& self) {
  if (visible_gpu_count() == 0) {
    p.gpu.present = false;
    p.gpu.reason = gpu_absence_reason();
    say.line("GPU: skipped ({})", p.gpu.reason);
    return;
  }
  json g = calibrate_gpu(o.quick);
  for (McProblem problem : {McProblem::pi, McProblem::european, McProblem::asian}) {
    for (McBackendKind b : {McBackendKind::cuda, McBackendKind::curand}) {
      g["montecarlo"][to_string(problem)][to_string(b)] =
          montecarlo_rate(problem, b, 1, {3, o.quick ? 0.1 : 0.5}, &self).per_s;
    }
  }
  p.gpu = profile_from_json({{"profile_version", kProfileVersion},
                             {"host", ""},
                             {"created_at", ""},
                             {"versions", {}},
                             {"cores", 1},
                             {"blas", json::object()},
                             {"memory", {{"triad", json::array()}}},
                             {"mpi", {{"intra_node", {{"latency_us", 1}, {"bandwidth_GBps", 1}}}}},
                             {"gpu", g}},
                            "gpu calibration")
              .gpu;
  say.line("GPU {} x{}: h2d pinned {:.1f} GB/s, d2h pinned {:.1f} GB/s", p.gpu.name, p.gpu.count,
           p.gpu.h2d_pinned.bandwidth_Bps * 1e-9, p.gpu.d2h_pinned.bandwidth_Bps * 1e-9);
}

// The node's counters (RAPL; NVML for the first visible GPU), opened and their idle watts read
// before anything is timed (a GPU still warm from a multiply draws more than idle): power.cpu and
// power.gpu's idle figures, or the reason a part has none. Never null.
std::unique_ptr<EnergyMeter> open_power(Profile& p, const CalibrateOptions& o, const Progress& say) {
  p.power.recorded = true;
  std::vector<std::string> buses;
  if (visible_gpu_count() == 0) {
    p.power.gpu.reason = "no GPU visible (" + gpu_absence_reason() + ")";
  } else {
    try {
      buses.push_back(gpu_info(0).value("pci_bus_id", std::string()));
    } catch (const std::exception& e) {
      p.power.gpu.reason = fmt::format("the GPU's PCI bus id is unknown ({})", e.what());
    }
  }
  std::unique_ptr<EnergyMeter> meter = EnergyMeter::open(buses);
  p.power.cpu.reason = meter->cpu_reason();
  if (!buses.empty()) p.power.gpu.reason = meter->gpu_reason();
  bool cpu = p.power.cpu.reason.empty(), gpu = !buses.empty() && p.power.gpu.reason.empty();
  if (cpu) p.power.cpu.source = meter_source(*meter, "cpu", "RAPL");
  if (gpu) p.power.gpu.source = meter_source(*meter, "gpu", "NVML");
  if (cpu || gpu) {
    const EnergyReading a = meter->read();
    std::this_thread::sleep_for(std::chrono::duration<double>(o.quick ? kIdleQuickSeconds : kIdleSeconds));
    const EnergyReading b = meter->read();
    // Idle watts from an interval not counted are absent: the part is, with the reason.
    const Watts cpu_idle = cpu ? mean_watts(*meter, "cpu", a, b) : Watts{};
    const Watts gpu_idle = gpu ? mean_watts(*meter, "gpu", a, b) : Watts{};
    if (cpu && !cpu_idle.w) p.power.cpu.reason = "its idle power was not counted: " + cpu_idle.why;
    if (gpu && !gpu_idle.w) p.power.gpu.reason = "its idle power was not counted: " + gpu_idle.why;
    cpu = cpu && cpu_idle.w;
    gpu = gpu && gpu_idle.w;
    p.power.cpu.idle_w = cpu_idle.w.value_or(0.0);
    p.power.gpu.idle_w = gpu_idle.w.value_or(0.0);
  }
  p.power.cpu.present = cpu;  // the GPU's once its multiplies are read (calibrate_gpu_power)
  say.line("power: CPU {}", cpu ? fmt::format("idle {:.1f} W ({})", p.power.cpu.idle_w, p.power.cpu.source)
                                : fmt::format("not read ({})", p.power.cpu.reason));
  if (gpu) say.line("power: GPU idle {:.1f} W ({})", p.power.gpu.idle_w, p.power.gpu.source);
  return meter;
}

// One GPU's watts while cuBLAS multiplies n^3 back to back for kGpuPowerSeconds, each precision
// (uniform random inputs, as runs use). Completes power.gpu, or gives its reason.
void calibrate_gpu_power(Profile& p, const CalibrateOptions& o, const Progress& say, const Communicator& self,
                         const EnergyMeter& meter) {
  GpuPower& g = p.power.gpu;
  if (!g.reason.empty()) {
    say.line("power: GPU not read ({})", g.reason);
    return;
  }
  if (!p.gpu.present) {
    g = {};
    g.reason = "no GPU calibrated (" + p.gpu.reason + ")";
    return;
  }
  try {
    const std::int64_t n = o.quick ? 4096 : 8192;
    for (Precision prec : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::bf16}) {
      GemmConfig cfg;
      cfg.backend = GemmBackendKind::cublas;
      cfg.precision = prec;
      cfg.shape = {n, n, n};
      const std::unique_ptr<GpuGemm> gemm = make_device_gemm(cfg, self);
      gemm->reserve({n, 0});
      PhaseRecorder rec;
      gemm->prepare(cfg.shape, prec, rec);
      gemm->generate(cfg.shape, 0, cfg.seed, Fill::uniform);
      compute(*gemm, rec);  // warm-up
      Watts w;
      metered(WattsProbe{&meter, "gpu", &w}, [&] {
        const double t0 = wall_seconds();
        while (wall_seconds() - t0 < kGpuPowerSeconds) compute(*gemm, rec);
        return 0;
      });
      keep_watts(p, say, g.gemm_w, to_string(prec), w,
                 fmt::format("GPU {} GEMM {}^3 (idle {:.1f} W)", to_string(prec), n, g.idle_w));
    }
    g.present = true;
  } catch (const std::exception& e) {
    g = {};
    g.reason = fmt::format("GPU power not read: {}", e.what());
    say.line("power: {}", g.reason);
  }
}

// Half the round trip of a ping-pong between rank 0 and `peer`.
double pingpong_seconds(const Communicator& comm, int peer, std::size_t bytes, const Budget& b) {
  std::vector<char> buf(std::max<std::size_t>(bytes, 1));
  const int me = comm.rank();
  const int n = static_cast<int>(buf.size());
  auto step = [&] {
    if (me == 0) {
      SCALEBENCH_MPI(MPI_Send(buf.data(), n, MPI_CHAR, peer, 7, comm.get()));
      SCALEBENCH_MPI(MPI_Recv(buf.data(), n, MPI_CHAR, peer, 7, comm.get(), MPI_STATUS_IGNORE));
    } else {
      SCALEBENCH_MPI(MPI_Recv(buf.data(), n, MPI_CHAR, 0, 7, comm.get(), MPI_STATUS_IGNORE));
      SCALEBENCH_MPI(MPI_Send(buf.data(), n, MPI_CHAR, 0, 7, comm.get()));
    }
  };
  // Both sides run the same number of repeats: the count is fixed, not time-driven.
  const int reps = std::max(b.min_reps, 3);
  step();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const double t0 = wall_seconds();
    step();
    t.push_back(wall_seconds() - t0);
  }
  return median_of(t) / 2;
}

// Latency from 8-byte messages, bandwidth from `large` bytes.
std::optional<Link> measure_link(const Communicator& world, int peer, std::size_t large, int large_reps) {
  if (peer < 0) return std::nullopt;
  const Communicator pair = world.split(world.rank() == 0 || world.rank() == peer ? 0 : MPI_UNDEFINED, world.rank());
  std::optional<Link> out;
  if (world.rank() == 0 || world.rank() == peer) {
    const double small = pingpong_seconds(pair, 1, 8, {200, 0});
    const double big = pingpong_seconds(pair, 1, large, {large_reps, 0});
    out = Link{small, static_cast<double>(large) / std::max(big - small, 1e-9)};
  }
  wait_quietly(world);
  return out;
}

// Seconds of one collective as the drivers' records count it: the slowest rank, median of repeats.
template <class Step>
double collective_seconds(const Communicator& comm, int reps, Step step) {
  std::vector<double> t;
  for (int i = -1; i < reps; ++i) {
    comm.barrier();
    const double t0 = wall_seconds();
    step();
    const double slowest = comm.max(wall_seconds() - t0);
    if (i >= 0) t.push_back(slowest);
  }
  return median_of(t);
}

// bcast, scatterv, gatherv and a small all-reduce on the first `ranks` ranks, fitted to
// latency + moved bytes / bandwidth from an 8-byte run (5 repeats) and a `large`-byte run
// (`large_reps` repeats).
void measure_collectives(Profile& p, const Communicator& world, int ranks, int nodes, std::size_t large, int large_reps,
                         const Progress& say) {
  const bool member = world.rank() < ranks;
  const Communicator sub = world.split(member ? 0 : MPI_UNDEFINED, world.rank());
  if (member) {
    auto fit = [&](const std::string& name, auto run) {
      const double small = run(std::size_t{8});
      const double big = run(large);
      const double moved = name == "bcast" || name == "relay" ? static_cast<double>(large)
                                                              : static_cast<double>(large) * (ranks - 1) / ranks;
      p.collectives[name].push_back({ranks, nodes, {small, moved / std::max(big - small, 1e-9)}});
      say.line("MPI {} on {} ranks ({} node(s)): {:.1f} us + {:.2f} GB/s", name, ranks, nodes, small * 1e6,
               p.collectives[name].back().link.bandwidth_Bps * 1e-9);
    };
    const auto reps = [&](std::size_t bytes) { return bytes == large ? large_reps : 5; };
    fit("bcast", [&](std::size_t bytes) {
      std::vector<char> buf(bytes);
      return collective_seconds(sub, reps(bytes), [&] { bcast(buf.data(), static_cast<std::int64_t>(bytes), 0, sub); });
    });
    auto split_run = [&](bool scatter) {
      return [&, scatter](std::size_t bytes) {
        const RowPartition parts(static_cast<std::int64_t>(bytes), ranks);
        std::vector<char> full(sub.is_root() ? bytes : 0);
        const Block mine = parts.block(sub.rank());
        std::vector<char> own(static_cast<std::size_t>(mine.count));
        char* mine_ptr = sub.is_root() ? full.data() + mine.offset : own.data();
        return collective_seconds(sub, reps(bytes), [&] {
          if (scatter) {
            scatterv(full.data(), parts.counts(), parts.offsets(), mine_ptr, mine.count, 0, sub);
          } else {
            gatherv(mine_ptr, mine.count, full.data(), parts.counts(), parts.offsets(), 0, sub);
          }
        });
      };
    };
    // The relay along the chain (row1d's replicated B), where it goes along it at this size.
    if (relay_goes_along_chain(ranks, static_cast<std::int64_t>(large))) {
      fit("relay", [&](std::size_t bytes) {
        std::vector<char> buf(bytes);
        return collective_seconds(sub, reps(bytes),
                                  [&] { relay_bytes(buf.data(), static_cast<std::int64_t>(bytes), 0, sub); });
      });
    }
    fit("scatterv", split_run(true));
    fit("gatherv", split_run(false));
    const double reduce = collective_seconds(sub, 20, [&] { (void)sub.sum(std::int64_t{1}); });
    p.collectives["reduce"].push_back({ranks, nodes, {reduce, 1e12}});
  }
  wait_quietly(world);
}

void calibrate_mpi(Profile& p, const Communicator& comm, const CalibrateOptions& o, const Progress& say) {
  // Every rank learns every rank's host (one line each).
  std::string joined;
  for (const auto& h : comm.gather_strings(host_name())) joined += h + "\n";
  joined = comm.bcast_string(joined, 0);
  std::vector<std::string> host_of;
  for (std::size_t start = 0, end; (end = joined.find('\n', start)) != std::string::npos; start = end + 1) {
    host_of.push_back(joined.substr(start, end - start));
  }
  int intra_peer = -1, inter_peer = -1;
  for (int r = 1; r < comm.size(); ++r) {
    if (host_of[r] == host_of[0] && intra_peer < 0) intra_peer = r;
    if (host_of[r] != host_of[0] && inter_peer < 0) inter_peer = r;
  }
  // Bandwidth from messages past any node's last-level cache, as runs' blocks are: a 4 MB message
  // copied through shared memory stays in cache and read 9.8 GB/s on a node where a run's 7 GB
  // broadcast moved 6.5 GB/s.
  const std::size_t large = o.quick ? (std::size_t{256} << 20) : (std::size_t{512} << 20);
  // Large messages cost: 3 repeats with --quick (a loaded 2-core box spent over a minute on 10).
  const int large_reps = o.quick ? 3 : 10;
  if (auto l = measure_link(comm, intra_peer, large, large_reps)) p.intra_node = *l;
  if (auto l = measure_link(comm, inter_peer, large, large_reps)) p.inter_node = *l;
  if (comm.is_root() && intra_peer > 0) {
    say.line("MPI inside a node: {:.2f} us, {:.2f} GB/s", p.intra_node.latency_s * 1e6,
             p.intra_node.bandwidth_Bps * 1e-9);
  }
  if (comm.is_root() && p.inter_node) {
    say.line("MPI between nodes: {:.2f} us, {:.2f} GB/s", p.inter_node->latency_s * 1e6,
             p.inter_node->bandwidth_Bps * 1e-9);
  }
  std::set<int> counts;
  for (int r = 2; r < comm.size(); r *= 2) counts.insert(r);
  if (comm.size() > 1) counts.insert(comm.size());
  for (int ranks : counts) {
    const std::set<std::string> used(host_of.begin(), host_of.begin() + ranks);
    measure_collectives(p, comm, ranks, static_cast<int>(used.size()), large, o.quick ? 3 : 5, say);
  }
}

// ---- The check: one short run per backend, predicted from the new profile, then timed ---------

// The largest of `sides` whose prediction stays under `limit_s` (the smallest when none does).
template <class Predict>
std::int64_t check_side(const std::vector<std::int64_t>& sides, double limit_s, Predict predict) {
  std::int64_t pick = sides.front();
  for (const std::int64_t n : sides) {
    if (predict(n).end_to_end <= limit_s) pick = n;
  }
  return pick;
}

// A check that misses by more than this, and outside its band, has its figures timed again once.
constexpr double kRetimeMiss = 0.15;

// Adds the check to the profile and says it; true when it missed by more than kRetimeMiss and fell
// outside its band. Outside at all, not by the tolerance that flags a run: figures timed under a
// load are spread wide, their band with them, and a check 8x faster than predicted once sat 12% of
// the prediction below a band stretched that way.
bool add_check(Profile& p, const Progress& say, const std::string& what, const Prediction& pred, double measured) {
  const auto [low, high] = pred.band();
  const double miss = measured / pred.end_to_end - 1.0;
  p.checks.push_back({{"what", what},
                      {"predicted_s", pred.end_to_end},
                      {"low_s", low},
                      {"high_s", high},
                      {"measured_s", measured},
                      {"miss", miss},
                      {"flagged", prediction_flagged(pred, measured)}});
  say.line("check {}: predicted {:.4f} s [{:.4f}, {:.4f}], measured {:.4f} s, miss {:+.1f}%{}", what, pred.end_to_end,
           low, high, measured, miss * 100, prediction_flagged(pred, measured) ? " (outside the band)" : "");
  return (measured < low || measured > high) && std::abs(miss) > kRetimeMiss;
}

// One rank's gemm at sizes the calibration did not time (its own multiply is the run: one rank
// moves nothing).
bool check_gemm(Profile& p, const CalibrateOptions& o, const Progress& say, GemmBackendKind kind, int threads) {
  const std::vector<std::int64_t> sides = kind == GemmBackendKind::naive
                                              ? std::vector<std::int64_t>{96, 192, 384}
                                              : std::vector<std::int64_t>{384, 768, 1536, 2560, 3584, 5120};
  GemmConfig cfg;
  cfg.backend = kind;
  cfg.threads = threads;
  const MachineLayout one{1, 1, 0};
  const auto predict = [&](std::int64_t n) {
    cfg.shape = {n, n, n};
    return predict_gemm(p, cfg, one);
  };
  const std::int64_t n = check_side(sides, o.quick ? 0.1 : 0.4, predict);
  const Prediction pred = predict(n);
  const double measured_gflops = gemm_gflops(kind, cfg.precision, threads, cfg.shape, {3, 0.0}).gflops;
  const double nd = static_cast<double>(n);
  return add_check(p, say, fmt::format("gemm --backend {} --threads {} --n {}", to_string(kind), threads, n), pred,
                   2 * nd * nd * nd / (measured_gflops * 1e9));
}

bool check_montecarlo(Profile& p, const CalibrateOptions& o, const Progress& say, McBackendKind backend, int threads,
                      const Communicator& self) {
  MonteCarloConfig cfg;
  cfg.problem = McProblem::pi;
  cfg.backend = backend;
  cfg.threads = threads;
  resolve_defaults(cfg);
  const MachineLayout one{1, 1, backend == McBackendKind::cpu ? 0 : 1};
  // Samples for about a tenth of a second (0.4 s without --quick), in whole chunks.
  cfg.samples = cfg.chunk_size;
  const double per_chunk = predict_montecarlo(p, cfg, one).end_to_end;
  const double chunks = std::clamp(std::floor((o.quick ? 0.1 : 0.4) / per_chunk), 1.0, 1e9);
  cfg.samples = cfg.chunk_size * static_cast<std::int64_t>(chunks);
  const Prediction pred = predict_montecarlo(p, cfg, one);
  std::unique_ptr<McKernel> k = backend == McBackendKind::cpu ? make_cpu_montecarlo(threads)
                                                              : make_gpu_montecarlo(cfg, self);
  PhaseRecorder setup, rec;
  k->prepare(cfg, {0, chunk_count(cfg)}, setup);
  const double measured = timed({3, 0.0}, [&] { k->run(rec); }).median;
  return add_check(p, say,
                   fmt::format("montecarlo --problem pi --backend {} --threads {} --samples {}", to_string(backend),
                               threads, cfg.samples),
                   pred, measured);
}

// Rank 0, every rank's figures in: one check per backend calibrated. A check that cannot be
// predicted or run is said and skipped: the profile stands. A check that misses outside its band
// by more than kRetimeMiss has its figures timed again and runs again, once: a calibration that
// started while the machine was still busy (a build, a job ending) read the CPU slow by 30-60% on a
// 32-core virtual machine, and its own checks, seconds later, saw the real speed. If the check
// still misses, the profile keeps a warning.
void run_checks(Profile& p, const CalibrateOptions& o, const Progress& say, const Communicator& self) {
  const WholeNodeBinding whole;
  struct Check {
    std::string name;
    std::function<bool()> run;
    std::function<void()> retime;  // empty: nothing to time again
  };
  const std::vector<Check> checks = {
      {"naive", [&] { return check_gemm(p, o, say, GemmBackendKind::naive, 1); }, {}},
      {"openblas 1 thread", [&] { return check_gemm(p, o, say, GemmBackendKind::openblas, 1); },
       [&] { calibrate_blas(p, o, say, nullptr, {1}); }},
      {"openblas all cores", [&] { return check_gemm(p, o, say, GemmBackendKind::openblas, p.cores); },
       [&] { calibrate_blas(p, o, say, nullptr, {p.cores}); }},
      {"montecarlo cpu", [&] { return check_montecarlo(p, o, say, McBackendKind::cpu, p.cores, self); },
       [&] { calibrate_montecarlo_cpu(p, o, say, nullptr); }},
      {"montecarlo cuda",
       [&] { return p.gpu.present && check_montecarlo(p, o, say, McBackendKind::cuda, 1, self); },
       {}},
  };
  for (const auto& c : checks) {
    try {
      if (!c.run() || !c.retime) continue;
      p.checks.back()["timed_again"] = true;
      say.line("check {}: missed by more than {:.0f}% outside its band: its figures are timed again", c.name,
               kRetimeMiss * 100);
      c.retime();
      if (c.run()) {
        const std::string w = fmt::format(
            "check {} still missed by {:+.0f}% after its figures were timed again: this machine's speed changed while "
            "calibrating (another load?); runs of this kind may miss their predictions",
            c.name, p.checks.back().at("miss").get<double>() * 100);
        say.line("warning: {}", w);
        p.warnings.push_back(w);
      }
    } catch (const std::exception& e) {
      say.line("check {}: skipped ({})", c.name, e.what());
    }
  }
}

// The first visible GPU's model and driver (null when none is visible).
json first_gpu() {
  if (visible_gpu_count() == 0) return nullptr;
  try {
    const json g = gpu_info(0);
    return {{"name", g.value("name", std::string())}, {"driver_version", g.value("driver_version", std::string())}};
  } catch (const std::exception&) {
    return nullptr;
  }
}

std::string launch_line(const json& l) {
  const std::string binding = l.at("binding") == "none"
                                  ? std::string("unbound")
                                  : fmt::format("bound to {} of {} CPUs", l.at("cpus_allowed").get<long>(),
                                                l.at("cpus").get<long>());
  return fmt::format("launched by {}, {} rank(s), rank 0 {} (widened to the whole node for the node figures)",
                     l.at("launcher").get<std::string>(), l.at("ranks").get<int>(), binding);
}

}  // namespace

json profile_valid_for_here() {
  const json versions = {{"scalebench", build_version()},   {"git", build_git_hash()},
                         {"compiler", build_compiler()},    {"build_type", build_type()},
                         {"cuda_built", build_with_cuda()}, {"mpi_library", mpi_library_version()},
                         {"openblas", openblas_info()}};
  return profile_valid_for(host_name(), versions, first_gpu());
}

Profile calibrate_machine(const Communicator& comm, const CalibrateOptions& o) {
  const Progress say(comm.is_root() && !o.quiet);
  Profile p;
  const json ctx = run_context(comm);
  const Communicator self = comm.split(comm.rank(), 0);
  if (comm.is_root()) {
    p.host = host_name();
    p.versions = ctx.at("versions");
    p.launch = launch_description(comm.size());
    say.line("{}", launch_line(p.launch));
    p.valid_for = profile_valid_for(p.host, p.versions, first_gpu());
    p.hwloc = hwloc_summary();
    const WholeNodeBinding whole;
    p.cores = whole.cores();
    const std::unique_ptr<EnergyMeter> meter = open_power(p, o, say);
    calibrate_cpu(p, o, say, p.power.cpu.present ? meter.get() : nullptr);
    calibrate_gpu_part(p, o, say, self);
    calibrate_gpu_power(p, o, say, self, *meter);
    // Two ranks on one node copy through shared memory: until measured, read + write at the
    // one-thread triad rate, and a microsecond.
    p.intra_node = {1e-6, p.triad_Bps.front().per_s * 2.0 / 3.0 / 2.0};
  }
  wait_quietly(comm);
  calibrate_mpi(p, comm, o, say);
  // What each workload measures of the machine beyond the figures above (workload.hpp).
  for (const Workload* w : workloads())
    w->calibrate(p, comm, o, [&say](const std::string& line) { say.line("{}", line); });
  if (o.check && comm.is_root()) run_checks(p, o, say, self);
  wait_quietly(comm);
  p.created_at = utc_now_iso8601();
  return p;
}

}  // namespace scalebench
