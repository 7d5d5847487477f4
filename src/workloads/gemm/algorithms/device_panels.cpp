// Summa2D's device lookahead (summa_panels.hpp): the broadcasts of the next D panels are
// enqueued on the panels' own stream, each between two events, while the current panel
// multiplies on the backend's stream. The host waits for a panel's second event before it
// multiplies the panel (the multiply returns once done, so a buffer is free again when the
// panel after the next D is enqueued into it).
#include <algorithm>

#include <fmt/format.h>

#include "gemm/algorithms/summa_panels.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {

class DevicePanels final : public SummaPanels {
 public:
  DevicePanels(const PanelPlaces& at, int depth, TimedTransport& transport, const Communicator& row_comm,
               const Communicator& col_comm, DeviceStream stream)
      : at_(at), depth_(depth), transport_(transport), row_comm_(row_comm), col_comm_(col_comm), stream_(stream) {
    const std::size_t e = element_bytes(at.type);
    const std::int64_t w = at.layout->widest_panel();
    a_slots_.push_back(at.a_panel);
    b_slots_.push_back(at.b_panel);
    for (int s = 0; s < depth; ++s) {
      owned_.emplace_back(static_cast<std::size_t>(at.mi * w) * e);
      a_slots_.push_back(owned_.back().data());
      owned_.emplace_back(static_cast<std::size_t>(w * at.nj) * e);
      b_slots_.push_back(owned_.back().data());
    }
    begin_.resize(a_slots_.size());
    end_.resize(a_slots_.size());
  }

  std::string what() const override { return fmt::format("device stream, lookahead {}", depth_); }
  int lookahead() const override { return depth_; }

  void begin_repeat() override {
    stream_seconds_ = waited_ = 0;
    const std::size_t first = std::min(static_cast<std::size_t>(depth_), at_.layout->panels.size());
    for (std::size_t q = 0; q < first; ++q) enqueue(q);
  }

  PanelInputs arrive(std::size_t p, PhaseRecorder& rec) override {
    if (p + static_cast<std::size_t>(depth_) < at_.layout->panels.size()) enqueue(p + static_cast<std::size_t>(depth_));
    const std::size_t s = slot(p);
    {
      ScopedPhase t(rec, phase::broadcast);
      const double t0 = wall_seconds();
      end_[s].synchronize();
      waited_ += wall_seconds() - t0;
    }
    stream_seconds_ += end_[s].seconds_since(begin_[s]);
    return {where_a(p), where_b(p)};
  }

  void done(std::size_t /*p*/, double /*compute_s*/, PhaseRecorder& /*rec*/) override {}
  void end_repeat(PhaseRecorder& /*rec*/) override { transport_.account(waited_, 0, 0); }

  // NCCL does not tell waiting from moving; hidden: the broadcasts' stream time the host did not wait.
  PanelTimes times() const override { return {-1, -1, std::max(0.0, stream_seconds_ - waited_)}; }

 private:
  std::size_t slot(std::size_t p) const { return p % a_slots_.size(); }
  // The owners broadcast in place, the others receive into the panel's slot.
  void* where_a(std::size_t p) const {
    const SummaPanel& panel = at_.layout->panels[p];
    return at_.j == panel.a_col
               ? static_cast<char*>(at_.a) +
                     static_cast<std::size_t>(at_.mi * (panel.first - at_.ka0)) * element_bytes(at_.type)
               : a_slots_[slot(p)];
  }
  void* where_b(std::size_t p) const {
    const SummaPanel& panel = at_.layout->panels[p];
    return at_.i == panel.b_row
               ? static_cast<char*>(at_.b) +
                     static_cast<std::size_t>((panel.first - at_.kb0) * at_.nj) * element_bytes(at_.type)
               : b_slots_[slot(p)];
  }
  void enqueue(std::size_t q) {
    const SummaPanel& panel = at_.layout->panels[q];
    const std::size_t s = slot(q);
    begin_[s].record(stream_);
    transport_.broadcast({where_a(q), at_.mi * panel.width, at_.type, at_.space}, panel.a_col, row_comm_);
    transport_.broadcast({where_b(q), panel.width * at_.nj, at_.type, at_.space}, panel.b_row, col_comm_);
    end_[s].record(stream_);
  }

  PanelPlaces at_;
  int depth_;
  TimedTransport& transport_;
  const Communicator& row_comm_;
  const Communicator& col_comm_;
  DeviceStream stream_;
  std::vector<DeviceArray> owned_;        // the slots beyond the backend's own panel buffers
  std::vector<void*> a_slots_, b_slots_;  // depth + 1 panels of each
  std::vector<DeviceEvent> begin_, end_;  // per slot: around its broadcasts on stream_
  double stream_seconds_ = 0, waited_ = 0;
};

}  // namespace

std::unique_ptr<SummaPanels> make_device_panels(const PanelPlaces& at, int depth, TimedTransport& transport,
                                                const Communicator& row_comm, const Communicator& col_comm,
                                                DeviceStream stream) {
  return std::make_unique<DevicePanels>(at, depth, transport, row_comm, col_comm, stream);
}

}  // namespace scalebench
