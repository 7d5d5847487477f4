// The host transport: MPI, with counts above MPI's int sent in chunks (mpi.hpp).
#include <mpi.h>

#include <algorithm>

#include "gemm/algorithms/mpi_element_type.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/transport.hpp"

namespace scalebench {
namespace {

std::size_t bytes_of(ElementType t) { return element_bytes(t); }

// MPI is not assumed to read device memory (no CUDA-aware MPI): device views are a bug here.
const BufferView& host(const BufferView& v) {
  if (v.space != MemorySpace::host && v.count > 0) {
    throw Error(ExitCode::internal, "the MPI transport moves host memory, but was given a device buffer");
  }
  return v;
}

class MpiTransport final : public BufferTransport {
 public:
  explicit MpiTransport(std::int64_t chunk) : chunk_(chunk > 0 ? chunk : kMaxMpiCount) {}
  std::string name() const override { return "mpi"; }
  MemorySpace space() const override { return MemorySpace::host; }

  void broadcast(const BufferView& buf, int root, const Communicator& group) override {
    host(buf);
    bcast_bytes(buf.data, buf.count, mpi_type_of(buf.type), bytes_of(buf.type), root, group, chunk_);
  }
  void relay(const BufferView& buf, int root, const Communicator& group) override {
    relay_bytes(host(buf).data, buf.count * static_cast<std::int64_t>(bytes_of(buf.type)), root, group);
  }
  void send(const BufferView& buf, int to, const Communicator& group) override {
    auto* p = static_cast<const char*>(host(buf).data);
    for (std::int64_t done = 0; done < buf.count; done += chunk_) {
      const auto n = static_cast<int>(std::min(chunk_, buf.count - done));
      SCALEBENCH_MPI(MPI_Send(p + done * bytes_of(buf.type), n, mpi_type_of(buf.type), to, kTag, group.get()));
    }
  }
  void receive(const BufferView& buf, int from, const Communicator& group) override {
    auto* p = static_cast<char*>(host(buf).data);
    for (std::int64_t done = 0; done < buf.count; done += chunk_) {
      const auto n = static_cast<int>(std::min(chunk_, buf.count - done));
      SCALEBENCH_MPI(MPI_Recv(p + done * bytes_of(buf.type), n, mpi_type_of(buf.type), from, kTag, group.get(),
                              MPI_STATUS_IGNORE));
    }
  }
  void scatter(const BufferView& send, const std::vector<std::int64_t>& counts, const std::vector<std::int64_t>& displs,
               const BufferView& recv, int root, const Communicator& group) override {
    host(send);
    host(recv);
    scatterv_bytes(send.data, counts, displs, recv.data, recv.count, mpi_type_of(recv.type), bytes_of(recv.type), root,
                   group, chunk_);
  }
  void gather(const BufferView& send, const BufferView& recv, const std::vector<std::int64_t>& counts,
              const std::vector<std::int64_t>& displs, int root, const Communicator& group) override {
    host(send);
    host(recv);
    gatherv_bytes(send.data, send.count, recv.data, counts, displs, mpi_type_of(send.type), bytes_of(send.type), root,
                  group, chunk_);
  }

 private:
  static constexpr int kTag = 0x5b;
  std::int64_t chunk_;
};

}  // namespace

std::unique_ptr<BufferTransport> make_mpi_transport(std::int64_t chunk) {
  return std::make_unique<MpiTransport>(chunk);
}

}  // namespace scalebench
