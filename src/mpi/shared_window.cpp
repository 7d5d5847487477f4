#include "scalebench/mpi/shared_window.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <utility>

#include "scalebench/mpi/mpi.hpp"

namespace scalebench {

int prefault_writable(void* p, std::int64_t bytes) {
  if (p == nullptr || bytes <= 0) return 0;
  const long page_size = sysconf(_SC_PAGESIZE);
  const auto page = static_cast<std::uintptr_t>(page_size > 0 ? page_size : 4096);
  const auto begin = reinterpret_cast<std::uintptr_t>(p) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(bytes) + page - 1) / page * page;
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the page-aligned start of the caller's mapping
  if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0) return 0;
  return errno == EINVAL ? 0 : errno;  // EINVAL: a kernel before 5.14
}

SharedWindow::SharedWindow(const Communicator& node, std::int64_t bytes) : comm_(node.get()) {
  MPI_Info info = MPI_INFO_NULL;
  SCALEBENCH_MPI(MPI_Info_create(&info));
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void* base = nullptr;
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, comm_, &base, &win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) win_ = MPI_WIN_NULL;
  SCALEBENCH_MPI(rc);
  // Window calls return errors (the default would abort the job).
  SCALEBENCH_MPI(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN));
  SCALEBENCH_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
}

SharedWindow::~SharedWindow() { release(); }

SharedWindow::SharedWindow(SharedWindow&& other) noexcept
    : win_(std::exchange(other.win_, MPI_WIN_NULL)), comm_(std::exchange(other.comm_, MPI_COMM_NULL)) {}

SharedWindow& SharedWindow::operator=(SharedWindow&& other) noexcept {
  if (this != &other) {
    release();
    win_ = std::exchange(other.win_, MPI_WIN_NULL);
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
  }
  return *this;
}

void SharedWindow::release() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (win_ == MPI_WIN_NULL || finalized) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);  // collective: every rank of the node destroys its window together
}

void* SharedWindow::segment(int owner) const {
  MPI_Aint size = 0;
  int disp = 0;
  void* base = nullptr;
  SCALEBENCH_MPI(MPI_Win_shared_query(win_, owner, &size, &disp, &base));
  return size > 0 ? base : nullptr;
}

void SharedWindow::sync() const {
  SCALEBENCH_MPI(MPI_Win_sync(win_));
  SCALEBENCH_MPI(MPI_Barrier(comm_));
  SCALEBENCH_MPI(MPI_Win_sync(win_));
}

}  // namespace scalebench
