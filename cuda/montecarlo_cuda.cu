// GPU Monte Carlo: fused generate-test-reduce kernels, one block per chunk. Random numbers are
// Random123's Philox4x32-10 compiled for the device (the CPU's function, so π is bit-identical)
// and never touch memory. π hits are integers (any order); option sums are reduced per chunk in a
// fixed shared-memory tree, copied back, and folded over the chunk tree on the host.
//
// Arithmetic: π uses exact 32-bit integer coordinates (as the CPU). Option paths are evaluated in
// fp32 with the hardware approximations (__logf, __sincosf, __expf) and summed in fp64; they use
// the same normals as the CPU up to fp32 rounding, so estimates agree with the CPU's to about 1e-5
// relative, far inside the statistical error. See docs/montecarlo.md.
#include <Random123/philox.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "device_memory.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gpu.hpp"
#include "scalebench/montecarlo.hpp"
#include "scalebench/mpi.hpp"
#include "stream.hpp"

namespace scalebench {
namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr int kBlockThreads = 256;
// Chunks per launch for options (bounds the chunk-sum buffer: 2^20 chunks x 40 bytes).
constexpr std::int64_t kChunksPerBatch = std::int64_t{1} << 20;
// Chunks per launch for π (bounds the grid).
constexpr std::int64_t kPiChunksPerLaunch = std::int64_t{1} << 30;

struct DeviceLayout {
  u64 first_chunk;   // first chunk of this launch
  u64 chunk_size;
  u64 samples;
  u32 key0, key1;
};

struct DeviceModel {
  float spot, strike, drift, vol;
  int steps;
  bool call;
};

__device__ __forceinline__ r123::Philox4x32::ctr_type philox_block(u64 a, u32 b, u32 tag, u32 k0, u32 k1) {
  const r123::Philox4x32::ctr_type c = {{static_cast<u32>(a), static_cast<u32>(a >> 32), b, tag}};
  const r123::Philox4x32::key_type k = {{k0, k1}};
  return r123::Philox4x32_R<10>()(c, k);
}

__device__ __forceinline__ u32 hit(u32 x, u32 y) {
  const u64 a = static_cast<u64>(x) * x;
  const u64 b = static_cast<u64>(y) * y;
  return (a + b) >= a ? 1U : 0U;
}

// Box–Muller as the CPU defines it (u = (w + 1/2)·2^-32, θ = int32(w')·π·2^-31), in fp32.
__device__ __forceinline__ void box_muller(u32 a, u32 b, float& z0, float& z1) {
  const float u = fmaf(static_cast<float>(a), 0x1p-32f, 0x1p-33f);
  const float r = sqrtf(fmaxf(-2.0f * __logf(u), 0.0f));
  const float theta = static_cast<float>(static_cast<int>(b)) * 1.46291807926715968e-9f;  // π·2^-31
  float s, c;
  __sincosf(theta, &s, &c);
  z0 = r * c;
  z1 = r * s;
}

__device__ __forceinline__ void normals4(const r123::Philox4x32::ctr_type& w, float z[4]) {
  box_muller(w.v[0], w.v[1], z[0], z[1]);
  box_muller(w.v[2], w.v[3], z[2], z[3]);
}

__device__ __forceinline__ float payoff(float s, const DeviceModel& m) {
  return m.call ? fmaxf(s - m.strike, 0.0f) : fmaxf(m.strike - s, 0.0f);
}

// Fixed-order tree over the block's threads: the same bits every launch.
template <int N>
__device__ void block_sum_fixed(double (&v)[N], double (*shared)[kBlockThreads]) {
  for (int k = 0; k < N; ++k) shared[k][threadIdx.x] = v[k];
  __syncthreads();
  for (int stride = kBlockThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      for (int k = 0; k < N; ++k) shared[k][threadIdx.x] += shared[k][threadIdx.x + stride];
    }
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kBlockThreads) pi_kernel(DeviceLayout l, unsigned long long* hits) {
  const u64 chunk = l.first_chunk + blockIdx.x;
  const u64 first = chunk * l.chunk_size;  // even: chunk_size is a multiple of 4
  const u64 last = min(first + l.chunk_size, l.samples);
  const u64 block0 = first / 2;
  const u32 blocks = static_cast<u32>((last - first + 1) / 2);
  u32 count = 0;
#pragma unroll 4
  for (u32 j = threadIdx.x; j < blocks; j += kBlockThreads) {
    const u64 b = block0 + j;
    const auto w = philox_block(b, 0, kPhiloxTagPi, l.key0, l.key1);
    count += hit(w.v[0], w.v[1]);
    if (2 * b + 1 < last) count += hit(w.v[2], w.v[3]);
  }
  // Integers: the order of the additions does not matter.
  count = __reduce_add_sync(0xffffffffU, count);
  __shared__ u32 warp_counts[kBlockThreads / 32];
  if (threadIdx.x % 32 == 0) warp_counts[threadIdx.x / 32] = count;
  __syncthreads();
  if (threadIdx.x == 0) {
    u32 total = 0;
    for (int w = 0; w < kBlockThreads / 32; ++w) total += warp_counts[w];
    atomicAdd(hits, static_cast<unsigned long long>(total));
  }
}

__global__ void __launch_bounds__(kBlockThreads) european_kernel(DeviceLayout l, DeviceModel m, double* chunk_sums) {
  const u64 chunk = l.first_chunk + blockIdx.x;
  const u64 first = chunk * l.chunk_size;  // a multiple of 4
  const u64 last = min(first + l.chunk_size, l.samples);
  const u32 blocks = static_cast<u32>((last - first + 3) / 4);
  double v[2] = {0.0, 0.0};
  for (u32 j = threadIdx.x; j < blocks; j += kBlockThreads) {
    const u64 b = first / 4 + j;
    float z[4];
    normals4(philox_block(b, 0, kPhiloxTagEuropean, l.key0, l.key1), z);
    float y = 0.0f, yy = 0.0f;  // the four paths of this block, then fp64
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (4 * b + k < last) {
        const float p = payoff(m.spot * __expf(fmaf(m.vol, z[k], m.drift)), m);
        y += p;
        yy = fmaf(p, p, yy);
      }
    }
    v[0] += y;
    v[1] += yy;
  }
  __shared__ double shared[2][kBlockThreads];
  block_sum_fixed(v, shared);
  if (threadIdx.x == 0) {
    double* out = chunk_sums + static_cast<u64>(blockIdx.x) * kSumCount;
    out[kSumY] = shared[0][0];
    out[kSumYY] = shared[1][0];
    out[kSumX] = out[kSumXX] = out[kSumXY] = 0.0;
  }
}

__global__ void __launch_bounds__(kBlockThreads) asian_kernel(DeviceLayout l, DeviceModel m, double* chunk_sums) {
  const u64 chunk = l.first_chunk + blockIdx.x;
  const u64 first = chunk * l.chunk_size;
  const u64 last = min(first + l.chunk_size, l.samples);
  double v[kSumCount] = {0.0, 0.0, 0.0, 0.0, 0.0};
  for (u64 path = first + threadIdx.x; path < last; path += kBlockThreads) {
    float x = 0.0f;                     // log(S_t / S_0)
    double sum_e = 0.0, sum_x = 0.0;    // Σ S_t/S_0 and Σ log(S_t/S_0), fp64 across blocks of 4 steps
    for (int j0 = 0; j0 < m.steps; j0 += 4) {
      float z[4];
      normals4(philox_block(path, static_cast<u32>(j0 / 4), kPhiloxTagAsian, l.key0, l.key1), z);
      const int n = min(4, m.steps - j0);
      float e4 = 0.0f, x4 = 0.0f;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if (k < n) {
          x += fmaf(m.vol, z[k], m.drift);
          e4 += __expf(x);
          x4 += x;
        }
      }
      sum_e += e4;
      sum_x += x4;
    }
    const float arithmetic = m.spot * static_cast<float>(sum_e / m.steps);
    const float geometric = m.spot * __expf(static_cast<float>(sum_x / m.steps));
    const double py = payoff(arithmetic, m), px = payoff(geometric, m);
    v[kSumY] += py;
    v[kSumYY] += py * py;
    v[kSumX] += px;
    v[kSumXX] += px * px;
    v[kSumXY] += px * py;
  }
  __shared__ double shared[kSumCount][kBlockThreads];
  block_sum_fixed(v, shared);
  if (threadIdx.x == 0) {
    double* out = chunk_sums + static_cast<u64>(blockIdx.x) * kSumCount;
    for (int k = 0; k < kSumCount; ++k) out[k] = shared[k][0];
  }
}

class CudaMonteCarlo final : public McKernel {
 public:
  CudaMonteCarlo(const MonteCarloConfig& cfg, const Communicator& comm) {
    const double t0 = wall_seconds();
    device_ = select_gpu_for_rank(comm, cfg.share_gpu);
    SCALEBENCH_CUDA_CHECK(cudaSetDevice(device_));
    SCALEBENCH_CUDA_CHECK(cudaFree(nullptr));  // create the context now, not in the first kernel
    context_s_ = wall_seconds() - t0;
  }

  std::string name() const override { return "cuda"; }

  void prepare(const MonteCarloConfig& cfg, ChunkRange range, PhaseRecorder& setup) override {
    setup.add("gpu_context", context_s_);
    ScopedPhase t(setup, "gpu_alloc");
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
    model_ = {static_cast<float>(mk.spot), static_cast<float>(mk.strike),
              static_cast<float>((mk.rate - 0.5 * mk.sigma * mk.sigma) * dt), static_cast<float>(mk.sigma * std::sqrt(dt)),
              cfg.steps, cfg.option == OptionKind::call};
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
            {"arithmetic", "pi: 32-bit integer coordinates, bit-identical to cpu; options: fp32 paths "
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
    SCALEBENCH_CUDA_CHECK(cudaMemsetAsync(hits, 0, sizeof(unsigned long long), stream_->get()));
    for (std::int64_t c = range_.first; c < range_.last; c += kPiChunksPerLaunch) {
      DeviceLayout l = layout_;
      l.first_chunk = static_cast<u64>(c);
      const auto grid = static_cast<unsigned>(std::min(kPiChunksPerLaunch, range_.last - c));
      pi_kernel<<<grid, kBlockThreads, 0, stream_->get()>>>(l, hits);
      SCALEBENCH_CUDA_CHECK(cudaGetLastError());
    }
    timer.stop_into(rec, "compute");
    timer.start();
    SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(host_sums_.get(), hits, sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                          stream_->get()));
    timer.stop_into(rec, "d2h");
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
        asian_kernel<<<static_cast<unsigned>(n), kBlockThreads, 0, stream_->get()>>>(l, model_, device_sums_.as<double>());
      } else {
        european_kernel<<<static_cast<unsigned>(n), kBlockThreads, 0, stream_->get()>>>(l, model_, device_sums_.as<double>());
      }
      SCALEBENCH_CUDA_CHECK(cudaGetLastError());
      timer.stop_into(rec, "compute");
      const std::size_t bytes = static_cast<std::size_t>(n) * kSumCount * sizeof(double);
      timer.start();
      SCALEBENCH_CUDA_CHECK(
          cudaMemcpyAsync(host_sums_.get(), device_sums_.get(), bytes, cudaMemcpyDeviceToHost, stream_->get()));
      timer.stop_into(rec, "d2h");
      const double t0 = wall_seconds();
      const double* sums = host_sums_.as<double>();
      for (std::int64_t i = 0; i < n; ++i) {
        McSums s;
        for (int k = 0; k < kSumCount; ++k) s.v[k] = sums[i * kSumCount + k];
        tree.push_leaf(c + i, s);
      }
      rec.add("reduce", wall_seconds() - t0);
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

std::unique_ptr<McKernel> make_cuda_montecarlo(const MonteCarloConfig& cfg, const Communicator& comm) {
  return std::make_unique<CudaMonteCarlo>(cfg, comm);
}

}  // namespace scalebench
