// GPU micro-benchmarks for `scalebench calibrate` (scalebench/gpu/gpu_calibrate.hpp): copies, cuBLAS
// GEMM rates (sustained: bursts of back-to-back multiplies) and NCCL broadcast between the visible
// GPUs, each a median of event-timed repeats after a warm-up.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <nccl.h>

#include "cublas_handle.hpp"
#include "cuda_check.hpp"
#include "curand_generator.hpp"
#include "device_kernels.hpp"
#include "device_memory.hpp"
#include "scalebench/gpu/gpu_calibrate.hpp"
#include "scalebench/mpi/timing.hpp"
#include "stream.hpp"

namespace scalebench {
namespace {

using nlohmann::json;

// Seconds of `reps` runs of `step` on `stream`, timed with events, after one warm-up.
template <class Step>
std::vector<double> event_times(cudaStream_t stream, int reps, Step step) {
  gpu::Event start, end;
  step();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    start.record(stream);
    step();
    end.record(stream);
    end.synchronize();
    t.push_back(end.seconds_since(start));
  }
  return t;
}

// Their median.
template <class Step>
double event_median(cudaStream_t stream, int reps, Step step) {
  return median_of(event_times(stream, reps, step));
}

// The same repeats' fastest, median and slowest, as the profile's "spread" of a rate (work / time):
// {"below": 1 - median/slowest, "above": median/fastest - 1} (docs/model.md, "Bands").
template <class Step>
json event_spread(cudaStream_t stream, int reps, Step step, double& median) {
  const std::vector<double> t = event_times(stream, reps, step);
  median = median_of(t);
  const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
  if (!(*lo > 0) || !(median > 0)) return {{"below", 0.0}, {"above", 0.0}};
  return {{"below", std::clamp(1.0 - median / *hi, 0.0, 0.99)}, {"above", std::max(median / *lo - 1.0, 0.0)}};
}

json link_json(double small_s, double large_s, double large_bytes) {
  return {{"latency_us", small_s * 1e6}, {"bandwidth_GBps", large_bytes / std::max(large_s - small_s, 1e-9) * 1e-9}};
}

json copies(bool quick) {
  const std::size_t large = quick ? (std::size_t{16} << 20) : (std::size_t{256} << 20);
  gpu::Stream s;
  gpu::DeviceBuffer dev(large);
  gpu::PinnedBuffer pinned(large);
  std::vector<char> pageable(large, 1);
  json out;
  auto time_copy = [&](void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
    return event_median(s.get(), quick ? 5 : 10,
                        [&] { SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s.get())); });
  };
  auto both = [&](const char* key, void* dst, const void* src, cudaMemcpyKind kind) {
    out[key] = link_json(time_copy(dst, src, 8, kind), time_copy(dst, src, large, kind), static_cast<double>(large));
  };
  both("h2d_pinned", dev.get(), pinned.get(), cudaMemcpyHostToDevice);
  both("h2d_pageable", dev.get(), pageable.data(), cudaMemcpyHostToDevice);
  both("d2h_pinned", pinned.get(), dev.get(), cudaMemcpyDeviceToHost);
  both("d2h_pageable", pageable.data(), dev.get(), cudaMemcpyDeviceToHost);
  return out;
}

// The cuRAND generator (Philox) the timed matrices are filled from, on one stream. One
// generator for every fill: each takes the next values of its sequence, so no two matrices are
// alike.
class CalibrationRandom {
 public:
  explicit CalibrationRandom(cudaStream_t s) : g_(CURAND_RNG_PSEUDO_PHILOX4_32_10, 1, s) {}

  // `count` values spread uniformly over (-1, 1], as a run's inputs are over [-1, 1): cuRAND's
  // uniform (0, 1] moved by scale_shift. In precision p's device input type at `dst`; bf16 goes
  // through `count` fp32 values at `staging`, then convert_to_bf16.
  void fill(void* dst, Precision p, std::int64_t count, float* staging, cudaStream_t s) {
    const auto n = static_cast<std::size_t>(count);
    switch (p) {
      case Precision::fp64:
        g_.uniform(static_cast<double*>(dst), n);
        gpu::scale_shift(static_cast<double*>(dst), count, 2.0, -1.0, s);
        return;
      case Precision::fp32:
      case Precision::tf32:
        g_.uniform(static_cast<float*>(dst), n);
        gpu::scale_shift(static_cast<float*>(dst), count, 2.0f, -1.0f, s);
        return;
      case Precision::bf16:
        g_.uniform(staging, n);
        gpu::scale_shift(staging, count, 2.0f, -1.0f, s);
        gpu::convert_to_bf16(staging, static_cast<__nv_bfloat16*>(dst), count, s);
        return;
    }
  }

 private:
  gpu::CurandGenerator g_;
};

// Seconds of one multiply in a burst of back-to-back multiplies lasting at least `burst_s`, and
// the spread of `reps` such bursts. A card under load runs at the clock its power limit allows
// (an H200's fp64 GEMM draws its 700 W): one multiply of a few milliseconds between pauses runs
// at the boost clock and times a faster card than a run's second-long multiplies see.
template <class Step>
json burst_spread(cudaStream_t stream, int reps, double burst_s, Step step, double& per_multiply) {
  gpu::Event start, end;
  start.record(stream);
  step();
  end.record(stream);
  end.synchronize();
  const int count = std::max(1, static_cast<int>(std::ceil(burst_s / std::max(end.seconds_since(start), 1e-6))));
  const json spread = event_spread(
      stream, reps,
      [&] {
        for (int i = 0; i < count; ++i) step();
      },
      per_multiply);
  per_multiply /= count;
  return spread;
}

json gemm_rates(bool quick) {
  const std::vector<std::int64_t> sides = quick ? std::vector<std::int64_t>{1024, 4096, 8192}
                                                : std::vector<std::int64_t>{1024, 2048, 4096, 8192, 16384};
  const double burst_s = quick ? 0.1 : 0.25;
  gpu::Stream s;
  gpu::CublasHandle h(s.get());
  CalibrationRandom random(s.get());
  json out = json::object();
  bool warm = false;
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::bf16}) {
    for (auto n : sides) {
      const auto elems = static_cast<std::size_t>(n * n);
      gpu::DeviceBuffer a(elems * device_input_bytes(p)), b(elems * device_input_bytes(p)),
          c(elems * device_output_bytes(p));
      // Uniform random inputs, as a run's: a multiply's clock (hence its rate) depends on how
      // many bits toggle, so constant or zero data would time a faster card than the runs see.
      // bf16's fp32 values pass through C (fp32, n×n), which the multiply then overwrites.
      random.fill(a.get(), p, n * n, c.as<float>(), s.get());
      random.fill(b.get(), p, n * n, c.as<float>(), s.get());
      gpu::set_math_mode(h.get(), p);
      const GpuGemm::BlockGemm call{n, n, n, a.get(), n, b.get(), n, c.get(), n, false};
      const auto multiply = [&] { gpu::row_major_gemm(h.get(), p, call); };
      double sec = 0;
      if (!warm) {
        // The first burst brings the card from idle to its loaded clock; it is not kept.
        (void)burst_spread(s.get(), 1, 4 * burst_s, multiply, sec);
        warm = true;
      }
      const json spread = burst_spread(s.get(), quick ? 5 : 7, burst_s, multiply, sec);
      const double nd = static_cast<double>(n);
      out[to_string(p)].push_back({{"n", n}, {"gflops", 2.0 * nd * nd * nd / sec * 1e-9}, {"spread", spread}});
    }
  }
  return out;
}

// Owns the communicators ncclCommInitAll makes, one per visible GPU.
class NcclClique {
 public:
  explicit NcclClique(int count) : comms_(static_cast<std::size_t>(count), nullptr) {
    SCALEBENCH_NCCL_CHECK(ncclCommInitAll(comms_.data(), count, nullptr));
  }
  ~NcclClique() {
    for (auto c : comms_) {
      if (c) ncclCommDestroy(c);
    }
  }
  NcclClique(const NcclClique&) = delete;
  NcclClique& operator=(const NcclClique&) = delete;
  ncclComm_t at(int i) const { return comms_.at(static_cast<std::size_t>(i)); }

 private:
  std::vector<ncclComm_t> comms_;
};

// ncclBroadcast from GPU 0 to all, wall-clock timed around the group (the slowest GPU).
json nccl_broadcast(int count, bool quick) {
  const std::size_t large = quick ? (std::size_t{64} << 20) : (std::size_t{512} << 20);
  NcclClique clique(count);
  std::vector<gpu::Stream> streams;
  std::vector<gpu::DeviceBuffer> bufs;
  for (int d = 0; d < count; ++d) {
    SCALEBENCH_CUDA_CHECK(cudaSetDevice(d));
    streams.emplace_back();
    bufs.emplace_back(large);
  }
  auto run = [&](std::size_t bytes) {
    std::vector<double> t;
    for (int i = -1; i < (quick ? 5 : 10); ++i) {
      const double t0 = wall_seconds();
      SCALEBENCH_NCCL_CHECK(ncclGroupStart());
      for (int d = 0; d < count; ++d) {
        SCALEBENCH_NCCL_CHECK(
            ncclBroadcast(bufs[d].get(), bufs[d].get(), bytes, ncclChar, 0, clique.at(d), streams[d].get()));
      }
      SCALEBENCH_NCCL_CHECK(ncclGroupEnd());
      for (auto& s : streams) s.synchronize();
      if (i >= 0) t.push_back(wall_seconds() - t0);
    }
    return median_of(t);
  };
  json out = link_json(run(8), run(large), static_cast<double>(large));
  SCALEBENCH_CUDA_CHECK(cudaSetDevice(0));
  return out;
}

}  // namespace

json calibrate_cuda(bool quick) {
  int count = 0;
  SCALEBENCH_CUDA_CHECK(cudaGetDeviceCount(&count));
  SCALEBENCH_CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  SCALEBENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  json g = copies(quick);
  g["present"] = true;
  g["name"] = prop.name;
  g["count"] = count;
  g["gemm_gflops"] = gemm_rates(quick);
  g["nccl_intra"] = count > 1 ? nccl_broadcast(count, quick) : json(nullptr);
  return g;
}

}  // namespace scalebench
