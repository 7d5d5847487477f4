// BufferTransport::all_gather: every rank ends with every block, in place, for equal and uneven
// blocks and empty ones. On the host (MPI, the default: one broadcast per block) it runs
// everywhere; the device transport's (NCCL: in-place all-gather or broadcasts in one group) is
// compared with it in test_device_primitives.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mpi_test_util.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/transport.hpp"

using namespace scalebench;

namespace {

// Element i of the gathered buffer: a value no other element has.
double value_at(std::int64_t i) { return 1.0 + 0.5 * static_cast<double>(i); }

bool all_gather_on_host(std::int64_t rows, std::int64_t row_len) {
  const auto comm = Communicator::world();
  const RowPartition part(rows, comm.size());
  const auto counts = part.counts_times(row_len), displs = part.offsets_times(row_len);
  const Block mine = part.block(comm.rank());
  std::vector<double> buf(static_cast<std::size_t>(rows * row_len), -1.0);
  for (std::int64_t i = mine.offset * row_len; i < (mine.offset + mine.count) * row_len; ++i) {
    buf[static_cast<std::size_t>(i)] = value_at(i);
  }
  const auto transport = make_mpi_transport(1 << 20);
  transport->all_gather(view_of(buf.data(), rows * row_len), counts, displs, comm);
  bool ok = true;
  for (std::int64_t i = 0; i < rows * row_len; ++i) ok = ok && buf[static_cast<std::size_t>(i)] == value_at(i);
  return ok;
}

}  // namespace

TEST(HostTransport, AllGatherGivesEveryRankEveryBlock) {
  const int ranks = Communicator::world().size();
  EXPECT_TRUE(all_ranks(all_gather_on_host(4L * ranks, 3))) << "equal blocks";
  EXPECT_TRUE(all_ranks(all_gather_on_host(4L * ranks + 1, 5))) << "uneven blocks";
  EXPECT_TRUE(all_ranks(all_gather_on_host(ranks > 1 ? ranks - 1 : 1, 2))) << "a rank with no rows";
}
