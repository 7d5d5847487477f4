#pragma once
// Row1D's GPU schedules: how one repeat moves A, B and C between the hosts and the GPUs and
// multiplies, written over the device's primitives (gpu.hpp: copies, streams and events, the
// block multiply of GpuGemm, the device buffer transport). One small class each:
//
//   staged         transport mpi: the host MPI movement runs in Row1D; each rank copies its rows
//                  of A and B in, multiplies, copies its rows of C out (schedules.cpp).
//   nccl           rank 0 copies all of A and B in; scatter and broadcast device to device;
//                  multiply; gather device to device; rank 0 copies all of C out (schedules.cpp).
//   resident       inputs made on the device once (set-up); a repeat is the multiply alone and C
//                  stays on the device (schedules.cpp).
//   shared         the host matrices are the node's shared windows: every rank copies its own
//                  rows of A in and of C out over its own link, and B whole (mpi) or its 1/P
//                  slice of B's rows, all-gathered device to device (nccl) (schedules.cpp).
//   overlap        nccl's movement pipelined with the multiply (OverlapPlan): B and the heads
//                  in k-panels, the rest in row blocks (overlap.cpp).
//   shared overlap shared's movement pipelined the same way (shared_overlap.cpp).
#include <cstdint>
#include <functional>
#include <memory>

#include "scalebench/base/partition.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"
#include "scalebench/mpi/transport.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

namespace scalebench::row1d_gpu {

// The host side of one repeat (host format): rank 0's whole A and C (replicated: its own
// buffers; shared: the node's windows), this rank's rows of A and C, and B.
struct HostMatrices {
  const void* a_full;
  const void* a_i;
  const void* b;
  void* c_i;
  void* c_full;
};

// What every schedule works with. `shared`: the host matrices are the node's shared windows.
// `node` (shared): the ranks whose windows are this rank's, each node holding B whole; null:
// the whole communicator.
struct Context {
  const GemmConfig& cfg;
  const Communicator& comm;
  GpuGemm& gpu;
  const RowPartition& rows;
  bool shared;
  const Communicator* node = nullptr;
};

// The ranks B's slices are all-gathered among under --distribution shared: the node's, since
// every node's windows hold B whole; the whole communicator where the node is all of it (one
// NCCL communicator for those ranks, not a second).
const Communicator& b_slice_group(const Context& ctx);

class Schedule {
 public:
  explicit Schedule(const Context& ctx) : ctx_(ctx), mine_(ctx.rows.block(ctx.comm.rank())) {}
  virtual ~Schedule() = default;
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  // Rows of A and C this rank holds on its GPU (GpuGemm::reserve: Reservation::rows): its own rows, or all of
  // them on rank 0 where it scatters from and gathers into its device.
  virtual std::int64_t rows_held() const { return mine_.count; }
  // Input elements the schedule allocates itself (GpuGemm::reserve: Reservation::extra_inputs).
  virtual std::int64_t own_inputs() const { return 0; }
  // The stream the device buffer transport is made for, and its thread-block cap.
  virtual DeviceStream transport_stream() const { return ctx_.gpu.stream(); }
  virtual int transport_ctas() const { return 0; }
  // After GpuGemm::prepare (collective): what the schedule allocates; `transport` (null when the
  // run has none) outlives the schedule's repeats. Under `shared` it is attached to the ranks
  // B's slices are all-gathered among (b_slice_group).
  virtual void prepare(BufferTransport* transport) {
    transport_ = transport;
    if (transport_ != nullptr && ctx_.shared) transport_->attach(b_slice_group(ctx_));
  }
  // One repeat: its device work and device-side movement, phases recorded. `after_compute` runs
  // once this rank's C is final on the device, before it moves (the error-injection hook).
  virtual void multiply(const HostMatrices& host, PhaseRecorder& rec, const std::function<void()>& after_compute) = 0;

 protected:
  // Records the device time of what `enqueue` puts on the GPU's stream as `phase`.
  template <class F>
  void timed(PhaseRecorder& rec, const char* phase, F&& enqueue) {
    rec.add(phase, time_on_device(ctx_.gpu.stream(), enqueue));
  }

  Context ctx_;
  Block mine_;
  BufferTransport* transport_ = nullptr;
};

// The schedule this configuration runs (cfg.resident, cfg.overlap, cfg.transport, `shared`).
std::unique_ptr<Schedule> make_schedule(const Context& ctx);
// The overlapped schedules (overlap.cpp, shared_overlap.cpp).
std::unique_ptr<Schedule> make_overlap_schedule(const Context& ctx);
std::unique_ptr<Schedule> make_shared_overlap_schedule(const Context& ctx);

}  // namespace scalebench::row1d_gpu
