// The host transport with B's crossings between nodes on the device transport (transport.hpp,
// make_lanes_on_device).
#include <memory>
#include <utility>

#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/transport.hpp"

namespace scalebench {
namespace {

class LanesOnDevice final : public BufferTransport {
 public:
  LanesOnDevice(std::unique_ptr<BufferTransport> host, std::unique_ptr<BufferTransport> device,
                const Communicator& lanes)
      : host_(std::move(host)), device_(std::move(device)), lanes_(lanes) {}

  std::string name() const override { return host_->name(); }
  MemorySpace space() const override { return host_->space(); }
  void attach(const Communicator& group) override { host_->attach(group); }
  void synchronize() override { host_->synchronize(); }
  void broadcast(const BufferView& buf, int root, const Communicator& group) override {
    if (across(group)) return on_device(buf, root, group);
    host_->broadcast(buf, root, group);
  }
  void relay(const BufferView& buf, int root, const Communicator& group) override {
    if (across(group)) return on_device(buf, root, group);
    host_->relay(buf, root, group);
  }
  void send(const BufferView& buf, int to, const Communicator& group) override { host_->send(buf, to, group); }
  void receive(const BufferView& buf, int from, const Communicator& group) override {
    host_->receive(buf, from, group);
  }
  void scatter(const BufferView& send, const std::vector<std::int64_t>& counts, const std::vector<std::int64_t>& displs,
               const BufferView& recv, int root, const Communicator& group) override {
    host_->scatter(send, counts, displs, recv, root, group);
  }
  void gather(const BufferView& send, const BufferView& recv, const std::vector<std::int64_t>& counts,
              const std::vector<std::int64_t>& displs, int root, const Communicator& group) override {
    host_->gather(send, recv, counts, displs, root, group);
  }
  void all_gather(const BufferView& buf, const std::vector<std::int64_t>& counts,
                  const std::vector<std::int64_t>& displs, const Communicator& group) override {
    host_->all_gather(buf, counts, displs, group);
  }

 private:
  bool across(const Communicator& group) const { return device_ != nullptr && group.get() == lanes_.get(); }
  // A page-locked host buffer is in the device's address space: the device transport reads and
  // writes it in place, and returns when it has.
  void on_device(BufferView buf, int root, const Communicator& group) {
    buf.space = MemorySpace::device;
    device_->broadcast(buf, root, group);
    device_->synchronize();
  }

  std::unique_ptr<BufferTransport> host_, device_;
  const Communicator& lanes_;
};

}  // namespace

std::unique_ptr<BufferTransport> make_lanes_on_device(std::unique_ptr<BufferTransport> host,
                                                      std::unique_ptr<BufferTransport> device,
                                                      const Communicator& lanes) {
  return std::make_unique<LanesOnDevice>(std::move(host), std::move(device), lanes);
}

}  // namespace scalebench
