#pragma once
// Row1D's node-shared distribution (--distribution shared): A, B and C live once per node in
// MPI-3 shared windows (SharedWindow). On the node of rank 0 the windows hold all of A and C
// (rank 0's whole matrices); on every other node they hold the rows of that node's ranks, in
// rank order. Every node holds one B — one per NUMA domain where every rank of the node is
// confined to one domain (a rank per domain, or per core): the domain's lowest rank first writes
// it, and copies it from the node leader's each repeat. Per repeat, between nodes: rank 0 sends
// each other node's leader its ranks' rows of A ("scatter"), B is relayed among the nodes ("broadcast";
// BufferTransport::relay: from 3 nodes on MPI's goes along a chain, each link carrying B once), and the leaders send
// their node's rows of C back ("gather"); inside a node nothing is copied — ranks read their rows of A and all of B in
// place and write their rows of C in place, ordered by SharedWindow::sync().
//
// B crosses between nodes on lanes: the j-th of L slices goes from rank j of rank 0's node to rank
// j of every other node, straight into the node's B, all lanes at once. Between two hosts of the
// test cluster at 25 Gbit/s, B from the leaders alone reached 75-84% of the link while each
// host's other rank waited; two lanes reached 96%. L is the fewest ranks any node has, and no
// more lanes than give each a relay of kRelayMinSegments segments (b_lanes): a small B goes on
// one lane, from the leaders.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/base/partition.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/shared_window.hpp"
#include "scalebench/mpi/timing.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

namespace scalebench {

// Which rank sits on which node, and where its rows live in its node's windows.
struct NodeLayout {
  std::vector<int> leader;               // per rank: world rank of its node's leader (lowest rank)
  std::vector<std::int64_t> window_row;  // per rank: first row of its block in its node's A and C
  std::vector<std::int64_t> node_rows;   // per rank: rows its node's A and C windows hold
  std::vector<int> node_rank;            // per rank: its place on its node (rank order, as MPI's split)
  int nodes = 1;
  int fewest_ranks = 1;  // the ranks of the node that has fewest
  bool is_leader(int rank) const { return leader[static_cast<std::size_t>(rank)] == rank; }
  bool on_root_node(int rank) const { return leader[static_cast<std::size_t>(rank)] == 0; }
};
// Collective over `comm`; `node` is its shared-memory split.
NodeLayout make_node_layout(const Communicator& comm, const Communicator& node, const RowPartition& rows);

// SCALEBENCH_NO_SHARED_WINDOWS=1 (or yes, true, on) runs --distribution shared as replicated (the
// fallback path, as on a library without shared windows); the record's warning says so. Returns
// the value when it asks for that; nothing when unset, empty, 0, no, false or off. UsageError for
// any other value. Not collective.
std::optional<std::string> shared_windows_disabled();

// Why --distribution shared cannot make its node's windows, the same on every rank of `comm`
// (empty: it can). Each node's first rank (the one whose Open MPI makes the node's backing files)
// checks its own node's backing folder before anything is allocated: that it is a folder, that a
// file can be made in it, and that its free bytes hold the node's A, B and C with their overhead
// and a margin for other users of the folder (figures in the reason). Collective over `comm`;
// an AgreedError (usage) on every rank for a bad SCALEBENCH_NO_SHARED_WINDOWS.
std::string shared_windows_refusal(const GemmConfig& cfg, const Communicator& comm);

template <class T>
class NodeSharedMatrices {
 public:
  // Collective: splits the node and leader communicators and allocates the windows. Throws
  // (an agreed error on every rank) when the MPI library refuses shared windows.
  NodeSharedMatrices(const GemmConfig& cfg, const Communicator& comm, const RowPartition& rows, std::int64_t chunk);

  // Rank 0's A, B and C whole on rank 0 (null elsewhere for A and C); this rank's rows.
  T* a_full() const { return comm_.is_root() ? a_ : nullptr; }
  T* c_full() const { return comm_.is_root() ? c_ : nullptr; }
  T* b() const { return b_; }
  T* a_mine() const { return a_ + mine_row_ * cfg_.shape.k; }
  T* c_mine() const { return c_ + mine_row_ * cfg_.shape.n; }
  // Every rank first-touches its own rows of A and C (the root node's ranks write their rows of
  // A from the seed: the values rank 0 would make), the leader its B (the root node's from the
  // seed). Collective. Returns the threads rank 0 used.
  int generate();
  // One repeat's movement between nodes; each ends with the node's sync. Collective.
  void scatter(BufferTransport& t, PhaseRecorder& rec);
  void broadcast(BufferTransport& t, PhaseRecorder& rec);
  // Before: every rank wrote its rows of C. After: rank 0 holds all of C.
  void gather(BufferTransport& t, PhaseRecorder& rec);
  // Bytes per phase between and within nodes ("network" phases' shape), and host memory per node.
  nlohmann::json traffic() const;
  nlohmann::json memory_per_node(const std::vector<std::string>& hosts) const;
  int nodes() const { return layout_.nodes; }
  // The lanes B crosses between nodes on (b_lanes); 1 on one node.
  int lanes() const { return lanes_; }
  // The communicator of this rank's lane, and whether this rank carries a slice of B on it (a
  // rank of a lane, on more than one node). The slices go into the node leader's B, which is this
  // rank's own B (b()) where the node holds one copy.
  const Communicator& lane() const { return lane_; }
  bool carries_b() const { return node_.rank() < lanes_ && lane_.size() > 1; }
  bool relays_into_own_b() const { return b_ == b_win_.segment(0); }
  // The ranks whose windows this rank's are (MPI's shared-memory group).
  const Communicator& node() const { return node_; }
  // Whether this rank's rows of C are in rank 0's node's window: the gathered C itself.
  bool on_root_node() const { return layout_.on_root_node(comm_.rank()); }
  // Whether this rank first wrote (and holds) its NUMA domain's B.
  bool holds_b() const { return domain_.rank() == 0; }
  // bytes_per_rank of the record (elements): what each rank receives (scatter, broadcast) or
  // sends (gather) between nodes — the leaders' rows of A and C, each lane's slice of B (at rank
  // j of each node other than rank 0's), zero elsewhere.
  void leader_bytes(std::vector<std::int64_t>& scatter, std::vector<std::int64_t>& bcast,
                    std::vector<std::int64_t>& gather) const;

 private:
  // Each block of a rank on another node than rank 0, in rank order: (rank, rows).
  template <class F>
  void for_remote_blocks(F&& f) const;
  // Faults in, writable, the pages this rank first writes in generate(): a backing folder filled
  // by another process since shared_windows_refusal checked it is a ResourceError here rather
  // than a SIGBUS there. Not collective.
  void prefault() const;

  const GemmConfig& cfg_;
  const Communicator& comm_;
  const RowPartition& rows_;
  std::int64_t chunk_;
  Communicator node_;
  NodeLayout layout_;
  int lanes_ = 1;
  Communicator lane_;          // rank j of every node (j < lanes_), rank 0's node first; else unused
  Communicator domain_;        // this rank's NUMA domain within the node (or the node)
  std::vector<int> b_copies_;  // per rank: B copies on its node (meaningful for leaders)
  std::int64_t mine_row_ = 0;
  SharedWindow a_win_, b_win_, c_win_;
  T* a_ = nullptr;
  T* b_ = nullptr;
  T* c_ = nullptr;
};

}  // namespace scalebench
