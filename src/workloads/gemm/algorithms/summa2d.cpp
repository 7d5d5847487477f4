// Summa2D: rank 0 generates A and B and sends every rank of the pr × pc grid its blocks A_ij and
// B_ij ("scatter"); for each k-panel the owner column sends its part of A along its process
// row and the owner row its part of B along its process column ("broadcast"), and every rank
// adds A_panel·B_panel to C_ij ("compute"); the blocks of C go back to rank 0 ("gather").
// A_ij is held panel after panel (each panel's m_i × w columns contiguous), so the owners
// send A's panels, like B's rows, in place.
// How the panels travel is the panel schedule (summa_panels.hpp): with --lookahead 0 one
// blocking broadcast per panel; with lookahead D the next D panels are on their way while one
// multiplies — on the host sent by their owner to the rest of its row and column, directly or
// along a ring, non-blocking (a rank waits only for ranks of its own row and column, not for a
// whole row at every panel), on the devices broadcast on a stream of their own.
// Blocks move through a BufferTransport: host MPI, or with --transport nccl NCCL between the
// ranks' GPUs: then A_ij, B_ij and C_ij stay on the device, the panels go device to device, rank
// 0 copies each block up ("h2d") before sending it and down ("d2h") after receiving it: strided
// copies straight between the page-locked A, B, C and the device, packed on the host only where
// the device's format differs (bf16 inputs).
// Verification: Freivalds' check by rows of the gathered C on rank 0 (the check and tolerance of
// verify.hpp), and C_ij·x_j of every block compared bit for bit with the same sum over the
// gathered C.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "gemm/algorithms/algorithms.hpp"
#include "gemm/algorithms/summa_layout.hpp"
#include "gemm/algorithms/summa_panels.hpp"
#include "gemm/algorithms/timed_transport.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {
namespace {

// Rows × cols of a row-major matrix with leading dimension `ld`, to or from a contiguous block.
template <class T>
void pack(const T* from, std::int64_t ld, std::int64_t rows, std::int64_t cols, T* to) {
  for (std::int64_t r = 0; r < rows; ++r) std::memcpy(to + r * cols, from + r * ld, cols * sizeof(T));
}
template <class T>
void unpack(const T* from, std::int64_t rows, std::int64_t cols, T* to, std::int64_t ld) {
  for (std::int64_t r = 0; r < rows; ++r) std::memcpy(to + r * ld, from + r * cols, cols * sizeof(T));
}

// out[r] = Σ_c block[r, c]·x[c] in column order: the same sum, bit for bit, wherever the block is.
template <class T>
void block_times_x(const T* c, std::int64_t ld, std::int64_t rows, std::int64_t cols, const double* x,
                   std::vector<double>& out) {
  out.assign(static_cast<std::size_t>(rows), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (std::int64_t col = 0; col < cols; ++col) s += static_cast<double>(c[r * ld + col]) * x[col];
    out[static_cast<std::size_t>(r)] = s;
  }
}

// This rank's blocks where the transport moves them: host vectors (transport mpi) or device
// memory (transport nccl), with the element types they hold there.
struct BlockPlaces {
  void* a = nullptr;        // A_ij, panel after panel
  void* b = nullptr;        // B_ij
  void* c = nullptr;        // C_ij
  void* a_panel = nullptr;  // a panel of A received
  void* b_panel = nullptr;  // a panel of B received
  void* staging = nullptr;  // rank 0: a block on its way
  ElementType in = ElementType::f64, out = ElementType::f64;
  MemorySpace space = MemorySpace::host;

  static void* at(void* base, std::int64_t elements, ElementType t) {
    return static_cast<char*>(base) + static_cast<std::size_t>(elements) * element_bytes(t);
  }
  BufferView inputs(void* base, std::int64_t count) const { return {base, count, in, space}; }
  BufferView outputs(void* base, std::int64_t count) const { return {base, count, out, space}; }
};

template <class T>
class Summa2D final : public DistributedGemm {
 public:
  Summa2D(const GemmConfig& cfg, const GemmTestHooks& hooks, const Communicator& comm, LocalGemm& local, GpuGemm* gpu)
      : cfg_(cfg),
        hooks_(hooks),
        comm_(comm),
        local_(local),
        gpu_(gpu),
        device_(gpu != nullptr && cfg.transport == Transport::nccl),
        direct_(device_ && cfg.precision != Precision::bf16),
        layout_(cfg.shape, resolve_grid(cfg, comm.size()), cfg.panel_width),
        i_(comm.rank() / layout_.grid.cols),
        j_(comm.rank() % layout_.grid.cols),
        row_comm_(comm.split(i_, j_)),
        col_comm_(comm.split(j_, i_)) {}

  GemmAlgorithm algorithm() const override { return GemmAlgorithm::summa2d; }

  void prepare(PhaseRecorder& setup) override {
    const Shape me = shape_of(comm_.rank());
    const std::int64_t w = layout_.widest_panel();
    {
      ScopedPhase t(setup, phase::generate);
      if (comm_.is_root()) generate_inputs(cfg_, a_full_, b_full_, c_full_);
      c_.assign(static_cast<std::size_t>(me.mi * me.nj), T(0));
      if (!device_) {
        a_.assign(static_cast<std::size_t>(me.mi * me.ka), T(0));
        b_.assign(static_cast<std::size_t>(me.kb * me.nj), T(0));
        a_panel_.assign(static_cast<std::size_t>(me.mi * w), T(0));
        b_panel_.assign(static_cast<std::size_t>(w * me.nj), T(0));
      }
      if (comm_.is_root() && !direct_) staging_.assign(static_cast<std::size_t>(largest_block()), T(0));
    }
    // The device lookahead's panel buffers beyond the backend's own, in its memory check.
    if (device_ && cfg_.lookahead > 0) gpu_->reserve({0, cfg_.lookahead * (me.mi * w + w * me.nj)});
    agree(comm_, [&] { local_.prepare({me.mi, me.nj, w}, cfg_.precision, setup); });
    if (device_) {
      prepare_device(setup);
    } else {
      transport_ = std::make_unique<TimedTransport>(make_mpi_transport(hooks_.mpi_chunk));
      places_ = {a_.data(),
                 b_.data(),
                 c_.data(),
                 a_panel_.data(),
                 b_panel_.data(),
                 staging_.data(),
                 element_type_of<T>(),
                 element_type_of<T>(),
                 MemorySpace::host};
    }
    make_panels(setup);
  }

  void multiply(PhaseRecorder& rec) override {
    transport_->begin_repeat(rec);
    {
      ScopedPhase t(rec, phase::scatter);
      panels_->settle();  // the last repeat's sends read A_ij and B_ij
      scatter_blocks(rec);
    }
    local_.begin_sum(c_.data());
    sum_panels(rec);
    const Shape me = shape_of(comm_.rank());
    if (!device_) local_.end_sum(c_.data(), rec);  // on the device C stays there until the gather
    if (hooks_.inject_error_rank == comm_.rank() && !c_.empty()) {
      // Test hook: more than the precision's tolerance can hide.
      const std::int64_t at = (me.mi / 2) * me.nj + me.nj / 2;
      const double amount = detectable_corruption(cfg_.shape, cfg_.precision);
      if (device_) {
        corrupt_c(*gpu_, at, amount);
      } else {
        c_[static_cast<std::size_t>(at)] += static_cast<T>(amount);
      }
    }
    {
      ScopedPhase t(rec, phase::gather);
      gather_blocks(rec);
    }
    transport_->end_repeat();
  }

  GemmCheck verify(const std::vector<double>& x) override {
    panels_->settle();
    const auto& s = cfg_.shape;
    const Shape me = shape_of(comm_.rank());
    if (device_) {
      PhaseRecorder untimed;  // the copy belongs to the check, not to a phase
      gpu_->convert_copy(places_.c, c_.data(), me.mi * me.nj, CopyKind::device_to_host, untimed);
    }
    // Every block's C_ij·x_j, compared bit for bit with the same sums over the gathered C.
    std::vector<double> mine;
    block_times_x(c_.data(), me.nj, me.mi, me.nj, x.data() + me.col0, mine);
    std::vector<std::int64_t> counts, displs;
    std::int64_t total = 0;
    for (int r = 0; r < comm_.size(); ++r) {
      counts.push_back(shape_of(r).mi);
      displs.push_back(total);
      total += counts.back();
    }
    std::vector<double> all(comm_.is_root() ? static_cast<std::size_t>(total) : 0);
    gatherv(mine.data(), me.mi, all.data(), counts, displs, 0, comm_);
    int gather_ok = 1;
    std::int64_t verdict[3] = {0, -1, -1};  // rows failed, first failed row, its rank
    double worst = 0;
    if (comm_.is_root()) {
      for (int r = 0; r < comm_.size() && gather_ok; ++r) {
        const Shape o = shape_of(r);
        std::vector<double> expect;
        block_times_x(c_full_.data() + o.row0 * s.n + o.col0, s.n, o.mi, o.nj, x.data() + o.col0, expect);
        gather_ok = std::memcmp(expect.data(), all.data() + displs[r], expect.size() * sizeof(double)) == 0 ? 1 : 0;
      }
      if (bx_.empty()) b_times_x(b_full_.data(), s.k, s.n, x, bx_, abs_bx_, host_threads());
      const RowCheck rc = freivalds_rows(a_full_.data(), c_full_.data(), s.m, s.n, s.k, x, bx_, abs_bx_,
                                         unit_roundoff(cfg_.precision), nullptr, host_threads());
      verdict[0] = rc.rows_failed;
      worst = std::isfinite(rc.worst_ratio) ? rc.worst_ratio : 1e300;
      if (rc.rows_failed > 0) {
        verdict[1] = rc.first_failed_row;
        verdict[2] = owner_of_error(rc.first_failed_row, x);
      }
    }
    SCALEBENCH_MPI(MPI_Bcast(&gather_ok, 1, MPI_INT, 0, comm_.get()));
    SCALEBENCH_MPI(MPI_Bcast(verdict, 3, MPI_INT64_T, 0, comm_.get()));
    SCALEBENCH_MPI(MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, comm_.get()));
    GemmCheck v;
    v.gather_ok = gather_ok == 1;
    v.rows_failed = verdict[0];
    v.worst_ratio = worst;
    v.first_failed_row = verdict[1];
    v.first_failed_rank = static_cast<int>(verdict[2]);
    v.ok = v.rows_failed == 0 && v.gather_ok;
    return v;
  }

  HostMatrices full() const override { return {a_full_.data(), b_full_.data(), c_full_.data()}; }

  // The bare library call on the panels this rank multiplies (the same shapes, summed).
  void time_peers(const RepeatLoop& loop, PhaseRecorder& peer) override {
    if (!cfg_.peer || cfg_.backend != GemmBackendKind::openblas) return;
    const Shape me = shape_of(comm_.rank());
    std::vector<T> c_peer(c_.size());
    for (int rep = 0; rep < loop.total(); ++rep) {
      loop.begin(rep, peer);
      double seconds = 0;
      for (const auto& p : layout_.panels) {
        seconds += time_bare_cblas({me.mi, me.nj, p.width}, cfg_.precision, a_panel_.data(), b_panel_.data(),
                                   c_peer.data());
      }
      peer.add(phase::bare_compute, seconds);
      peer.next_repeat();
    }
  }

  std::string peer_call_name() const override {
    return fmt::format("{} per panel (summed)", cfg_.precision == Precision::fp64 ? "cblas_dgemm" : "cblas_sgemm");
  }

  nlohmann::json rank_info(PlacementReport& placement) const override {
    const Shape me = shape_of(comm_.rank());
    if (!a_.empty()) placement.record_buffer("A_ij", a_.data(), a_.size() * sizeof(T));
    if (!b_.empty()) placement.record_buffer("B_ij", b_.data(), b_.size() * sizeof(T));
    if (!c_.empty()) placement.record_buffer("C_ij", c_.data(), c_.size() * sizeof(T));
    nlohmann::json info = {{"rows", me.mi},         {"row_offset", me.row0}, {"cols", me.nj},
                           {"col_offset", me.col0}, {"grid_row", i_},        {"grid_col", j_}};
    if (gpu_ != nullptr) info["gpu"] = gpu_->setup().placement["gpu"];
    return info;
  }

  void add_to_record(nlohmann::json& record, const std::vector<std::pair<std::string, PhaseStats>>&,
                     const std::vector<std::pair<std::string, PhaseStats>>&) override {
    const nlohmann::json communication = transport_->to_json(comm_);  // collective
    const nlohmann::json panels_json = panel_schedule_json();         // collective
    if (!comm_.is_root()) return;
    const auto& s = cfg_.shape;
    std::vector<std::int64_t> scatter, bcast, gather, rows, cols;
    for (int r = 0; r < comm_.size(); ++r) {
      const Shape o = shape_of(r);
      rows.push_back(o.mi);
      cols.push_back(o.nj);
      scatter.push_back(r == 0 ? 0 : o.mi * o.ka + o.kb * o.nj);
      bcast.push_back(o.mi * (s.k - o.ka) + (s.k - o.kb) * o.nj);  // the panels it does not own
      gather.push_back(r == 0 ? 0 : o.mi * o.nj);
    }
    // Bytes as they move: device formats with --transport nccl (bf16 inputs are 2 bytes there).
    const std::size_t ein = element_bytes(places_.in), eout = element_bytes(places_.out);
    record["distribution"] = {{"algorithm", "summa2d"},
                              {"grid", {layout_.grid.rows, layout_.grid.cols}},
                              {"transport", transport_->name()},
                              {"panel_width", cfg_.panel_width},
                              {"panels", layout_.panels.size()},
                              {"rows_per_grid_row", layout_.rows.counts()},
                              {"cols_per_grid_col", layout_.cols.counts()},
                              {"bytes_per_rank",
                               {{phase::scatter, bytes_per_rank_json(scatter, ein)},
                                {phase::broadcast, bytes_per_rank_json(bcast, ein)},
                                {phase::gather, bytes_per_rank_json(gather, eout)}}},
                              {"communication", communication},
                              {"panel_schedule", panels_json}};
    if (device_) {
      record["distribution"]["root_copies"] = {{"direct", direct_},
                                               {"page_locked", pins_.size() == 3},
                                               {"note", pin_note_.empty() ? nlohmann::json(nullptr)
                                                                          : nlohmann::json(pin_note_)}};
    }
    record["partition"] = {{"rows_per_rank", rows}, {"cols_per_rank", cols}};
    record["network"] = nullptr;
  }

  std::string table_lines(const nlohmann::json& record) const override {
    const auto& d = record["distribution"];
    return fmt::format("summa2d: grid {}, {} k-panels of at most {} columns, transport {}\n{}{}",
                       to_string(layout_.grid), d["panels"].get<std::size_t>(), cfg_.panel_width, transport_->name(),
                       communication_line(d["communication"]), panel_schedule_line(d["panel_schedule"]));
  }

 private:
  struct Shape {
    std::int64_t mi, nj, ka, kb;  // rows and columns of C_ij; columns of A_ij; rows of B_ij
    std::int64_t row0, col0, ka0, kb0;
  };
  Shape shape_of(int rank) const {
    const int i = rank / layout_.grid.cols, j = rank % layout_.grid.cols;
    const Block r = layout_.rows.block(i), c = layout_.cols.block(j);
    const Block ka = layout_.k_of_a.block(j), kb = layout_.k_of_b.block(i);
    return {r.count, c.count, ka.count, kb.count, r.offset, c.offset, ka.offset, kb.offset};
  }
  // Elements of the largest block any rank holds (rank 0's staging).
  std::int64_t largest_block() const {
    std::int64_t most = 0;
    for (int r = 0; r < comm_.size(); ++r) {
      const Shape s = shape_of(r);
      most = std::max({most, s.mi * s.ka, s.kb * s.nj, s.mi * s.nj});
    }
    return most;
  }

  // Every panel in order: its parts arrive (the schedule's "broadcast"), it is multiplied
  // ("compute"); this rank's split of the broadcast phase is kept per repeat.
  void sum_panels(PhaseRecorder& rec) {
    if (rec.repeats() == 0) panel_times_.clear();  // the warm-up's are dropped
    double broadcast_s = 0, compute_s = 0;
    auto timed = [](double& into, auto&& step) {
      const double t0 = wall_seconds();
      step();
      into += wall_seconds() - t0;
    };
    timed(broadcast_s, [&] { panels_->begin_repeat(); });
    for (std::size_t p = 0; p < layout_.panels.size(); ++p) {
      PanelInputs in;
      timed(broadcast_s, [&] { in = panels_->arrive(p, rec); });
      const double t0 = wall_seconds();
      const double driving = multiply_panel(in, layout_.panels[p].width, rec);
      const double seconds = wall_seconds() - t0 - driving;
      compute_s += seconds;
      broadcast_s += driving;
      timed(broadcast_s, [&] { panels_->done(p, seconds, rec); });
    }
    timed(broadcast_s, [&] { panels_->end_repeat(rec); });
    const PanelTimes t = panels_->times();
    panel_times_.add("broadcast", broadcast_s);
    panel_times_.add("compute", compute_s);
    panel_times_.add("wait", t.wait);
    panel_times_.add("transfer", t.transfer);
    panel_times_.add("hidden", t.hidden);
    panel_times_.next_repeat();
  }

  // The panel multiplied; on the host ring in pieces of rows with the ring driven between them.
  // The seconds spent driving it (in the broadcast phase, not the multiply).
  double multiply_panel(const PanelInputs& in, std::int64_t width, PhaseRecorder& rec) {
    if (hooks_.delay_rank == comm_.rank() && hooks_.delay_seconds > 0) {
      // Test hook: a slower multiply on this rank.
      const double t0 = wall_seconds();
      std::this_thread::sleep_for(std::chrono::duration<double>(hooks_.delay_seconds));
      rec.add(phase::compute, wall_seconds() - t0);
    }
    if (device_) {
      add_device_panel(*gpu_, in.a, in.b, width, rec);
      return 0;
    }
    const std::int64_t mi = shape_of(comm_.rank()).mi, step = piece_rows(width);
    if (step >= mi || !panels_->drives_progress() || !local_.adds_panel_rows()) {
      local_.add_panel(in.a, in.b, width, rec);
      return 0;
    }
    double driving = 0;
    for (std::int64_t row = 0; row < mi; row += step) {
      local_.add_panel_rows(static_cast<const T*>(in.a) + row * width, in.b, width, row, std::min(step, mi - row), rec);
      if (row + step < mi) driving += panels_->progress(rec);
    }
    return driving;
  }

  // Rows of C_ij in one piece of a panel's multiply on the host ring: about kPieceFlops of work
  // per BLAS thread (a few milliseconds: a 4 MiB panel part moves in about 1 ms between ranks of
  // a node), never fewer than kPieceRows (a smaller product loses the BLAS kernel's rate).
  std::int64_t piece_rows(std::int64_t width) const {
    constexpr double kPieceFlops = 1.5e8;
    constexpr std::int64_t kPieceRows = 64;
    if (hooks_.piece_rows > 0) return hooks_.piece_rows;
    const std::int64_t nj = shape_of(comm_.rank()).nj;
    if (nj <= 0 || width <= 0) return std::numeric_limits<std::int64_t>::max();
    const double rows = kPieceFlops * std::max(1, cfg_.threads) / (2.0 * static_cast<double>(nj * width));
    return std::max<std::int64_t>(kPieceRows, static_cast<std::int64_t>(rows));
  }

  // The panel schedule: blocking broadcasts (--lookahead 0), the device lookahead (--transport
  // nccl) or the host ring; the ring where every rank's panel parts fit one MPI call, else
  // blocking (said in the record).
  void make_panels(PhaseRecorder& setup) {
    const Shape me = shape_of(comm_.rank());
    const PanelPlaces at{&layout_,        i_,         j_,           me.mi,     me.nj,
                         me.ka0,          me.kb0,     places_.a,    places_.b, places_.a_panel,
                         places_.b_panel, places_.in, places_.space};
    const int depth = cfg_.lookahead;
    if (depth > 0 && device_) {
      ScopedPhase t(setup, phase::device_alloc);
      agree(comm_,
            [&] { panels_ = make_device_panels(at, depth, *transport_, row_comm_, col_comm_, panel_stream_->get()); });
      return;
    }
    if (depth > 0 && comm_.all(host_ring_fits(at, hooks_.mpi_chunk))) {
      panels_ = make_host_ring_panels(at, depth, *transport_, row_comm_, col_comm_);
      return;
    }
    if (depth > 0)
      panels_note_ = "a panel part exceeds one MPI call (--mpi-chunk or 2^31 elements): blocking broadcasts";
    panels_ = make_blocking_panels(at, *transport_, row_comm_, col_comm_);
  }

  // Per repeat, the most any rank spent in the panel schedule and its multiply together (the
  // broadcast and compute phases as one interval). Collective; the result on rank 0.
  std::vector<double> slowest_panels() const {
    const auto& b = panel_times_.samples("broadcast");
    const auto& c = panel_times_.samples("compute");
    const auto reps = comm_.max(static_cast<std::int64_t>(std::min(b.size(), c.size())));
    std::vector<double> mine(static_cast<std::size_t>(reps), 0.0), out(mine.size(), 0.0);
    for (std::size_t r = 0; r < mine.size() && r < b.size() && r < c.size(); ++r) mine[r] = b[r] + c[r];
    if (reps == 0) return {};
    SCALEBENCH_MPI(MPI_Reduce(mine.data(), out.data(), static_cast<int>(reps), MPI_DOUBLE, MPI_MAX, 0, comm_.get()));
    return comm_.is_root() ? out : std::vector<double>{};
  }

  // The record's distribution.panel_schedule: per rank, medians over repeats. Collective.
  nlohmann::json panel_schedule_json() const {
    static const char* const kinds[] = {"broadcast", "compute", "wait", "transfer", "hidden"};
    std::vector<double> mine;
    for (const char* k : kinds) mine.push_back(panel_times_.repeats() > 0 ? median_of(panel_times_.samples(k)) : -1);
    std::vector<double> all(comm_.is_root() ? mine.size() * static_cast<std::size_t>(comm_.size()) : 0);
    SCALEBENCH_MPI(MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                              static_cast<int>(mine.size()), MPI_DOUBLE, 0, comm_.get()));
    const std::vector<double> slowest = slowest_panels();  // collective
    if (!comm_.is_root()) return nullptr;
    nlohmann::json out = {
        {"schedule", panels_->what()},
        {"lookahead", panels_->lookahead()},
        {"what",
         "per rank, medians over repeats: broadcast_s, the time in the panel schedule (the broadcast phase) = "
         "wait_s + transfer_s; wait_s, blocked for a panel no rank had sent to this one yet (or whose buffer a "
         "forward still held) and, once its messages had come, blocked beyond the time their bytes take at the "
         "rank's median rate over its panels (a slow sender holds a message up); transfer_s, the rest; hidden_s, "
         "broadcast time behind the multiply (host: the multiply time while a later panel's receive was under "
         "way, an upper bound; device: the broadcasts' stream time the host did not wait for); "
         "compute_s, the multiply; null where the schedule cannot tell"}};
    if (!panels_note_.empty()) out["note"] = panels_note_;
    if (!slowest.empty()) {
      out["panels_s"] = median_of(slowest);
      out["panels_per_repeat_s"] = slowest;
      out["panels_what"] =
          "the broadcast and compute phases as one interval: per repeat, each rank's broadcast + compute, the "
          "slowest rank's; panels_s, their median (the two phases' medians summed take each phase's slowest rank, "
          "which need not be the same rank)";
    }
    // Rank 0's pieces of a panel's multiply (rows of C_ij each), with the ring driven between them.
    const std::int64_t step = piece_rows(layout_.widest_panel());
    const bool pieces = !device_ && panels_->drives_progress() && local_.adds_panel_rows() && step < shape_of(0).mi;
    out["multiply_piece_rows"] = pieces ? nlohmann::json(step) : nlohmann::json(nullptr);
    for (std::size_t k = 0; k < mine.size(); ++k) {
      nlohmann::json per_rank = nlohmann::json::array();
      for (int r = 0; r < comm_.size(); ++r) {
        const double v = all[static_cast<std::size_t>(r) * mine.size() + k];
        per_rank.push_back(v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v));
      }
      out[std::string(kinds[k]) + "_s"] = per_rank;
    }
    return out;
  }

  // --transport nccl: the NCCL communicators (all ranks, each process row and column) and the
  // device blocks. The backend's own buffers (prepared for m_i × n_j × widest panel) are the
  // panels received and C_ij.
  void prepare_device(PhaseRecorder& setup) {
    {
      ScopedPhase t(setup, phase::nccl_comm);
      // With a lookahead the panels move on a stream of their own (so do the scatter and the
      // gather, whose copies and multiplies are waited for before they are sent).
      if (cfg_.lookahead > 0) panel_stream_.emplace(OwnedStream::Priority::high);
      transport_ = std::make_unique<TimedTransport>(
          cfg_.lookahead > 0 ? make_device_buffer_transport(comm_, panel_stream_->get(), kOverlapTransportCtas)
                             : make_device_buffer_transport(comm_, gpu_->stream()));
      transport_->attach(row_comm_);
      transport_->attach(col_comm_);
    }
    const Shape me = shape_of(comm_.rank());
    const GpuGemm::DeviceViews v = gpu_->device_views();
    const std::size_t ein = element_bytes(v.a.type), eout = element_bytes(v.c.type);
    ScopedPhase t(setup, phase::device_alloc);
    agree(comm_, [&] {
      a_dev_ = DeviceArray(static_cast<std::size_t>(me.mi * me.ka) * ein);
      b_dev_ = DeviceArray(static_cast<std::size_t>(me.kb * me.nj) * ein);
      if (comm_.is_root()) staging_dev_ = DeviceArray(static_cast<std::size_t>(largest_block()) * std::max(ein, eout));
    });
    places_ = {a_dev_.data(),       b_dev_.data(), v.c.data, v.a.data,           v.b.data,
               staging_dev_.data(), v.a.type,      v.c.type, MemorySpace::device};
    if (direct_ && (v.a.type != element_type_of<T>() || v.c.type != element_type_of<T>())) {
      throw Error(ExitCode::internal,
                  "summa2d: the device formats differ from the host's where no conversion was planned");
    }
    if (direct_ && comm_.is_root()) pin_full(setup);
  }

  // Rank 0, direct copies: A, B and C page-locked where they are, so that the blocks go up and
  // come down at the bus's speed. Where the driver refuses, the copies still work (at pageable
  // speed) and the record says so.
  void pin_full(PhaseRecorder& setup) {
    ScopedPhase t(setup, phase::pin_host);
    try {
      for (auto* m : {&a_full_, &b_full_, &c_full_}) pins_.emplace_back(m->data(), m->size() * sizeof(T));
    } catch (const ResourceError& e) {
      pins_.clear();
      pin_note_ = fmt::format("rank 0's A, B and C could not be page-locked ({}): their copies ran at pageable speed",
                              e.what());
    }
  }

  // Rank r's A_ij panel after panel (the panels with columns in its k block), contiguous in `to`.
  void pack_a(const Shape& o, T* to) const {
    for (const auto& p : layout_.panels) {
      if (p.first < o.ka0 || p.first >= o.ka0 + o.ka) continue;
      pack(a_full_.data() + o.row0 * cfg_.shape.k + p.first, cfg_.shape.k, o.mi, p.width,
           to + o.mi * (p.first - o.ka0));
    }
  }

  // Rank 0 packs each rank's A_ij and B_ij (on a device: copies them up) and sends them; the
  // others receive theirs.
  void scatter_blocks(PhaseRecorder& rec) {
    const auto& s = cfg_.shape;
    const Shape me = shape_of(comm_.rank());
    if (!comm_.is_root()) {
      transport_->receive(places_.inputs(places_.a, me.mi * me.ka), 0, comm_);
      transport_->receive(places_.inputs(places_.b, me.kb * me.nj), 0, comm_);
      transport_->synchronize();
      return;
    }
    for (int r = 0; r < comm_.size(); ++r) {
      const Shape o = shape_of(r);
      if (direct_) {
        void* a = r == 0 ? places_.a : places_.staging;
        upload_a(o, a, rec);
        send_placed(a, o.mi * o.ka, r);
        void* b = r == 0 ? places_.b : places_.staging;
        upload(b, b_full_.data() + o.kb0 * s.n + o.col0, s.n, o.kb, o.nj, rec);
        send_placed(b, o.kb * o.nj, r);
        continue;
      }
      T* host = !device_ && r == 0 ? a_.data() : staging_.data();
      pack_a(o, host);
      send_block(host, r == 0 ? places_.a : places_.staging, o.mi * o.ka, r, rec);
      host = !device_ && r == 0 ? b_.data() : staging_.data();
      pack(b_full_.data() + o.kb0 * s.n + o.col0, s.n, o.kb, o.nj, host);
      send_block(host, r == 0 ? places_.b : places_.staging, o.kb * o.nj, r, rec);
    }
  }

  // Rank 0: a packed block (host) to where the transport sends it from, and to rank r.
  void send_block(const T* host, void* place, std::int64_t count, int r, PhaseRecorder& rec) {
    if (device_) gpu_->convert_copy(host, place, count, CopyKind::host_to_device, rec);
    send_placed(place, count, r);
  }
  void send_placed(void* place, std::int64_t count, int r) {
    if (r == 0) return;
    transport_->send(places_.inputs(place, count), r, comm_);
    transport_->synchronize();  // the staging is reused for the next block
  }

  // Rank 0, direct copies (the device holds the host's format): rows × cols of a row-major host
  // matrix with leading dimension `ld`, up to `to` (contiguous, rows × cols) in one strided copy
  // (no packing on the host), timed into "h2d"; and back down.
  void upload(void* to, const T* from, std::int64_t ld, std::int64_t rows, std::int64_t cols, PhaseRecorder& rec) {
    const auto u = [](std::int64_t v) { return static_cast<std::size_t>(v); };
    rec.add(phase::h2d, time_on_device(gpu_->stream(), [&] {
              copy_strided_async({to, u(cols) * sizeof(T), from, u(ld) * sizeof(T), u(cols) * sizeof(T), u(rows)},
                                 CopyKind::host_to_device, gpu_->stream());
            }));
  }
  void download(T* to, std::int64_t ld, const void* from, std::int64_t rows, std::int64_t cols, PhaseRecorder& rec) {
    const auto u = [](std::int64_t v) { return static_cast<std::size_t>(v); };
    rec.add(phase::d2h, time_on_device(gpu_->stream(), [&] {
              copy_strided_async({to, u(ld) * sizeof(T), from, u(cols) * sizeof(T), u(cols) * sizeof(T), u(rows)},
                                 CopyKind::device_to_host, gpu_->stream());
            }));
  }
  // Rank r's A_ij, panel after panel as pack_a lays it out, straight from A.
  void upload_a(const Shape& o, void* to, PhaseRecorder& rec) {
    for (const auto& p : layout_.panels) {
      if (p.first < o.ka0 || p.first >= o.ka0 + o.ka) continue;
      upload(BlockPlaces::at(to, o.mi * (p.first - o.ka0), places_.in),
             a_full_.data() + o.row0 * cfg_.shape.k + p.first, cfg_.shape.k, o.mi, p.width, rec);
    }
  }

  void gather_blocks(PhaseRecorder& rec) {
    const auto& s = cfg_.shape;
    if (!comm_.is_root()) {
      transport_->send(places_.outputs(places_.c, static_cast<std::int64_t>(c_.size())), 0, comm_);
      transport_->synchronize();
      return;
    }
    for (int r = 0; r < comm_.size(); ++r) {
      const Shape o = shape_of(r);
      void* place = r == 0 ? places_.c : places_.staging;
      if (r != 0) {
        transport_->receive(places_.outputs(place, o.mi * o.nj), r, comm_);
        transport_->synchronize();
      }
      if (direct_) {
        download(c_full_.data() + o.row0 * s.n + o.col0, s.n, place, o.mi, o.nj, rec);
        continue;
      }
      const T* from = static_cast<const T*>(place);
      if (device_) {
        gpu_->convert_copy(place, staging_.data(), o.mi * o.nj, CopyKind::device_to_host, rec);
        from = staging_.data();
      }
      unpack(from, o.mi, o.nj, c_full_.data() + o.row0 * s.n + o.col0, s.n);
    }
  }

  // Rank 0, after Freivalds failed on global row `row`: the rank whose block of that row is
  // furthest from A_row·(B_J·x_J), by its share of the row's error.
  int owner_of_error(std::int64_t row, const std::vector<double>& x) const {
    const auto& s = cfg_.shape;
    int grid_row = 0;
    while (grid_row + 1 < layout_.grid.rows && layout_.rows.block(grid_row + 1).offset <= row) ++grid_row;
    int worst_col = 0;
    double worst = -1;
    for (int j = 0; j < layout_.grid.cols; ++j) {
      const Block c = layout_.cols.block(j);
      double expect = 0, got = 0;
      for (std::int64_t l = 0; l < s.k; ++l) {
        double bx = 0;
        for (std::int64_t col = c.offset; col < c.offset + c.count; ++col) {
          bx += static_cast<double>(b_full_[l * s.n + col]) * x[col];
        }
        expect += static_cast<double>(a_full_[row * s.k + l]) * bx;
      }
      for (std::int64_t col = c.offset; col < c.offset + c.count; ++col) {
        got += static_cast<double>(c_full_[row * s.n + col]) * x[col];
      }
      if (std::abs(got - expect) > worst) {
        worst = std::abs(got - expect);
        worst_col = j;
      }
    }
    return grid_row * layout_.grid.cols + worst_col;
  }

  const GemmConfig& cfg_;
  const GemmTestHooks& hooks_;
  const Communicator& comm_;
  LocalGemm& local_;
  GpuGemm* gpu_;       // the same object as local_ on a GPU, else null
  const bool device_;  // --transport nccl: the blocks live on the device
  const bool direct_;  // ... in the host's format (not bf16): rank 0 copies them straight to and from A, B, C
  const SummaLayout layout_;
  const int i_, j_;                         // this rank's grid row and column
  Communicator row_comm_;                   // the ranks of grid row i_, ranked by column
  Communicator col_comm_;                   // the ranks of grid column j_, ranked by row
  HostMatrix<T> a_full_, b_full_, c_full_;  // rank 0
  std::vector<HostMemoryPin> pins_;         // rank 0, direct copies: A, B and C page-locked (after them: ends first)
  std::string pin_note_;                    // why they are not
  std::vector<T> staging_;                  // rank 0: one block on its way
  std::vector<T> a_, b_;                    // A_ij (panel after panel), B_ij on the host
  std::vector<T> c_;                        // C_ij on the host (on a device: its copy for the check)
  std::vector<T> a_panel_, b_panel_;
  DeviceArray a_dev_, b_dev_, staging_dev_;  // --transport nccl
  BlockPlaces places_;
  std::optional<OwnedStream> panel_stream_;    // the device lookahead's: the panels' own stream
  std::unique_ptr<TimedTransport> transport_;  // after the memory it moves: NCCL ends first
  std::unique_ptr<SummaPanels> panels_;        // after the transport it uses: ends first
  std::string panels_note_;                    // why the schedule is not the one asked for
  PhaseRecorder panel_times_;                  // per repeat: broadcast, compute, wait, transfer, hidden
  std::vector<double> bx_, abs_bx_;
};

}  // namespace

template <class T>
std::unique_ptr<DistributedGemm> make_summa2d(const GemmConfig& cfg, const GemmTestHooks& hooks,
                                              const Communicator& comm, LocalGemm& local, GpuGemm* gpu) {
  return std::make_unique<Summa2D<T>>(cfg, hooks, comm, local, gpu);
}
template std::unique_ptr<DistributedGemm> make_summa2d<double>(const GemmConfig&, const GemmTestHooks&,
                                                               const Communicator&, LocalGemm&, GpuGemm*);
template std::unique_ptr<DistributedGemm> make_summa2d<float>(const GemmConfig&, const GemmTestHooks&,
                                                              const Communicator&, LocalGemm&, GpuGemm*);

}  // namespace scalebench
