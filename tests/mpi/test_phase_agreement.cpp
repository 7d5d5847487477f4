// Ranks that record different phases (rank 0 packs, a broadcast's root copies, a rank of its own
// kind waits) still reduce the same list: rank 0's. Both per-phase reductions over ranks, the
// record's phase summary and the energy section's per-phase joules, took each rank's own list,
// and the energy section's sizes then differed between ranks (MPI_ERR_TRUNCATE on a GPU host).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mpi_test_util.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"
#include "workloads/energy_run.hpp"

using namespace scalebench;

namespace {

// Rank 0: scatter, compute. The others: pack (not on rank 0), compute, then one phase per rank
// (lists of different lengths and orders).
PhaseRecorder recorded_by_this_rank(const Communicator& comm, int repeats) {
  PhaseRecorder rec;
  for (int r = 0; r < repeats; ++r) {
    if (comm.is_root()) {
      rec.add("scatter", 0.5);
      rec.add("compute", 2.0);
    } else {
      rec.add("pack", 0.25);
      rec.add("compute", 1.0 + comm.rank());
      for (int k = 0; k < comm.rank(); ++k) rec.add("wait_" + std::to_string(k), 0.125);
    }
    rec.next_repeat();
  }
  return rec;
}

}  // namespace

TEST(PhaseAgreement, EveryRankGetsRankZerosList) {
  const auto comm = Communicator::world();
  const PhaseRecorder rec = recorded_by_this_rank(comm, 3);
  const std::vector<std::string> names = agreed_phases(rec, comm);
  EXPECT_TRUE(all_ranks(names == std::vector<std::string>{"scatter", "compute"}));
}

TEST(PhaseAgreement, SummaryReducesRankZerosPhasesWithZerosForTheMissing) {
  const auto comm = Communicator::world();
  const PhaseList phases = summarize_phases(recorded_by_this_rank(comm, 3), comm);
  bool ok = phases.size() == 2 && phases[0].first == "scatter" && phases[1].first == "compute";
  if (ok) {
    // scatter: 0.5 on rank 0 only; compute: the slowest rank's.
    ok = phases[0].second.median == 0.5 && phases[0].second.rank_min == (comm.size() > 1 ? 0.0 : 0.5);
    ok = ok && phases[1].second.median == (comm.size() > 1 ? 1.0 + comm.size() - 1 : 2.0);
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(PhaseAgreement, EnergySectionReducesOneListOnEveryRank) {
  const auto comm = Communicator::world();
  const PhaseRecorder rec = recorded_by_this_rank(comm, 3);
  EnergyRun energy(comm, "");
  energy.sample_idle();
  for (int r = 0; r <= 4; ++r) energy.mark();
  const nlohmann::json section = energy.section(4, 1, EnergyWork{"GFLOP", 1.0}, rec);
  bool ok = comm.is_root() ? section.is_object() && section.contains("available") : section.is_null();
  if (comm.is_root() && section.contains("phases_folded")) {
    // Rank 0's phases are the ones asked, a phase it did not record is not.
    for (const auto& [name, why] : section["phases_folded"].items())
      ok = ok && (name == "scatter" || name == "compute");
  }
  EXPECT_TRUE(all_ranks(ok)) << section.dump();
  // The ranks are still in step: a collective after the section completes with the same value.
  EXPECT_EQ(comm.sum(1.0), static_cast<double>(comm.size()));
}
