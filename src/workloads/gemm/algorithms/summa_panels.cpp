// Summa2D's blocking schedule (summa_panels.hpp): each panel broadcast along its row and its
// column through the transport, then multiplied; nothing in flight while a panel multiplies.
#include "gemm/algorithms/summa_panels.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {

class BlockingPanels final : public SummaPanels {
 public:
  BlockingPanels(const PanelPlaces& at, TimedTransport& transport, const Communicator& row_comm,
                 const Communicator& col_comm)
      : at_(at), transport_(transport), row_comm_(row_comm), col_comm_(col_comm) {}

  std::string what() const override { return "blocking broadcasts"; }
  int lookahead() const override { return 0; }
  void begin_repeat() override {}

  // The owners broadcast in place: A's panel from its place in A_ij, B's rows from B_ij.
  PanelInputs arrive(std::size_t p, PhaseRecorder& rec) override {
    const SummaPanel& panel = at_.layout->panels[p];
    const std::size_t e = element_bytes(at_.type);
    void* a = at_.j == panel.a_col
                  ? static_cast<char*>(at_.a) + static_cast<std::size_t>(at_.mi * (panel.first - at_.ka0)) * e
                  : at_.a_panel;
    void* b = at_.i == panel.b_row
                  ? static_cast<char*>(at_.b) + static_cast<std::size_t>((panel.first - at_.kb0) * at_.nj) * e
                  : at_.b_panel;
    ScopedPhase t(rec, phase::broadcast);
    transport_.broadcast({a, at_.mi * panel.width, at_.type, at_.space}, panel.a_col, row_comm_);
    transport_.broadcast({b, panel.width * at_.nj, at_.type, at_.space}, panel.b_row, col_comm_);
    transport_.synchronize();
    return {a, b};
  }

  void done(std::size_t /*p*/, double /*compute_s*/, PhaseRecorder& /*rec*/) override {}
  void end_repeat(PhaseRecorder& /*rec*/) override {}
  // A blocking broadcast does not tell its waiting from its transfer; nothing is hidden.
  PanelTimes times() const override { return {-1, -1, 0}; }

 private:
  PanelPlaces at_;
  TimedTransport& transport_;
  const Communicator& row_comm_;
  const Communicator& col_comm_;
};

// "0.120-0.300" over the ranks' values; "?" where the schedule cannot tell.
std::string spread(const nlohmann::json& per_rank) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& v : per_rank) {
    if (!v.is_number()) return "?";
    const double x = v.get<double>();
    lo = any ? std::min(lo, x) : x;
    hi = any ? std::max(hi, x) : x;
    any = true;
  }
  return any ? fmt::format("{:.3f}-{:.3f}", lo, hi) : "?";
}

}  // namespace

std::string panel_schedule_line(const nlohmann::json& panel_schedule) {
  const auto& s = panel_schedule;
  if (!s.is_object()) return {};
  std::string line = fmt::format("panels: {}; per rank, min-max: broadcast {} s", s["schedule"].get<std::string>(),
                                 spread(s["broadcast_s"]));
  if (s["wait_s"].is_array() && !s["wait_s"].empty() && s["wait_s"][0].is_number()) {
    line += fmt::format(" = waiting {} + transfer {}", spread(s["wait_s"]), spread(s["transfer_s"]));
  }
  line += fmt::format(", hidden behind compute {} s, compute {} s\n", spread(s["hidden_s"]), spread(s["compute_s"]));
  if (s.contains("note")) line += "panels: " + s["note"].get<std::string>() + "\n";
  return line;
}

std::unique_ptr<SummaPanels> make_blocking_panels(const PanelPlaces& at, TimedTransport& transport,
                                                  const Communicator& row_comm, const Communicator& col_comm) {
  return std::make_unique<BlockingPanels>(at, transport, row_comm, col_comm);
}

}  // namespace scalebench
