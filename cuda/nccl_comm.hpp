#pragma once
// Move-only owner of an NCCL communicator built from an MPI communicator: rank 0 creates the
// unique id and broadcasts it with MPI; every rank then joins with its MPI rank. One GPU per
// rank: NCCL refuses two ranks on one device.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <string>

#include "owned.hpp"

namespace scalebench {
class Communicator;
}  // namespace scalebench

namespace scalebench::gpu {

// Finalizes (flushes outstanding work), then destroys; errors are ignored.
void destroy_nccl_comm(ncclComm_t c) noexcept;

class NcclComm {
 public:
  // Collective over `comm`; the current device is this rank's GPU. `max_ctas` > 0: at most that
  // many thread blocks per NCCL call (ncclConfig_t::maxCTAs; NCCL_MAX_CTAS, when set, wins).
  explicit NcclComm(const Communicator& comm, int max_ctas = 0);

  ncclComm_t get() const noexcept { return c_.get(); }

 private:
  Owned<ncclComm_t, destroy_nccl_comm> c_;
};

// "2.28.9"
std::string nccl_version_string();

}  // namespace scalebench::gpu
