#pragma once
// A transport that times and counts what it forwards: the seconds this rank spends inside
// transport calls (synchronize included) and the bytes it sends and receives, per repeat. The
// record's distribution.communication section (docs/output.md) is made from it.
#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "scalebench/mpi/timing.hpp"
#include "scalebench/mpi/transport.hpp"

namespace scalebench {

class TimedTransport final : public BufferTransport {
 public:
  explicit TimedTransport(std::unique_ptr<BufferTransport> inner) : inner_(std::move(inner)) {}

  std::string name() const override { return inner_->name(); }
  MemorySpace space() const override { return inner_->space(); }
  void attach(const Communicator& group) override { inner_->attach(group); }
  void synchronize() override;
  void broadcast(const BufferView& buf, int root, const Communicator& group) override;
  void relay(const BufferView& buf, int root, const Communicator& group) override;
  void send(const BufferView& buf, int to, const Communicator& group) override;
  void receive(const BufferView& buf, int from, const Communicator& group) override;
  void scatter(const BufferView& send, const std::vector<std::int64_t>& counts, const std::vector<std::int64_t>& displs,
               const BufferView& recv, int root, const Communicator& group) override;
  void gather(const BufferView& send, const BufferView& recv, const std::vector<std::int64_t>& counts,
              const std::vector<std::int64_t>& displs, int root, const Communicator& group) override;

  // What a schedule moved beside this transport's calls in the current repeat (Summa2D's host
  // ring sends and receives itself): its seconds and bytes join the counts.
  void account(double seconds, std::int64_t sent, std::int64_t received);
  // Call at the start of every repeat with the repeat loop's recorder: the counts restart where
  // it was cleared (after the warm-up).
  void begin_repeat(const PhaseRecorder& rec);
  // Closes the repeat's seconds and bytes.
  void end_repeat();
  // Collective over `comm`: {"what", "seconds" (phase statistics over ranks and repeats),
  // "bytes_sent_per_rank", "bytes_received_per_rank" (the last repeat's)} on rank 0; null elsewhere
  // and where no repeat moved anything through this transport.
  nlohmann::json to_json(const Communicator& comm) const;

 private:
  template <class F>
  void timed(F&& call);
  std::unique_ptr<BufferTransport> inner_;
  PhaseRecorder seconds_;
  double open_s_ = 0;
  std::int64_t sent_ = 0, received_ = 0, last_sent_ = 0, last_received_ = 0;
  bool used_ = false;
};

}  // namespace scalebench
