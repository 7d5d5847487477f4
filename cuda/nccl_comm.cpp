#include "nccl_comm.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench::gpu {

NcclComm::NcclComm(const Communicator& comm, int max_ctas) {
  ncclUniqueId id{};
  // Every rank must reach the broadcast even if rank 0 failed to make the id: agree first.
  agree(comm, [&] {
    if (comm.is_root()) SCALEBENCH_NCCL_CHECK(ncclGetUniqueId(&id));
  });
  SCALEBENCH_MPI(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm.get()));
  ncclComm_t c = nullptr;
  agree(comm, [&] {
    if (max_ctas > 0 && std::getenv("NCCL_MAX_CTAS") == nullptr) {
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.minCTAs = 1;
      config.maxCTAs = max_ctas;
      SCALEBENCH_NCCL_CHECK(ncclCommInitRankConfig(&c, comm.size(), id, comm.rank(), &config));
    } else {
      SCALEBENCH_NCCL_CHECK(ncclCommInitRank(&c, comm.size(), id, comm.rank()));
    }
  });
  c_ = Owned<ncclComm_t, destroy_nccl_comm>(c);
}

void destroy_nccl_comm(ncclComm_t c) noexcept {
  // Finalize flushes outstanding work; destroy then frees locally. Errors are ignored here.
  ncclCommFinalize(c);
  ncclCommDestroy(c);
}

std::string nccl_version_string() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

}  // namespace scalebench::gpu
