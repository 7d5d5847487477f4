// Row1D's GPU schedules (staged, nccl, shared, overlap, shared overlap) run over a stand-in
// device whose "device memory" is host memory, whose streams run every piece at once in the
// order it is enqueued, and whose buffer transport is the host MPI one: every offset, count and
// row block a schedule computes is exercised on any machine, at any rank count. Small integers
// make C exact: each schedule must give the exact product, on rank 0 (C gathered) or on every
// rank (its rows), and record the phases the GPU schedules record. The real device runs the same
// schedules in the GPU tests (gemm_gpu_*); this one runs in every build, one with CUDA too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "mpi_test_util.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/gpu/device.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "workloads/gemm/algorithms/row1d_gpu/schedule.hpp"

using namespace scalebench;

namespace {

// The most ranks one all-gather moved blocks among (since the last reset).
int g_widest_all_gather = 0;

// A transport of "device" views that are host memory: the MPI transport, told they are host.
class HostViews final : public BufferTransport {
 public:
  void all_gather(const BufferView& b, const std::vector<std::int64_t>& c, const std::vector<std::int64_t>& d,
                  const Communicator& g) override {
    g_widest_all_gather = std::max(g_widest_all_gather, g.size());
    BufferTransport::all_gather(b, c, d, g);
  }
  std::string name() const override { return "host views"; }
  MemorySpace space() const override { return MemorySpace::device; }
  void broadcast(const BufferView& b, int root, const Communicator& g) override { mpi_->broadcast(h(b), root, g); }
  void send(const BufferView& b, int to, const Communicator& g) override { mpi_->send(h(b), to, g); }
  void receive(const BufferView& b, int from, const Communicator& g) override { mpi_->receive(h(b), from, g); }
  void scatter(const BufferView& s, const std::vector<std::int64_t>& c, const std::vector<std::int64_t>& d,
               const BufferView& r, int root, const Communicator& g) override {
    mpi_->scatter(h(s), c, d, h(r), root, g);
  }
  void gather(const BufferView& s, const BufferView& r, const std::vector<std::int64_t>& c,
              const std::vector<std::int64_t>& d, int root, const Communicator& g) override {
    mpi_->gather(h(s), h(r), c, d, root, g);
  }

 private:
  static BufferView h(BufferView v) {
    v.space = MemorySpace::host;
    return v;
  }
  std::unique_ptr<BufferTransport> mpi_ = make_mpi_transport(std::int64_t{1} << 30);
};

// Streams and events are tokens; copies happen when enqueued.
class HostDevice final : public DeviceBackend {
 public:
  HostDevice() : DeviceBackend("host stand-in") {}
  Visibility visibility() const override { return {1, {}}; }
  int select_for_rank(const Communicator&, bool, const std::string&) const override { return 0; }
  nlohmann::json info(int) const override { return nlohmann::json::object(); }
  nlohmann::json library_versions() const override { return nlohmann::json::object(); }
  std::unique_ptr<BufferTransport> make_buffer_transport(const Communicator&, DeviceStream, int) const override {
    return std::make_unique<HostViews>();
  }
  void* acquire(DeviceHandle kind, std::size_t bytes, void* host) const override {
    if (kind == DeviceHandle::memory) return ::operator new(bytes);
    if (kind == DeviceHandle::host_pin) return host;
    return new int(0);
  }
  void release(DeviceHandle kind, void* handle) const noexcept override {
    if (kind == DeviceHandle::memory) {
      ::operator delete(handle);
    } else if (kind != DeviceHandle::host_pin) {
      delete static_cast<int*>(handle);
    }
  }
  void synchronize(DeviceHandle, void*) const override {}
  void record_event(void*, void*) const override {}
  void wait_event(void*, void*) const override {}
  double event_seconds(void*, void*) const override { return 0.0; }
  void copy(const StridedCopy& c, CopyKind, void*) const override {
    for (std::size_t i = 0; i < c.rows; ++i) {
      if (c.row_bytes == 0) break;
      std::memcpy(static_cast<char*>(c.dst) + i * c.dst_pitch, static_cast<const char*>(c.src) + i * c.src_pitch,
                  c.row_bytes);
    }
  }
  nlohmann::json calibrate(bool) const override { return nlohmann::json::object(); }
};

// The stand-in is registered before main() registers the devices this build has
// (register_builtin_devices): the first registered is the one GPU work goes to, so it is the
// stand-in in a build with CUDA as in one without.
const bool kStandInRegistered = [] {
  register_device_backend(std::make_unique<HostDevice>());
  return true;
}();

// fp64 on the stand-in device: A, B, C in vectors, the block multiply a triple loop.
class HostGemm final : public GpuGemm {
 public:
  std::string name() const override { return "host stand-in"; }
  void prepare(const GemmShape& local, Precision, PhaseRecorder&) override {
    shape_ = local;
    rows_ = std::max(rows_, local.m);
    a_.assign(static_cast<std::size_t>(rows_ * local.k), 0.0);
    b_.assign(static_cast<std::size_t>(local.k * local.n), 0.0);
    c_.assign(static_cast<std::size_t>(rows_ * local.n), 0.0);
  }
  void multiply(const void*, const void*, void*, PhaseRecorder&) override { unused(); }
  nlohmann::json describe() const override { return nlohmann::json::object(); }
  void begin_sum(void*) override { unused(); }
  void add_panel(const void*, const void*, std::int64_t, PhaseRecorder&) override { unused(); }
  void end_sum(void*, PhaseRecorder&) override { unused(); }
  void reserve(const Reservation& r) override { rows_ = r.rows; }
  void multiply_block(const BlockGemm& g, PhaseRecorder* rec) override {
    const auto* a = static_cast<const double*>(g.a);
    const auto* b = static_cast<const double*>(g.b);
    auto* c = static_cast<double*>(g.c);
    for (std::int64_t i = 0; i < g.rows; ++i) {
      for (std::int64_t j = 0; j < g.n; ++j) {
        double sum = g.accumulate ? c[i * g.ldc + j] : 0.0;
        for (std::int64_t p = 0; p < g.k; ++p) sum += a[i * g.lda + p] * b[p * g.ldb + j];
        c[i * g.ldc + j] = sum;
      }
    }
    if (rec != nullptr) rec->add("compute", 0.0);
  }
  void generate(const GemmShape&, std::int64_t, std::uint64_t, Fill) override { unused(); }
  RowCheck verify(const std::vector<double>&, std::vector<double>*) override { return {}; }
  std::vector<double> c_times_x(const std::vector<double>&, std::int64_t) override { return {}; }
  double bare_device_gemm_seconds() override { return 0.0; }
  DeviceStream stream() const override { return {}; }
  DeviceViews device_views() const override {
    return {{const_cast<double*>(a_.data()), rows_ * shape_.k, ElementType::f64, MemorySpace::device},
            {const_cast<double*>(b_.data()), shape_.k * shape_.n, ElementType::f64, MemorySpace::device},
            {const_cast<double*>(c_.data()), rows_ * shape_.n, ElementType::f64, MemorySpace::device},
            shape_};
  }
  void convert_copy(const void* from, void* to, std::int64_t count, CopyKind kind, PhaseRecorder& rec) override {
    std::memcpy(to, from, static_cast<std::size_t>(count) * 8);
    rec.add(kind == CopyKind::host_to_device ? "h2d" : "d2h", 0.0);
  }
  const Setup& setup() const override { return setup_; }

 private:
  [[noreturn]] static void unused() { throw Error(ExitCode::internal, "not a step of the Row1D schedules"); }
  GemmShape shape_;
  std::int64_t rows_ = 0;
  std::vector<double> a_, b_, c_;
  Setup setup_;
};

struct Case {
  Transport transport;
  bool overlap, shared;
  std::set<std::string> phases;
  bool two_nodes = false;  // shared: the ranks as two nodes (the first half and the rest), each holding B
};

std::vector<double> small_integers(std::int64_t count, int salt) {
  std::vector<double> v(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<int>((i * 7 + salt) % 9) - 4);
  return v;
}

// One repeat of the schedule `c` picks, set up as GpuGemmRun sets it up; true when C is exact
// where it lands and the phases are the schedule's.
bool runs_exact(const Case& c, const GemmShape& s) {
  const auto comm = Communicator::world();
  GemmConfig cfg;
  cfg.shape = s;
  cfg.transport = c.transport;
  cfg.overlap = c.overlap;
  const RowPartition rows(s.m, comm.size());
  const Block mine = rows.block(comm.rank());
  HostGemm gpu;
  // Two "nodes": B's slices are all-gathered within each, never across.
  const Communicator node = comm.split(c.two_nodes && comm.rank() >= comm.size() / 2 ? 1 : 0, comm.rank());
  auto schedule = row1d_gpu::make_schedule({cfg, comm, gpu, rows, c.shared, c.shared ? &node : nullptr});
  gpu.reserve({schedule->rows_held(), schedule->own_inputs()});
  std::unique_ptr<BufferTransport> transport;
  if (c.transport == Transport::nccl) {
    transport = make_device_buffer_transport(comm, schedule->transport_stream(), schedule->transport_ctas());
  }
  PhaseRecorder setup, rec;
  gpu.prepare({mine.count, s.n, s.k}, Precision::fp64, setup);
  schedule->prepare(transport.get());

  const std::vector<double> a = small_integers(s.m * s.k, 1), b = small_integers(s.k * s.n, 5);
  std::vector<double> want(static_cast<std::size_t>(s.m * s.n), 0.0);
  gpu.multiply_block({s.m, s.n, s.k, a.data(), s.k, b.data(), s.n, want.data(), s.n, false}, nullptr);
  std::vector<double> a_i(a.begin() + mine.offset * s.k, a.begin() + (mine.offset + mine.count) * s.k);
  std::vector<double> c_i(static_cast<std::size_t>(mine.count * s.n), -1.0), c_full(want.size(), -1.0);
  bool after = false;
  g_widest_all_gather = 0;
  schedule->multiply({a.data(), a_i.data(), b.data(), c_i.data(), c_full.data()}, rec, [&] { after = true; });

  // C lands on rank 0 whole (nccl, overlap) or on every rank as its rows (staged, shared).
  const bool gathered = c.transport == Transport::nccl && !c.shared;
  bool ok = after;
  if (gathered && comm.is_root()) ok = ok && c_full == want;
  if (!gathered) ok = ok && std::equal(c_i.begin(), c_i.end(), want.begin() + mine.offset * s.n);
  // Only rank 0 copies in and out under the phased nccl schedule.
  std::set<std::string> phases = c.phases;
  if (gathered && !c.overlap && !comm.is_root()) phases = {"scatter", "broadcast", "compute", "gather"};
  const auto& got = rec.phases();
  ok = ok && std::set<std::string>(got.begin(), got.end()) == phases;
  // Two nodes each holding B: the slices never travel between them.
  if (c.two_nodes) ok = ok && g_widest_all_gather <= node.size();
  return ok;
}

const std::set<std::string> kOverlapPhases{"h2d", "broadcast", "scatter", "compute", "gather", "d2h", "fill", "drain"};

}  // namespace

TEST(Row1DGpuSchedules, EveryScheduleGivesTheExactProductOnOddShapes) {
  // The stand-in must be the device GPU work goes to: the first registered, whatever the build has.
  ASSERT_TRUE(kStandInRegistered);
  ASSERT_EQ(device_backend("the stand-in").name(), "host stand-in");
  const std::vector<std::pair<std::string, Case>> cases = {
      {"staged", {Transport::mpi, false, false, {"h2d", "compute", "d2h"}}},
      {"nccl", {Transport::nccl, false, false, {"h2d", "scatter", "broadcast", "compute", "gather", "d2h"}}},
      {"shared mpi", {Transport::mpi, false, true, {"h2d", "compute", "d2h"}}},
      {"shared nccl", {Transport::nccl, false, true, {"h2d", "allgather", "compute", "d2h"}}},
      {"overlap", {Transport::nccl, true, false, kOverlapPhases}},
      {"shared overlap", {Transport::nccl, true, true, {"h2d", "allgather", "compute", "d2h", "fill", "drain"}}},
      {"shared nccl, two nodes", {Transport::nccl, false, true, {"h2d", "allgather", "compute", "d2h"}, true}},
      {"shared overlap, two nodes",
       {Transport::nccl, true, true, {"h2d", "allgather", "compute", "d2h", "fill", "drain"}, true}},
  };
  for (const GemmShape& s : {GemmShape{37, 23, 41}, GemmShape{129, 67, 95}, GemmShape{5, 3, 2}}) {
    for (const auto& [what, c] : cases) {
      EXPECT_TRUE(all_ranks(runs_exact(c, s))) << what << " on " << s.m << "x" << s.n << "x" << s.k;
    }
  }
}
