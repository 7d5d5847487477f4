#pragma once
// Node-shared host memory: one MPI-3 shared-memory window (MPI_Win_allocate_shared) over the
// ranks of one node, owned by one move-only object.
//
// Memory model (MPI-3.1 §11.5.4, unified model): the window is opened once for passive target
// (MPI_Win_lock_all) and stays open; plain loads and stores reach it. sync() is the one ordering
// point: every rank's stores before it are visible to every rank's loads after it (MPI_Win_sync,
// barrier on the node, MPI_Win_sync). Two ranks never touch the same bytes between two syncs
// unless both only read.
#include <mpi.h>

#include <cstdint>

namespace scalebench {

class Communicator;

// Faults in the pages of [p, p + bytes) writable now (madvise MADV_POPULATE_WRITE, Linux 5.14), as
// a store to each would: where the memory's backing store has no room for them (a tmpfs that is
// full) this returns EFAULT instead of the SIGBUS that store would get; ENOMEM where memory runs
// out. The range is widened to whole pages. Returns 0 when done, and where the kernel cannot do it
// (EINVAL: nothing checked). Not collective.
int prefault_writable(void* p, std::int64_t bytes);

class SharedWindow {
 public:
  SharedWindow() = default;
  // Collective over `node` (ranks of one shared-memory domain: Communicator::split_shared). This
  // rank contributes `bytes` (0 allowed); segments are separate (alloc_shared_noncontig), so each
  // is first-touched, and placed, by whoever writes it first. Throws RuntimeLibraryError when the
  // MPI library refuses on every rank (no shared-memory window support). Where only the node's
  // first rank fails (Open MPI: it cannot make the backing file — no folder, not writable, no
  // room) the others wait for it for ever, and a backing file larger than a tmpfs's room SIGBUSes
  // on first touch: check the backing folder first (shared_windows_refusal, node_shared.hpp).
  SharedWindow(const Communicator& node, std::int64_t bytes);
  ~SharedWindow();
  SharedWindow(SharedWindow&& other) noexcept;
  SharedWindow& operator=(SharedWindow&& other) noexcept;
  SharedWindow(const SharedWindow&) = delete;
  SharedWindow& operator=(const SharedWindow&) = delete;

  // Rank `owner`'s segment (rank in `node`) as mapped into this process; null when it is empty.
  void* segment(int owner) const;
  // Collective over the node: memory barrier between the node's ranks (see the header comment).
  void sync() const;

 private:
  void release() noexcept;
  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Comm comm_ = MPI_COMM_NULL;  // borrowed from the node communicator (must outlive this)
};

}  // namespace scalebench
