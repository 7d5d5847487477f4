// The device's primitives, which Row1D's GPU schedules are written over, against what the host
// computes: strided and plain copies move exactly the bytes a host copy would; an event orders
// two streams; time_on_device measures enqueued work; the device buffer transport's all-gather
// gives the host transport's result for equal, uneven and empty blocks; the host transport with
// its lanes on the device (make_lanes_on_device: NCCL reading and writing page-locked host memory
// in place) broadcasts and relays a host buffer as MPI does. Needs one visible GPU per rank
// (NCCL), and skips, saying so, otherwise.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "mpi_test_util.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/transport.hpp"
#include "test_gemm_gpu_util.hpp"

using namespace scalebench;

namespace {

std::vector<double> counting(std::int64_t n, double from) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

void select_gpu() { select_gpu_for_rank(Communicator::world(), false, "the device primitives test"); }

// Rank r fills its block of a rows × row_len buffer with the gathered values, everything else
// with -1; after the all-gather every element is in place, on the device as on the host.
bool device_all_gather_matches_host(std::int64_t rows, std::int64_t row_len) {
  const auto comm = Communicator::world();
  const RowPartition part(rows, comm.size());
  const auto counts = part.counts_times(row_len), displs = part.offsets_times(row_len);
  const Block mine = part.block(comm.rank());
  const std::int64_t total = rows * row_len;
  const std::vector<double> want = counting(total, 1.0);
  std::vector<double> host(static_cast<std::size_t>(total), -1.0);
  for (std::int64_t i = mine.offset * row_len; i < (mine.offset + mine.count) * row_len; ++i) {
    host[static_cast<std::size_t>(i)] = want[static_cast<std::size_t>(i)];
  }
  const OwnedStream stream;
  DeviceArray dev(static_cast<std::size_t>(total) * sizeof(double));
  copy_async(dev.data(), host.data(), dev.bytes(), CopyKind::host_to_device, stream.get());
  const auto device_transport = make_device_buffer_transport(comm, stream.get());
  device_transport->all_gather({dev.data(), total, ElementType::f64, MemorySpace::device}, counts, displs, comm);
  std::vector<double> back(host.size(), 0.0);
  copy_async(back.data(), dev.data(), dev.bytes(), CopyKind::device_to_host, stream.get());
  stream.synchronize();
  make_mpi_transport(1 << 20)->all_gather(view_of(host.data(), total), counts, displs, comm);
  return back == host && host == want;
}

}  // namespace

TEST(DevicePrimitives, StridedCopyMovesTheSubMatrixAHostCopyWould) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  select_gpu();
  // Columns [3, 3+5) of rows [0, 7) of a 7 × 11 matrix, in and out again into a 7 × 5 one.
  const std::int64_t rows = 7, cols = 11, first = 3, width = 5;
  const std::vector<double> a = counting(rows * cols, 0.25);
  const OwnedStream s;
  DeviceArray dev(static_cast<std::size_t>(rows * width) * sizeof(double));
  const std::size_t e = sizeof(double);
  copy_strided_async({dev.data(), width * e, a.data() + first, cols * e, width * e, rows}, CopyKind::host_to_device,
                     s.get());
  std::vector<double> out(static_cast<std::size_t>(rows * width), 0.0);
  copy_async(out.data(), dev.data(), dev.bytes(), CopyKind::device_to_host, s.get());
  s.synchronize();
  bool ok = true;
  for (std::int64_t i = 0; i < rows; ++i) {
    ok = ok && std::memcmp(&out[static_cast<std::size_t>(i * width)], &a[static_cast<std::size_t>(i * cols + first)],
                           width * e) == 0;
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(DevicePrimitives, EventOrdersTwoStreamsAndTimesTheirWork) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  select_gpu();
  const std::int64_t n = std::int64_t{1} << 22;  // 32 MiB: long enough to be caught out of order
  const std::vector<double> a = counting(n, 2.0);
  const OwnedStream first, second(OwnedStream::Priority::high);
  DeviceArray x(static_cast<std::size_t>(n) * sizeof(double)), y(x.bytes());
  const double seconds = time_on_device(first.get(), [&] {
    copy_async(x.data(), a.data(), x.bytes(), CopyKind::host_to_device, first.get());
  });
  const DeviceEvent in;
  copy_async(x.data(), a.data(), x.bytes(), CopyKind::host_to_device, first.get());
  in.record(first.get());
  in.make_wait(second.get());
  copy_async(y.data(), x.data(), y.bytes(), CopyKind::device_to_device, second.get());
  std::vector<double> back(a.size(), 0.0);
  copy_async(back.data(), y.data(), y.bytes(), CopyKind::device_to_host, second.get());
  second.synchronize();
  EXPECT_TRUE(all_ranks(back == a && seconds > 0.0)) << "copy took " << seconds << " s";
}

TEST(DevicePrimitives, DeviceAllGatherGivesTheHostTransportsResult) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  select_gpu();
  const int ranks = Communicator::world().size();
  EXPECT_TRUE(all_ranks(device_all_gather_matches_host(4L * ranks, 3))) << "equal blocks";
  EXPECT_TRUE(all_ranks(device_all_gather_matches_host(4L * ranks + 1, 5))) << "uneven blocks";
  EXPECT_TRUE(all_ranks(device_all_gather_matches_host(ranks > 1 ? ranks - 1 : 1, 2))) << "a rank with no rows";
}

TEST(DevicePrimitives, LanesOnTheDeviceMovePageLockedHostMemoryInPlace) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  select_gpu();
  const auto comm = Communicator::world();
  const Communicator other = comm.split(0, comm.rank());  // the same ranks, another group: MPI's
  const OwnedStream stream;
  const auto t = make_lanes_on_device(make_mpi_transport(1 << 20), make_device_buffer_transport(comm, stream.get()),
                                      comm);
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{3} << 20}) {
    const std::vector<double> want = counting(n, 2.0);
    std::vector<double> lanes(static_cast<std::size_t>(n), -1.0), relayed(lanes), host(lanes);
    if (comm.is_root()) lanes = relayed = host = want;
    const HostMemoryPin pin_lanes(lanes.data(), lanes.size() * sizeof(double));
    const HostMemoryPin pin_relayed(relayed.data(), relayed.size() * sizeof(double));
    t->broadcast(view_of(lanes.data(), n), 0, comm);
    t->relay(view_of(relayed.data(), n), 0, comm);
    t->broadcast(view_of(host.data(), n), 0, other);  // not the lanes' group: host MPI, unpinned
    EXPECT_TRUE(all_ranks(lanes == want && relayed == want && host == want)) << n << " elements";
  }
}
