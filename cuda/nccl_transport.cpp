// Transport nccl: NcclBufferTransport moves device buffer views between the ranks' GPUs with
// NCCL, on one stream, over the communicator it was made with and any group attached to it (a
// process row or column). It knows buffers, never who made them.
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
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"

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
  nlohmann::json describe() const override {
    const char* env = std::getenv("NCCL_MAX_CTAS");
    return {{"library", "NCCL"},
            {"version", gpu::nccl_version_string()},
            {"scatter", "ncclSend/ncclRecv from the root, one group"},
            {"broadcast", "ncclBroadcast"},
            {"gather", "ncclSend/ncclRecv to the root, one group"},
            {"allgather", "ncclAllGather in place (equal blocks), else one ncclBroadcast per block in one group"},
            {"max_ctas", env != nullptr  ? nlohmann::json(env)
                         : max_ctas_ > 0 ? nlohmann::json(max_ctas_)
                                         : nlohmann::json("NCCL's choice")}};
  }
  MemorySpace space() const override { return MemorySpace::device; }

  // Finalizing a communicator waits for its other ranks to finalize it too: every rank ends them
  // in the reverse of the order it attached them, the same order on every rank.
  ~NcclBufferTransport() override {
    while (!comms_.empty()) comms_.pop_back();
  }
  NcclBufferTransport(const NcclBufferTransport&) = delete;
  NcclBufferTransport& operator=(const NcclBufferTransport&) = delete;

  // A group of one rank has nothing to move between ranks: no communicator (its creation costs
  // a NCCL start-up), its operations are the root's own copies.
  void attach(const Communicator& group) override {
    if (group.size() < 2 || find(group) != nullptr) return;
    comms_.emplace_back(group.get(), NcclComm(group, max_ctas_));
  }

  void synchronize() override { SCALEBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  void broadcast(const BufferView& buf, int root, const Communicator& group) override {
    require_device(buf);
    if (buf.count == 0 || group.size() < 2) return;
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
  // In place: ncclAllGather when the blocks are equal and in rank order, else one ncclBroadcast
  // per block, in one group.
  void all_gather(const BufferView& buf, const std::vector<std::int64_t>& counts,
                  const std::vector<std::int64_t>& displs, const Communicator& group) override {
    require_device(buf);
    if (group.size() < 2) return;
    ncclComm_t nc = nccl_of(group);
    const std::size_t e = element_bytes(buf.type);
    bool equal = true;
    for (std::size_t r = 0; r < counts.size(); ++r)
      equal = equal && counts[r] == counts[0] && displs[r] == counts[0] * static_cast<std::int64_t>(r);
    if (equal) {
      const std::size_t bytes = static_cast<std::size_t>(counts[0]) * e;
      char* base = static_cast<char*>(buf.data);
      SCALEBENCH_NCCL_CHECK_COMM(ncclAllGather(base + static_cast<std::size_t>(group.rank()) * bytes, base, bytes,
                                               ncclUint8, nc, stream_),
                                 nc);
      return;
    }
    SCALEBENCH_NCCL_CHECK_COMM(ncclGroupStart(), nc);
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (counts[r] == 0) continue;
      char* block = at(buf, displs[r]);
      SCALEBENCH_NCCL_CHECK_COMM(ncclBroadcast(block, block, static_cast<std::size_t>(counts[r]) * e, ncclUint8,
                                               static_cast<int>(r), nc, stream_),
                                 nc);
    }
    SCALEBENCH_NCCL_CHECK_COMM(ncclGroupEnd(), nc);
  }

  ncclComm_t nccl_of(const Communicator& group) const {
    const NcclComm* c = find(group);
    if (c == nullptr) throw Error(ExitCode::internal, "the NCCL transport was used over a group never attached");
    return c->get();
  }

 private:
  // The sends and receives of an exchange between ranks, one NCCL group.
  void post_exchange(const BufferView& whole, const std::vector<std::int64_t>& counts,
                     const std::vector<std::int64_t>& displs, const BufferView& mine, int root,
                     const Communicator& group, bool from_root) {
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
  }

  // `whole`: the root's buffer of every block (counts/displs); `mine`: this rank's block. From
  // the root (scatter) or to it (gather); the root's own block is copied on its device unless it
  // is already in place.
  void exchange(const BufferView& whole, const std::vector<std::int64_t>& counts,
                const std::vector<std::int64_t>& displs, const BufferView& mine, int root, const Communicator& group,
                bool from_root) {
    require_device(whole);
    require_device(mine);
    if (group.size() > 1) post_exchange(whole, counts, displs, mine, root, group, from_root);
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
  std::vector<std::pair<MPI_Comm, NcclComm>> comms_;  // in the order attached
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

}  // namespace scalebench::gpu

namespace scalebench {

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
