// Transport nccl. NcclBufferTransport moves device buffer views between the ranks' GPUs with
// NCCL, on one stream, over the communicator it was made with and any group attached to it (a
// Summa2D process row or column). NcclTransport, Row1D's phased schedule, moves A's row blocks,
// B and C's row blocks through it, on the backend's device views and stream.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "nccl_comm.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"
#include "stream.hpp"

namespace scalebench::gpu {
namespace {

std::size_t bytes_of(const BufferView& v) { return static_cast<std::size_t>(v.count) * element_bytes(v.type); }

char* at(const BufferView& v, std::int64_t elements) {
  return static_cast<char*>(v.data) + static_cast<std::size_t>(elements) * element_bytes(v.type);
}

void require_device(const BufferView& v) {
  if (v.space != MemorySpace::device && v.count > 0) {
    throw Error(ExitCode::internal, "the NCCL transport moves device memory, but was given a host buffer");
  }
}

class NcclBufferTransport final : public BufferTransport {
 public:
  NcclBufferTransport(const Communicator& comm, cudaStream_t stream, int max_ctas)
      : stream_(stream), max_ctas_(max_ctas) {
    attach(comm);
  }

  std::string name() const override { return "nccl"; }
  MemorySpace space() const override { return MemorySpace::device; }

  // Finalizing a communicator waits for its other ranks to finalize it too: every rank ends them
  // in the reverse of the order it attached them, the same order on every rank.
  ~NcclBufferTransport() override {
    while (!comms_.empty()) comms_.pop_back();
  }
  NcclBufferTransport(const NcclBufferTransport&) = delete;
  NcclBufferTransport& operator=(const NcclBufferTransport&) = delete;

  void attach(const Communicator& group) override {
    if (find(group) != nullptr) return;
    const double t0 = wall_seconds();
    comms_.emplace_back(group.get(), NcclComm(group, max_ctas_));
    setup_s_ += wall_seconds() - t0;
  }

  void synchronize() override { SCALEBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  void broadcast(const BufferView& buf, int root, const Communicator& group) override {
    require_device(buf);
    if (buf.count == 0) return;
    ncclComm_t nc = nccl_of(group);
    SCALEBENCH_NCCL_CHECK_COMM(ncclBroadcast(buf.data, buf.data, bytes_of(buf), ncclUint8, root, nc, stream_), nc);
  }

  void send(const BufferView& buf, int to, const Communicator& group) override {
    require_device(buf);
    if (buf.count == 0) return;
    ncclComm_t nc = nccl_of(group);
    SCALEBENCH_NCCL_CHECK_COMM(ncclSend(buf.data, bytes_of(buf), ncclUint8, to, nc, stream_), nc);
  }

  void receive(const BufferView& buf, int from, const Communicator& group) override {
    require_device(buf);
    if (buf.count == 0) return;
    ncclComm_t nc = nccl_of(group);
    SCALEBENCH_NCCL_CHECK_COMM(ncclRecv(buf.data, bytes_of(buf), ncclUint8, from, nc, stream_), nc);
  }

  // One NCCL group: the root's sends (or receives) run concurrently.
  void scatter(const BufferView& send, const std::vector<std::int64_t>& counts, const std::vector<std::int64_t>& displs,
               const BufferView& recv, int root, const Communicator& group) override {
    exchange(send, counts, displs, recv, root, group, true);
  }
  void gather(const BufferView& send, const BufferView& recv, const std::vector<std::int64_t>& counts,
              const std::vector<std::int64_t>& displs, int root, const Communicator& group) override {
    exchange(recv, counts, displs, send, root, group, false);
  }

  void use_stream(cudaStream_t s) noexcept { stream_ = s; }
  ncclComm_t nccl_of(const Communicator& group) const {
    const NcclComm* c = find(group);
    if (c == nullptr) throw Error(ExitCode::internal, "the NCCL transport was used over a group never attached");
    return c->get();
  }
  double setup_seconds() const noexcept { return setup_s_; }
  int max_ctas() const noexcept { return max_ctas_; }

 private:
  // `whole`: the root's buffer of every block (counts/displs); `mine`: this rank's block. From
  // the root (scatter) or to it (gather); the root's own block is copied on its device unless it
  // is already in place.
  void exchange(const BufferView& whole, const std::vector<std::int64_t>& counts,
                const std::vector<std::int64_t>& displs, const BufferView& mine, int root, const Communicator& group,
                bool from_root) {
    require_device(whole);
    require_device(mine);
    ncclComm_t nc = nccl_of(group);
    SCALEBENCH_NCCL_CHECK_COMM(ncclGroupStart(), nc);
    if (group.rank() == root) {
      for (int r = 0; r < group.size(); ++r) {
        const auto ru = static_cast<std::size_t>(r);
        const std::size_t bytes = static_cast<std::size_t>(counts[ru]) * element_bytes(whole.type);
        if (r == root || bytes == 0) continue;
        if (from_root) {
          SCALEBENCH_NCCL_CHECK_COMM(ncclSend(at(whole, displs[ru]), bytes, ncclUint8, r, nc, stream_), nc);
        } else {
          SCALEBENCH_NCCL_CHECK_COMM(ncclRecv(at(whole, displs[ru]), bytes, ncclUint8, r, nc, stream_), nc);
        }
      }
    } else if (mine.count > 0) {
      if (from_root) {
        SCALEBENCH_NCCL_CHECK_COMM(ncclRecv(mine.data, bytes_of(mine), ncclUint8, root, nc, stream_), nc);
      } else {
        SCALEBENCH_NCCL_CHECK_COMM(ncclSend(mine.data, bytes_of(mine), ncclUint8, root, nc, stream_), nc);
      }
    }
    SCALEBENCH_NCCL_CHECK_COMM(ncclGroupEnd(), nc);
    if (group.rank() == root) {
      char* own = at(whole, displs[static_cast<std::size_t>(root)]);
      const std::size_t bytes = static_cast<std::size_t>(counts[static_cast<std::size_t>(root)]) *
                                element_bytes(whole.type);
      if (own != mine.data && bytes > 0) {
        SCALEBENCH_CUDA_CHECK(from_root ? cudaMemcpyAsync(mine.data, own, bytes, cudaMemcpyDeviceToDevice, stream_)
                                        : cudaMemcpyAsync(own, mine.data, bytes, cudaMemcpyDeviceToDevice, stream_));
      }
    }
  }

  const NcclComm* find(const Communicator& group) const {
    for (const auto& [handle, nccl] : comms_) {
      if (handle == group.get()) return &nccl;
    }
    return nullptr;
  }

  cudaStream_t stream_;
  int max_ctas_ = 0;
  double setup_s_ = 0;
  std::vector<std::pair<MPI_Comm, NcclComm>> comms_;  // in the order attached
};

// Row1D's phased NCCL schedule on the backend's device views and stream. Rank 0 holds all rows
// of A and C (GpuGemm::hold_rows(m)); its own block is the first rows, in place.
class NcclTransport final : public GpuTransport {
 public:
  NcclTransport(const Communicator& comm, int max_ctas) : comm_(comm), nccl_(comm, nullptr, max_ctas) {}

  void scatter_a(GpuGemm& g, const RowPartition& rows, PhaseRecorder& rec) override {
    const auto v = g.device_views();
    timed(g, rec, phase::scatter, [&] {
      nccl_.scatter(v.a, rows.counts_times(v.shape.k), rows.offsets_times(v.shape.k), mine(v.a, rows, v.shape.k), 0,
                    comm_);
    });
  }

  void broadcast_b(GpuGemm& g, PhaseRecorder& rec) override {
    const auto v = g.device_views();
    timed(g, rec, phase::broadcast, [&] { nccl_.broadcast(v.b, 0, comm_); });
  }

  void gather_c(GpuGemm& g, const RowPartition& rows, PhaseRecorder& rec) override {
    const auto v = g.device_views();
    timed(g, rec, phase::gather, [&] {
      nccl_.gather(mine(v.c, rows, v.shape.n), v.c, rows.counts_times(v.shape.n), rows.offsets_times(v.shape.n), 0,
                   comm_);
    });
  }

  void all_gather_b(GpuGemm& g, const RowPartition& b_rows, PhaseRecorder& rec) override {
    const auto v = g.device_views();
    timed(g, rec, phase::allgather, [&] {
      all_gather_rows(comm(), static_cast<char*>(v.b.data),
                      static_cast<std::size_t>(v.shape.n) * element_bytes(v.b.type), b_rows,
                      static_cast<cudaStream_t>(g.stream().handle));
    });
  }

  double setup_seconds() const override { return nccl_.setup_seconds(); }
  ncclComm_t comm() const { return nccl_.nccl_of(comm_); }

  nlohmann::json describe() const override {
    const int max_ctas = nccl_.max_ctas();
    return {{"library", "NCCL"},
            {"version", nccl_version_string()},
            {"ranks", comm_.size()},
            {phase::scatter, "ncclSend/ncclRecv from rank 0, one group"},
            {phase::broadcast, "ncclBroadcast"},
            {phase::gather, "ncclSend/ncclRecv to rank 0, one group"},
            {phase::allgather, "--distribution shared: ncclAllGather of B's row slices (equal slices), else one "
                               "ncclBroadcast per slice in one group"},
            {"max_ctas", std::getenv("NCCL_MAX_CTAS") != nullptr ? nlohmann::json(std::getenv("NCCL_MAX_CTAS"))
                         : max_ctas > 0                          ? nlohmann::json(max_ctas)
                                                                 : nlohmann::json("NCCL's choice")}};
  }

 private:
  // This rank's rows of a device matrix with `cols` columns: the first rows of its buffer.
  BufferView mine(BufferView v, const RowPartition& rows, std::int64_t cols) const {
    v.count = rows.block(comm_.rank()).count * cols;
    return v;
  }
  template <class F>
  void timed(GpuGemm& g, PhaseRecorder& rec, const char* phase, F&& move) {
    auto* s = static_cast<cudaStream_t>(g.stream().handle);
    nccl_.use_stream(s);
    DeviceTimer t(s);
    t.start();
    move();
    t.stop_into(rec, phase);
  }

  const Communicator& comm_;
  NcclBufferTransport nccl_;
};

// NCCL refuses two ranks on one GPU (it would deadlock or fail deep inside its set-up): say so
// before trying. Collective over `comm`.
void refuse_shared_gpus(const Communicator& comm) {
  std::string mine;
  agree(comm, [&] {
    int device = -1;
    SCALEBENCH_CUDA_CHECK(cudaGetDevice(&device));
    mine = gpu_info(device)["uuid"].get<std::string>();
  });
  const auto all = comm.gather_strings(fmt::format("{} {}", host_name(), mine));
  std::string clash;
  if (comm.is_root()) {
    for (std::size_t i = 0; i < all.size() && clash.empty(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (all[i] == all[j]) {
          clash = fmt::format("ranks {} and {} share GPU {}", j, i, all[i]);
          break;
        }
      }
    }
  }
  clash = comm.bcast_string(clash, 0);
  agree(comm, [&] {
    if (!clash.empty()) {
      throw ResourceError(fmt::format("--transport nccl needs one GPU per rank, but {}; NCCL cannot run two ranks on "
                                      "one GPU: use --transport mpi with --share-gpu, or one rank per GPU",
                                      clash));
    }
  });
}

}  // namespace

void all_gather_rows(ncclComm_t nc, char* base, std::size_t row_bytes, const RowPartition& rows, cudaStream_t s) {
  const int ranks = rows.parts();
  if (ranks < 2) return;
  const auto& counts = rows.counts();
  const bool equal = std::all_of(counts.begin(), counts.end(), [&](std::int64_t v) { return v == counts[0]; });
  if (equal) {
    // In place: rank r's slice already sits at r × slice in the buffer.
    const std::size_t bytes = static_cast<std::size_t>(counts[0]) * row_bytes;
    int me = 0;
    SCALEBENCH_NCCL_CHECK_COMM(ncclCommUserRank(nc, &me), nc);
    SCALEBENCH_NCCL_CHECK_COMM(ncclAllGather(base + static_cast<std::size_t>(me) * bytes, base, bytes, ncclUint8, nc,
                                             s),
                               nc);
    return;
  }
  SCALEBENCH_NCCL_CHECK_COMM(ncclGroupStart(), nc);
  for (int r = 0; r < ranks; ++r) {
    const Block b = rows.block(r);
    if (b.count == 0) continue;
    char* at = base + static_cast<std::size_t>(b.offset) * row_bytes;
    SCALEBENCH_NCCL_CHECK_COMM(ncclBroadcast(at, at, static_cast<std::size_t>(b.count) * row_bytes, ncclUint8, r, nc,
                                             s),
                               nc);
  }
  SCALEBENCH_NCCL_CHECK_COMM(ncclGroupEnd(), nc);
}

ncclComm_t nccl_comm_of(GpuTransport& t) {
  auto* n = dynamic_cast<NcclTransport*>(&t);
  if (n == nullptr) throw Error(ExitCode::internal, "not an NCCL transport");
  return n->comm();
}

}  // namespace scalebench::gpu

namespace scalebench {

std::unique_ptr<GpuTransport> make_nccl_transport(const Communicator& comm, int max_ctas) {
  gpu::refuse_shared_gpus(comm);
  std::unique_ptr<GpuTransport> t;
  agree(comm, [&] { t = std::make_unique<gpu::NcclTransport>(comm, max_ctas); });
  return t;
}

std::unique_ptr<BufferTransport> make_nccl_buffer_transport(const Communicator& comm, DeviceStream stream,
                                                            int max_ctas) {
  gpu::refuse_shared_gpus(comm);
  std::unique_ptr<BufferTransport> t;
  agree(comm, [&] {
    t = std::make_unique<gpu::NcclBufferTransport>(comm, static_cast<cudaStream_t>(stream.handle), max_ctas);
  });
  return t;
}

}  // namespace scalebench
