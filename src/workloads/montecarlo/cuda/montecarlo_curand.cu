// The GPU Monte Carlo as the tutorials write it (`montecarlo --backend curand`): cuRAND's host API
// fills device arrays with random doubles, a kernel maps them to per-sample arrays (π: an inside
// flag per point; European: the payoff and its square per path), CUB's DeviceReduce sums those,
// batch after batch. Every number goes through GPU memory several times, where the fused kernels
// (montecarlo_cuda.cu) make and use theirs in registers: the difference is what this backend is
// for (docs/montecarlo.md, "The materialise-then-reduce baseline").
//
// Streams: one cuRAND generator per rank, seeded with --seed; each batch first seeks the generator
// to kOffsetPerDraw × (index of its first draw over the whole run), so batches, ranks and GPUs use
// disjoint parts of one stream and a rerun draws the same numbers. The estimate is deterministic
// for a given rank count and batch size, but not bit-identical across them (nor to the other
// backends): the record says why under backend.bit_identical.
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "curand_generator.hpp"
#include "device_memory.hpp"
#include "gpu_device.hpp"
#include "montecarlo/gpu_montecarlo.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/problem/montecarlo.hpp"
#include "stream.hpp"

namespace scalebench {
namespace {

// Samples per batch when --batch is not given: at most this, and at most half the free memory.
constexpr std::int64_t kMaxAutoBatch = std::int64_t{1} << 26;
constexpr double kFreeMemoryShare = 0.5;
// Generator offset per draw. cuRAND counts offsets in values; a double is made from two 32-bit
// words, so two per draw keeps batches disjoint whether the offset counts words or doubles.
constexpr std::uint64_t kOffsetPerDraw = 2;
constexpr int kThreads = 256;

// Bytes one sample moves through GPU memory in each phase.
struct Traffic {
  int generate, kernel, reduction;
  int total() const { return generate + kernel + reduction; }
};
// π: two uniforms written, then read; a one-byte flag written, then read.
// European: one normal written, then read; payoff and its square written, then read.
Traffic traffic(McProblem p) { return p == McProblem::pi ? Traffic{16, 16 + 1, 1} : Traffic{8, 8 + 16, 16}; }
int draws_per_sample(McProblem p) { return p == McProblem::pi ? 2 : 1; }
// Device bytes a batch holds per sample (the draws and the per-sample arrays).
std::int64_t resident_bytes(McProblem p) { return p == McProblem::pi ? 16 + 1 : 8 + 16; }

struct GbmModel {
  double spot, strike, drift, vol;  // drift = (r - σ²/2)T, vol = σ√T
  bool call;
};

__global__ void pi_inside(const double* xy, std::int64_t n, unsigned char* inside) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double x = xy[2 * i], y = xy[2 * i + 1];
    inside[i] = x * x + y * y < 1.0 ? 1 : 0;
  }
}

__global__ void european_payoffs(const double* z, std::int64_t n, GbmModel m, double* y, double* yy) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double s = m.spot * exp(fma(m.vol, z[i], m.drift));
    const double p = m.call ? fmax(s - m.strike, 0.0) : fmax(m.strike - s, 0.0);
    y[i] = p;
    yy[i] = p * p;
  }
}

// Peak memory bandwidth from the memory clock and bus width (two transfers per clock), 0 if unknown.
double peak_bandwidth(int device) {
  int khz = 0, bits = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    cudaGetLastError();
    return 0.0;
  }
  return 2.0 * khz * 1e3 * bits / 8.0;
}

class CurandMonteCarlo final : public McKernel {
 public:
  // The device is current and its context made once selected; the context's creation was timed
  // by the first selection in this process (placement may have selected before the backend did).
  CurandMonteCarlo(const MonteCarloConfig& cfg, const Communicator& comm)
      : device_(select_gpu_for_rank(comm, cfg.share_gpu, "--backend curand")),
        context_s_(gpu::first_context_seconds()) {}

  std::string name() const override { return "curand"; }

  void prepare(const MonteCarloConfig& cfg, ChunkRange range, PhaseRecorder& setup) override {
    setup.add(phase::gpu_context, context_s_);
    ScopedPhase t(setup, phase::gpu_alloc);
    cfg_ = cfg;
    first_ = range.first * cfg.chunk_size;
    last_ = std::max(std::min(range.last * cfg.chunk_size, cfg.samples), first_);
    stream_.emplace();
    generator_.emplace(cfg.curand_generator == McCurandGenerator::philox ? CURAND_RNG_PSEUDO_PHILOX4_32_10
                                                                         : CURAND_RNG_PSEUDO_XORWOW,
                       cfg.seed, stream_->get());
    batch_ = choose_batch(last_ - first_);
    const auto b = static_cast<std::size_t>(batch_);
    // Normals come in pairs: room for one more than an odd batch needs.
    draws_ = gpu::DeviceBuffer((b * draws_per_sample(cfg.problem) + 1) * sizeof(double));
    std::size_t temp = 0;
    if (cfg.problem == McProblem::pi) {
      inside_ = gpu::DeviceBuffer(b);
      SCALEBENCH_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp, inside_.as<unsigned char>(),
                                                   static_cast<unsigned long long*>(nullptr), batch_, stream_->get()));
    } else {
      payoff_ = gpu::DeviceBuffer(b * sizeof(double));
      payoff_sq_ = gpu::DeviceBuffer(b * sizeof(double));
      SCALEBENCH_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp, payoff_.as<double>(), static_cast<double*>(nullptr),
                                                   batch_, stream_->get()));
    }
    temp_ = gpu::DeviceBuffer(std::max<std::size_t>(temp, 1));
    sums_ = gpu::DeviceBuffer(2 * sizeof(double));
    host_sums_ = gpu::PinnedBuffer(2 * sizeof(double));
    const auto& mk = cfg.market;
    model_ = {mk.spot, mk.strike, (mk.rate - 0.5 * mk.sigma * mk.sigma) * mk.maturity,
              mk.sigma * std::sqrt(mk.maturity), cfg.option == OptionKind::call};
    int sms = 0;
    SCALEBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_));
    max_blocks_ = std::max(sms, 1) * 32;
  }

  McPartial run(PhaseRecorder& rec) override {
    McPartial out;
    gpu::DeviceTimer timer(stream_->get());
    for (std::int64_t s = first_; s < last_; s += batch_) run_batch(s, std::min(batch_, last_ - s), timer, rec, out);
    out.plain_count = last_ - first_;
    return out;
  }

  nlohmann::json describe() const override {
    const Traffic t = traffic(cfg_.problem);
    const double peak = peak_bandwidth(device_);
    nlohmann::json traffic_json = {{"bytes_per_sample",
                                    {{phase::generate, t.generate},
                                     {phase::kernel, t.kernel},
                                     {phase::device_reduce, t.reduction},
                                     {"total", t.total()}}},
                                   {"peak_bandwidth_bytes_per_s", peak},
                                   {"bandwidth_bound_samples_per_s", peak > 0 ? peak / t.total() : 0.0}};
    return {{"name", "curand"},
            {"threads", 1},
            {"gpu", gpu_info(device_)},
            {"rng", fmt::format("cuRAND {} host API, {}", gpu::curand_version_string(),
                                cfg_.curand_generator == McCurandGenerator::philox ? "CURAND_RNG_PSEUDO_PHILOX4_32_10"
                                                                                   : "CURAND_RNG_PSEUDO_XORWOW")},
            {"generator", to_string(cfg_.curand_generator)},
            {"pattern", cfg_.problem == McProblem::pi
                            ? "materialise then reduce: curandGenerateUniformDouble into a device array, a kernel "
                              "writes an inside flag per point, cub::DeviceReduce::Sum counts them"
                            : "materialise then reduce: curandGenerateNormalDouble into a device array, a kernel "
                              "writes payoff and payoff^2 per path (fp64), cub::DeviceReduce::Sum sums each"},
            {"batch_samples", batch_},
            {"batch_source", cfg_.batch > 0 ? "--batch" : "free GPU memory"},
            {"batches", batch_ > 0 ? (last_ - first_ + batch_ - 1) / batch_ : 0},
            {"offsets", fmt::format("each batch seeks the generator to {} x the index of its first draw over the "
                                    "whole run: ranks, GPUs and batches use disjoint parts of one stream",
                                    kOffsetPerDraw)},
            {"reproducible_across_rank_counts", false},
            {"bit_identical",
             "no: sample i draws from the same place in the stream at any rank count, but cuRAND does not promise "
             "that a stream started at an offset gives the bits of the stream from zero (it depends on the "
             "generator's ordering; normals come in Box-Muller pairs), and the option sums are added per batch, "
             "per rank, then over ranks in MPI's order. Deterministic for a fixed rank count and batch; not "
             "bit-identical to cpu/cuda (another generator)"},
            {"gpu_memory_traffic", traffic_json}};
  }

 private:
  std::int64_t choose_batch(std::int64_t samples) const {
    if (cfg_.batch > 0) return std::max<std::int64_t>(std::min(cfg_.batch, samples), 1);
    std::size_t free = 0, total = 0;
    SCALEBENCH_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const auto fits = static_cast<std::int64_t>(kFreeMemoryShare * static_cast<double>(free)) /
                      resident_bytes(cfg_.problem);
    return std::max<std::int64_t>(std::min({kMaxAutoBatch, fits, samples}), 1);
  }

  unsigned grid(std::int64_t n) const {
    return static_cast<unsigned>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, max_blocks_));
  }

  void run_batch(std::int64_t first, std::int64_t n, gpu::DeviceTimer& timer, PhaseRecorder& rec, McPartial& out) {
    cudaStream_t s = stream_->get();
    const auto draws = static_cast<std::size_t>(n * draws_per_sample(cfg_.problem));
    auto* d = draws_.as<double>();
    timer.start();
    generator_->seek(kOffsetPerDraw * static_cast<std::uint64_t>(first * draws_per_sample(cfg_.problem)));
    if (cfg_.problem == McProblem::pi) {
      generator_->uniform(d, draws);
    } else {
      generator_->normal(d, draws + draws % 2);
    }
    const double generate_s = timer.stop();
    timer.start();
    if (cfg_.problem == McProblem::pi) {
      pi_inside<<<grid(n), kThreads, 0, s>>>(d, n, inside_.as<unsigned char>());
    } else {
      european_payoffs<<<grid(n), kThreads, 0, s>>>(d, n, model_, payoff_.as<double>(), payoff_sq_.as<double>());
    }
    SCALEBENCH_CUDA_CHECK(cudaGetLastError());
    const double kernel_s = timer.stop();
    timer.start();
    std::size_t temp = temp_.bytes();
    if (cfg_.problem == McProblem::pi) {
      SCALEBENCH_CUDA_CHECK(
          cub::DeviceReduce::Sum(temp_.get(), temp, inside_.as<unsigned char>(), sums_.as<unsigned long long>(), n, s));
    } else {
      SCALEBENCH_CUDA_CHECK(cub::DeviceReduce::Sum(temp_.get(), temp, payoff_.as<double>(), sums_.as<double>(), n, s));
      SCALEBENCH_CUDA_CHECK(
          cub::DeviceReduce::Sum(temp_.get(), temp, payoff_sq_.as<double>(), sums_.as<double>() + 1, n, s));
    }
    const double reduce_s = timer.stop();
    rec.add(phase::generate, generate_s);
    rec.add(phase::kernel, kernel_s);
    rec.add(phase::device_reduce, reduce_s);
    rec.add(phase::compute, generate_s + kernel_s + reduce_s);
    timer.start();
    SCALEBENCH_CUDA_CHECK(
        cudaMemcpyAsync(host_sums_.get(), sums_.get(), 2 * sizeof(double), cudaMemcpyDeviceToHost, s));
    timer.stop_into(rec, phase::d2h);
    if (cfg_.problem == McProblem::pi) {
      out.hits += static_cast<std::int64_t>(*host_sums_.as<unsigned long long>());
    } else {
      out.plain.v[kSumY] += host_sums_.as<double>()[0];
      out.plain.v[kSumYY] += host_sums_.as<double>()[1];
    }
  }

  int device_ = 0;
  double context_s_ = 0;
  MonteCarloConfig cfg_;
  std::int64_t first_ = 0, last_ = 0;  // this rank's samples
  std::int64_t batch_ = 1;
  int max_blocks_ = 1;
  GbmModel model_{};
  std::optional<gpu::Stream> stream_;
  std::optional<gpu::CurandGenerator> generator_;
  gpu::DeviceBuffer draws_, inside_, payoff_, payoff_sq_, temp_, sums_;
  gpu::PinnedBuffer host_sums_;
};

}  // namespace

std::unique_ptr<McKernel> make_gpu_library_montecarlo(const MonteCarloConfig& cfg, const Communicator& comm) {
  return std::make_unique<CurandMonteCarlo>(cfg, comm);
}

}  // namespace scalebench
