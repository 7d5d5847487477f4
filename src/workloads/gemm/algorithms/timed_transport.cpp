#include "gemm/algorithms/timed_transport.hpp"

#include <numeric>

#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {

std::int64_t bytes_of(const BufferView& v) { return v.count * static_cast<std::int64_t>(element_bytes(v.type)); }

std::int64_t sum_except(const std::vector<std::int64_t>& counts, int skip) {
  std::int64_t s = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  if (skip >= 0 && skip < static_cast<int>(counts.size())) s -= counts[static_cast<std::size_t>(skip)];
  return s;
}

}  // namespace

template <class F>
void TimedTransport::timed(F&& call) {
  const double t0 = wall_seconds();
  call();
  open_s_ += wall_seconds() - t0;
  used_ = true;
}

void TimedTransport::synchronize() {
  timed([&] { inner_->synchronize(); });
}

void TimedTransport::broadcast(const BufferView& buf, int root, const Communicator& group) {
  timed([&] { inner_->broadcast(buf, root, group); });
  if (group.size() == 1) return;
  (group.rank() == root ? sent_ : received_) += bytes_of(buf);
}

// Along the chain (the MPI transport's relay, relay_goes_along_chain) each rank but the root
// receives the buffer and each but the last forwards it; otherwise it counts as a broadcast.
void TimedTransport::relay(const BufferView& buf, int root, const Communicator& group) {
  const int size = group.size();
  if (!relay_goes_along_chain(size, bytes_of(buf))) {
    broadcast(buf, root, group);
    return;
  }
  timed([&] { inner_->relay(buf, root, group); });
  const int position = (group.rank() - root + size) % size;
  if (position != 0) received_ += bytes_of(buf);
  if (position != size - 1) sent_ += bytes_of(buf);
}

void TimedTransport::send(const BufferView& buf, int to, const Communicator& group) {
  timed([&] { inner_->send(buf, to, group); });
  sent_ += bytes_of(buf);
}

void TimedTransport::receive(const BufferView& buf, int from, const Communicator& group) {
  timed([&] { inner_->receive(buf, from, group); });
  received_ += bytes_of(buf);
}

void TimedTransport::scatter(const BufferView& send, const std::vector<std::int64_t>& counts,
                             const std::vector<std::int64_t>& displs, const BufferView& recv, int root,
                             const Communicator& group) {
  timed([&] { inner_->scatter(send, counts, displs, recv, root, group); });
  const auto e = static_cast<std::int64_t>(element_bytes(recv.type));
  if (group.rank() == root) {
    sent_ += sum_except(counts, root) * e;
  } else {
    received_ += bytes_of(recv);
  }
}

void TimedTransport::gather(const BufferView& send, const BufferView& recv, const std::vector<std::int64_t>& counts,
                            const std::vector<std::int64_t>& displs, int root, const Communicator& group) {
  timed([&] { inner_->gather(send, recv, counts, displs, root, group); });
  const auto e = static_cast<std::int64_t>(element_bytes(send.type));
  if (group.rank() == root) {
    received_ += sum_except(counts, root) * e;
  } else {
    sent_ += bytes_of(send);
  }
}

void TimedTransport::account(double seconds, std::int64_t sent, std::int64_t received) {
  open_s_ += seconds;
  sent_ += sent;
  received_ += received;
  used_ = true;
}

void TimedTransport::begin_repeat(const PhaseRecorder& rec) {
  if (rec.repeats() == 0) seconds_.clear();
  open_s_ = 0;
  sent_ = received_ = 0;
}

void TimedTransport::end_repeat() {
  seconds_.add("communication", open_s_);
  seconds_.next_repeat();
  last_sent_ = sent_;
  last_received_ = received_;
}

nlohmann::json TimedTransport::to_json(const Communicator& comm) const {
  if (comm.all(!used_)) return nullptr;
  const auto stats = summarize_phases(seconds_, comm);
  std::vector<std::int64_t> mine = {last_sent_, last_received_}, all(comm.is_root() ? 2 * comm.size() : 0);
  SCALEBENCH_MPI(MPI_Gather(mine.data(), 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, 0, comm.get()));
  if (!comm.is_root()) return nullptr;
  nlohmann::json sent = nlohmann::json::array(), received = nlohmann::json::array();
  for (int r = 0; r < comm.size(); ++r) {
    sent.push_back(all[2 * static_cast<std::size_t>(r)]);
    received.push_back(all[2 * static_cast<std::size_t>(r) + 1]);
  }
  return {{"what", "seconds each rank spends inside " + inner_->name() +
                       " transport calls per repeat (scatter, broadcast, gather; waits included), and the bytes "
                       "it sends and receives between ranks per repeat"},
          {"transport", inner_->name()},
          {"seconds", scalebench::to_json(stats.empty() ? PhaseStats{} : stats.front().second)},
          {"bytes_sent_per_rank", sent},
          {"bytes_received_per_rank", received}};
}

}  // namespace scalebench
