#pragma once
// How Summa2D's k-panels reach the ranks that multiply them: one small class per schedule, chosen
// once by make_summa_panels (summa_panels.cpp) from the lookahead and the transport.
//
//   blocking (--lookahead 0): per panel, A's part broadcast along the process row and B's along
//       the process column through the BufferTransport (MPI_Bcast, or NCCL), then multiplied:
//       every panel is a meeting point of its row and of its column.
//   host ring (--lookahead D > 0, host memory): each part travels along its row or column in
//       ring order from its owner (owner, owner + 1, ...), every rank forwarding it to the next
//       as soon as it has it, non-blocking (MPI_Isend/Irecv); the owners send their panels at
//       the start of the repeat (they lie in place in A_ij and B_ij), and a rank receives the
//       next D panels while it multiplies one. A rank waits only for the ranks before it in its
//       row's and its column's rings, and runs up to D panels ahead of them
//       (host_panel_ring.cpp). MPI moves a message only inside MPI calls of both ends, so the
//       multiply of a panel is cut into pieces of rows and the ring driven between them
//       (progress()): the receives and forwards move while the rank multiplies.
//   device lookahead (--lookahead D > 0, --transport nccl): the broadcasts of the next D panels
//       enqueued on a stream of their own while the current panel multiplies on the backend's
//       (device_panels.cpp).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemm/algorithms/summa_layout.hpp"
#include "gemm/algorithms/timed_transport.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/timing.hpp"

namespace scalebench {

class Communicator;

// Where panel p's parts are once they have arrived.
struct PanelInputs {
  const void* a = nullptr;  // m_i × width, contiguous
  const void* b = nullptr;  // width × n_j, contiguous
};

// Seconds of one repeat of the broadcast phase, as the schedule knows them (negative: unknown).
//   wait:     blocked for a panel that no rank had sent to this one yet (the rank before it in
//             the ring, or the owner, had not got that far), or whose buffer a forward still held;
//             and, once its messages had come, blocked beyond the time their bytes take at this
//             rank's median rate over the repeat's panels (MPI moves a message only while its
//             sender is inside MPI too: a slow sender holds it up);
//   transfer: the rest: the bytes moving in at that rate, and posting sends and forwards;
//   hidden:   broadcast time behind the multiply — host ring: the multiply time during which a
//             later panel's receive was under way (an upper bound: MPI moves bytes inside its
//             calls, so on the host they move only partly then); device: the broadcasts' own
//             stream time less the time the host waited for them.
struct PanelTimes {
  double wait = -1, transfer = -1, hidden = -1;
};

class SummaPanels {
 public:
  virtual ~SummaPanels() = default;
  // "blocking broadcasts", "ring, lookahead 2", ...: the record's words for the schedule.
  virtual std::string what() const = 0;
  virtual int lookahead() const = 0;
  virtual void begin_repeat() = 0;
  // Waits until panel p's parts are here (the time into "broadcast") and says where they are.
  virtual PanelInputs arrive(std::size_t p, PhaseRecorder& rec) = 0;
  // Panel p was multiplied in `compute_s` seconds: its buffers may take a later panel.
  virtual void done(std::size_t p, double compute_s, PhaseRecorder& rec) = 0;
  // Whether the schedule has transfers to drive while a panel multiplies (progress()).
  virtual bool drives_progress() const { return false; }
  // Between two pieces of a panel's multiply: one pass over the pending transfers, counted into
  // "broadcast". Its seconds.
  virtual double progress(PhaseRecorder& /*rec*/) { return 0; }
  // After the last panel: the last forwards posted ("broadcast").
  virtual void end_repeat(PhaseRecorder& rec) = 0;
  // Waits until what this rank sent has been taken: before its blocks change (the next scatter)
  // or go (after the repeats). By then every rank has had every panel (the gather came between),
  // so it waits only for MPI's bookkeeping.
  virtual void settle() {}
  // This repeat's split of the broadcast phase.
  virtual PanelTimes times() const = 0;
};

// The table's lines on a record's distribution.panel_schedule (the spread over ranks of each
// part of the broadcast phase); empty where it is null.
std::string panel_schedule_line(const nlohmann::json& panel_schedule);

// What a schedule needs of the rank's blocks: its grid place, the layout, where its own parts of
// A and B lie (owners send from there) and the buffer of one received panel of each (more are
// allocated as the lookahead needs).
struct PanelPlaces {
  const SummaLayout* layout = nullptr;
  int i = 0, j = 0;               // grid row and column
  std::int64_t mi = 0, nj = 0;    // rows and columns of C_ij
  std::int64_t ka0 = 0, kb0 = 0;  // first k column of A_ij, first k row of B_ij
  void* a = nullptr;              // A_ij, panel after panel
  void* b = nullptr;              // B_ij
  void* a_panel = nullptr;        // one panel of A received (m_i × widest panel)
  void* b_panel = nullptr;        // one panel of B received (widest panel × n_j)
  ElementType type = ElementType::f64;
  MemorySpace space = MemorySpace::host;
};

// The blocking schedule over `transport` (row_comm, col_comm: this rank's process row and column).
std::unique_ptr<SummaPanels> make_blocking_panels(const PanelPlaces& at, TimedTransport& transport,
                                                  const Communicator& row_comm, const Communicator& col_comm);

// Whether this rank's panel parts each fit one MPI call (MPI's int count, and `max_count`, the
// run's --mpi-chunk, where > 0) in host memory: the host ring sends each part whole. The caller
// agrees on it over all ranks; where it does not hold, the blocking schedule runs.
bool host_ring_fits(const PanelPlaces& at, std::int64_t max_count);
// The host ring with lookahead `depth` (> 0). Collective over the row and the column (makes the
// ring's communicators). `transport` is told its seconds and bytes (distribution.communication).
std::unique_ptr<SummaPanels> make_host_ring_panels(const PanelPlaces& at, int depth, TimedTransport& transport,
                                                   const Communicator& row_comm, const Communicator& col_comm);

// The device lookahead with `depth` (> 0) over a device `transport` made on `stream` (the
// panels' own stream, not the multiply's). Allocates `depth` more panel buffers of each input
// on the device (the caller reserved them in the backend's memory check).
std::unique_ptr<SummaPanels> make_device_panels(const PanelPlaces& at, int depth, TimedTransport& transport,
                                                const Communicator& row_comm, const Communicator& col_comm,
                                                DeviceStream stream);

}  // namespace scalebench
