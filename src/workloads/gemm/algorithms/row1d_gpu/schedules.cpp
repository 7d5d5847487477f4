// Row1D's GPU schedules without a pipeline: staged, nccl, resident and shared (schedule.hpp).
#include <cstddef>
#include <cstdint>

#include "gemm/algorithms/row1d_gpu/schedule.hpp"
#include "scalebench/base/phases.hpp"

namespace scalebench::row1d_gpu {
namespace {

// Transport mpi: the rows arrive through the host (Row1D's MPI scatter and broadcast).
class Staged final : public Schedule {
 public:
  using Schedule::Schedule;
  void multiply(const HostMatrices& host, PhaseRecorder& rec, const std::function<void()>& after_compute) override {
    upload(ctx_.gpu, host.a_i, mine_.count, host.b, rec);
    compute(ctx_.gpu, rec);
    after_compute();
    download(ctx_.gpu, host.c_i, mine_.count, rec);
  }
};

// Transport nccl: rank 0 holds all rows of A and C on its device (its own block first, in place)
// and moves them device to device.
class Nccl final : public Schedule {
 public:
  using Schedule::Schedule;
  std::int64_t rows_held() const override { return ctx_.comm.is_root() ? ctx_.cfg.shape.m : mine_.count; }

  void multiply(const HostMatrices& host, PhaseRecorder& rec, const std::function<void()>& after_compute) override {
    const auto& s = ctx_.cfg.shape;
    const RowPartition& rows = ctx_.rows;
    if (ctx_.comm.is_root()) upload(ctx_.gpu, host.a_full, s.m, host.b, rec);
    // The others would otherwise count rank 0's upload as their scatter time.
    ctx_.comm.barrier();
    const GpuGemm::DeviceViews v = ctx_.gpu.device_views();
    timed(rec, phase::scatter, [&] {
      transport_->scatter(v.a, rows.counts_times(s.k), rows.offsets_times(s.k), first(v.a, s.k), 0, ctx_.comm);
    });
    timed(rec, phase::broadcast, [&] { transport_->broadcast(v.b, 0, ctx_.comm); });
    compute(ctx_.gpu, rec);
    after_compute();
    timed(rec, phase::gather, [&] {
      transport_->gather(first(v.c, s.n), v.c, rows.counts_times(s.n), rows.offsets_times(s.n), 0, ctx_.comm);
    });
    if (ctx_.comm.is_root()) download(ctx_.gpu, host.c_full, s.m, rec);
  }

 private:
  // This rank's rows of a device matrix with `cols` columns: the first rows of its buffer.
  BufferView first(BufferView v, std::int64_t cols) const {
    v.count = mine_.count * cols;
    return v;
  }
};

// --resident: nothing moves; the phases every record carries are there, at zero.
class Resident final : public Schedule {
 public:
  using Schedule::Schedule;
  void multiply(const HostMatrices&, PhaseRecorder& rec, const std::function<void()>& after_compute) override {
    rec.add(phase::scatter, 0.0);
    rec.add(phase::broadcast, 0.0);
    compute(ctx_.gpu, rec);
    after_compute();
    rec.add(phase::gather, 0.0);
  }
};

// --distribution shared: every rank over its own link, from and to the node's windows: its rows
// of A in, its rows of C out; B whole (no transport) or its slice of B's rows (RowPartition of k
// over the node's ranks), all-gathered device to device among them: every node holds B.
class Shared final : public Schedule {
 public:
  explicit Shared(const Context& ctx)
      : Schedule(ctx), group_(b_slice_group(ctx)), b_rows_(ctx.cfg.shape.k, group_.size()) {}

  void multiply(const HostMatrices& host, PhaseRecorder& rec, const std::function<void()>& after_compute) override {
    if (transport_ != nullptr) {
      upload_slice(host, rec);
      const GpuGemm::DeviceViews v = ctx_.gpu.device_views();
      const std::int64_t n = ctx_.cfg.shape.n;
      timed(rec, phase::allgather,
            [&] { transport_->all_gather(v.b, b_rows_.counts_times(n), b_rows_.offsets_times(n), group_); });
    } else {
      upload(ctx_.gpu, host.a_i, mine_.count, host.b, rec);
    }
    compute(ctx_.gpu, rec);
    after_compute();
    download(ctx_.gpu, host.c_i, mine_.count, rec);
  }

 private:
  // "h2d": this rank's rows of A, and its slice of B's rows into the same rows on the device.
  void upload_slice(const HostMatrices& host, PhaseRecorder& rec) {
    const auto& s = ctx_.cfg.shape;
    const GpuGemm::DeviceViews v = ctx_.gpu.device_views();
    const Block slice = b_rows_.block(group_.rank());
    const auto at = static_cast<std::size_t>(slice.offset * s.n);
    const std::size_t he = host_element_bytes(ctx_.cfg.precision), de = element_bytes(v.b.type);
    ctx_.gpu.convert_copy(host.a_i, v.a.data, mine_.count * s.k, CopyKind::host_to_device, rec);
    ctx_.gpu.convert_copy(static_cast<const char*>(host.b) + at * he, static_cast<char*>(v.b.data) + at * de,
                          slice.count * s.n, CopyKind::host_to_device, rec);
  }

  const Communicator& group_;
  const RowPartition b_rows_;
};

}  // namespace

const Communicator& b_slice_group(const Context& ctx) {
  return ctx.node != nullptr && ctx.node->size() < ctx.comm.size() ? *ctx.node : ctx.comm;
}

std::unique_ptr<Schedule> make_schedule(const Context& ctx) {
  if (ctx.cfg.resident) return std::make_unique<Resident>(ctx);
  if (ctx.shared) {
    if (ctx.cfg.overlap) return make_shared_overlap_schedule(ctx);
    return std::make_unique<Shared>(ctx);
  }
  if (ctx.cfg.overlap) return make_overlap_schedule(ctx);
  if (ctx.cfg.transport == Transport::mpi) return std::make_unique<Staged>(ctx);
  return std::make_unique<Nccl>(ctx);
}

}  // namespace scalebench::row1d_gpu
