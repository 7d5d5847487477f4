// --overlap with --distribution shared: one repeat as a pipeline in which every rank feeds its
// own GPU over its own link from the node's shared windows (OverlapPlan's cut, in gpu.hpp).
//
// Phase 1, the head rows in k-panels: each panel's rows of B are cut over the node's ranks (every
// node's windows hold B); every rank copies its piece and its head's panel of A in, the
// transport all-gathers the pieces among the node's ranks, and the
// head's panel is multiplied as soon as it is whole. Phase 2, the rest of the rows in blocks:
// each rank copies its own blocks of A in (in stream) and of C out (out stream) while it
// multiplies; nothing travels between GPUs.
#include <fmt/format.h>

#include "gemm/algorithms/row1d_gpu/pipeline.hpp"
#include "gemm/algorithms/row1d_gpu/schedule.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"

namespace scalebench::row1d_gpu {
namespace {

class SharedOverlap final : public Schedule {
 public:
  explicit SharedOverlap(const Context& ctx)
      : Schedule(ctx),
        plan_(make_overlap_plan(ctx.cfg.shape, ctx.rows)),
        group_(b_slice_group(ctx)),
        in_(),
        out_(),
        net_(OwnedStream::Priority::high) {}  // the transport's kernels must not queue behind the multiply's

  DeviceStream transport_stream() const override { return net_.get(); }
  int transport_ctas() const override { return kOverlapTransportCtas; }

  void multiply(const HostMatrices& host, PhaseRecorder& rec, const std::function<void()>& after_compute) override {
    if (ctx_.cfg.precision == Precision::bf16) {
      throw UsageError("--overlap supports fp64, fp32 and tf32 (bf16 inputs are converted on the device)");
    }
    if (group_.size() > 1 && transport_ == nullptr) {
      throw Error(ExitCode::internal, "--overlap over several ranks needs the NCCL transport");
    }
    Pipeline pipe(ctx_.gpu, {ctx_.gpu.stream(), in_.get(), out_.get(), net_.get()});
    const Side side{static_cast<const char*>(host.a_i), static_cast<const char*>(host.b), static_cast<char*>(host.c_i)};
    for (int p = 0; p < plan_.panels(); ++p) panel(pipe, side, p);
    const DeviceEvent& head_done = pipe.record(pipe.streams().compute);
    row_blocks(pipe, side, head_done);
    pipe.finish({phase::h2d, phase::allgather}, {phase::d2h}, rec, ctx_.comm.rank(), repeats_++);
    after_compute();
  }

 private:
  struct Side {
    const char* a;  // this rank's rows of A
    const char* b;
    char* c;  // this rank's rows of C
  };
  std::int64_t head() const { return plan_.head[static_cast<std::size_t>(ctx_.comm.rank())]; }

  // Panel p: this rank's piece of B's panel and its head's panel of A in, the pieces
  // all-gathered, the head's panel multiplied once whole.
  void panel(Pipeline& pipe, const Side& side, int p) {
    const auto u = Pipeline::u;
    const std::size_t e = pipe.in_bytes();
    const std::int64_t n = pipe.n(), k = pipe.k();
    const std::int64_t col = plan_.panel_first[u(p)], w = plan_.panel_first[u(p) + 1] - col;
    const RowPartition pieces(w, group_.size());
    const Block mine = pieces.block(group_.rank());
    const DeviceStream in = pipe.streams().in, net = pipe.streams().net;
    pipe.span(in, "in", fmt::format("B piece+A panel {}", p), phase::h2d, [&] {
      const std::int64_t first = col + mine.offset;
      if (mine.count > 0) {
        copy_async(pipe.b_at(first), side.b + u(first * n) * e, u(mine.count * n) * e, CopyKind::host_to_device, in);
      }
      if (head() > 0) {
        copy_strided_async({pipe.a_at(0, col), u(k) * e, side.a + u(col) * e, u(k) * e, u(w) * e, u(head())},
                           CopyKind::host_to_device, in);
      }
    });
    const DeviceEvent* landed = &pipe.record(in);
    if (group_.size() > 1) {
      landed->make_wait(net);
      pipe.span(net, "nccl", fmt::format("allgather B panel {}", p), phase::allgather, [&] {
        transport_->all_gather(pipe.b_view(col, w * n), pieces.counts_times(n), pieces.offsets_times(n), group_);
      });
      landed = &pipe.record(net);
    }
    landed->make_wait(pipe.streams().compute);
    if (head() > 0) pipe.multiply(fmt::format("head panel {}", p), 0, head(), col, w, p > 0);
  }

  // Phase 2: this rank's blocks, in over its link, multiplied, out over its link.
  void row_blocks(Pipeline& pipe, const Side& side, const DeviceEvent& head_done) {
    const auto u = Pipeline::u;
    const std::size_t e = pipe.in_bytes(), eo = pipe.out_bytes();
    const std::int64_t n = pipe.n(), k = pipe.k();
    const std::vector<Block>& blocks = plan_.blocks[u(ctx_.comm.rank())];
    const DeviceStream in = pipe.streams().in, out = pipe.streams().out;
    std::vector<const DeviceEvent*> a_in(blocks.size(), nullptr);
    for (std::size_t j = 0; j < blocks.size(); ++j) {
      const Block b = blocks[j];
      if (b.count == 0) continue;
      pipe.span(in, "in", fmt::format("A block {}", j), phase::h2d, [&] {
        copy_async(pipe.a_at(b.offset, 0), side.a + u(b.offset * k) * e, u(b.count * k) * e, CopyKind::host_to_device,
                   in);
      });
      a_in[j] = &pipe.record(in);
    }
    const auto down = [&](std::string what, Block b, const DeviceEvent& ready) {
      ready.make_wait(out);
      pipe.span(out, "out", std::move(what), phase::d2h, [&] {
        copy_async(side.c + u(b.offset * n) * eo, pipe.c_at(b.offset), u(b.count * n) * eo, CopyKind::device_to_host,
                   out);
      });
    };
    if (head() > 0) down("C head", Block{0, head()}, head_done);
    for (std::size_t j = 0; j < blocks.size(); ++j) {
      const Block b = blocks[j];
      if (b.count == 0) continue;
      a_in[j]->make_wait(pipe.streams().compute);
      pipe.multiply(fmt::format("block {}", j), b.offset, b.count, 0, k, false);
      down(fmt::format("C block {}", j), b, pipe.record(pipe.streams().compute));
    }
  }

  const OverlapPlan plan_;
  const Communicator& group_;  // the ranks B's pieces are all-gathered among (b_slice_group)
  OwnedStream in_, out_, net_;
  int repeats_ = 0;
};

}  // namespace

std::unique_ptr<Schedule> make_shared_overlap_schedule(const Context& ctx) {
  return std::make_unique<SharedOverlap>(ctx);
}

}  // namespace scalebench::row1d_gpu
