// The GPU Monte Carlo backend: this rank's GPU, launches of the kernels in montecarlo_kernels.cuh
// over the rank's chunk range (in batches), device-timed phases, and the host-side fold of the
// per-chunk sums over the chunk tree.
//
// Arithmetic: π uses 32-bit integer coordinates and the CPU's exact decision x² + y² < 2^64, made
// in fp32 where the rounding provably cannot change it and with integers elsewhere (the kernel's
// comment has the bound): the same hits as the CPU, bit for bit. Option paths are evaluated in
// fp32 with the hardware approximations (__logf, __sincosf, __expf) and summed in fp64; they use
// the same normals as the CPU up to fp32 rounding, so estimates agree with the CPU's to about 1e-5
// relative, far inside the statistical error. See docs/montecarlo.md.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "device_memory.hpp"
#include "gpu_device.hpp"
#include "montecarlo/gpu_montecarlo.hpp"
#include "montecarlo_kernels.cuh"
#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/problem/montecarlo.hpp"
#include "stream.hpp"

namespace scalebench {
namespace {

// Chunks per launch for options (bounds the chunk-sum buffer: 2^20 chunks x 40 bytes).
constexpr std::int64_t kChunksPerBatch = std::int64_t{1} << 20;
// Chunks per launch for π (bounds the grid).
constexpr std::int64_t kPiChunksPerLaunch = std::int64_t{1} << 30;

using gpu::mc::DeviceLayout;
using gpu::mc::DeviceModel;
using gpu::mc::kBlockThreads;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
static_assert(gpu::mc::kTagPi == kPhiloxTagPi && gpu::mc::kTagEuropean == kPhiloxTagEuropean &&
                  gpu::mc::kTagAsian == kPhiloxTagAsian,
              "device and host Philox stream tags differ");
static_assert(gpu::mc::kSumY == kSumY && gpu::mc::kSumYY == kSumYY && gpu::mc::kSumX == kSumX &&
                  gpu::mc::kSumXX == kSumXX && gpu::mc::kSumXY == kSumXY && gpu::mc::kSumCount == kSumCount,
              "device and host chunk-sum layouts differ");

class CudaMonteCarlo final : public McKernel {
 public:
  // The device is current and its context made once selected; the context's creation was timed
  // by the first selection in this process (placement may have selected before the backend did).
  CudaMonteCarlo(const MonteCarloConfig& cfg, const Communicator& comm)
      : device_(select_gpu_for_rank(comm, cfg.share_gpu, "--backend cuda")), context_s_(gpu::first_context_seconds()) {}

  std::string name() const override { return "cuda"; }

  void prepare(const MonteCarloConfig& cfg, ChunkRange range, PhaseRecorder& setup) override {
    setup.add(phase::gpu_context, context_s_);
    ScopedPhase t(setup, phase::gpu_alloc);
    cfg_ = cfg;
    range_ = range;
    stream_.emplace();  // on this rank's device (selected in the constructor)
    layout_.chunk_size = static_cast<u64>(cfg.chunk_size);
    layout_.samples = static_cast<u64>(cfg.samples);
    layout_.key0 = static_cast<u32>(cfg.seed);
    layout_.key1 = static_cast<u32>(cfg.seed >> 32);
    const auto& mk = cfg.market;
    const bool asian = cfg.problem == McProblem::asian;
    const double dt = asian ? mk.maturity / cfg.steps : mk.maturity;
    model_ = {static_cast<float>(mk.spot),
              static_cast<float>(mk.strike),
              static_cast<float>((mk.rate - 0.5 * mk.sigma * mk.sigma) * dt),
              static_cast<float>(mk.sigma * std::sqrt(dt)),
              cfg.steps,
              cfg.option == OptionKind::call};
    const std::int64_t chunks = range.last - range.first;
    if (cfg.problem == McProblem::pi) {
      device_sums_ = gpu::DeviceBuffer(sizeof(unsigned long long));
      host_sums_ = gpu::PinnedBuffer(sizeof(unsigned long long));
    } else {
      const auto slots = static_cast<std::size_t>(std::max<std::int64_t>(std::min(chunks, kChunksPerBatch), 1));
      device_sums_ = gpu::DeviceBuffer(slots * kSumCount * sizeof(double));
      host_sums_ = gpu::PinnedBuffer(slots * kSumCount * sizeof(double));
    }
  }

  McPartial run(PhaseRecorder& rec) override {
    McPartial out;
    if (range_.last <= range_.first) return out;
    return cfg_.problem == McProblem::pi ? run_pi(rec) : run_option(rec);
  }

  nlohmann::json describe() const override {
    return {{"name", "cuda"},
            {"threads", 1},
            {"gpu", gpu_info(device_)},
            {"rng", "Philox4x32-10 (Random123 compiled for the device)"},
            {"arithmetic", "pi: 32-bit integer coordinates, the exact decision (fp32 where it provably agrees, "
                           "integers near the circle), bit-identical to cpu; options: fp32 paths "
                           "(__logf, __sincosf, __expf), fp64 sums per thread and per chunk"},
            {"threads_per_block", kBlockThreads},
            {"blocks", range_.last - range_.first}};
  }

 private:
  McPartial run_pi(PhaseRecorder& rec) {
    McPartial out;
    auto* hits = device_sums_.as<unsigned long long>();
    gpu::DeviceTimer timer(stream_->get());
    timer.start();
    const gpu::mc::PiKeys keys = gpu::mc::pi_keys(layout_.key0, layout_.key1);
    SCALEBENCH_CUDA_CHECK(cudaMemsetAsync(hits, 0, sizeof(unsigned long long), stream_->get()));
    for (std::int64_t c = range_.first; c < range_.last; c += kPiChunksPerLaunch) {
      DeviceLayout l = layout_;
      l.first_chunk = static_cast<u64>(c);
      const auto grid = static_cast<unsigned>(std::min(kPiChunksPerLaunch, range_.last - c));
      gpu::mc::pi_kernel<<<grid, kBlockThreads, 0, stream_->get()>>>(l, keys, hits);
      SCALEBENCH_CUDA_CHECK(cudaGetLastError());
    }
    timer.stop_into(rec, phase::compute);
    timer.start();
    SCALEBENCH_CUDA_CHECK(
        cudaMemcpyAsync(host_sums_.get(), hits, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream_->get()));
    timer.stop_into(rec, phase::d2h);
    out.hits = static_cast<std::int64_t>(*host_sums_.as<unsigned long long>());
    return out;
  }

  McPartial run_option(PhaseRecorder& rec) {
    McPartial out;
    ChunkTree tree;
    gpu::DeviceTimer timer(stream_->get());
    for (std::int64_t c = range_.first; c < range_.last; c += kChunksPerBatch) {
      const std::int64_t n = std::min(kChunksPerBatch, range_.last - c);
      DeviceLayout l = layout_;
      l.first_chunk = static_cast<u64>(c);
      timer.start();
      if (cfg_.problem == McProblem::asian) {
        gpu::mc::asian_kernel<<<static_cast<unsigned>(n), kBlockThreads, 0, stream_->get()>>>(
            l, model_, device_sums_.as<double>());
      } else {
        gpu::mc::european_kernel<<<static_cast<unsigned>(n), kBlockThreads, 0, stream_->get()>>>(
            l, model_, device_sums_.as<double>());
      }
      SCALEBENCH_CUDA_CHECK(cudaGetLastError());
      timer.stop_into(rec, phase::compute);
      const std::size_t bytes = static_cast<std::size_t>(n) * kSumCount * sizeof(double);
      timer.start();
      SCALEBENCH_CUDA_CHECK(
          cudaMemcpyAsync(host_sums_.get(), device_sums_.get(), bytes, cudaMemcpyDeviceToHost, stream_->get()));
      timer.stop_into(rec, phase::d2h);
      const double t0 = wall_seconds();
      const double* sums = host_sums_.as<double>();
      for (std::int64_t i = 0; i < n; ++i) {
        McSums s;
        for (int k = 0; k < kSumCount; ++k) s.v[k] = sums[i * kSumCount + k];
        tree.push_leaf(c + i, s);
      }
      rec.add(phase::reduce, wall_seconds() - t0);
    }
    out.nodes = tree.nodes();
    return out;
  }

  int device_ = 0;
  double context_s_ = 0;
  MonteCarloConfig cfg_;
  ChunkRange range_;
  DeviceLayout layout_{};
  DeviceModel model_{};
  std::optional<gpu::Stream> stream_;
  gpu::DeviceBuffer device_sums_;
  gpu::PinnedBuffer host_sums_;
};

}  // namespace

std::unique_ptr<McKernel> make_gpu_montecarlo(const MonteCarloConfig& cfg, const Communicator& comm) {
  return std::make_unique<CudaMonteCarlo>(cfg, comm);
}

}  // namespace scalebench
