#pragma once
// Which phases cross the network: nodes and ranks per node from the ranks' hosts, the bytes a
// phase moves between nodes and within them, and the bare MPI collective of a phase's bytes (the
// network peer). docs/output.md, "nodes" and "network".
#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include <nlohmann/json.hpp>

#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/repeats.hpp"
#include "scalebench/mpi/timing.hpp"

namespace scalebench {

// The host of every rank, by rank, from a run context's rank_info (rank 0 only).
std::vector<std::string> rank_hosts(const nlohmann::json& context);
// Adds "nodes" (distinct hosts) and "ranks_per_node" (the most ranks on one node) to a record
// holding rank_info.
void add_node_counts(nlohmann::json& record);
// Bytes a root-to-ranks (or ranks-to-root) phase moves: elements[r] to or from rank r, the
// root's own share not moved; split into inter-node (rank r on another host than the root) and
// intra-node bytes.
nlohmann::json phase_traffic(const std::vector<std::string>& hosts, const std::vector<std::int64_t>& elements,
                             std::size_t element_size, int root = 0);

// Bytes a relay along the ranks in order moves: `count` elements into every rank but the first
// from the rank before it, intra-node where both are on one host.
nlohmann::json chain_traffic(const std::vector<std::string>& hosts, std::int64_t count, std::size_t element_size);

// gemm's "network" section: per phase (scatter, broadcast, gather) the bytes between and within
// nodes (B along the chain where `b_along_chain`, chain_traffic); beside scatter and broadcast their bare MPI peer
// (from `bare`: "bare_scatterv", "bare_bcast") with ratio_phase_vs_bare = bare median / phase median.
nlohmann::json gemm_network(const std::vector<std::string>& hosts, const std::vector<std::int64_t>& a_counts,
                            const std::vector<std::int64_t>& c_counts, std::int64_t b_count, std::size_t element_size,
                            const PhaseList& phases, const PhaseList& bare, bool b_along_chain);

// The network peer of gemm's scatter and broadcast: one bare MPI_Scatterv and one MPI_Bcast of the
// same bytes between the same ranks, with the run's warm-up and repeats (warm-up dropped), into
// `rec` as "bare_scatterv" and "bare_bcast". Nothing when a count exceeds MPI's int (the phases
// then go in chunks: no single call to compare with). Collective.
template <class T>
void time_bare_collectives(const RepeatLoop& loop, const Communicator& comm, PhaseRecorder& rec, const T* a_full,
                           const std::vector<std::int64_t>& counts, const std::vector<std::int64_t>& displs, T* a_mine,
                           std::int64_t recv_count, T* b, std::int64_t b_count) {
  const std::int64_t limit = kMaxMpiCount;
  const bool root = comm.is_root();
  int fits = b_count <= limit && recv_count <= limit ? 1 : 0;
  std::vector<int> c, d;
  if (root) {
    for (std::size_t i = 0; i < counts.size(); ++i) {
      fits = fits && counts[i] <= limit && displs[i] + counts[i] <= limit ? 1 : 0;
      c.push_back(static_cast<int>(counts[i]));
      d.push_back(static_cast<int>(displs[i]));
    }
  }
  SCALEBENCH_MPI(MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, comm.get()));
  if (fits == 0) return;
  for (int rep = 0; rep < loop.total(); ++rep) {
    loop.begin(rep, rec);
    {
      ScopedPhase t(rec, phase::bare_scatterv);
      SCALEBENCH_MPI(MPI_Scatterv(a_full, c.data(), d.data(), mpi_type<T>(), root ? MPI_IN_PLACE : a_mine,
                                  static_cast<int>(recv_count), mpi_type<T>(), 0, comm.get()));
    }
    {
      ScopedPhase t(rec, phase::bare_bcast);
      SCALEBENCH_MPI(MPI_Bcast(b, static_cast<int>(b_count), mpi_type<T>(), 0, comm.get()));
    }
    rec.next_repeat();
  }
}

}  // namespace scalebench
