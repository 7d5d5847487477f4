// Chunked collectives give exactly what one big call would, for uneven counts, at any rank count.
#include <gtest/gtest.h>

#include <numeric>

#include "mpi_test_util.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/mpi/mpi.hpp"

using namespace scalebench;

namespace {

std::vector<double> iota_vector(std::int64_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

void scatter_gather_roundtrip(std::int64_t rows, std::int64_t row_len, std::int64_t chunk) {
  const auto comm = Communicator::world();
  const RowPartition part(rows, comm.size());
  const auto counts = part.counts_times(row_len), displs = part.offsets_times(row_len);
  const auto mine = part.block(comm.rank());
  std::vector<double> full = comm.is_root() ? iota_vector(rows * row_len) : std::vector<double>{};
  std::vector<double> local(mine.count * row_len, -1.0);
  scatterv(full.data(), counts, displs, local.data(), mine.count * row_len, 0, comm, chunk);
  bool ok = true;
  for (std::int64_t i = 0; i < mine.count * row_len; ++i) {
    ok = ok && local[i] == static_cast<double>(mine.offset * row_len + i + 1);
  }
  EXPECT_TRUE(all_ranks(ok)) << "scatter, chunk " << chunk;
  for (auto& v : local) v *= 2;
  std::vector<double> back(comm.is_root() ? rows * row_len : 0, 0.0);
  gatherv(local.data(), mine.count * row_len, back.data(), counts, displs, 0, comm, chunk);
  bool gathered = true;
  if (comm.is_root()) {
    for (std::int64_t i = 0; i < rows * row_len; ++i)
      gathered = gathered && back[i] == 2.0 * static_cast<double>(i + 1);
  }
  EXPECT_TRUE(all_ranks(gathered)) << "gather, chunk " << chunk;
}

}  // namespace

TEST(Collectives, ScatterGatherUnchunkedUnevenRows) { scatter_gather_roundtrip(13, 7, kMaxMpiCount); }

TEST(Collectives, ScatterGatherChunkedSmallerThanABlock) {
  scatter_gather_roundtrip(13, 7, 5);
  scatter_gather_roundtrip(101, 3, 1);
}

TEST(Collectives, RootBlockInPlaceIsLeftAloneAndTheOthersMove) {
  const auto comm = Communicator::world();
  const std::int64_t rows = 11, row_len = 3;
  const RowPartition part(rows, comm.size());
  const auto counts = part.counts_times(row_len), displs = part.offsets_times(row_len);
  const auto mine = part.block(comm.rank());
  for (std::int64_t chunk : {kMaxMpiCount, std::int64_t{2}}) {
    std::vector<double> full = comm.is_root() ? iota_vector(rows * row_len) : std::vector<double>{};
    std::vector<double> own(comm.is_root() ? 0 : mine.count * row_len, 0.0);
    double* block = comm.is_root() ? full.data() : own.data();
    scatterv(full.data(), counts, displs, block, mine.count * row_len, 0, comm, chunk);
    bool ok = true;
    for (std::int64_t i = 0; i < mine.count * row_len; ++i) {
      ok = ok && block[i] == static_cast<double>(mine.offset * row_len + i + 1);
      block[i] = -block[i];
    }
    gatherv(block, mine.count * row_len, full.data(), counts, displs, 0, comm, chunk);
    if (comm.is_root()) {
      for (std::int64_t i = 0; i < rows * row_len; ++i) ok = ok && full[i] == -static_cast<double>(i + 1);
    }
    EXPECT_TRUE(all_ranks(ok)) << "chunk " << chunk;
  }
}

TEST(Collectives, BroadcastChunkedEqualsWhole) {
  const auto comm = Communicator::world();
  for (std::int64_t chunk : {kMaxMpiCount, std::int64_t{3}, std::int64_t{1000}}) {
    std::vector<double> v = comm.is_root() ? iota_vector(1001) : std::vector<double>(1001, 0.0);
    bcast(v.data(), 1001, 0, comm, chunk);
    EXPECT_TRUE(all_ranks(v == iota_vector(1001))) << "chunk " << chunk;
  }
}

// The relay along the chain gives every rank the root's bytes, from any root, whatever the
// segments: fewer than the window, more, a short last one, and too few to go along the chain
// (then MPI_Bcast).
TEST(Collectives, RelayGivesEveryRankTheRootsBytesFromAnyRoot) {
  const auto comm = Communicator::world();
  for (int root = 0; root < comm.size(); ++root) {
    for (const auto& [bytes, segment] : std::vector<std::pair<std::int64_t, std::int64_t>>{
             {8 * 1001, 64}, {8 * 1001, 8 * 1001 / 3}, {8 * 4096, 8 * 100}, {8 * 1001, 8 * 1001}, {8, 64}}) {
      const std::int64_t n = bytes / 8;
      std::vector<double> v = comm.rank() == root ? iota_vector(n) : std::vector<double>(n, 0.0);
      relay_bytes(v.data(), bytes, root, comm, segment);
      EXPECT_TRUE(all_ranks(v == iota_vector(n)))
          << "root " << root << ", " << bytes << " bytes in segments of " << segment;
    }
  }
}

// B's lanes between nodes: one per rank of the smallest node, each carrying at least the
// segments that take the chain (so a lane goes along it where the whole would).
TEST(Collectives, BLanesAreTheSmallestNodesRanksButNoneBelowFourSegments) {
  const std::int64_t lane = kRelayMinSegments * kRelaySegmentBytes;  // 2 MiB
  EXPECT_EQ(b_lanes(2, std::int64_t{8192} * 8192 * 8), 2);           // 537 MB, 2 ranks a node
  EXPECT_EQ(b_lanes(64, std::int64_t{8192} * 8192 * 8), 64);
  EXPECT_EQ(b_lanes(64, 769 * 767 * 8), 2);  // 4.7 MB: two lanes of 2.36 MB
  EXPECT_EQ(b_lanes(64, 2 * lane - 1), 1);
  EXPECT_EQ(b_lanes(64, 2 * lane), 2);
  EXPECT_EQ(b_lanes(4, 600 * 600 * 8), 1);  // 2.9 MB: the leaders alone
  EXPECT_EQ(b_lanes(1, std::int64_t{1} << 40), 1);
  EXPECT_EQ(b_lanes(8, 0), 1);
  for (int ranks = 1; ranks <= 8; ++ranks) {
    for (const std::int64_t bytes : {lane, 3 * lane + 5, 100 * lane}) {
      const int l = b_lanes(ranks, bytes);
      EXPECT_TRUE(l >= 1 && l <= ranks && (l == 1 || bytes / l >= lane)) << ranks << " ranks, " << bytes << " bytes";
      EXPECT_TRUE(l == 1 || relay_goes_along_chain(3, bytes / l) == relay_goes_along_chain(3, bytes));
    }
  }
}

TEST(Collectives, AgreeTurnsOneRankFailureIntoTheSameErrorEverywhere) {
  const auto comm = Communicator::world();
  const int failing = comm.size() - 1;
  int code = 0;
  std::string message;
  int who = -1;
  try {
    agree(comm, [&] {
      if (comm.rank() == failing) throw ResourceError("rank-specific trouble");
    });
  } catch (const AgreedError& e) {
    code = static_cast<int>(e.code());
    message = e.what();
    who = e.failing_rank();
  }
  EXPECT_TRUE(
      all_ranks(code == static_cast<int>(ExitCode::resource) && message == "rank-specific trouble" && who == failing));
  bool passed = true;
  try {
    agree(comm, [] {});
  } catch (...) {
    passed = false;
  }
  EXPECT_TRUE(all_ranks(passed));
}

TEST(Collectives, ReductionsAndStrings) {
  const auto comm = Communicator::world();
  EXPECT_EQ(comm.max(static_cast<double>(comm.rank())), comm.size() - 1.0);
  EXPECT_EQ(comm.sum(std::int64_t{1}), comm.size());
  EXPECT_EQ(comm.bcast_string(comm.is_root() ? "hello" : "", 0), "hello");
  const auto all = comm.gather_strings(std::to_string(comm.rank() * 10));
  bool ok = true;
  if (comm.is_root()) {
    for (int r = 0; r < comm.size(); ++r) ok = ok && all[r] == std::to_string(r * 10);
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(Collectives, HostsSplitApartNamesEachHostInSeveralGroups) {
  EXPECT_EQ(scalebench::hosts_split_apart({}), "");
  EXPECT_EQ(scalebench::hosts_split_apart({{"a", 0}, {"a", 0}, {"b", 2}, {"b", 2}}), "");
  // Open MPI's split with wrong locality: node2's two ranks each a group of their own.
  EXPECT_EQ(scalebench::hosts_split_apart({{"node1", 0}, {"node1", 0}, {"node2", 2}, {"node2", 3}}),
            "node2 (2 groups)");
  EXPECT_EQ(scalebench::hosts_split_apart({{"b", 0}, {"a", 1}, {"b", 2}, {"a", 3}, {"a", 1}}),
            "a (2 groups), b (2 groups)");
  // One group over two host names (containers of one machine) is MPI's to say: not apart.
  EXPECT_EQ(scalebench::hosts_split_apart({{"c1", 0}, {"c2", 0}}), "");
}

TEST(Collectives, NodeOnOneHostIsMpisSharedSplit) {
  const auto world = Communicator::world();
  const Communicator shared = world.split_shared();
  const Communicator& node = world.node();
  EXPECT_EQ(node.size(), shared.size());
  EXPECT_EQ(node.rank(), shared.rank());
  EXPECT_EQ(world.node_split_note(), "");
  EXPECT_TRUE(world.one_node());
}
