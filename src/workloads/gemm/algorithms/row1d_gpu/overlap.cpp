// --overlap (replicated host matrices): one repeat of the multiply as a pipeline (OverlapPlan, in
// scalebench/gpu/gpu.hpp), so that transfers run while the GPUs multiply. Four streams per rank
// (Pipeline): compute, copies in and copies out (rank 0's host link, both directions at once)
// and the transport's.
//
// Phase 1: rank 0 copies B and the heads' A in k-panels; each panel of B is broadcast, each
// head's panel of A sent to its rank (packed: head × width, contiguous, in a panel buffer) and
// unpacked into place; every GPU multiplies a panel as it lands. Phase 2: the rest in row
// blocks, round j = every rank's block j: A's blocks travel two rounds ahead of the multiply,
// each C block is gathered to rank 0 as soon as it is computed, and rank 0 copies C out as its
// pieces are ready.
//
// Every rank enqueues the same transport calls in the same order (they follow from the plan
// alone): the single transport stream never holds an A block behind a C block that waits for
// the multiply.
#include <fmt/format.h>

#include "gemm/algorithms/row1d_gpu/pipeline.hpp"
#include "gemm/algorithms/row1d_gpu/schedule.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"

namespace scalebench::row1d_gpu {
namespace {

// How many rounds A's row blocks travel ahead of the multiply.
constexpr int kLookahead = 2;

class Overlap;

// The state of one repeat: the pipeline and the events the steps wait on.
class Repeat {
 public:
  Repeat(Overlap& o, const HostMatrices& host);
  void head_panels();
  void row_blocks();
  void c_out();
  Pipeline& pipe() { return pipe_; }

 private:
  const Overlap& o_;
  Pipeline pipe_;
  const char* a_host_;
  const char* b_host_;
  char* c_host_;
  const DeviceEvent* head_done_ = nullptr;
  const DeviceEvent* heads_gathered_ = nullptr;
  std::vector<std::vector<const DeviceEvent*>> block_in_;  // rank 0: [rank][round] A block copied in
  std::vector<const DeviceEvent*> a_arrived_, c_done_, c_sent_;

  void panel(int p);
  void panel_in(int p, std::int64_t col, std::int64_t w);
  const DeviceEvent* panel_across(int p, std::int64_t col, std::int64_t w, const DeviceEvent* landed);
  void blocks_in();
  void send_a(int j);
  template <class RowsOf>
  const DeviceEvent* gather(const std::string& what, RowsOf&& rows_of, const DeviceEvent* ready);
};

class Overlap final : public Schedule {
 public:
  explicit Overlap(const Context& ctx)
      : Schedule(ctx),
        plan_(make_overlap_plan(ctx.cfg.shape, ctx.rows)),
        in_(),
        out_(),
        net_(OwnedStream::Priority::high) {}  // the transport's kernels must not queue behind the multiply's

  std::int64_t rows_held() const override {
    return ctx_.cfg.transport == Transport::nccl && root() ? ctx_.cfg.shape.m : mine_.count;
  }
  std::int64_t own_inputs() const override { return plan_.pack_elements(me(), ctx_.cfg.shape.k); }
  DeviceStream transport_stream() const override { return net_.get(); }
  int transport_ctas() const override { return kOverlapTransportCtas; }

  void prepare(BufferTransport* transport) override {
    Schedule::prepare(transport);
    const std::size_t e = device_input_bytes(ctx_.cfg.precision);
    agree(ctx_.comm, [&] { pack_ = DeviceArray(static_cast<std::size_t>(own_inputs()) * e); });
  }

  void multiply(const HostMatrices& host, PhaseRecorder& rec, const std::function<void()>& after_compute) override {
    if (ctx_.cfg.precision == Precision::bf16) {
      throw UsageError("--overlap supports fp64, fp32 and tf32 (bf16 inputs are converted on the device)");
    }
    if (ranks() > 1 && transport_ == nullptr) {
      throw Error(ExitCode::internal, "--overlap over several ranks needs the NCCL transport");
    }
    Repeat r(*this, host);
    r.head_panels();
    r.row_blocks();
    r.c_out();
    r.pipe().finish({phase::h2d, phase::broadcast, phase::scatter}, {phase::gather, phase::d2h}, rec, me(), repeats_++);
    after_compute();
  }

  // What Repeat reads.
  const OverlapPlan& plan() const { return plan_; }
  int ranks() const { return ctx_.comm.size(); }
  int me() const { return ctx_.comm.rank(); }
  bool root() const { return ctx_.comm.is_root(); }
  const Communicator& comm() const { return ctx_.comm; }
  const RowPartition& rows() const { return ctx_.rows; }
  GpuGemm& gpu() const { return ctx_.gpu; }
  BufferTransport& transport() const { return *transport_; }
  Pipeline::Streams streams() const { return {ctx_.gpu.stream(), in_.get(), out_.get(), net_.get()}; }
  std::int64_t head(int r) const { return plan_.head[static_cast<std::size_t>(r)]; }
  Block block(int r, int j) const {
    const auto& v = plan_.blocks[static_cast<std::size_t>(r)];
    return j < static_cast<int>(v.size()) ? v[static_cast<std::size_t>(j)] : Block{0, 0};
  }
  // Rank 0 holds every row of A and C in global order; the others hold their own rows from 0.
  std::int64_t base(int r) const { return root() ? ctx_.rows.block(r).offset : 0; }
  // Panel p of rank r's head in the panel buffer, in input elements: on rank 0 all the other
  // ranks' heads, panel by panel; on rank r its own head, panel by panel.
  std::int64_t pack_offset(int p, int r) const {
    const std::int64_t col = plan_.panel_first[static_cast<std::size_t>(p)];
    const std::int64_t w = plan_.panel_first[static_cast<std::size_t>(p) + 1] - col;
    if (!root()) return head(me()) * col;
    std::int64_t others = 0;
    for (int q = 1; q < ranks(); ++q) others += head(q);
    std::int64_t at = others * col;
    for (int q = 1; q < r; ++q) at += head(q) * w;
    return at;
  }
  BufferView pack_view(std::int64_t offset, std::int64_t elements) const {
    const ElementType t = ctx_.gpu.device_views().a.type;
    return {static_cast<char*>(pack_.data()) + static_cast<std::size_t>(offset) * element_bytes(t), elements, t,
            MemorySpace::device};
  }

 private:
  const OverlapPlan plan_;
  OwnedStream in_, out_, net_;
  DeviceArray pack_;  // head panels of A in transit
  int repeats_ = 0;
};

Repeat::Repeat(Overlap& o, const HostMatrices& host)
    : o_(o),
      pipe_(o.gpu(), o.streams()),
      a_host_(static_cast<const char*>(host.a_full)),
      b_host_(static_cast<const char*>(host.b)),
      c_host_(static_cast<char*>(host.c_full)) {}

void Repeat::head_panels() {
  for (int p = 0; p < o_.plan().panels(); ++p) panel(p);
  head_done_ = &pipe_.record(pipe_.streams().compute);
}

// Panel p: in on rank 0, across to the others, multiplied as soon as it is here.
void Repeat::panel(int p) {
  const auto u = Pipeline::u;
  const std::int64_t col = o_.plan().panel_first[u(p)], w = o_.plan().panel_first[u(p) + 1] - col;
  const DeviceEvent* landed = nullptr;
  if (o_.root()) {
    panel_in(p, col, w);
    landed = &pipe_.record(pipe_.streams().in);
  }
  if (o_.ranks() > 1) {
    const DeviceEvent* across = panel_across(p, col, w, landed);
    if (!o_.root()) landed = across;
  }
  landed->make_wait(pipe_.streams().compute);
  pipe_.multiply(fmt::format("head panel {}", p), o_.base(o_.me()), o_.head(o_.me()), col, w, p > 0);
}

// Rank 0: B's panel and every head's panel of A (its own into place, the others' packed).
void Repeat::panel_in(int p, std::int64_t col, std::int64_t w) {
  const auto u = Pipeline::u;
  const std::size_t e = pipe_.in_bytes();
  const std::int64_t n = pipe_.n(), k = pipe_.k();
  const DeviceStream in = pipe_.streams().in;
  pipe_.span(in, "in", fmt::format("B+A panel {}", p), phase::h2d, [&] {
    copy_async(pipe_.b_at(col), b_host_ + u(col * n) * e, u(w * n) * e, CopyKind::host_to_device, in);
    if (o_.head(0) > 0) {
      copy_strided_async({pipe_.a_at(0, col), u(k) * e, a_host_ + u(col) * e, u(k) * e, u(w) * e, u(o_.head(0))},
                         CopyKind::host_to_device, in);
    }
    for (int r = 1; r < o_.ranks(); ++r) {
      const std::int64_t row = o_.rows().block(r).offset;
      copy_strided_async({o_.pack_view(o_.pack_offset(p, r), 0).data, u(w) * e, a_host_ + u(row * k + col) * e,
                          u(k) * e, u(w) * e, u(o_.head(r))},
                         CopyKind::host_to_device, in);
    }
  });
}

// B's panel broadcast, the heads' panels sent from the panel buffer and unpacked into place in A
// (the multiply and the verification read A whole). Returns when the panel is whole on this rank
// (the others). `landed`: rank 0's panel copied in.
const DeviceEvent* Repeat::panel_across(int p, std::int64_t col, std::int64_t w, const DeviceEvent* landed) {
  const auto u = Pipeline::u;
  const std::size_t e = pipe_.in_bytes();
  const DeviceStream net = pipe_.streams().net;
  const bool root = o_.root();
  if (root) landed->make_wait(net);
  pipe_.span(net, "nccl", fmt::format("bcast B panel {}", p), root ? phase::broadcast : "",
             [&] { o_.transport().broadcast(pipe_.b_view(col, w * pipe_.n()), 0, o_.comm()); });
  std::vector<std::int64_t> counts(u(o_.ranks()), 0), displs(u(o_.ranks()), 0);
  for (int r = 1; r < o_.ranks(); ++r) {
    counts[u(r)] = o_.head(r) * w;
    displs[u(r)] = o_.pack_offset(p, r);
  }
  const BufferView mine = o_.pack_view(o_.pack_offset(p, o_.me()), root ? 0 : o_.head(o_.me()) * w);
  pipe_.span(net, "nccl", fmt::format("A panel {}", p), root ? phase::scatter : "",
             [&] { o_.transport().scatter(o_.pack_view(0, 0), counts, displs, mine, 0, o_.comm()); });
  if (root) return nullptr;
  pipe_.span(net, "nccl", fmt::format("unpack A panel {}", p), "", [&] {
    copy_strided_async({pipe_.a_at(0, col), u(pipe_.k()) * e, mine.data, u(w) * e, u(w) * e, u(o_.head(o_.me()))},
                       CopyKind::device_to_device, net);
  });
  return &pipe_.record(net);
}

// Rank 0's link carries every block of A in, in round order.
void Repeat::blocks_in() {
  const auto u = Pipeline::u;
  const int ranks = o_.ranks(), rounds = o_.plan().rounds();
  block_in_.assign(u(ranks), std::vector<const DeviceEvent*>(u(rounds), nullptr));
  if (!o_.root()) return;
  const std::size_t e = pipe_.in_bytes();
  const std::int64_t k = pipe_.k();
  const DeviceStream in = pipe_.streams().in;
  for (int j = 0; j < rounds; ++j) {
    for (int r = 0; r < ranks; ++r) {
      const Block b = o_.block(r, j);
      if (b.count == 0) continue;
      const std::int64_t row = o_.rows().block(r).offset + b.offset;
      pipe_.span(in, "in", fmt::format("A block {} of rank {}", j, r), phase::h2d, [&] {
        copy_async(pipe_.a_at(row, 0), a_host_ + u(row * k) * e, u(b.count * k) * e, CopyKind::host_to_device, in);
      });
      block_in_[u(r)][u(j)] = &pipe_.record(in);
    }
  }
}

// Round j's blocks of A from rank 0 to their ranks.
void Repeat::send_a(int j) {
  const auto u = Pipeline::u;
  const int ranks = o_.ranks();
  if (ranks == 1 || j >= o_.plan().rounds()) return;
  const DeviceStream net = pipe_.streams().net;
  const std::int64_t k = pipe_.k();
  std::vector<std::int64_t> counts(u(ranks), 0), displs(u(ranks), 0);
  for (int r = 1; r < ranks; ++r) {
    const Block b = o_.block(r, j);
    counts[u(r)] = b.count * k;
    displs[u(r)] = (o_.rows().block(r).offset + b.offset) * k;
    if (o_.root() && block_in_[u(r)][u(j)] != nullptr) block_in_[u(r)][u(j)]->make_wait(net);
  }
  const Block mine = o_.block(o_.me(), j);
  const BufferView recv = o_.root() ? pipe_.a_view(0, 0) : pipe_.a_view(mine.offset, mine.count * k);
  pipe_.span(net, "nccl", fmt::format("A block {}", j), o_.root() ? phase::scatter : "",
             [&] { o_.transport().scatter(pipe_.a_view(0, 0), counts, displs, recv, 0, o_.comm()); });
  a_arrived_[u(j)] = &pipe_.record(net);
}

// What each rank sends to rank 0 now: rows_of(r) -> {first local row, count}.
template <class RowsOf>
const DeviceEvent* Repeat::gather(const std::string& what, RowsOf&& rows_of, const DeviceEvent* ready) {
  const auto u = Pipeline::u;
  const int ranks = o_.ranks();
  const DeviceStream net = pipe_.streams().net;
  const std::int64_t n = pipe_.n();
  if (!o_.root() && ready != nullptr) ready->make_wait(net);
  std::vector<std::int64_t> counts(u(ranks), 0), displs(u(ranks), 0);
  for (int r = 1; r < ranks; ++r) {
    const Block b = rows_of(r);
    counts[u(r)] = b.count * n;
    displs[u(r)] = (o_.rows().block(r).offset + b.offset) * n;
  }
  const Block mine = rows_of(o_.me());
  const BufferView send = o_.root() ? pipe_.c_view(0, 0) : pipe_.c_view(mine.offset, mine.count * n);
  pipe_.span(net, "nccl", what, o_.root() ? "" : phase::gather,
             [&] { o_.transport().gather(send, pipe_.c_view(0, 0), counts, displs, 0, o_.comm()); });
  return &pipe_.record(net);
}

// Phase 2: the rest in row blocks, A two rounds ahead, each C block gathered once computed.
void Repeat::row_blocks() {
  const auto u = Pipeline::u;
  const int ranks = o_.ranks(), rounds = o_.plan().rounds(), me = o_.me();
  blocks_in();
  a_arrived_.assign(u(rounds), nullptr);
  c_done_.assign(u(rounds), nullptr);
  c_sent_.assign(u(rounds), nullptr);
  for (int j = 0; j < kLookahead; ++j) send_a(j);
  if (ranks > 1) {
    heads_gathered_ = gather(
        "C heads",
        [&](int r) {
          return Block{0, o_.head(r)};
        },
        head_done_);
  }
  for (int j = 0; j < rounds; ++j) {
    const Block b = o_.block(me, j);
    if (b.count > 0) {
      (o_.root() ? block_in_[0][u(j)] : a_arrived_[u(j)])->make_wait(pipe_.streams().compute);
      pipe_.multiply(fmt::format("block {}", j), o_.base(me) + b.offset, b.count, 0, pipe_.k(), false);
      c_done_[u(j)] = &pipe_.record(pipe_.streams().compute);
    }
    send_a(j + kLookahead);
    if (ranks > 1) {
      c_sent_[u(j)] = gather(
          fmt::format("C block {}", j), [&](int r) { return o_.block(r, j); }, c_done_[u(j)]);
    }
  }
}

// Rank 0's link carries C out as its pieces are ready: its own rows, then what arrived.
void Repeat::c_out() {
  if (!o_.root()) return;
  const auto u = Pipeline::u;
  const std::size_t eo = pipe_.out_bytes();
  const std::int64_t n = pipe_.n();
  const DeviceStream out = pipe_.streams().out;
  const auto down = [&](std::int64_t row, std::int64_t count, const DeviceEvent& ready) {
    if (count == 0) return;
    ready.make_wait(out);
    pipe_.span(out, "out", fmt::format("C rows {}+{}", row, count), phase::d2h, [&] {
      copy_async(c_host_ + u(row * n) * eo, pipe_.c_at(row), u(count * n) * eo, CopyKind::device_to_host, out);
    });
  };
  down(0, o_.head(0), *head_done_);
  for (int r = 1; r < o_.ranks(); ++r) down(o_.rows().block(r).offset, o_.head(r), *heads_gathered_);
  for (int j = 0; j < o_.plan().rounds(); ++j) {
    for (int r = 0; r < o_.ranks(); ++r) {
      const Block b = o_.block(r, j);
      if (b.count > 0) down(o_.rows().block(r).offset + b.offset, b.count, r == 0 ? *c_done_[u(j)] : *c_sent_[u(j)]);
    }
  }
}

}  // namespace

std::unique_ptr<Schedule> make_overlap_schedule(const Context& ctx) { return std::make_unique<Overlap>(ctx); }

}  // namespace scalebench::row1d_gpu
