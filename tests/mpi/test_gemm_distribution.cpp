// --distribution shared against replicated: on integer fill every product is exact, so the node-
// shared scheme (A, B and C once per node in MPI-3 shared windows) must give C bit for bit —
// uneven rows, fp64 and fp32, both CPU backends; the record must say B is held once per node and
// that nothing was copied inside the node; the fallback (no shared windows) must run the
// replicated scheme and say why. Every rank count from 1 to 4 runs on one node; the cluster test
// (tests/cluster/test_shared.sh) runs this program on 2 hosts.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gemm_checks.hpp"
#include "gemm_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"
#include "workloads/gemm/algorithms/node_shared.hpp"

using namespace scalebench;

namespace {

// NUMA domains of this machine (1 where the kernel shows none).
int numa_domains() {
  int count = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
    const std::string name = e.path().filename().string();
    count += name.rfind("node", 0) == 0 && name.size() > 4 && std::isdigit(static_cast<unsigned char>(name[4])) ? 1 : 0;
  }
  return count > 0 ? count : 1;
}

GemmConfig distribution_config(const GemmShape& shape, Precision p, GemmDistribution d) {
  GemmConfig cfg = exact_gemm_config(shape, p, 977);
  cfg.distribution = d;
  cfg.reps = 2;  // the second repeat reuses the windows: every sync is exercised twice
  return cfg;
}

void expect_shared_identical(const GemmShape& shape, Precision p, GemmBackendKind backend) {
  GemmConfig rep = distribution_config(shape, p, GemmDistribution::replicated);
  rep.backend = backend;
  expect_shared_same_as_replicated(rep, to_string(backend) + " " + to_string(p));
}

}  // namespace

TEST(SharedDistribution, BitIdenticalToReplicatedFp64UnevenRows) {
  expect_shared_identical({37, 41, 53}, Precision::fp64, GemmBackendKind::openblas);
  expect_shared_identical({7, 64, 5}, Precision::fp64, GemmBackendKind::openblas);
}

TEST(SharedDistribution, BitIdenticalToReplicatedFp32UnevenRows) {
  expect_shared_identical({43, 39, 59}, Precision::fp32, GemmBackendKind::openblas);
}

TEST(SharedDistribution, NaiveBackendReadsAndWritesInPlace) {
  expect_shared_identical({29, 31, 17}, Precision::fp64, GemmBackendKind::naive);
}

TEST(SharedDistribution, RecordHoldsBOncePerNodeAndMovesNothingInsideIt) {
  const auto comm = Communicator::world();
  const GemmShape shape{33, 24, 40};
  GemmConfig cfg = distribution_config(shape, Precision::fp64, GemmDistribution::shared);
  cfg.peer = true;
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  GemmConfig rep_cfg = cfg;
  rep_cfg.distribution = GemmDistribution::replicated;
  const GemmResult rep = run_gemm_keeping_c(rep_cfg, comm);
  bool ok = r.ok && rep.ok;
  if (comm.is_root()) {
    const double b_bytes = 24.0 * 40 * 8;
    const auto& d = r.record.at("distribution");
    const int nodes = r.record.at("nodes").get<int>();
    // One B per node — one per NUMA domain where the ranks are bound to single domains, so
    // exactly one on a machine of one domain — and every rank on one of the nodes.
    int ranks = 0, extra_copies = 0;
    for (const auto& node : d.at("host_memory_per_node")) {
      const int copies = node.at("b_copies").get<int>();
      ok = ok && copies >= 1 && copies <= node.at("ranks").get<int>() && (numa_domains() > 1 || copies == 1) &&
           node.at("b_bytes").get<double>() == copies * b_bytes;
      extra_copies += copies - 1;
      ranks += node.at("ranks").get<int>();
    }
    ok = ok && ranks == comm.size() && static_cast<int>(d.at("host_memory_per_node").size()) == nodes;
    // Nothing is copied inside a node but B into each further NUMA domain's copy; B crosses to
    // each other node once.
    for (const char* phase : {"scatter", "gather"}) {
      ok = ok && d.at("bytes_moved").at(phase).at("intra_node_bytes").get<double>() == 0.0;
      ok = ok && r.record.at("phases").contains(phase);
    }
    ok = ok && d.at("bytes_moved").at("broadcast").at("intra_node_bytes").get<double>() == extra_copies * b_bytes;
    ok = ok && d.at("bytes_moved").at("broadcast").at("inter_node_bytes").get<double>() == (nodes - 1) * b_bytes;
    ok = ok && r.record.at("config").at("distribution") == "shared" && r.record.at("warnings").empty();
    // The replicated scheme holds one B per rank and copies B to every other rank of rank 0's node.
    int on_root_host = 0;
    for (const auto& info : rep.record.at("rank_info"))
      on_root_host += info.at("host") == rep.record.at("rank_info")[0].at("host");
    const auto& rd = rep.record.at("distribution");
    ok = ok && rd.at("host_memory_per_node")[0].at("b_copies").get<int>() == on_root_host &&
         rd.at("bytes_moved").at("broadcast").at("intra_node_bytes").get<double>() == (on_root_host - 1) * b_bytes;
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(SharedDistribution, CorruptedRowsAreFoundAndTheirRankNamed) {
  const auto comm = Communicator::world();
  expect_corruption_named(distribution_config({40, 40, 40}, Precision::fp64, GemmDistribution::shared), comm);
}

TEST(SharedDistribution, WithoutSharedWindowsFallsBackToReplicatedAndSaysWhy) {
  const auto comm = Communicator::world();
  const GemmShape shape{21, 19, 23};
  GemmConfig cfg = distribution_config(shape, Precision::fp64, GemmDistribution::shared);
  setenv("SCALEBENCH_NO_SHARED_WINDOWS", "1", 1);
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  unsetenv("SCALEBENCH_NO_SHARED_WINDOWS");
  bool ok = r.ok;
  if (comm.is_root()) {
    const auto& d = r.record.at("distribution");
    ok = ok && d.at("scheme") == "replicated" && d.at("requested_scheme") == "shared" &&
         r.c == exact_integer_product(shape, cfg.seed);
    bool warned = false;
    for (const auto& w : r.record.at("warnings")) {
      warned = warned || w.get<std::string>().find("SCALEBENCH_NO_SHARED_WINDOWS") != std::string::npos;
    }
    ok = ok && warned;
  }
  EXPECT_TRUE(all_ranks(ok));
}

// The memory check charges a run that will fall back the replicated scheme's memory (rank 0: A,
// B and C whole), not the windows' it will not make.
TEST(SharedDistribution, FallbackIsChargedTheReplicatedMemory) {
  const auto comm = Communicator::world();
  const GemmConfig cfg = distribution_config({64, 48, 40}, Precision::fp64, GemmDistribution::shared);
  setenv("SCALEBENCH_NO_SHARED_WINDOWS", "1", 1);
  const std::string refusal = shared_windows_refusal(cfg, comm);
  const std::int64_t fallback = shared_host_bytes(cfg, comm, refusal);
  unsetenv("SCALEBENCH_NO_SHARED_WINDOWS");
  EXPECT_TRUE(all_ranks(refusal.find("SCALEBENCH_NO_SHARED_WINDOWS") != std::string::npos));
  const RowPartition rows(cfg.shape.m, comm.size());
  EXPECT_TRUE(all_ranks(fallback == host_bytes_per_rank(cfg, rows.block(comm.rank()).count, comm.is_root())));
  EXPECT_TRUE(all_ranks(shared_windows_refusal(cfg, comm).empty()));  // a few MiB: any usable backing folder has that
}

// A value of SCALEBENCH_NO_SHARED_WINDOWS that is neither yes nor no, on one rank only, is the
// same usage error on every rank (naming the variable), and no rank is left waiting.
TEST(SharedDistribution, OddNoSharedWindowsValueIsAnAgreedUsageError) {
  const auto comm = Communicator::world();
  const GemmConfig cfg = distribution_config({16, 16, 16}, Precision::fp64, GemmDistribution::shared);
  const int odd_rank = comm.size() - 1;
  if (comm.rank() == odd_rank) setenv("SCALEBENCH_NO_SHARED_WINDOWS", "maybe", 1);
  bool agreed = false;
  try {
    (void)shared_windows_refusal(cfg, comm);
  } catch (const AgreedError& e) {
    agreed = e.code() == ExitCode::usage && e.failing_rank() == odd_rank &&
             std::string(e.what()).find("SCALEBENCH_NO_SHARED_WINDOWS='maybe'") != std::string::npos;
  }
  unsetenv("SCALEBENCH_NO_SHARED_WINDOWS");
  EXPECT_TRUE(all_ranks(agreed));
}

// The replicated gather of C, counted by hand: rank r > 0 sends its rows·n elements and nothing
// else, rank 0 receives their sum; the record's declared bytes and the transport's counted bytes
// both say so (the host-staged GPU row gathers through the same transport).
TEST(ReplicatedDistribution, GatherBytesMatchTheHandCount) {
  const auto comm = Communicator::world();
  const GemmShape shape{37, 41, 53};  // rows uneven over 2, 3 and 4 ranks
  const GemmConfig cfg = distribution_config(shape, Precision::fp64, GemmDistribution::replicated);
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root()) {
    const RowPartition rows(shape.m, comm.size());
    const std::int64_t e = 8;
    const auto& d = r.record.at("distribution");
    const auto& declared = d.at("bytes_per_rank").at("gather");
    std::int64_t to_root = 0;
    for (int q = 0; q < comm.size(); ++q) {
      const std::int64_t mine = q == 0 ? 0 : rows.counts()[static_cast<std::size_t>(q)] * shape.n * e;
      to_root += mine;
      ok = ok && declared.at(static_cast<std::size_t>(q)).get<std::int64_t>() == mine;
      if (q > 0 && !d.at("communication").is_null()) {
        ok = ok &&
             d.at("communication").at("bytes_sent_per_rank").at(static_cast<std::size_t>(q)).get<std::int64_t>() ==
                 mine;
      }
    }
    if (comm.size() > 1) {
      const auto& received = d.at("communication").at("bytes_received_per_rank").at(0);
      ok = ok && received.get<std::int64_t>() == to_root;
    }
  }
  EXPECT_TRUE(all_ranks(ok));
}

// Replicated B of 2 MiB (4 segments) goes along the ranks in order from 3 ranks on: each rank but
// rank 0 receives it from the rank before, each but the last forwards it, and C is exact; with 1 or
// 2 ranks it is MPI's broadcast (rank 0 sends it once). The record's network section counts the
// chain's bytes (between hosts where two neighbours are on different ones) and says which way B
// went.
TEST(ReplicatedDistribution, LargeBGoesAlongTheRanksInOrder) {
  const auto comm = Communicator::world();
  const GemmShape shape{37, 512, 512};  // B: 512 × 512 doubles = 4 segments of 512 KiB
  const GemmConfig cfg = distribution_config(shape, Precision::fp64, GemmDistribution::replicated);
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root()) {
    const int size = comm.size();
    const bool chain = size >= 3;
    const RowPartition rows(shape.m, size);
    const std::int64_t e = 8, b_bytes = shape.k * shape.n * e;
    ok = ok && r.c == exact_integer_product(shape, cfg.seed);
    const auto& net = r.record.at("network");
    ok = ok && (net.at("model").get<std::string>().find("B relayed along the ranks") != std::string::npos) == chain;
    if (size > 1) {
      // Each rank's B from the rank before it along the chain, else from rank 0: between hosts
      // where that rank is on another one (the cluster runs this on two hosts, round-robin).
      const auto& info = r.record.at("rank_info");
      std::int64_t intra = 0, inter = 0;
      for (int q = 1; q < size; ++q) {
        const auto from = static_cast<std::size_t>(chain ? q - 1 : 0);
        (info.at(static_cast<std::size_t>(q)).at("host") == info.at(from).at("host") ? intra : inter) += b_bytes;
      }
      const auto& b = net.at("phases").at("broadcast");
      ok = ok && b.at("intra_node_bytes").get<double>() == static_cast<double>(intra) &&
           b.at("inter_node_bytes").get<double>() == static_cast<double>(inter);
      const auto& c = r.record.at("distribution").at("communication");
      for (int q = 1; q < size; ++q) {
        const auto i = static_cast<std::size_t>(q);
        const std::int64_t a = rows.counts()[i] * shape.k * e, cq = rows.counts()[i] * shape.n * e;
        const bool forwards = chain && q < size - 1;
        ok = ok && c.at("bytes_received_per_rank").at(i).get<std::int64_t>() == a + b_bytes;
        ok = ok && c.at("bytes_sent_per_rank").at(i).get<std::int64_t>() == cq + (forwards ? b_bytes : 0);
      }
    }
  }
  EXPECT_TRUE(all_ranks(ok));
}
