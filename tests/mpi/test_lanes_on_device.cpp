// make_lanes_on_device (transport.hpp): a broadcast or relay over the lanes' group goes to the
// device transport, with the view marked as device memory (the page-locked host buffer, in
// place), and waits for it; every other call, and every call where the rank has no device
// transport, goes to the host transport with the view as given. A stand-in device transport
// records what it is given and moves it with MPI: runs everywhere (the real one, NCCL on
// page-locked host memory, is test_device_primitives.cpp's).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "mpi_test_util.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/transport.hpp"

using namespace scalebench;

namespace {

struct Log {
  int broadcasts = 0, synchronized = 0, not_device = 0;
};

// Moves through MPI what it is given, after noting it: views must say device memory.
class StandInDevice final : public BufferTransport {
 public:
  explicit StandInDevice(Log& log) : log_(log), mpi_(make_mpi_transport(1 << 20)) {}
  std::string name() const override { return "stand-in device"; }
  MemorySpace space() const override { return MemorySpace::device; }
  void synchronize() override { ++log_.synchronized; }
  void broadcast(const BufferView& buf, int root, const Communicator& group) override {
    ++log_.broadcasts;
    if (buf.space != MemorySpace::device) ++log_.not_device;
    BufferView host = buf;
    host.space = MemorySpace::host;
    mpi_->broadcast(host, root, group);
  }
  void send(const BufferView&, int, const Communicator&) override { ADD_FAILURE() << "send on the device"; }
  void receive(const BufferView&, int, const Communicator&) override { ADD_FAILURE() << "receive on the device"; }
  void scatter(const BufferView&, const std::vector<std::int64_t>&, const std::vector<std::int64_t>&, const BufferView&,
               int, const Communicator&) override {
    ADD_FAILURE() << "scatter on the device";
  }
  void gather(const BufferView&, const BufferView&, const std::vector<std::int64_t>&, const std::vector<std::int64_t>&,
              int, const Communicator&) override {
    ADD_FAILURE() << "gather on the device";
  }

 private:
  Log& log_;
  std::unique_ptr<BufferTransport> mpi_;
};

std::vector<double> counting(std::int64_t n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

}  // namespace

TEST(LanesOnDevice, BroadcastAndRelayOverTheLanesGoToTheDeviceTheRestToTheHost) {
  const auto comm = Communicator::world();
  const Communicator lanes = comm.split(0, comm.rank());
  Log log;
  const auto t = make_lanes_on_device(make_mpi_transport(1 << 20), std::make_unique<StandInDevice>(log), lanes);
  EXPECT_EQ(t->name(), "mpi");
  EXPECT_EQ(t->space(), MemorySpace::host);
  const std::int64_t n = 5000;
  const std::vector<double> want = counting(n);
  std::vector<double> a(static_cast<std::size_t>(n), -1.0), b(a), c(a);
  if (comm.is_root()) a = b = c = want;
  t->broadcast(view_of(a.data(), n), 0, lanes);
  t->relay(view_of(b.data(), n), 0, lanes);
  t->broadcast(view_of(c.data(), n), 0, comm);  // another group: the host's
  EXPECT_TRUE(all_ranks(a == want && b == want && c == want));
  EXPECT_EQ(log.broadcasts, 2);
  EXPECT_EQ(log.synchronized, 2);
  EXPECT_EQ(log.not_device, 0);
  // Point to point and the collectives with counts stay on the host (the stand-in fails them).
  const int peer = comm.size() - 1;
  std::vector<double> d(static_cast<std::size_t>(n), comm.is_root() ? 7.0 : 0.0);
  if (peer != 0 && comm.is_root()) t->send(view_of(d.data(), n), peer, lanes);
  if (peer != 0 && comm.rank() == peer) t->receive(view_of(d.data(), n), 0, lanes);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(comm.size()), 3), displs(counts.size());
  for (std::size_t r = 0; r < displs.size(); ++r) displs[r] = static_cast<std::int64_t>(3 * r);
  std::vector<double> whole(static_cast<std::size_t>(3 * comm.size()), 0.0), mine(3, 0.0);
  if (comm.is_root()) whole = counting(3 * comm.size());
  t->scatter(view_of(whole.data(), 3 * comm.size()), counts, displs, view_of(mine.data(), 3), 0, lanes);
  EXPECT_EQ(mine[0], 1.0 + 3.0 * comm.rank());
  EXPECT_EQ(log.broadcasts, 2);
  EXPECT_TRUE(all_ranks(comm.rank() != peer || d[0] == 7.0));
}

TEST(LanesOnDevice, WithoutADeviceTransportEveryCallGoesToTheHost) {
  const auto comm = Communicator::world();
  const auto t = make_lanes_on_device(make_mpi_transport(1 << 20), nullptr, comm);
  const std::int64_t n = 777;
  const std::vector<double> want = counting(n);
  std::vector<double> a(static_cast<std::size_t>(n), -1.0);
  if (comm.is_root()) a = want;
  t->relay(view_of(a.data(), n), 0, comm);  // the MPI transport refuses a view marked device
  EXPECT_TRUE(all_ranks(a == want));
}
