#pragma once
// Move-only owner of an NCCL communicator built from an MPI communicator: rank 0 creates the
// unique id and broadcasts it with MPI; every rank then joins with its MPI rank. One GPU per
// rank: NCCL refuses two ranks on one device.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <string>
#include <utility>

namespace scalebench {
class Communicator;
}  // namespace scalebench

namespace scalebench::gpu {

class NcclComm {
 public:
  // Collective over `comm`; the current device is this rank's GPU. `max_ctas` > 0: at most that
  // many thread blocks per NCCL call (ncclConfig_t::maxCTAs; NCCL_MAX_CTAS, when set, wins).
  explicit NcclComm(const Communicator& comm, int max_ctas = 0);
  ~NcclComm();
  NcclComm(NcclComm&& o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  NcclComm& operator=(NcclComm&& o) noexcept {
    if (this != &o) {
      release();
      c_ = std::exchange(o.c_, nullptr);
    }
    return *this;
  }
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t get() const noexcept { return c_; }

 private:
  void release() noexcept;
  ncclComm_t c_ = nullptr;
};

// "2.28.9"
std::string nccl_version_string();

}  // namespace scalebench::gpu
