// Summa2D's host ring (summa_panels.hpp): each panel part travels from its owner along the ring
// of its process row (A) or column (B), every rank forwarding it to the next, non-blocking.
//
// One lane per direction. Messages of a lane go on two communicators, so that each is matched in
// panel order with one tag: `own` carries what an owner sends (all of its panels, at the start
// of the repeat, in panel order), `fwd` what a rank forwards (in panel order). A rank receives
// the panels of its window (the panel it multiplies and the D after it) in panel order on each
// communicator; it posts a receive only once MPI_Iprobe shows the message has come (so the time
// before that is waiting for the sender, the time after it the transfer) and once the slot's
// previous panel has been forwarded.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <thread>

#include <fmt/format.h>

#include "algorithms/summa_panels.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {

MPI_Datatype mpi_type_of(ElementType t) {
  return t == ElementType::f64 ? MPI_DOUBLE : t == ElementType::f32 ? MPI_FLOAT : MPI_UINT16_T;
}

// One direction of the ring: the parts of every panel along one communicator.
class Lane {
 public:
  struct Part {
    int owner = 0;
    std::int64_t count = 0;     // elements
    const void* own = nullptr;  // this rank's part in place, where it owns it
  };

  Lane(const Communicator& group, std::vector<Part> parts, ElementType type, int depth, std::int64_t slot_elements)
      : own_comm_(group.split(0, group.rank())),
        fwd_comm_(group.split(0, group.rank())),
        parts_(std::move(parts)),
        type_(type),
        depth_(depth),
        me_(group.rank()),
        size_(group.size()),
        slots_(static_cast<std::size_t>(depth + 1)),
        slot_forward_(static_cast<std::size_t>(depth + 1), MPI_REQUEST_NULL),
        state_(parts_.size(), State::idle),
        recv_(parts_.size(), MPI_REQUEST_NULL) {
    for (auto& s : slots_) s.resize(static_cast<std::size_t>(slot_elements) * element_bytes(type));
  }
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;
  Lane(Lane&&) = delete;
  Lane& operator=(Lane&&) = delete;
  ~Lane() = default;

  void begin() {
    std::fill(state_.begin(), state_.end(), State::idle);
    window_end_ = 0;
    forward_next_ = 0;
    sent_ = received_ = 0;
    grow_window(static_cast<std::size_t>(depth_) + 1);
    if (size_ == 1) return;
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      if (parts_[p].owner != me_) continue;
      owner_sends_.push_back(MPI_REQUEST_NULL);
      SCALEBENCH_MPI(MPI_Isend(parts_[p].own, static_cast<int>(parts_[p].count), mpi_type_of(type_), succ(), 0,
                               own_comm_.get(), &owner_sends_.back()));
      sent_ += bytes(p);
    }
  }

  // One pass: receives posted where their messages have come, receives completed, forwards sent.
  // True when something happened.
  bool progress() {
    bool moved = post_receives(own_comm_) | post_receives(fwd_comm_);
    for (std::size_t p = forward_next_; p < window_end_; ++p) {
      if (state_[p] != State::receiving) continue;
      int flag = 0;
      SCALEBENCH_MPI(MPI_Test(&recv_[p], &flag, MPI_STATUS_IGNORE));
      if (flag) {
        state_[p] = State::done;
        received_ += bytes(p);
        moved = true;
      }
    }
    moved = forward() || moved;
    for (auto& r : slot_forward_) {
      if (r == MPI_REQUEST_NULL) continue;
      int flag = 0;
      SCALEBENCH_MPI(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
      moved = moved || flag != 0;
    }
    return moved;
  }

  bool here(std::size_t p) const { return state_[p] == State::done; }
  // Its receive posted (or none needed): what is left is the transfer.
  bool under_way(std::size_t p) const { return state_[p] != State::listening; }
  const void* data(std::size_t p) const {
    return parts_[p].owner == me_ ? parts_[p].own : static_cast<const void*>(slots_[slot(p)].data());
  }
  // Panel p was multiplied: the window moves on.
  void release(std::size_t p) { grow_window(p + static_cast<std::size_t>(depth_) + 2); }
  // A panel after p whose receive is posted and not known complete.
  bool receiving_after(std::size_t p) const {
    for (std::size_t q = p + 1; q < window_end_; ++q) {
      if (state_[q] == State::receiving) return true;
    }
    return false;
  }
  // Every forward sent and every send taken.
  bool drained() {
    forward();
    if (forward_next_ < parts_.size()) return false;
    int flag = 0;
    SCALEBENCH_MPI(MPI_Testall(static_cast<int>(owner_sends_.size()), owner_sends_.data(), &flag, MPI_STATUSES_IGNORE));
    if (!flag) return false;
    SCALEBENCH_MPI(
        MPI_Testall(static_cast<int>(slot_forward_.size()), slot_forward_.data(), &flag, MPI_STATUSES_IGNORE));
    if (flag) owner_sends_.clear();
    return flag != 0;
  }
  std::int64_t sent() const { return sent_; }
  std::int64_t received() const { return received_; }

 private:
  // idle: outside the window; listening: in it, its receive not yet posted; receiving; done (or
  // this rank's own part).
  enum class State { idle, listening, receiving, done };

  int succ() const { return (me_ + 1) % size_; }
  int pred() const { return (me_ + size_ - 1) % size_; }
  std::size_t slot(std::size_t p) const { return p % slots_.size(); }
  std::int64_t bytes(std::size_t p) const { return parts_[p].count * static_cast<std::int64_t>(element_bytes(type_)); }
  // The communicator panel p comes to this rank on.
  const Communicator& comm_of(std::size_t p) const { return parts_[p].owner == pred() ? own_comm_ : fwd_comm_; }
  // Whether this rank passes panel p on (the rank after it is not the owner).
  bool forwards(std::size_t p) const { return parts_[p].owner != me_ && parts_[p].owner != succ(); }

  void grow_window(std::size_t end) {
    end = std::min(end, parts_.size());
    for (; window_end_ < end; ++window_end_) {
      state_[window_end_] = parts_[window_end_].owner == me_ || size_ == 1 ? State::done : State::listening;
    }
  }

  // In panel order on `comm`: the first listening panel's receive is posted once its message has
  // come and its slot is free; the later ones wait for it.
  bool post_receives(const Communicator& comm) {
    bool posted = false;
    for (std::size_t p = forward_next_; p < window_end_; ++p) {
      if (state_[p] != State::listening || &comm_of(p) != &comm) continue;
      MPI_Request& held = slot_forward_[slot(p)];
      if (held != MPI_REQUEST_NULL) {
        int flag = 0;
        SCALEBENCH_MPI(MPI_Test(&held, &flag, MPI_STATUS_IGNORE));
        if (!flag) return posted;
      }
      int come = 0;
      SCALEBENCH_MPI(MPI_Iprobe(pred(), 0, comm.get(), &come, MPI_STATUS_IGNORE));
      if (!come) return posted;
      SCALEBENCH_MPI(MPI_Irecv(slots_[slot(p)].data(), static_cast<int>(parts_[p].count), mpi_type_of(type_), pred(), 0,
                               comm.get(), &recv_[p]));
      state_[p] = State::receiving;
      posted = true;
    }
    return posted;
  }

  // Panels this rank has, passed on in panel order.
  bool forward() {
    bool sent = false;
    for (; forward_next_ < parts_.size(); ++forward_next_) {
      const std::size_t p = forward_next_;
      if (state_[p] != State::done) break;
      if (!forwards(p)) continue;
      SCALEBENCH_MPI(MPI_Isend(slots_[slot(p)].data(), static_cast<int>(parts_[p].count), mpi_type_of(type_), succ(), 0,
                               fwd_comm_.get(), &slot_forward_[slot(p)]));
      sent_ += bytes(p);
      sent = true;
    }
    return sent;
  }

  Communicator own_comm_, fwd_comm_;
  std::vector<Part> parts_;
  ElementType type_;
  int depth_, me_, size_;
  std::vector<std::vector<char>> slots_;   // depth + 1 panels received
  std::vector<MPI_Request> slot_forward_;  // per slot: its panel's forward
  std::vector<MPI_Request> owner_sends_;   // this repeat's sends of owned panels
  std::vector<State> state_;
  std::vector<MPI_Request> recv_;
  std::size_t window_end_ = 0;    // panels [0, window_end_) have entered the window
  std::size_t forward_next_ = 0;  // panels before it are done and forwarded
  std::int64_t sent_ = 0, received_ = 0;
};

class HostRingPanels final : public SummaPanels {
 public:
  HostRingPanels(const PanelPlaces& at, int depth, TimedTransport& transport, const Communicator& row_comm,
                 const Communicator& col_comm)
      : depth_(depth),
        transport_(transport),
        a_(row_comm, parts(at, true), at.type, depth, at.mi * at.layout->widest_panel()),
        b_(col_comm, parts(at, false), at.type, depth, at.layout->widest_panel() * at.nj) {}

  std::string what() const override { return fmt::format("ring, lookahead {}", depth_); }
  int lookahead() const override { return depth_; }

  void begin_repeat() override {
    times_ = {0, 0, 0};
    const double t0 = wall_seconds();
    a_.begin();
    b_.begin();
    times_.transfer += wall_seconds() - t0;
  }

  PanelInputs arrive(std::size_t p, PhaseRecorder& rec) override {
    ScopedPhase t(rec, phase::broadcast);
    double last = wall_seconds();
    for (;;) {
      const bool waiting = !a_.under_way(p) || !b_.under_way(p);
      const bool moved = a_.progress() | b_.progress();
      const double now = wall_seconds();
      (waiting ? times_.wait : times_.transfer) += now - last;
      last = now;
      if (a_.here(p) && b_.here(p)) break;
      if (!moved) std::this_thread::yield();
    }
    return {a_.data(p), b_.data(p)};
  }

  void done(std::size_t p, double compute_s, PhaseRecorder& rec) override {
    if (a_.receiving_after(p) || b_.receiving_after(p)) times_.hidden += compute_s;
    ScopedPhase t(rec, phase::broadcast);
    const double t0 = wall_seconds();
    a_.release(p);
    b_.release(p);
    a_.progress();
    b_.progress();
    times_.transfer += wall_seconds() - t0;
  }

  void end_repeat(PhaseRecorder& rec) override {
    {
      ScopedPhase t(rec, phase::broadcast);
      const double t0 = wall_seconds();
      for (;;) {
        const bool a_done = a_.drained();
        const bool b_done = b_.drained();
        if (a_done && b_done) break;
        a_.progress();
        b_.progress();
        std::this_thread::yield();
      }
      times_.wait += wall_seconds() - t0;
    }
    transport_.account(times_.wait + times_.transfer, a_.sent() + b_.sent(), a_.received() + b_.received());
  }

  PanelTimes times() const override { return times_; }

 private:
  static std::vector<Lane::Part> parts(const PanelPlaces& at, bool of_a) {
    std::vector<Lane::Part> out;
    const std::size_t e = element_bytes(at.type);
    for (const auto& p : at.layout->panels) {
      Lane::Part part;
      if (of_a) {
        part = {p.a_col, at.mi * p.width, nullptr};
        if (p.a_col == at.j)
          part.own = static_cast<const char*>(at.a) + static_cast<std::size_t>(at.mi * (p.first - at.ka0)) * e;
      } else {
        part = {p.b_row, p.width * at.nj, nullptr};
        if (p.b_row == at.i)
          part.own = static_cast<const char*>(at.b) + static_cast<std::size_t>((p.first - at.kb0) * at.nj) * e;
      }
      out.push_back(part);
    }
    return out;
  }

  int depth_;
  TimedTransport& transport_;
  Lane a_, b_;
  PanelTimes times_;
};

}  // namespace

bool host_ring_fits(const PanelPlaces& at, std::int64_t max_count) {
  const std::int64_t w = at.layout->widest_panel();
  const std::int64_t limit = max_count > 0 ? std::min<std::int64_t>(max_count, INT_MAX) : INT_MAX;
  return at.space == MemorySpace::host && std::max(at.mi * w, w * at.nj) <= limit;
}

std::unique_ptr<SummaPanels> make_host_ring_panels(const PanelPlaces& at, int depth, TimedTransport& transport,
                                                   const Communicator& row_comm, const Communicator& col_comm) {
  return std::make_unique<HostRingPanels>(at, depth, transport, row_comm, col_comm);
}

}  // namespace scalebench
