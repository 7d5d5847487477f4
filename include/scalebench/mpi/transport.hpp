#pragma once
// The transport seam: moves contiguous buffers between the ranks of a communicator. A transport
// sees plain buffer views (address, count, element type, host or device memory) and, for a
// device transport, the stream it was made for; never a backend object.
//
//   mpi  : host buffers, blocking MPI calls (make_mpi_transport).
//   nccl : device buffers of this rank's GPU, NCCL calls enqueued on a stream; synchronize()
//          waits for them (gpu.hpp: make_device_buffer_transport).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench {

class Communicator;

// bf16: the device format of bf16 inputs (2 bytes; moved bit for bit).
enum class ElementType { f64, f32, bf16 };
inline std::size_t element_bytes(ElementType t) { return t == ElementType::f64 ? 8 : t == ElementType::f32 ? 4 : 2; }
enum class MemorySpace { host, device };

struct BufferView {
  void* data = nullptr;
  std::int64_t count = 0;  // elements
  ElementType type = ElementType::f64;
  MemorySpace space = MemorySpace::host;
};
template <class T>
constexpr ElementType element_type_of();
template <>
constexpr ElementType element_type_of<double>() {
  return ElementType::f64;
}
template <>
constexpr ElementType element_type_of<float>() {
  return ElementType::f32;
}
// A view of host memory.
template <class T>
BufferView view_of(T* data, std::int64_t count) {
  return {const_cast<std::remove_const_t<T>*>(data), count, element_type_of<std::remove_const_t<T>>(),
          MemorySpace::host};
}

class BufferTransport {
 public:
  virtual ~BufferTransport() = default;
  virtual std::string name() const = 0;
  // What it is, for a record: the library, its version, what each collective calls, its settings.
  virtual nlohmann::json describe() const { return {{"library", name()}}; }
  // The memory its views must lie in.
  virtual MemorySpace space() const = 0;
  // Collective over `group`, before any call over it (every rank of `group` calls it): makes
  // what the transport needs for that group (NCCL: a communicator). The communicator the
  // transport was made with needs none. The group must outlive the transport.
  virtual void attach(const Communicator& group) { (void)group; }
  // Waits until every call made so far is complete (device transports enqueue; MPI blocks).
  virtual void synchronize() {}
  // Collective over `group`.
  virtual void broadcast(const BufferView& buf, int root, const Communicator& group) = 0;
  // A broadcast among ranks that each sit behind their own network link (node leaders, one a
  // node): the transport's way of sending a large buffer over every link once (MPI: a chain of
  // segments, mpi.hpp relay_bytes); by default broadcast(). Collective over `group`.
  virtual void relay(const BufferView& buf, int root, const Communicator& group) { broadcast(buf, root, group); }
  // Point to point within `group` (a matching receive must be posted).
  virtual void send(const BufferView& buf, int to, const Communicator& group) = 0;
  virtual void receive(const BufferView& buf, int from, const Communicator& group) = 0;
  // Root's `send` cut by counts/displs (elements, meaningful on root) into every rank's `recv`;
  // the root's own block may be `recv` in place (inside `send`). gather is the reverse.
  virtual void scatter(const BufferView& send, const std::vector<std::int64_t>& counts,
                       const std::vector<std::int64_t>& displs, const BufferView& recv, int root,
                       const Communicator& group) = 0;
  virtual void gather(const BufferView& send, const BufferView& recv, const std::vector<std::int64_t>& counts,
                      const std::vector<std::int64_t>& displs, int root, const Communicator& group) = 0;
  // Rank r holds the block counts[r] at displs[r] (elements) of `buf` in place; afterwards every
  // rank holds every block. Collective over `group`. By default one broadcast per block.
  virtual void all_gather(const BufferView& buf, const std::vector<std::int64_t>& counts,
                          const std::vector<std::int64_t>& displs, const Communicator& group);
};
inline void BufferTransport::all_gather(const BufferView& buf, const std::vector<std::int64_t>& counts,
                                        const std::vector<std::int64_t>& displs, const Communicator& group) {
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] == 0) continue;
    BufferView block = buf;
    block.data = static_cast<char*>(buf.data) + static_cast<std::size_t>(displs[r]) * element_bytes(buf.type);
    block.count = counts[r];
    broadcast(block, static_cast<int>(r), group);
  }
}

// Host MPI; counts above `chunk` elements go in several calls (mpi.hpp).
std::unique_ptr<BufferTransport> make_mpi_transport(std::int64_t chunk);

// `host`, but a broadcast or relay over `lanes` (the shared distribution's B between nodes) goes
// through `device` (NCCL between the ranks' GPUs; null on a rank outside the lanes: `host`),
// reading and writing the host buffer in place: the buffer must be page-locked in this process
// (a page-locked host buffer is in the device's address space). One process a node reaches the
// link's rate there, which one Open MPI TCP connection does not (docs/cluster.md). `lanes` must
// outlive the transport.
std::unique_ptr<BufferTransport> make_lanes_on_device(std::unique_ptr<BufferTransport> host,
                                                      std::unique_ptr<BufferTransport> device,
                                                      const Communicator& lanes);

}  // namespace scalebench
