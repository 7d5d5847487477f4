#pragma once
// RAII MPI environment and communicator, typed collectives whose counts may exceed 2^31
// elements (sent in chunks), and collective error agreement (no rank left in a collective).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scalebench/base/error.hpp"

namespace scalebench {

// Throws RuntimeLibraryError naming the call, file and line when an MPI call fails.
void check_mpi(int rc, const char* call, const char* file, int line);
#define SCALEBENCH_MPI(call) ::scalebench::check_mpi((call), #call, __FILE__, __LINE__)

class MpiEnvironment {
 public:
  // MPI_Init_thread(FUNNELED); errors are returned, not fatal (MPI_ERRORS_RETURN on WORLD).
  MpiEnvironment(int& argc, char**& argv);
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;
  static bool initialized();
  // The process's age (process_age_seconds) just before and after this process's MPI_Init_thread;
  // {-1, -1} where it was not called here.
  static std::pair<double, double> init_ages();
};

// How MPI's shared-memory groups sit on the hosts, from each rank's host name and its group's
// first world rank: empty where every host's ranks are in one group; else each host whose ranks
// are in several, "name (G groups)", comma-separated, in name order (Communicator::node()).
std::string hosts_split_apart(const std::vector<std::pair<std::string, int>>& host_and_group);

// Owns the MPI_Comm when it created it (split, dup); WORLD is borrowed.
class Communicator {
 public:
  static Communicator world();
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

  MPI_Comm get() const noexcept { return comm_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  bool is_root() const noexcept { return rank_ == 0; }
  void barrier() const;
  // Ranks sharing this node's memory (MPI_COMM_TYPE_SHARED), ordered by rank.
  Communicator split_shared() const;
  // The ranks on this rank's host, split once and kept for this communicator's life, so that
  // the peer watchdog, rank set-up and GPU selection share one split: MPI's shared-memory split,
  // unless it puts ranks of one host (by host name) apart, as Open MPI 4.1 does where its
  // locality data is wrong (ranks bound by a daemon on another host); then the ranks by host
  // name, and node_split_note() says so. Shared-memory windows take split_shared() instead.
  // Collective on the first call only: every rank makes its first call at the same point.
  const Communicator& node() const;
  // Empty, or (after node()) one line on how MPI's shared-memory split differed from the hosts.
  const std::string& node_split_note() const { return node_note_; }
  // Whether every rank of this communicator is on this rank's node (the same answer on every
  // rank; no collective after node()).
  bool one_node() const { return node().size() == size_; }
  Communicator split(int color, int key) const;

  double max(double v) const;
  double min(double v) const;
  double sum(double v) const;
  std::int64_t max(std::int64_t v) const;
  std::int64_t sum(std::int64_t v) const;
  bool all(bool v) const;
  // Gathers one string per rank to rank 0 (empty vector elsewhere).
  std::vector<std::string> gather_strings(const std::string& mine) const;
  std::string bcast_string(const std::string& s, int root) const;

 private:
  Communicator(MPI_Comm comm, bool owned);
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
  int rank_ = 0;
  int size_ = 1;
  mutable std::unique_ptr<Communicator> node_;
  mutable std::string node_note_;
};

// Largest element count sent in one MPI call. Lowered by tests (--mpi-chunk) to cover the
// chunked path at small sizes.
inline constexpr std::int64_t kMaxMpiCount = std::numeric_limits<int>::max();

template <class T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}
template <>
inline MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
}
template <>
inline MPI_Datatype mpi_type<std::int64_t>() {
  return MPI_INT64_T;
}
template <>
inline MPI_Datatype mpi_type<std::uint64_t>() {
  return MPI_UINT64_T;
}
template <>
inline MPI_Datatype mpi_type<std::uint16_t>() {
  return MPI_UINT16_T;
}
template <>
inline MPI_Datatype mpi_type<char>() {
  return MPI_CHAR;
}
template <>
inline MPI_Datatype mpi_type<unsigned char>() {
  return MPI_UNSIGNED_CHAR;
}

// Byte-level collectives; the typed templates below call these with sizeof(T) and the type.
void bcast_bytes(void* data, std::int64_t count, MPI_Datatype type, std::size_t elem_size, int root,
                 const Communicator& comm, std::int64_t chunk);
// A broadcast of a large buffer (node leaders' B, row1d's replicated B). From 3 ranks and
// kRelayMinSegments segments on, the root sends the `bytes` in segments of `segment` bytes along
// the chain root, root+1, ... (mod size), each rank forwarding a segment as soon as it has it, a
// few on their way at once: every link carries the message once, so the last rank has it after
// about one link's time plus a segment per hop, where a tree sends it over the root's link
// ceil(log2 size) times (and MPI libraries' large-message broadcasts, tried on 4 hosts, took
// three links' time). Inside a node every rank has it within a few segments of the others, where
// a tree's last leaf gets it rounds after the first (4 ranks sharing a GPU, 2.1 GB: the broadcast
// 1.26 s by MPI_Bcast, 0.84 s along the chain, and the gather that waited for the last leaf 1.17
// s against 0.28). Smaller, or between two ranks: MPI_Bcast. Collective over `comm`.
inline constexpr std::int64_t kRelaySegmentBytes = std::int64_t{512} << 10;
inline constexpr std::int64_t kRelayMinSegments = 4;
// Whether relay_bytes sends `bytes` among `ranks` along the chain (else MPI_Bcast): what the
// relay's byte counts and its model follow.
inline bool relay_goes_along_chain(int ranks, std::int64_t bytes, std::int64_t segment = kRelaySegmentBytes) {
  return ranks >= 3 && bytes >= kRelayMinSegments * segment;
}
// How many lanes carry `bytes` between nodes that have at least `ranks_per_node` ranks each: one
// per rank of the smallest node, but none with fewer than kRelayMinSegments segments, so that each
// lane goes along the chain where the whole would (node_shared.hpp).
inline int b_lanes(int ranks_per_node, std::int64_t bytes, std::int64_t segment = kRelaySegmentBytes) {
  const std::int64_t by_size = bytes / (kRelayMinSegments * segment);
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(ranks_per_node, by_size)));
}
void relay_bytes(void* data, std::int64_t bytes, int root, const Communicator& comm,
                 std::int64_t segment = kRelaySegmentBytes);
// counts/displs (in elements) are meaningful on root only; recv_count on every rank. At the root,
// a receive (scatter) or send (gather) buffer that is the root's own block inside the full buffer
// is used in place: nothing is copied.
void scatterv_bytes(const void* send, const std::vector<std::int64_t>& counts, const std::vector<std::int64_t>& displs,
                    void* recv, std::int64_t recv_count, MPI_Datatype type, std::size_t elem_size, int root,
                    const Communicator& comm, std::int64_t chunk);
void gatherv_bytes(const void* send, std::int64_t send_count, void* recv, const std::vector<std::int64_t>& counts,
                   const std::vector<std::int64_t>& displs, MPI_Datatype type, std::size_t elem_size, int root,
                   const Communicator& comm, std::int64_t chunk);

template <class T>
void bcast(T* data, std::int64_t count, int root, const Communicator& comm, std::int64_t chunk = kMaxMpiCount) {
  bcast_bytes(data, count, mpi_type<T>(), sizeof(T), root, comm, chunk);
}
template <class T>
void scatterv(const T* send, const std::vector<std::int64_t>& counts, const std::vector<std::int64_t>& displs, T* recv,
              std::int64_t recv_count, int root, const Communicator& comm, std::int64_t chunk = kMaxMpiCount) {
  scatterv_bytes(send, counts, displs, recv, recv_count, mpi_type<T>(), sizeof(T), root, comm, chunk);
}
template <class T>
void gatherv(const T* send, std::int64_t send_count, T* recv, const std::vector<std::int64_t>& counts,
             const std::vector<std::int64_t>& displs, int root, const Communicator& comm,
             std::int64_t chunk = kMaxMpiCount) {
  gatherv_bytes(send, send_count, recv, counts, displs, mpi_type<T>(), sizeof(T), root, comm, chunk);
}

// An Error that every rank of a communicator holds (thrown by agree()): it can be reported by
// rank 0 and returned as an exit code everywhere, with no MPI_Abort.
class AgreedError : public Error {
 public:
  AgreedError(ExitCode code, const std::string& message, int failing_rank)
      : Error(code, message), failing_rank_(failing_rank) {}
  int failing_rank() const noexcept { return failing_rank_; }

 private:
  int failing_rank_;
};

// Runs `step` on every rank; if it throws scalebench::Error on any rank, every rank throws the
// same AgreedError (the lowest failing rank's message and code). Collective; never leaves a rank
// waiting. Other exceptions are converted to ExitCode::internal.
void agree(const Communicator& comm, const std::function<void()>& step);

// Collective, once, before any other collective of a run: every rank must hold the same
// `fields` ("name=value" words: every setting that decides which collectives run and with what
// counts). Compares a 64-bit hash of them with one allreduce (min and max); when they differ,
// every rank throws the same AgreedError (usage) naming the first field in which a rank differs
// from rank 0.
void agree_on_configuration(const Communicator& comm, const std::string& command, const std::string& fields);

// The rank as the launcher tells it before MPI_Init (Open MPI, PMI, Slurm), or 0.
int launcher_rank();

}  // namespace scalebench
