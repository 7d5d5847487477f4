#pragma once
// The GPU layer as the rest of scalebench sees it: vendor-neutral and CUDA-free. Each function
// goes to the device registered at start-up (device.hpp; cuda/ is the CUDA implementation);
// without one (a build without CUDA) they report it: NoCudaError, or none visible.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/base/partition.hpp"
#include "scalebench/base/verify.hpp"
#include "scalebench/mpi/transport.hpp"
#include "scalebench/problem/gemm.hpp"

namespace scalebench {

class Communicator;

// True when this binary has a device implementation (it was built with CUDA).
bool gpu_support_built();
// Number of visible CUDA devices (0 when none or when built without CUDA; never throws).
int visible_gpu_count();
// Why no GPU is visible, in words (driver state, CUDA_VISIBLE_DEVICES); empty when one is.
std::string gpu_absence_reason();

// This rank's GPU: if exactly one device is visible, that one (what `srun --gpus-per-task=1`
// and CUDA_VISIBLE_DEVICES give); otherwise the node-local rank modulo the count. More ranks
// than GPUs on a node is a ResourceError unless share_gpu. No GPU visible: ResourceError naming
// what was found, naming `asked_by` (the option that wants the GPU: "--backend cublas",
// "--backend cuda"). Collective over `comm` (uses its shared-memory split). Makes it current.
int select_gpu_for_rank(const Communicator& comm, bool share_gpu, const std::string& asked_by);
// index, name, PCI bus id, UUID, memory, compute capability, driver/runtime versions, the
// driver's release.
nlohmann::json gpu_info(int device);
// The device libraries this process loaded and the driver, by library, for a record's
// `versions` (CUDA: {"cuda": {runtime, driver, driver_release, cublas}, "nccl": version}). Creates
// no device context and never throws; an empty object in a build without a device.
nlohmann::json gpu_library_versions();

// ---------------------------------------------------------------------------------------------
// The GPU multiply as the distributed driver uses it, step by step.

// A stream of this rank's GPU, opaque outside the GPU layer (a cudaStream_t in the CUDA build):
// what device copies, multiplies and transports are enqueued on. A view: it owns nothing.
struct DeviceStream {
  void* handle = nullptr;
};

// ---------------------------------------------------------------------------------------------
// The device's primitives: memory, streams and events, copies. Schedules (the algorithms' own
// code) are written over these, the block multiply of GpuGemm and the buffer transports.

// An owned stream of this rank's GPU (non-blocking). `high`: the device's greatest priority —
// its blocks are scheduled first when SMs free up (communication that must not wait behind a
// long multiply). Move-only; NoCudaError without CUDA.
class OwnedStream {
 public:
  enum class Priority { normal, high };
  explicit OwnedStream(Priority p = Priority::normal);
  ~OwnedStream();
  OwnedStream(OwnedStream&& o) noexcept;
  OwnedStream& operator=(OwnedStream&& o) noexcept;
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  DeviceStream get() const noexcept { return {handle_}; }
  // Waits until everything enqueued on it is done.
  void synchronize() const;

 private:
  void release() noexcept;
  void* handle_ = nullptr;
};

// An event of this rank's GPU, made when constructed. Move-only; NoCudaError without CUDA.
class DeviceEvent {
 public:
  DeviceEvent();
  ~DeviceEvent();
  DeviceEvent(DeviceEvent&& o) noexcept;
  DeviceEvent& operator=(DeviceEvent&& o) noexcept;
  DeviceEvent(const DeviceEvent&) = delete;
  DeviceEvent& operator=(const DeviceEvent&) = delete;
  // Marks the point that `s` has reached (what is enqueued on it so far).
  void record(DeviceStream s) const;
  // Waits (on the host) until the recorded point is reached.
  void synchronize() const;
  // Seconds from `start` to this event, both recorded and reached (device clocks).
  double seconds_since(const DeviceEvent& start) const;
  // Work enqueued on `s` from now on waits for this event. Record it first: a wait on an event
  // never recorded does not wait at all.
  void make_wait(DeviceStream s) const;

 private:
  void release() noexcept;
  void* handle_ = nullptr;
};

// Bytes of device memory on this rank's GPU (the current device), uninitialised. Move-only.
// ResourceError when they cannot be had; NoCudaError without CUDA.
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t bytes);
  ~DeviceArray();
  DeviceArray(DeviceArray&& o) noexcept;
  DeviceArray& operator=(DeviceArray&& o) noexcept;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  void* data() const noexcept { return ptr_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locks existing host memory in place (cudaHostRegister) for as long as it lives, so that
// host<->device copies of the driver's matrices run at full bus speed. Move-only; declare it
// after the memory it pins so that it is released first.
class HostMemoryPin {
 public:
  HostMemoryPin() = default;
  // Throws NoCudaError without CUDA, ResourceError when the memory cannot be pinned.
  HostMemoryPin(void* data, std::size_t bytes);
  ~HostMemoryPin();
  HostMemoryPin(HostMemoryPin&& o) noexcept;
  HostMemoryPin& operator=(HostMemoryPin&& o) noexcept;
  HostMemoryPin(const HostMemoryPin&) = delete;
  HostMemoryPin& operator=(const HostMemoryPin&) = delete;

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
};

// Which way a copy goes (host memory pinned or not; pageable memory makes the copy synchronous).
enum class CopyKind { host_to_device, device_to_host, device_to_device };
// Enqueues a copy of `bytes` bytes on `s`.
void copy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, DeviceStream s);
// A strided copy: `rows` rows of `row_bytes` bytes, `dst_pitch` and `src_pitch` bytes apart.
struct StridedCopy {
  void* dst;
  std::size_t dst_pitch;
  const void* src;
  std::size_t src_pitch;
  std::size_t row_bytes;
  std::size_t rows;
};
void copy_strided_async(const StridedCopy& c, CopyKind kind, DeviceStream s);

// Seconds of device time the work `enqueue` puts on `s` takes (an event before, one after; waits
// for the second): how a schedule times a step of its own.
template <class F>
double time_on_device(DeviceStream s, F&& enqueue) {
  const DeviceEvent begin, end;
  begin.record(s);
  enqueue();
  end.record(s);
  end.synchronize();
  return end.seconds_since(begin);
}

// Device bytes per element of A and B (fp64 8, fp32/tf32 4, bf16 2) and of C (8 or 4).
inline std::size_t device_input_bytes(Precision p) { return p == Precision::fp64 ? 8 : p == Precision::bf16 ? 2 : 4; }
inline std::size_t device_output_bytes(Precision p) { return p == Precision::fp64 ? 8 : 4; }

// What the GPU backend allocates besides the matrices (the plan below and cuda/ use the same
// numbers): the device BLAS's workspace (cuBLAS's recommendation for Hopper), the device chunk
// bf16 inputs are converted through, and room kept free for what the libraries allocate
// themselves (kernels loaded lazily, BLAS internals; the collectives' channels and buffers, NCCL's
// on CUDA, need more).
inline constexpr std::int64_t kBlasWorkspaceBytes = std::int64_t{32} << 20;
inline constexpr std::int64_t kBf16StagingElements = std::int64_t{16} << 20;
inline constexpr std::int64_t kLibraryMarginBytes = std::int64_t{256} << 20;
inline constexpr std::int64_t kCollectivesMarginBytes = std::int64_t{1} << 30;

// Device memory one rank needs: A (rows_held×k) + B (k×n) + C (rows_held×n) + workspace
// (cuBLAS workspace, bf16 conversion staging, Freivalds vectors, library margins).
struct DeviceMemoryPlan {
  std::int64_t matrices = 0;   // A + B + C in their device formats
  std::int64_t workspace = 0;  // everything else
  std::int64_t total() const noexcept { return matrices + workspace; }
};
// `pack_elements`: --overlap's panel buffer (OverlapPlan::pack_elements), in input elements.
inline DeviceMemoryPlan plan_device_memory(const GemmShape& local, std::int64_t rows_held, Precision p, bool nccl,
                                           std::int64_t pack_elements = 0) {
  const auto ein = static_cast<std::int64_t>(device_input_bytes(p));
  const auto eout = static_cast<std::int64_t>(device_output_bytes(p));
  if (rows_held < local.m) rows_held = local.m;
  DeviceMemoryPlan plan;
  plan.matrices = rows_held * local.k * ein + local.k * local.n * ein + rows_held * local.n * eout +
                  pack_elements * ein;
  plan.workspace = kBlasWorkspaceBytes + (2 * local.n + 2 * local.k + 3 * rows_held) * 8 + kLibraryMarginBytes;
  if (p == Precision::bf16) {
    const std::int64_t most = rows_held * local.k > local.k * local.n ? rows_held * local.k : local.k * local.n;
    plan.workspace += (most < kBf16StagingElements ? most : kBf16StagingElements) * 4;
  }
  if (nccl) plan.workspace += kCollectivesMarginBytes;
  return plan;
}

// ---------------------------------------------------------------------------------------------
// --overlap: one repeat as a pipeline, so that transfers run while the GPUs multiply.
//
// Every rank's rows are cut in two. Its first `head` rows are multiplied in k-panels as B
// arrives: for panel p (columns [panel_first[p], panel_first[p+1]) of A, the same rows of B),
// C_head += A_head[:, p]·B[p, :]. Rank 0 copies B panel by panel to its GPU and broadcasts each
// panel; the other ranks' A_head panels travel packed (head × width, contiguous) in a separate
// buffer. Once B is whole, the remaining rows go in row blocks, round j = every rank's block j:
// A block in, C_block = A_block·B, C block out — while block j multiplies, block j+1 and j+2
// arrive and block j-1 leaves. Rank 0's host link carries A and B in and C out, both directions
// at once; the head's panels keep the GPUs busy while B is still arriving.
struct OverlapPlan {
  std::vector<std::int64_t> panel_first;   // P+1 column offsets into k: panel p = [first[p], first[p+1])
  std::vector<std::int64_t> head;          // per rank: rows multiplied in k-panels (from its first row)
  std::vector<std::vector<Block>> blocks;  // per rank: the rest in row blocks (offsets local to the rank)
  int panels() const noexcept { return static_cast<int>(panel_first.size()) - 1; }
  int rounds() const noexcept;  // the most blocks any rank has
  // Input elements of the panel buffer: on rank 0 every other rank's head (all panels), on rank
  // r its own head.
  std::int64_t pack_elements(int rank, std::int64_t k) const noexcept;
};
// Panels of W = min(2048, ceil(k/4)) columns, the first three W/4, W/4, W/2 (when W >= 4);
// head = ceil(rows/2) of each rank's rows; the rest in blocks of min(2048, ceil(rest/8)) rows
// (so about 8 rounds).
OverlapPlan make_overlap_plan(const GemmShape& global, const RowPartition& rows);

// One rank's share of C = A·B on its GPU. Device buffers hold A_i (rows×k), B (k×n) and C_i
// (rows×n) in the precision's device format (bf16: A and B as bf16, C as fp32). The root of an
// NCCL run holds all m rows of A and C; its own block is the first rows.
// LocalGemm::prepare allocates (after checking, collectively over the ranks that share a GPU,
// that the plan fits the free device memory; the set-up seconds go to "device_alloc") and
// LocalGemm::multiply = upload, compute, download of the local block. Device steps are timed
// with device events.
//
// The seam is ten operations: what a schedule cannot write over the device's primitives (the
// block multiply, copies that convert formats, the check and the generator on the device, the
// peer call) and what it needs to see (stream, views, set-up). The steps schedules share — the
// whole block's upload, multiply and download, a panel added on the device, the test hook, the
// pinned-copy peer — are written over these below (gpu_gemm_steps). Its implementations are the
// GEMM workload's, chosen there for the registered device (make_device_gemm: cuBLAS on "cuda"),
// not made by the device.
class GpuGemm : public LocalGemm {
 public:
  // Before prepare(): rows of A and C to hold on this rank (at least the local rows), and input
  // elements a schedule allocates itself besides A, B and C (DeviceArray; --overlap's panel
  // buffer, OverlapPlan::pack_elements), counted in prepare()'s memory check.
  struct Reservation {
    std::int64_t rows = 0;
    std::int64_t extra_inputs = 0;
  };
  virtual void reserve(const Reservation& r) = 0;
  // The stream device-resident work goes on (panels arriving through a device transport, the
  // schedules' own copies), and the buffers prepare() made as device views: A (rows held × k)
  // and B (k × n) in the input format, C (rows held × n) in the output format; `shape` is the
  // prepared local shape.
  virtual DeviceStream stream() const = 0;
  struct DeviceViews {
    BufferView a, b, c;
    GemmShape shape;
  };
  virtual DeviceViews device_views() const = 0;
  // The one copy vocabulary: `count` elements between host memory in the host format and device
  // memory in the device format, converting (bf16 inputs; fp32 outputs of tf32 and bf16), on
  // stream(). host_to_device: inputs (A or B elements), timed into "h2d"; device_to_host:
  // outputs (C elements), timed into "d2h".
  virtual void convert_copy(const void* from, void* to, std::int64_t count, CopyKind kind, PhaseRecorder& rec) = 0;
  // The block multiply on device views: row-major C (rows×n, leading dimension ldc) = (or +=,
  // `accumulate`) A (rows×k, lda)·B (k×n, ldb), every pointer device memory in the prepared
  // precision's device formats (inside device_views() or a DeviceArray), enqueued on stream()
  // behind what is there. With `rec`, timed into its "compute" (the device's own timing of the
  // call alone, waiting for it); without, not timed: a schedule times it with events.
  struct BlockGemm {
    std::int64_t rows, n, k;
    const void* a;
    std::int64_t lda;
    const void* b;
    std::int64_t ldb;
    void* c;
    std::int64_t ldc;
    bool accumulate;
  };
  virtual void multiply_block(const BlockGemm& g, PhaseRecorder* rec) = 0;
  // --resident: A_i = rows [row_offset, row_offset + local m) of A, and B, made on the device
  // by the counter-based generator of gemm_fill.hpp: the same values rank 0 makes on the host.
  virtual void generate(const GemmShape& global, std::int64_t row_offset, std::uint64_t seed, Fill fill) = 0;
  // Freivalds' check of the local block, computed on the device: the test and tolerance of
  // freivalds_rows() with this x (n entries). `cx_out` (optional) receives C_i·x.
  virtual RowCheck verify(const std::vector<double>& x, std::vector<double>* cx_out) = 0;
  // C·x of the first `rows` rows held on the device. Bit-identical to verify()'s C_i·x for the
  // same rows: the gathered C can be compared with the blocks exactly.
  virtual std::vector<double> c_times_x(const std::vector<double>& x, std::int64_t rows) = 0;
  // The peer measured in the same run on the same GPU (it overwrites C): seconds of one bare
  // device BLAS call (its own handle and stream, nothing around it) on this block (CUDA: one
  // cublasGemmEx).
  virtual double bare_device_gemm_seconds() = 0;
  // Set-up done when the backend was made, in seconds by step ("gpu_context": device selection
  // and context creation, "cublas_handle"; prepare() records its own steps, "device_alloc" and
  // "cublas_first_call", in the recorder it is given; none of it is ever inside compute), and
  // where it runs: host, rank, local rank, GPU index, name, PCI bus id, UUID.
  struct Setup {
    std::vector<std::pair<std::string, double>> seconds;
    nlohmann::json placement;
  };
  virtual const Setup& setup() const = 0;
};

// The steps schedules share, written over GpuGemm's operations and the primitives above.
// "h2d": `rows` rows of A and all of B from host buffers (host format, pinned or not) into the
// device views.
void upload(GpuGemm& g, const void* a, std::int64_t rows, const void* b, PhaseRecorder& rec);
// "compute": C_i = A_i·B over the prepared local shape.
void compute(GpuGemm& g, PhaseRecorder& rec);
// "d2h": the first `rows` rows of C to a host buffer.
void download(GpuGemm& g, void* c, std::int64_t rows, PhaseRecorder& rec);
// "compute": C += A_p·B_p with A_p (m × width) and B_p (width × n) contiguous device memory in
// the input format, C the prepared one (begin_sum zeroes it); after the work on stream().
void add_device_panel(GpuGemm& g, const void* a, const void* b, std::int64_t width, PhaseRecorder& rec);
// Tests and --inject-error-rank: add `amount` to local element `index` of C on the device (C's
// element read, the sum rounded to C's format, written back; on stream(), waited for).
void corrupt_c(GpuGemm& g, std::int64_t index, double amount);
// The copy peer: bytes/s of one plain copy from page-locked host memory into C on the device (at
// most `bytes`, capped by C's size; never into A or B, which the bare call reads). The host
// memory is page-locked once per `peer` and kept for the next call.
class PinnedCopyPeer {
 public:
  double bandwidth(GpuGemm& g, std::int64_t bytes);

 private:
  std::vector<unsigned char> host_;
  HostMemoryPin pin_;
};

// An error in one element of C that Freivalds' check must catch at this size and precision,
// whatever the inputs (|a|, |b| <= 4 as the generators make them, |x_j| >= 1/2): more than twice
// the largest row tolerance (2k + 2n + 4)·u·k·n·16. At fp64 this is 1; at tf32 and bf16 an error
// of 1 can hide below the tolerance of a large multiply, so the test hook adds more.
inline double detectable_corruption(const GemmShape& s, Precision p) {
  const double k = static_cast<double>(s.k), n = static_cast<double>(s.n);
  return 1.0 + 2.0 * (2 * k + 2 * n + 4) * unit_roundoff(p) * k * n * 16.0;
}

// The device buffer transport (CUDA: NCCL) between the ranks' GPUs on device views, enqueued on
// `stream` (synchronize() waits for it). Collective over `comm`, for which it builds an NCCL communicator
// (unique id by MPI_Bcast); attach(group) builds one per sub-communicator (a process row or
// column), collectively over that group. ResourceError (agreed) when two ranks of `comm` share
// one GPU: NCCL cannot run them. `max_ctas` > 0 caps the thread blocks (SMs) each NCCL call may
// occupy (ncclConfig_t::maxCTAs), unless NCCL_MAX_CTAS is set: --overlap runs NCCL beside the
// multiply, which needs the SMs.
std::unique_ptr<BufferTransport> make_device_buffer_transport(const Communicator& comm, DeviceStream stream,
                                                              int max_ctas = 0);

// CTAs per NCCL call under --overlap: a few SMs move tens of GB/s over NVLink, far more than the
// pipeline needs, and leave the rest to the multiply.
inline constexpr int kOverlapTransportCtas = 4;

// ---------------------------------------------------------------------------------------------
// Transfer bandwidth as nccl-tests defines it (doc/PERFORMANCE.md there): algbw = bytes / time;
// busbw = algbw × factor, factor 1 for broadcast and point-to-point copies, (n-1)/n for scatter
// and gather (bytes = the whole matrix moved).
// allgather: (n-1)/n as well (bytes = the whole gathered buffer).
enum class TransferPattern { copy, broadcast, scatter, gather, allgather };

inline std::string to_string(TransferPattern p) {
  switch (p) {
    case TransferPattern::copy: return "copy";
    case TransferPattern::broadcast: return "broadcast";
    case TransferPattern::scatter: return "scatter";
    case TransferPattern::gather: return "gather";
    case TransferPattern::allgather: return "allgather";
  }
  return "?";
}

inline double bus_bandwidth_factor(TransferPattern p, int ranks) {
  if ((p == TransferPattern::scatter || p == TransferPattern::gather || p == TransferPattern::allgather) && ranks > 0) {
    return static_cast<double>(ranks - 1) / static_cast<double>(ranks);
  }
  return 1.0;
}

inline nlohmann::json transfer_json(TransferPattern p, int ranks, double bytes, double seconds) {
  const double algbw = seconds > 0 ? bytes / seconds : 0.0;
  return {{"bytes", bytes},
          {"seconds", seconds},
          {"algbw_GBps", algbw * 1e-9},
          {"busbw_GBps", algbw * bus_bandwidth_factor(p, ranks) * 1e-9}};
}

}  // namespace scalebench
