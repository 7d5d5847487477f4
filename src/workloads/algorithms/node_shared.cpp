#include "algorithms/node_shared.hpp"

#include <numa.h>
#include <sys/statvfs.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/cpu/gemm_fill.hpp"

namespace scalebench {

NodeLayout make_node_layout(const Communicator& comm, const Communicator& node, const RowPartition& rows) {
  int leader = comm.rank();
  SCALEBENCH_MPI(MPI_Bcast(&leader, 1, MPI_INT, 0, node.get()));
  NodeLayout out;
  out.leader.resize(static_cast<std::size_t>(comm.size()));
  SCALEBENCH_MPI(MPI_Allgather(&leader, 1, MPI_INT, out.leader.data(), 1, MPI_INT, comm.get()));
  out.window_row.assign(out.leader.size(), 0);
  out.node_rows.assign(out.leader.size(), 0);
  std::map<int, std::int64_t> filled;  // rows placed so far in each node's windows
  for (int r = 0; r < comm.size(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    // The root node's windows are rank 0's whole matrices: rows at their global place.
    out.window_row[i] = out.leader[i] == 0 ? rows.block(r).offset : filled[out.leader[i]];
    filled[out.leader[i]] += rows.block(r).count;
  }
  for (std::size_t i = 0; i < out.leader.size(); ++i) {
    out.node_rows[i] = out.leader[i] == 0 ? rows.total() : filled[out.leader[i]];
  }
  out.nodes = static_cast<int>(filled.size());
  return out;
}

namespace {

// The NUMA domain holding every CPU this process may run on, or -1 (several, or no NUMA support).
int confining_numa_domain() {
  if (numa_available() < 0) return -1;
  std::set<int> domains;
  for (const int cpu : allowed_cpus()) domains.insert(numa_node_of_cpu(cpu));
  return domains.size() == 1 && *domains.begin() >= 0 ? *domains.begin() : -1;
}

// The node split by NUMA domain when every rank of the node is confined to one; else the node.
Communicator split_by_domain(const Communicator& node) {
  const int domain = confining_numa_domain();
  const bool confined = node.all(domain >= 0);
  return node.split(confined ? domain : 0, node.rank());
}

// MPI libraries back shared windows with a file in /dev/shm (Open MPI: osc_sm_backing_directory).
// A window larger than the room there may still be made, and the job then dies of SIGBUS when
// its pages are first touched: refuse beforehand (the run falls back to replicated).
void check_backing_room(std::int64_t bytes) {
  const char* dir = std::getenv("OMPI_MCA_osc_sm_backing_directory");
  const std::string path = dir != nullptr && *dir != '\0' ? dir : "/dev/shm";
  struct statvfs st {};
  if (statvfs(path.c_str(), &st) != 0) return;  // no such folder: the library decides
  const double room = static_cast<double>(st.f_bavail) * static_cast<double>(st.f_frsize);
  if (static_cast<double>(bytes) > room) {
    throw ResourceError(fmt::format("the node's windows need {:.2f} GiB but {} has {:.2f} GiB free",
                                    static_cast<double>(bytes) / 0x1p30, path, room / 0x1p30));
  }
}

}  // namespace

std::int64_t shared_host_bytes(const GemmConfig& cfg, const Communicator& comm) {
  const Communicator node = comm.split_shared();
  const RowPartition rows(cfg.shape.m, comm.size());
  const NodeLayout layout = make_node_layout(comm, node, rows);
  const auto& s = cfg.shape;
  const auto e = static_cast<std::int64_t>(host_element_bytes(cfg.precision));
  const std::string limit = "the largest 64-bit byte count";
  const std::int64_t mine = rows.block(comm.rank()).count;
  // The root node's windows (all of A and C) are charged to rank 0, every other node's to the
  // ranks whose rows they hold; B to the leader; the peer's C_i to each rank.
  const std::int64_t held = comm.is_root() ? s.m : layout.on_root_node(comm.rank()) ? 0 : mine;
  const std::int64_t ac = product_within("bytes of A and C rows", {held, s.k + s.n, e}, kInt64Max, limit);
  const bool holds_b = split_by_domain(node).rank() == 0;  // one B per node, or per NUMA domain
  const std::int64_t b = holds_b ? product_within("bytes of B", {s.k, s.n, e}, kInt64Max, limit) : 0;
  const std::int64_t peer = cfg.peer ? product_within("bytes of the peer's C_i", {mine, s.n, e}, kInt64Max, limit) : 0;
  return sum_within("host bytes of one rank", {ac, b, peer}, kInt64Max, limit);
}

bool shared_windows_disabled() {
  const char* v = std::getenv("SCALEBENCH_NO_SHARED_WINDOWS");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

template <class T>
NodeSharedMatrices<T>::NodeSharedMatrices(const GemmConfig& cfg, const Communicator& comm, const RowPartition& rows,
                                          std::int64_t chunk)
    : cfg_(cfg),
      comm_(comm),
      rows_(rows),
      chunk_(chunk),
      node_(comm.split_shared()),
      leaders_(comm.split(node_.rank() == 0 ? 0 : 1, comm.rank())),
      layout_(make_node_layout(comm, node_, rows)),
      domain_(split_by_domain(node_)) {
  const auto& s = cfg.shape;
  const auto me = static_cast<std::size_t>(comm.rank());
  mine_row_ = layout_.window_row[me];
  const bool leader = node_.rank() == 0;
  // The node rank of this domain's B holder, and how many B copies each node holds.
  int b_owner = node_.rank();
  SCALEBENCH_MPI(MPI_Bcast(&b_owner, 1, MPI_INT, 0, domain_.get()));
  int copies = domain_.rank() == 0 ? 1 : 0;
  SCALEBENCH_MPI(MPI_Allreduce(MPI_IN_PLACE, &copies, 1, MPI_INT, MPI_SUM, node_.get()));
  b_copies_.resize(static_cast<std::size_t>(comm.size()));
  SCALEBENCH_MPI(MPI_Allgather(&copies, 1, MPI_INT, b_copies_.data(), 1, MPI_INT, comm.get()));
  const std::int64_t rows_held = leader ? layout_.node_rows[me] : 0;
  const auto e = static_cast<std::int64_t>(sizeof(T));
  // Decided together: a rank that skipped the allocation would leave the others in it.
  const bool disabled = !comm.all(!shared_windows_disabled());
  // Window sizes in bytes as MPI_Aint (64-bit): counts above 2^31 elements are one window.
  agree(comm, [&] {
    if (disabled) throw RuntimeLibraryError("SCALEBENCH_NO_SHARED_WINDOWS is set on a rank");
    if (leader) {
      check_backing_room(rows_held * (s.k + s.n) * e + static_cast<std::int64_t>(b_copies_[me]) * s.k * s.n * e);
    }
    a_win_ = SharedWindow(node_, rows_held * s.k * e);
    b_win_ = SharedWindow(node_, domain_.rank() == 0 ? s.k * s.n * e : 0);
    c_win_ = SharedWindow(node_, rows_held * s.n * e);
    a_ = static_cast<T*>(a_win_.segment(0));
    b_ = static_cast<T*>(b_win_.segment(b_owner));
    c_ = static_cast<T*>(c_win_.segment(0));
  });
}

template <class T>
int NodeSharedMatrices<T>::generate() {
  const auto& s = cfg_.shape;
  const int threads = host_fill_threads();
  const Block mine = rows_.block(comm_.rank());
  // Each rank's rows are first written by the rank that multiplies them: their pages land on its
  // NUMA domain. The values depend only on the element's index (gemm_fill.hpp).
  if (layout_.on_root_node(comm_.rank())) {
    fill_matrix(a_mine(), mine.count * s.k, mine.offset * s.k, gemm_input_key(cfg_.seed, GemmInput::a), cfg_.fill,
                cfg_.precision, threads);
  } else {
    fill_zero(a_mine(), mine.count * s.k, threads);
  }
  fill_zero(c_mine(), mine.count * s.n, threads);
  if (comm_.is_root()) {
    // Rank 0's A is whole: it also makes the rows of the ranks on other nodes (scattered from it).
    for_remote_blocks([&](int, Block b) {
      fill_matrix(a_ + b.offset * s.k, b.count * s.k, b.offset * s.k, gemm_input_key(cfg_.seed, GemmInput::a),
                  cfg_.fill, cfg_.precision, threads);
      fill_zero(c_ + b.offset * s.n, b.count * s.n, threads);
    });
  }
  if (domain_.rank() == 0) {  // this domain's B: its pages land on the domain
    if (comm_.is_root()) {
      fill_matrix(b_, s.k * s.n, 0, gemm_input_key(cfg_.seed, GemmInput::b), cfg_.fill, cfg_.precision, threads);
    } else {
      fill_zero(b_, s.k * s.n, threads);
    }
  }
  a_win_.sync();
  b_win_.sync();
  c_win_.sync();
  return threads;
}

template <class T>
template <class F>
void NodeSharedMatrices<T>::for_remote_blocks(F&& f) const {
  for (int r = 0; r < comm_.size(); ++r) {
    if (!layout_.on_root_node(r) && rows_.block(r).count > 0) f(r, rows_.block(r));
  }
}

template <class T>
void NodeSharedMatrices<T>::scatter(BufferTransport& t, PhaseRecorder& rec) {
  ScopedPhase p(rec, phase::scatter);
  const std::int64_t k = cfg_.shape.k;
  // Rank 0 sends each remote block to its node's leader, in rank order (one sender: no cycle).
  for_remote_blocks([&](int r, Block b) {
    const int to = layout_.leader[static_cast<std::size_t>(r)];
    if (comm_.is_root()) {
      t.send(view_of(a_ + b.offset * k, b.count * k), to, comm_);
    } else if (comm_.rank() == to) {
      t.receive(view_of(a_ + layout_.window_row[static_cast<std::size_t>(r)] * k, b.count * k), 0, comm_);
    }
  });
  a_win_.sync();
}

template <class T>
void NodeSharedMatrices<T>::broadcast(BufferTransport& t, PhaseRecorder& rec) {
  ScopedPhase p(rec, phase::broadcast);
  const std::int64_t count = cfg_.shape.k * cfg_.shape.n;
  if (node_.rank() == 0 && leaders_.size() > 1) t.broadcast(view_of(b_, count), 0, leaders_);
  b_win_.sync();
  if (b_copies_[static_cast<std::size_t>(comm_.rank())] > 1) {
    // One B per NUMA domain: each domain's holder copies the node leader's.
    if (domain_.rank() == 0 && node_.rank() != 0) {
      std::memcpy(b_, b_win_.segment(0), static_cast<std::size_t>(count) * sizeof(T));
    }
    b_win_.sync();
  }
}

template <class T>
void NodeSharedMatrices<T>::gather(BufferTransport& t, PhaseRecorder& rec) {
  ScopedPhase p(rec, phase::gather);
  const std::int64_t n = cfg_.shape.n;
  c_win_.sync();  // every rank's rows of C are written
  for_remote_blocks([&](int r, Block b) {
    const int from = layout_.leader[static_cast<std::size_t>(r)];
    if (comm_.is_root()) {
      t.receive(view_of(c_ + b.offset * n, b.count * n), from, comm_);
    } else if (comm_.rank() == from) {
      t.send(view_of(c_ + layout_.window_row[static_cast<std::size_t>(r)] * n, b.count * n), 0, comm_);
    }
  });
  // No sync after: only rank 0 reads what arrived (its own receives). The next repeat's writes
  // into A and C come after the repeat loop's barrier, past every rank's reads of this one.
}

template <class T>
nlohmann::json NodeSharedMatrices<T>::traffic() const {
  const auto& s = cfg_.shape;
  const double e = static_cast<double>(sizeof(T));
  double a = 0, c = 0;
  for_remote_blocks([&](int, Block b) {
    a += static_cast<double>(b.count * s.k) * e;
    c += static_cast<double>(b.count * s.n) * e;
  });
  const double b_bytes = static_cast<double>(s.k * s.n) * e;
  const double b = static_cast<double>(layout_.nodes - 1) * b_bytes;
  double b_local = 0;  // the copies into each extra NUMA domain's B
  for (int r = 0; r < comm_.size(); ++r) {
    if (layout_.is_leader(r)) b_local += static_cast<double>(b_copies_[static_cast<std::size_t>(r)] - 1) * b_bytes;
  }
  auto bytes = [](double inter, double intra) {
    return nlohmann::json{{"inter_node_bytes", inter}, {"intra_node_bytes", intra}, {"crosses_network", inter > 0}};
  };
  return {{phase::scatter, bytes(a, 0.0)}, {phase::broadcast, bytes(b, b_local)}, {phase::gather, bytes(c, 0.0)}};
}

template <class T>
void NodeSharedMatrices<T>::leader_bytes(std::vector<std::int64_t>& scatter, std::vector<std::int64_t>& bcast,
                                         std::vector<std::int64_t>& gather) const {
  const auto& s = cfg_.shape;
  const auto n = static_cast<std::size_t>(comm_.size());
  scatter.assign(n, 0);
  bcast.assign(n, 0);
  gather.assign(n, 0);
  for_remote_blocks([&](int r, Block b) {
    const auto l = static_cast<std::size_t>(layout_.leader[static_cast<std::size_t>(r)]);
    scatter[l] += b.count * s.k;
    gather[l] += b.count * s.n;
  });
  for (std::size_t r = 1; r < n; ++r) {
    if (layout_.is_leader(static_cast<int>(r))) bcast[r] = s.k * s.n;
  }
}

template <class T>
nlohmann::json NodeSharedMatrices<T>::memory_per_node(const std::vector<std::string>& hosts) const {
  const auto& s = cfg_.shape;
  const auto e = static_cast<double>(sizeof(T));
  nlohmann::json out = nlohmann::json::array();
  for (int r = 0; r < comm_.size(); ++r) {
    if (!layout_.is_leader(r)) continue;
    const auto i = static_cast<std::size_t>(r);
    int ranks = 0;
    for (const int l : layout_.leader) ranks += l == r ? 1 : 0;
    const double rows = static_cast<double>(layout_.node_rows[i]);
    const double b = static_cast<double>(s.k * s.n) * e;
    out.push_back({{"host", i < hosts.size() ? hosts[i] : std::string("unknown")},
                   {"leader", r},
                   {"ranks", ranks},
                   {"b_copies", b_copies_[i]},
                   {"b_bytes", b * b_copies_[i]},
                   {"matrix_bytes", rows * static_cast<double>(s.k + s.n) * e + b * b_copies_[i]}});
  }
  return out;
}

template class NodeSharedMatrices<double>;
template class NodeSharedMatrices<float>;

}  // namespace scalebench
