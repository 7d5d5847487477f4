#pragma once
// The gemm run's ScaLAPACK peer (--peer scalapack): PDGEMM/PSGEMM on the run's ranks, grid and
// block width, as shipped and with its k-step tuned to the block width, and the record's
// "peers.scalapack" section with the ratios run/peer (docs/output.md, "peers").
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/mpi/timing.hpp"
#include "scalebench/peers/scalapack.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

namespace scalebench {

struct ScalapackPeerRun {
  ProcessGrid grid;
  std::int64_t block_width = 0;
  ScalapackPeerResult shipped, tuned;
};

// Host bytes the peer adds on `rank` of `ranks` (its pieces of A, B and C; rank 0 also the packed
// copies and C whole); 0 without --peer scalapack.
std::int64_t scalapack_peer_host_bytes(const GemmConfig& cfg, int ranks, int rank);

// Before any work, on every rank (no communication): what the peer would refuse for this run on
// `grid` (check_scalapack_peer: a build without ScaLAPACK, sizes beyond its integer); nothing
// without --peer scalapack.
void check_scalapack_peer_run(const GemmConfig& cfg, const ProcessGrid& grid);

// Both variants after the run's repeats. Collective. `whole`: rank 0's A and B; `grid`: the run's.
ScalapackPeerRun run_scalapack_peer(const GemmConfig& cfg, const GemmTestHooks& hooks, const Communicator& comm,
                                    const HostMatrices& whole, const ProcessGrid& grid, const std::vector<double>& x);

// The record's peers.scalapack: the run's times from its phases (`timed`) against each variant's.
nlohmann::json scalapack_peer_json(const ScalapackPeerRun& run, const GemmConfig& cfg, const PhaseList& timed,
                                   const nlohmann::json& distribution);
// The warnings of the section (a tuned variant whose k-step the library never asked for).
std::vector<std::string> scalapack_peer_warnings(const nlohmann::json& section);
// The table's lines for the section ("" when the record has none).
std::string scalapack_peer_lines(const nlohmann::json& record);
// The failure line of a variant whose product failed Freivalds' check (none when both passed).
std::vector<std::string> scalapack_peer_failures(const ScalapackPeerRun& run);

}  // namespace scalebench
