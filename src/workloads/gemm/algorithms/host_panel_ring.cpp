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

#include "gemm/algorithms/mpi_element_type.hpp"
#include "gemm/algorithms/summa_panels.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {

// One direction of the ring: the parts of every panel along one communicator.
class Lane {
 public:
  struct Part {
    int owner = 0;
    std::int64_t count = 0;     // elements
    const void* own = nullptr;  // this rank's part in place, where it owns it
  };

  // `first_slot`: the run's own buffer of one panel (slot_elements), the first of depth + 1.
  Lane(const Communicator& group, std::vector<Part> parts, ElementType type, int depth, void* first_slot,
       std::int64_t slot_elements)
      : ring_(group.size() > kMostDirect),
        own_comm_(group.split(0, group.rank())),
        fwd_comm_(group.split(0, group.rank())),
        parts_(std::move(parts)),
        type_(type),
        depth_(depth),
        me_(group.rank()),
        size_(group.size()),
        more_slots_(static_cast<std::size_t>(depth)),
        slot_forward_(static_cast<std::size_t>(depth + 1), MPI_REQUEST_NULL),
        state_(parts_.size(), State::idle),
        recv_(parts_.size(), MPI_REQUEST_NULL) {
    slots_.push_back(static_cast<char*>(first_slot));
    for (auto& s : more_slots_) {
      s.resize(static_cast<std::size_t>(slot_elements) * element_bytes(type));
      slots_.push_back(s.data());
    }
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
      // Ring: to the next rank; direct: to every other rank, the next first.
      for (int hop = 1; hop < (ring_ ? 2 : size_); ++hop) {
        owner_sends_.push_back(MPI_REQUEST_NULL);
        SCALEBENCH_MPI(MPI_Isend(parts_[p].own, static_cast<int>(parts_[p].count), mpi_type_of(type_),
                                 (me_ + hop) % size_, 0, own_comm_.get(), &owner_sends_.back()));
        sent_ += bytes(p);
      }
    }
  }

  // One pass: receives posted where their messages have come, receives completed, forwards sent.
  // True when something happened.
  bool progress() {
    // Both communicators every pass (no short cut).
    const bool from_owner = post_receives(own_comm_);
    bool moved = post_receives(fwd_comm_) || from_owner;
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
    return parts_[p].owner == me_ ? parts_[p].own : static_cast<const void*>(slots_[slot(p)]);
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
  // Bytes of panel p's part not here yet.
  std::int64_t missing_bytes(std::size_t p) const { return state_[p] == State::done ? 0 : bytes(p); }
  // Every panel here and forwarded (forwards are posted as panels arrive: at most the last ones remain).
  bool forwarded() { return forward(), forward_next_ == parts_.size(); }
  // Every send taken by its receiver.
  void settle() {
    SCALEBENCH_MPI(MPI_Waitall(static_cast<int>(owner_sends_.size()), owner_sends_.data(), MPI_STATUSES_IGNORE));
    owner_sends_.clear();
    SCALEBENCH_MPI(MPI_Waitall(static_cast<int>(slot_forward_.size()), slot_forward_.data(), MPI_STATUSES_IGNORE));
  }
  std::int64_t sent() const { return sent_; }
  std::string route() const { return ring_ ? "ring" : "direct"; }
  std::int64_t received() const { return received_; }

 private:
  // idle: outside the window; listening: in it, its receive not yet posted; receiving; done (or
  // this rank's own part).
  enum class State { idle, listening, receiving, done };

  int succ() const { return (me_ + 1) % size_; }
  int pred() const { return (me_ + size_ - 1) % size_; }
  // The rank panel p comes to this one from.
  int source(std::size_t p) const { return ring_ ? pred() : parts_[p].owner; }
  std::size_t slot(std::size_t p) const { return p % slots_.size(); }
  std::int64_t bytes(std::size_t p) const { return parts_[p].count * static_cast<std::int64_t>(element_bytes(type_)); }
  // The communicator panel p comes to this rank on.
  const Communicator& comm_of(std::size_t p) const { return parts_[p].owner == source(p) ? own_comm_ : fwd_comm_; }
  // Whether this rank passes panel p on (ring: the rank after it is not the owner).
  bool forwards(std::size_t p) const { return ring_ && parts_[p].owner != me_ && parts_[p].owner != succ(); }

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
      SCALEBENCH_MPI(MPI_Iprobe(source(p), 0, comm.get(), &come, MPI_STATUS_IGNORE));
      if (!come) return posted;
      SCALEBENCH_MPI(MPI_Irecv(slots_[slot(p)], static_cast<int>(parts_[p].count), mpi_type_of(type_), source(p), 0,
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
      SCALEBENCH_MPI(MPI_Isend(slots_[slot(p)], static_cast<int>(parts_[p].count), mpi_type_of(type_), succ(), 0,
                               fwd_comm_.get(), &slot_forward_[slot(p)]));
      sent_ += bytes(p);
      sent = true;
    }
    return sent;
  }

  // Rows and columns of up to this many ranks get their panels from the owner directly: a rank
  // then waits for the owner alone, and a slow rank holds up no one but the ranks it owes panels
  // to; longer ones use the ring, so that no owner sends a panel more than once.
  static constexpr int kMostDirect = 4;
  bool ring_;
  Communicator own_comm_, fwd_comm_;
  std::vector<Part> parts_;
  ElementType type_;
  int depth_, me_, size_;
  std::vector<std::vector<char>> more_slots_;  // the depth panel buffers beyond the run's own
  std::vector<char*> slots_;                   // depth + 1 panels received
  std::vector<MPI_Request> slot_forward_;      // per slot: its panel's forward
  std::vector<MPI_Request> owner_sends_;       // this repeat's sends of owned panels
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
        a_(row_comm, parts(at, true), at.type, depth, at.a_panel, at.mi * at.layout->widest_panel()),
        b_(col_comm, parts(at, false), at.type, depth, at.b_panel, at.layout->widest_panel() * at.nj) {}

  std::string what() const override {
    const std::string route = a_.route() == b_.route() ? a_.route()
                                                       : a_.route() + " along rows, " + b_.route() + " along columns";
    return fmt::format("{}, lookahead {}", route, depth_);
  }
  int lookahead() const override { return depth_; }

  void begin_repeat() override {
    times_ = {0, 0, 0};
    receipts_.clear();
    const double t0 = wall_seconds();
    a_.begin();
    b_.begin();
    times_.transfer += wall_seconds() - t0;
  }

  PanelInputs arrive(std::size_t p, PhaseRecorder& rec) override {
    ScopedPhase t(rec, phase::broadcast);
    const std::int64_t missing = a_.missing_bytes(p) + b_.missing_bytes(p);
    double last = wall_seconds(), receiving = 0;
    for (;;) {
      const bool waiting = !a_.under_way(p) || !b_.under_way(p);
      const bool a_moved = a_.progress();
      const bool moved = b_.progress() || a_moved;
      const double now = wall_seconds();
      (waiting ? times_.wait : receiving) += now - last;
      last = now;
      if (a_.here(p) && b_.here(p)) break;
      if (!moved) std::this_thread::yield();
    }
    if (receiving > 0) receipts_.push_back({missing, receiving});
    return {a_.data(p), b_.data(p)};
  }

  bool drives_progress() const override { return true; }
  double progress(PhaseRecorder& rec) override {
    ScopedPhase t(rec, phase::broadcast);
    const double t0 = wall_seconds();
    a_.progress();
    b_.progress();
    const double seconds = wall_seconds() - t0;
    times_.transfer += seconds;
    return seconds;
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

  // The last forwards posted; the sends are taken in settle(), before the blocks they read
  // change. The time blocked receiving is split into the transfer and waiting (split_receipts).
  void end_repeat(PhaseRecorder& rec) override {
    {
      ScopedPhase t(rec, phase::broadcast);
      const double t0 = wall_seconds();
      while (!(a_.forwarded() && b_.forwarded())) {
        a_.progress();
        b_.progress();
      }
      times_.transfer += wall_seconds() - t0;
    }
    split_receipts();
    transport_.account(times_.wait + times_.transfer, a_.sent() + b_.sent(), a_.received() + b_.received());
  }

  void settle() override {
    a_.settle();
    b_.settle();
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
  // A panel's wait once its messages had come: until its receives were complete, the bytes still
  // missing when the rank asked for it.
  struct Receipt {
    std::int64_t bytes;
    double seconds;
  };
  // MPI moves a message only while its sender, too, is inside MPI: a sender that was multiplying
  // (or is slow) holds a receive up after its message has come. The transfer of each receipt is
  // its bytes at this repeat's median rate over receipts (capped by its time); the rest of its
  // time was waiting for the sender.
  void split_receipts() {
    std::vector<double> rates;
    for (const auto& r : receipts_) {
      if (r.bytes > 0) rates.push_back(static_cast<double>(r.bytes) / r.seconds);
    }
    const double rate = rates.empty() ? 0 : median_of(rates);
    for (const auto& r : receipts_) {
      const double moving = rate > 0 ? std::min(r.seconds, static_cast<double>(r.bytes) / rate) : r.seconds;
      times_.transfer += moving;
      times_.wait += r.seconds - moving;
    }
  }

  PanelTimes times_;
  std::vector<Receipt> receipts_;
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
