#include "cublas_gemm.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "device_kernels.hpp"
#include "gemm/device_gemm.hpp"
#include "gemm_kernels.hpp"
#include "gpu_device.hpp"
#include "nccl_comm.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/problem/gemm_fill.hpp"

namespace scalebench::gpu {
namespace {

// Host buffers that are not page-locked go through two pinned chunks of this size, so that the
// host copy of one chunk overlaps the bus transfer of the other. bf16 inputs go through a device
// chunk of kBf16StagingElements fp32 values (gpu.hpp) before conversion.
constexpr std::int64_t kChunkBytes = std::int64_t{64} << 20;
constexpr std::int64_t kStagingElements = kBf16StagingElements;

std::string gib(std::int64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30)); }

const char* call_name(Precision p) {
  switch (p) {
    case Precision::fp64: return "cublasDgemm";
    case Precision::fp32: return "cublasSgemm (CUBLAS_DEFAULT_MATH)";
    case Precision::tf32: return "cublasSgemm (CUBLAS_TF32_TENSOR_OP_MATH)";
    case Precision::bf16: return "cublasGemmEx (CUDA_R_16BF inputs, CUDA_R_32F output, CUBLAS_COMPUTE_32F)";
  }
  return "?";
}

// The whole prepared block, packed (leading dimensions k, n, n): row_major_gemm of
// cuda/cublas_handle.hpp, the call `scalebench calibrate` times too.
void row_major_gemm(cublasHandle_t h, Precision p, std::int64_t rows, std::int64_t n, std::int64_t k, const void* a,
                    const void* b, void* c) {
  gpu::row_major_gemm(h, p, GpuGemm::BlockGemm{rows, n, k, a, k, b, n, c, n, false});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Set-up

CublasGemm::Selection CublasGemm::select(const Communicator& comm, bool share_gpu) {
  Selection s;
  s.device = select_gpu_for_rank(comm, share_gpu, "--backend cublas");
  // The primary context exists after this; its creation was timed by the first selection in
  // this process (placement may have selected before the backend did).
  s.seconds = first_context_seconds();
  s.local_rank = comm.node().rank();
  return s;
}

CublasGemm::CublasGemm(const GemmConfig& cfg, const Communicator& comm)
    : comm_(comm),
      nccl_(cfg.transport == Transport::nccl && comm.size() > 1),
      first_call_in_warmup_(cfg.warmup > 0),
      selection_(select(comm, cfg.share_gpu)),
      device_(selection_.device),
      stream_(),
      timer_(stream_.get()) {
  setup_.seconds.emplace_back(phase::gpu_context, selection_.seconds);
  const double t0 = wall_seconds();
  agree(comm, [&] {
    handle_.emplace(stream_.get());
    setup_.placement = {{"host", host_name()}, {"rank", comm.rank()}, {"local_rank", selection_.local_rank}};
    setup_.placement["gpu"] = gpu_info(device_);
  });
  setup_.seconds.emplace_back(phase::cublas_handle, wall_seconds() - t0);
}

void CublasGemm::check_memory_fits(const DeviceMemoryPlan& plan) const {
  // Ranks that share a GPU (--share-gpu) share its free memory: sum their plans per GPU.
  struct Claim {
    char uuid[48];
    std::int64_t need;
  };
  Claim mine{};
  const std::string uuid = setup_.placement["gpu"]["uuid"].get<std::string>();
  std::strncpy(mine.uuid, uuid.c_str(), sizeof(mine.uuid) - 1);
  mine.need = plan.total();
  std::size_t free_bytes = 0, total_bytes = 0;
  agree(comm_, [&] { SCALEBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes)); });
  const Communicator node = comm_.split_shared();
  std::vector<Claim> claims(static_cast<std::size_t>(node.size()));
  SCALEBENCH_MPI(MPI_Allgather(&mine, sizeof(Claim), MPI_BYTE, claims.data(), sizeof(Claim), MPI_BYTE, node.get()));
  std::int64_t need = 0;
  int sharing = 0;
  for (const auto& c : claims) {
    if (std::strncmp(c.uuid, mine.uuid, sizeof(mine.uuid)) == 0) {
      need += c.need;
      ++sharing;
    }
  }
  agree(comm_, [&] {
    if (need > static_cast<std::int64_t>(free_bytes)) {
      const std::string who = sharing > 1 ? fmt::format(" ({} ranks share it)", sharing) : std::string();
      throw ResourceError(fmt::format(
          "rank {} on {}: GPU {} ({}){} needs {} of device memory (A_i + B + C_i = {}, workspace {}) but only {} of {} "
          "is free; use more GPUs (ranks), a smaller size or a lower precision",
          comm_.rank(), host_name(), device_, setup_.placement["gpu"]["name"].get<std::string>(), who, gib(need),
          gib(plan.matrices), gib(plan.workspace), gib(static_cast<std::int64_t>(free_bytes)),
          gib(static_cast<std::int64_t>(total_bytes))));
    }
  });
}

void CublasGemm::prepare(const GemmShape& local, Precision p, PhaseRecorder& rec) {
  shape_ = local;
  precision_ = p;
  rows_held_ = std::max(rows_held_, local.m);
  const DeviceMemoryPlan plan = plan_device_memory(local, rows_held_, p, nccl_, reserved_inputs_);
  check_memory_fits(plan);
  const double t0 = wall_seconds();
  agree(comm_, [&] {
    const auto ein = device_input_bytes(p), eout = device_output_bytes(p);
    a_ = DeviceBuffer(static_cast<std::size_t>(rows_held_ * local.k) * ein);
    b_ = DeviceBuffer(static_cast<std::size_t>(local.k * local.n) * ein);
    c_ = DeviceBuffer(static_cast<std::size_t>(rows_held_ * local.n) * eout);
    if (p == Precision::bf16) {
      const std::int64_t most = std::max(rows_held_ * local.k, local.k * local.n);
      staging_ = DeviceBuffer(static_cast<std::size_t>(std::min(kStagingElements, most)) * 4);
    }
    vectors_ = DeviceBuffer(static_cast<std::size_t>(2 * local.n + 2 * local.k + 3 * rows_held_) * 8);
    set_math_mode(handle_->get(), p);
    // Defined contents, and the first call of the real shape (kernel selection and lazy module
    // loading) made here: neither belongs in a timed phase.
    SCALEBENCH_CUDA_CHECK(cudaMemsetAsync(a_.get(), 0, a_.bytes(), stream_.get()));
    SCALEBENCH_CUDA_CHECK(cudaMemsetAsync(b_.get(), 0, b_.bytes(), stream_.get()));
    SCALEBENCH_CUDA_CHECK(cudaMemsetAsync(c_.get(), 0, c_.bytes(), stream_.get()));
    stream_.synchronize();
  });
  const double t1 = wall_seconds();
  rec.add(phase::device_alloc, t1 - t0);
  // The first call of the real shape is a whole multiply (1.1 s at n=32768 on an H200): a run
  // with a warm-up repeat makes it there, untimed, and not twice.
  if (first_call_in_warmup_) return;
  agree(comm_, [&] {
    gemm_call(handle_->get(), shape_.m);
    stream_.synchronize();
  });
  rec.add(phase::cublas_first_call, wall_seconds() - t1);
}

nlohmann::json CublasGemm::describe() const {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  return {{"library", "cuBLAS"},
          {"version", cublas_version_string()},
          {"call", call_name(precision_)},
          {"layout", "row-major as column-major C^T = B^T A^T (no transposing copies)"},
          {"cuda_runtime", fmt::format("{}.{}", runtime / 1000, (runtime % 1000) / 10)},
          {"cuda_driver", fmt::format("{}.{}", driver / 1000, (driver % 1000) / 10)},
          {"nccl", nccl_version_string()},
          {"gpu", setup_.placement["gpu"]},
          {"threads", 1}};
}

// ---------------------------------------------------------------------------------------------
// Steps

void CublasGemm::gemm_call(cublasHandle_t h, std::int64_t rows) const {
  row_major_gemm(h, precision_, rows, shape_.n, shape_.k, a_.get(), b_.get(), c_.get());
}

void CublasGemm::ensure_host_ring() {
  if (ring_[0].get() != nullptr) return;
  for (auto& r : ring_) r = PinnedBuffer(static_cast<std::size_t>(kChunkBytes));
  for (auto& e : ring_free_) e.record(stream_.get());
}

void CublasGemm::copy_in(const void* host, void* device, std::int64_t count) {
  if (count <= 0) return;
  const auto he = static_cast<std::int64_t>(host_element_bytes(precision_));
  const auto de = static_cast<std::int64_t>(device_input_bytes(precision_));
  const bool pinned = is_pinned(host);
  const bool convert = precision_ == Precision::bf16;
  if (pinned && !convert) {
    SCALEBENCH_CUDA_CHECK(
        cudaMemcpyAsync(device, host, static_cast<std::size_t>(count * he), cudaMemcpyHostToDevice, stream_.get()));
    return;
  }
  if (!pinned) ensure_host_ring();
  // bf16: at most what the staging buffer holds (prepare sized it by the prepared shape).
  const std::int64_t chunk = convert ? std::min(static_cast<std::int64_t>(staging_.bytes() / 4), kChunkBytes / he)
                                     : kChunkBytes / he;
  const auto* src = static_cast<const char*>(host);
  auto* dst = static_cast<char*>(device);
  int slot = 0;
  for (std::int64_t done = 0; done < count; done += chunk, slot ^= 1) {
    const std::int64_t n = std::min(chunk, count - done);
    const void* from = src + done * he;
    if (!pinned) {
      // The copy that last read this slot must be done before the host overwrites it.
      ring_free_[slot].synchronize();
      std::memcpy(ring_[slot].get(), from, static_cast<std::size_t>(n * he));
      from = ring_[slot].get();
    }
    if (convert) {
      SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(staging_.get(), from, static_cast<std::size_t>(n * he),
                                            cudaMemcpyHostToDevice, stream_.get()));
      convert_to_bf16(staging_.as<float>(), reinterpret_cast<__nv_bfloat16*>(dst + done * de), n, stream_.get());
    } else {
      SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(dst + done * de, from, static_cast<std::size_t>(n * he),
                                            cudaMemcpyHostToDevice, stream_.get()));
    }
    if (!pinned) ring_free_[slot].record(stream_.get());
  }
}

void CublasGemm::copy_out(const void* device, void* host, std::int64_t count) {
  if (count <= 0) return;
  const auto e = static_cast<std::int64_t>(device_output_bytes(precision_));
  if (is_pinned(host)) {
    SCALEBENCH_CUDA_CHECK(
        cudaMemcpyAsync(host, device, static_cast<std::size_t>(count * e), cudaMemcpyDeviceToHost, stream_.get()));
    return;
  }
  ensure_host_ring();
  const std::int64_t chunk = kChunkBytes / e;
  const std::int64_t chunks = (count + chunk - 1) / chunk;
  const auto* src = static_cast<const char*>(device);
  auto* dst = static_cast<char*>(host);
  auto issue = [&](std::int64_t i) {
    const std::int64_t n = std::min(chunk, count - i * chunk);
    const int slot = static_cast<int>(i % 2);
    SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(ring_[slot].get(), src + i * chunk * e, static_cast<std::size_t>(n * e),
                                          cudaMemcpyDeviceToHost, stream_.get()));
    ring_free_[slot].record(stream_.get());
  };
  // Chunk i+1 crosses the bus while the host copies chunk i out of its pinned slot.
  issue(0);
  for (std::int64_t i = 0; i < chunks; ++i) {
    if (i + 1 < chunks) issue(i + 1);
    const int slot = static_cast<int>(i % 2);
    ring_free_[slot].synchronize();
    const std::int64_t n = std::min(chunk, count - i * chunk);
    std::memcpy(dst + i * chunk * e, ring_[slot].get(), static_cast<std::size_t>(n * e));
  }
}

void CublasGemm::multiply_block(const BlockGemm& g, PhaseRecorder* rec) {
  if (rec != nullptr) timer_.start_gated();
  row_major_gemm(handle_->get(), precision_, g);
  if (rec != nullptr) timer_.stop_into(*rec, phase::compute);
}

void CublasGemm::multiply(const void* a, const void* b, void* c, PhaseRecorder& rec) {
  scalebench::upload(*this, a, shape_.m, b, rec);
  scalebench::compute(*this, rec);
  scalebench::download(*this, c, shape_.m, rec);
}

void CublasGemm::begin_sum(void*) { SCALEBENCH_CUDA_CHECK(cudaMemsetAsync(c_.get(), 0, c_.bytes(), stream_.get())); }

void CublasGemm::add_panel(const void* a, const void* b, std::int64_t width, PhaseRecorder& rec) {
  convert_copy(a, a_.get(), shape_.m * width, CopyKind::host_to_device, rec);
  convert_copy(b, b_.get(), width * shape_.n, CopyKind::host_to_device, rec);
  scalebench::add_device_panel(*this, a_.get(), b_.get(), width, rec);
}

void CublasGemm::end_sum(void* c, PhaseRecorder& rec) { scalebench::download(*this, c, shape_.m, rec); }

GpuGemm::DeviceViews CublasGemm::device_views() const {
  const ElementType in = precision_ == Precision::fp64   ? ElementType::f64
                         : precision_ == Precision::bf16 ? ElementType::bf16
                                                         : ElementType::f32;
  const ElementType out = precision_ == Precision::fp64 ? ElementType::f64 : ElementType::f32;
  const std::int64_t rows = std::max(rows_held_, shape_.m);
  return {{a_.get(), rows * shape_.k, in, MemorySpace::device},
          {b_.get(), shape_.k * shape_.n, in, MemorySpace::device},
          {c_.get(), rows * shape_.n, out, MemorySpace::device},
          shape_};
}

void CublasGemm::convert_copy(const void* from, void* to, std::int64_t count, CopyKind kind, PhaseRecorder& rec) {
  timer_.start();
  if (kind == CopyKind::host_to_device) {
    copy_in(from, to, count);
    timer_.stop_into(rec, phase::h2d);
  } else if (kind == CopyKind::device_to_host) {
    copy_out(from, to, count);
    timer_.stop_into(rec, phase::d2h);
  } else {
    throw Error(ExitCode::internal, "convert_copy moves between host and device, not within the device");
  }
}

void CublasGemm::generate(const GemmShape& global, std::int64_t row_offset, std::uint64_t seed, Fill fill) {
  // Distinct keys for A and B, the host generator's (gemm_fill.hpp); rows of A are numbered
  // globally so ranks never overlap.
  const std::uint64_t key_a = gemm_input_key(seed, GemmInput::a);
  const std::uint64_t key_b = gemm_input_key(seed, GemmInput::b);
  const bool integer = fill == Fill::integer;
  const std::int64_t a_count = shape_.m * shape_.k, b_count = shape_.k * shape_.n;
  const std::int64_t first = row_offset * global.k;
  switch (precision_) {
    case Precision::fp64:
      generate_matrix(a_.as<double>(), a_count, first, key_a, integer, stream_.get());
      generate_matrix(b_.as<double>(), b_count, 0, key_b, integer, stream_.get());
      break;
    case Precision::fp32:
    case Precision::tf32:
      generate_matrix(a_.as<float>(), a_count, first, key_a, integer, stream_.get());
      generate_matrix(b_.as<float>(), b_count, 0, key_b, integer, stream_.get());
      break;
    case Precision::bf16:
      generate_matrix(a_.as<__nv_bfloat16>(), a_count, first, key_a, integer, stream_.get());
      generate_matrix(b_.as<__nv_bfloat16>(), b_count, 0, key_b, integer, stream_.get());
      break;
  }
  stream_.synchronize();
}

// ---------------------------------------------------------------------------------------------
// Verification on the device

namespace {
template <class T>
void dots(const void* m, std::int64_t rows, std::int64_t cols, const double* w, const double* wabs, double* y,
          double* yabs, cudaStream_t s) {
  row_dots(static_cast<const T*>(m), rows, cols, w, wabs, y, yabs, s);
}
void input_dots(Precision p, const void* m, std::int64_t rows, std::int64_t cols, const double* w, const double* wabs,
                double* y, double* yabs, cudaStream_t s) {
  switch (p) {
    case Precision::fp64: dots<double>(m, rows, cols, w, wabs, y, yabs, s); return;
    case Precision::fp32:
    case Precision::tf32: dots<float>(m, rows, cols, w, wabs, y, yabs, s); return;
    case Precision::bf16: dots<__nv_bfloat16>(m, rows, cols, w, wabs, y, yabs, s); return;
  }
}
void output_dots(Precision p, const void* m, std::int64_t rows, std::int64_t cols, const double* w, double* y,
                 cudaStream_t s) {
  if (p == Precision::fp64) {
    dots<double>(m, rows, cols, w, nullptr, y, nullptr, s);
  } else {
    dots<float>(m, rows, cols, w, nullptr, y, nullptr, s);
  }
}
}  // namespace

std::vector<double> CublasGemm::c_times_x(const std::vector<double>& x, std::int64_t rows) {
  const std::int64_t n = shape_.n;
  double* v = vectors_.as<double>();
  double* dx = v;
  double* dcx = v + 2 * n + 2 * shape_.k;
  std::vector<double> cx(static_cast<std::size_t>(rows));
  SCALEBENCH_CUDA_CHECK(
      cudaMemcpyAsync(dx, x.data(), static_cast<std::size_t>(n) * 8, cudaMemcpyHostToDevice, stream_.get()));
  output_dots(precision_, c_.get(), rows, n, dx, dcx, stream_.get());
  SCALEBENCH_CUDA_CHECK(
      cudaMemcpyAsync(cx.data(), dcx, static_cast<std::size_t>(rows) * 8, cudaMemcpyDeviceToHost, stream_.get()));
  stream_.synchronize();
  return cx;
}

RowCheck CublasGemm::verify(const std::vector<double>& x, std::vector<double>* cx_out) {
  const std::int64_t n = shape_.n, k = shape_.k, rows = shape_.m;
  std::vector<double> absx(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) absx[j] = std::fabs(x[j]);
  // Layout of vectors_: x | |x| | B·x | |B||x| | C·x | A·(B·x) | |A|(|B||x|)
  double* v = vectors_.as<double>();
  double *dx = v, *dabsx = v + n, *dbx = v + 2 * n, *dabsbx = v + 2 * n + k;
  double *dcx = v + 2 * n + 2 * k, *dax = dcx + rows_held_, *dbound = dax + rows_held_;
  cudaStream_t s = stream_.get();
  SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(dx, x.data(), static_cast<std::size_t>(n) * 8, cudaMemcpyHostToDevice, s));
  SCALEBENCH_CUDA_CHECK(
      cudaMemcpyAsync(dabsx, absx.data(), static_cast<std::size_t>(n) * 8, cudaMemcpyHostToDevice, s));
  input_dots(precision_, b_.get(), k, n, dx, dabsx, dbx, dabsbx, s);
  output_dots(precision_, c_.get(), rows, n, dx, dcx, s);
  input_dots(precision_, a_.get(), rows, k, dbx, dabsbx, dax, dbound, s);
  std::vector<double> cx(static_cast<std::size_t>(rows)), ax(cx.size()), bound(cx.size());
  const auto bytes = static_cast<std::size_t>(rows) * 8;
  SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(cx.data(), dcx, bytes, cudaMemcpyDeviceToHost, s));
  SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(ax.data(), dax, bytes, cudaMemcpyDeviceToHost, s));
  SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(bound.data(), dbound, bytes, cudaMemcpyDeviceToHost, s));
  stream_.synchronize();

  // The comparison of freivalds_rows(), on the sums the device made.
  const double gamma = static_cast<double>(2 * k + 2 * n + 4) * unit_roundoff(precision_);
  RowCheck out;
  out.rows_checked = rows;
  for (std::int64_t i = 0; i < rows; ++i) {
    const double tol = gamma * bound[i] + DBL_MIN;
    const double diff = std::fabs(cx[i] - ax[i]);
    const double ratio = std::isfinite(diff) ? diff / tol : INFINITY;
    if (!(ratio <= 1.0)) {
      if (out.rows_failed == 0) out.first_failed_row = i;
      ++out.rows_failed;
    }
    if (!(ratio <= out.worst_ratio)) out.worst_ratio = ratio;
  }
  if (cx_out != nullptr) *cx_out = std::move(cx);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Peers

double CublasGemm::bare_device_gemm_seconds() {
  if (!peer_handle_) {
    peer_stream_.emplace();
    peer_handle_.emplace(peer_stream_->get());
    set_math_mode(peer_handle_->get(), precision_);
    peer_timer_.emplace(peer_stream_->get());
    // Its own first call (kernel selection, lazy loading) is not what is compared: the peer's
    // warm-up repeat makes it, or, with --warmup 0, this call.
    if (!first_call_in_warmup_) {
      row_major_gemm(peer_handle_->get(), precision_, shape_.m, shape_.n, shape_.k, a_.get(), b_.get(), c_.get());
      peer_stream_->synchronize();
    }
  }
  peer_timer_->start_gated();
  row_major_gemm(peer_handle_->get(), precision_, shape_.m, shape_.n, shape_.k, a_.get(), b_.get(), c_.get());
  return peer_timer_->stop();
}

}  // namespace scalebench::gpu

namespace scalebench {

std::unique_ptr<GpuGemm> make_cublas_gemm(const GemmConfig& cfg, const Communicator& comm) {
  return std::make_unique<gpu::CublasGemm>(cfg, comm);
}

}  // namespace scalebench
