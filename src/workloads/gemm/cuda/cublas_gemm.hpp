#pragma once
// The cuBLAS implementation of the GEMM workload's GpuGemm (gemm --backend cublas), over cuda/'s
// owners and checks; make_device_gemm (gemm/device_gemm.hpp) makes it for the "cuda" device.
#include <cuda_runtime.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cublas_handle.hpp"
#include "device_memory.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"
#include "stream.hpp"

namespace scalebench::gpu {

class CublasGemm final : public GpuGemm {
 public:
  // Selects this rank's GPU and creates its context, stream and cuBLAS handle (collective).
  CublasGemm(const GemmConfig& cfg, const Communicator& comm);

  std::string name() const override { return "cublas"; }
  void prepare(const GemmShape& local, Precision p, PhaseRecorder& rec) override;
  void multiply(const void* a, const void* b, void* c, PhaseRecorder& rec) override;
  nlohmann::json describe() const override;
  // The sum over panels keeps C on the device: each panel goes up ("h2d") and is added
  // (beta = 1, "compute"); C comes down once at the end ("d2h").
  void begin_sum(void* c) override;
  void add_panel(const void* a, const void* b, std::int64_t width, PhaseRecorder& rec) override;
  void end_sum(void* c, PhaseRecorder& rec) override;
  void reserve(const Reservation& r) override {
    rows_held_ = r.rows;
    reserved_inputs_ = r.extra_inputs;
  }
  DeviceStream stream() const override { return {stream_.get()}; }
  DeviceViews device_views() const override;
  void convert_copy(const void* from, void* to, std::int64_t count, CopyKind kind, PhaseRecorder& rec) override;
  void multiply_block(const BlockGemm& g, PhaseRecorder* rec) override;
  void generate(const GemmShape& global, std::int64_t row_offset, std::uint64_t seed, Fill fill) override;
  RowCheck verify(const std::vector<double>& x, std::vector<double>* cx_out) override;
  std::vector<double> c_times_x(const std::vector<double>& x, std::int64_t rows) override;
  double bare_device_gemm_seconds() override;
  const Setup& setup() const override { return setup_; }

  int device() const noexcept { return device_; }

 private:
  struct Selection {
    int device = 0;
    double seconds = 0;
    int local_rank = 0;
  };
  static Selection select(const Communicator& comm, bool share_gpu);
  void check_memory_fits(const DeviceMemoryPlan& plan) const;
  // Host (host format) -> device (device format) of `count` elements, on the stream.
  void copy_in(const void* host, void* device, std::int64_t count);
  // Device -> host of `count` elements of C, on the stream.
  void copy_out(const void* device, void* host, std::int64_t count);
  void ensure_host_ring();
  void gemm_call(cublasHandle_t h, std::int64_t rows) const;

  const Communicator& comm_;
  bool nccl_;
  bool first_call_in_warmup_;  // a warm-up repeat makes the first call of the real shape
  Selection selection_;
  int device_;
  Setup setup_;
  Stream stream_;
  std::optional<CublasHandle> handle_;
  DeviceTimer timer_;

  GemmShape shape_;
  Precision precision_ = Precision::fp64;
  std::int64_t rows_held_ = 0;
  std::int64_t reserved_inputs_ = 0;  // allocated by a schedule, counted in the memory check
  DeviceBuffer a_, b_, c_;
  DeviceBuffer staging_;  // bf16 only: fp32 chunks on their way to bf16
  DeviceBuffer vectors_;  // Freivalds: x, |x|, B·x, |B||x|, C·x, A·(B·x), |A|(|B||x|)
  PinnedBuffer ring_[2];  // pageable host buffers go through these
  Event ring_free_[2];

  std::optional<Stream> peer_stream_;
  std::optional<CublasHandle> peer_handle_;
  std::optional<DeviceTimer> peer_timer_;
};

}  // namespace scalebench::gpu
