#include "gemm/algorithms/node_shared.hpp"

#include <fcntl.h>
#include <numa.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/parallel.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/problem/gemm_fill.hpp"

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
  std::map<int, int> ranks;            // ranks placed so far on each node
  out.node_rank.assign(out.leader.size(), 0);
  for (int r = 0; r < comm.size(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    out.node_rank[i] = ranks[out.leader[i]]++;
    // The root node's windows are rank 0's whole matrices: rows at their global place.
    out.window_row[i] = out.leader[i] == 0 ? rows.block(r).offset : filled[out.leader[i]];
    filled[out.leader[i]] += rows.block(r).count;
  }
  for (std::size_t i = 0; i < out.leader.size(); ++i) {
    out.node_rows[i] = out.leader[i] == 0 ? rows.total() : filled[out.leader[i]];
  }
  out.nodes = static_cast<int>(filled.size());
  out.fewest_ranks = std::min_element(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) {
                       return a.second < b.second;
                     })->second;
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

// Open MPI's folder for shared windows' backing files, and where its value came from. Open MPI
// 4.1's osc/sm component (ompi/mca/osc/sm/osc_sm_component.c) backs each window of two or more
// processes with one file, "<folder>/osc_sm.<host>.<jobid>.<vpid>.<cid>", which the node's first
// rank creates (opal_shmem mmap: open, ftruncate, mmap) while the others wait for it in a
// broadcast: when that rank fails (no folder, no room) the others wait for ever, and a file larger
// than a tmpfs's room may still be made (sparse) and SIGBUS on first touch. The folder is the MCA
// variable osc_sm_backing_directory (mpirun --mca, OMPI_MCA_osc_sm_backing_directory, parameter
// files); its default is /dev/shm where that is writable (access W_OK), else the job's session
// directory. A window of one process is plain memory (malloc): no file.
struct BackingFolder {
  std::string path;
  std::string origin;  // where the value came from, for the message
};

// The string value of MPI tool control variable `name` (MPI_T), or nothing where the library has
// no such variable. Not collective.
std::optional<std::string> mpi_t_string(const char* name) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return std::nullopt;
  std::optional<std::string> out;
  int index = -1;
  std::array<char, 256> var_name{};
  std::array<char, 16> desc{};
  int name_len = static_cast<int>(var_name.size());
  int desc_len = static_cast<int>(desc.size());
  int verbosity = 0, bind = 0, scope = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
  if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS &&
      MPI_T_cvar_get_info(index, var_name.data(), &name_len, &verbosity, &type, &enumtype, desc.data(), &desc_len,
                          &bind, &scope) == MPI_SUCCESS &&
      type == MPI_CHAR) {
    MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
    int count = 0;
    if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      // Open MPI announces 2048 characters but copies the whole string: room for any environment value.
      std::vector<char> buf(static_cast<std::size_t>(std::max(count, 0)) + (std::size_t{1} << 20), '\0');
      if (MPI_T_cvar_read(handle, buf.data()) == MPI_SUCCESS) {
        out = std::string(buf.data(), strnlen(buf.data(), buf.size()));
      }
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
  return out;
}

BackingFolder backing_folder() {
  const char* env = std::getenv("OMPI_MCA_osc_sm_backing_directory");
  const bool from_env = env != nullptr;
  BackingFolder f;
  if (const auto lib = mpi_t_string("osc_sm_backing_directory")) {
    f.path = *lib;
    f.origin = from_env ? "OMPI_MCA_osc_sm_backing_directory" : "Open MPI's osc_sm_backing_directory";
  } else if (from_env) {
    f.path = env;
    f.origin = "OMPI_MCA_osc_sm_backing_directory";
  } else {
    f.path = "/dev/shm";
    f.origin = "the usual shared-memory folder";
  }
  if (f.path.empty()) f.path.assign(1, '/');  // Open MPI then makes "/osc_sm..."
  return f;
}

// `text` for a one-line message: control characters shown as '?'.
std::string printable(std::string text) {
  for (char& ch : text) ch = std::isprint(static_cast<unsigned char>(ch)) != 0 ? ch : '?';
  return text;
}

std::string mib(double bytes) { return fmt::format("{:.1f} MiB ({:.0f} bytes)", bytes / 0x1p20, bytes); }

// Kept free in the backing folder beyond the windows: other processes may use the same folder
// (MPI's own shared-memory transport among them, whose sparse files grow as they are touched).
constexpr double kBackingMarginMin = 8.0 * 0x1p20;  // bytes
constexpr double kBackingMarginShare = 16.0;        // 1/16 of the windows, where that is more

// Why `f` cannot hold `need` bytes of this node's windows (empty: it can). Checks that it is a
// folder, that a file can be made in it (a probe file created and removed: catches read-only
// mounts and full inode tables), and that its free bytes (statvfs f_bavail) cover `need` and the
// margin. Not collective.
std::string backing_refusal(const BackingFolder& f, std::int64_t need) {
  const std::string where = fmt::format("the shared-memory backing folder {} ({}) on {}", printable(f.path), f.origin,
                                        host_name());
  struct stat st {};
  if (stat(f.path.c_str(), &st) != 0) return fmt::format("{}: {}", where, std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fmt::format("{} is not a folder", where);
  const std::string probe = fmt::format("{}/.scalebench-probe.{}.{}", f.path, host_name(), getpid());
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fmt::format("{}: no file can be created in it ({})", where, std::strerror(errno));
  close(fd);
  unlink(probe.c_str());
  struct statvfs vfs {};
  if (statvfs(f.path.c_str(), &vfs) != 0) return fmt::format("{}: {}", where, std::strerror(errno));
  const double room = static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize);
  const double margin = std::max(kBackingMarginMin, static_cast<double>(need) / kBackingMarginShare);
  if (static_cast<double>(need) + margin <= room) return {};
  return fmt::format("{} has {} free, but the node's windows need {} + {} kept free for other users of the folder; "
                     "give it more room (a container: --shm-size) or set OMPI_MCA_osc_sm_backing_directory to a "
                     "local folder that has it",
                     where, mib(room), mib(static_cast<double>(need)), mib(margin));
}

// This rank's part of its node's windows in bytes: rank 0's node's A and C (whole) charged to
// rank 0, every other node's rows of A and C to the ranks whose rows they are, B to the holder of
// each of the node's copies. Collective over `comm`.
std::int64_t window_bytes(const GemmConfig& cfg, const Communicator& comm, const Communicator& node) {
  const RowPartition rows(cfg.shape.m, comm.size());
  const NodeLayout layout = make_node_layout(comm, node, rows);
  const auto& s = cfg.shape;
  const auto e = static_cast<std::int64_t>(host_element_bytes(cfg.precision));
  const std::string limit = "the largest 64-bit byte count";
  const std::int64_t mine = rows.block(comm.rank()).count;
  const std::int64_t held = comm.is_root() ? s.m : layout.on_root_node(comm.rank()) ? 0 : mine;
  const std::int64_t ac = product_within("bytes of A and C rows", {held, s.k + s.n, e}, kInt64Max, limit);
  const bool holds_b = split_by_domain(node).rank() == 0;  // one B per node, or per NUMA domain
  const std::int64_t b = holds_b ? product_within("bytes of B", {s.k, s.n, e}, kInt64Max, limit) : 0;
  return sum_within("bytes of a rank's windows", {ac, b}, kInt64Max, limit);
}

// What Open MPI adds to a window of `ranks` processes: each segment rounded up to a page, its
// state and post pages; kept generous.
std::int64_t window_overhead(int ranks) {
  const long page = sysconf(_SC_PAGESIZE);
  return (static_cast<std::int64_t>(ranks) + 2) * (page > 0 ? page : 4096) + (std::int64_t{1} << 20);
}

}  // namespace

std::string shared_windows_refusal(const GemmConfig& cfg, const Communicator& comm) {
  const Communicator node = comm.split_shared();
  const std::int64_t windows = node.sum(window_bytes(cfg, comm, node));
  std::string mine;
  agree(comm, [&] {
    if (const auto set = shared_windows_disabled()) {
      mine = fmt::format("SCALEBENCH_NO_SHARED_WINDOWS={} is set on rank {} ({})", *set, comm.rank(), host_name());
    } else if (node.rank() == 0 && node.size() > 1) {  // the rank that creates the node's backing files
      mine = backing_refusal(backing_folder(), windows + 3 * window_overhead(node.size()));
    }
  });
  // The lowest refusing rank's reason, on every rank: no rank allocates while another falls back.
  const int rank = mine.empty() ? comm.size() : comm.rank();
  int first = comm.size();
  SCALEBENCH_MPI(MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, comm.get()));
  return first < comm.size() ? comm.bcast_string(mine, first) : std::string();
}

std::int64_t shared_host_bytes(const GemmConfig& cfg, const Communicator& comm, const std::string& refusal) {
  const RowPartition rows(cfg.shape.m, comm.size());
  const std::int64_t mine = rows.block(comm.rank()).count;
  // Where the windows cannot be made the run falls back to replicated: its memory is what counts.
  if (!refusal.empty()) return host_bytes_per_rank(cfg, mine, comm.is_root());
  const Communicator node = comm.split_shared();
  const std::int64_t windows = window_bytes(cfg, comm, node);
  const auto e = static_cast<std::int64_t>(host_element_bytes(cfg.precision));
  const std::string limit = "the largest 64-bit byte count";
  // The peer's C_i to each rank.
  const std::int64_t peer = cfg.peer
                                ? product_within("bytes of the peer's C_i", {mine, cfg.shape.n, e}, kInt64Max, limit)
                                : 0;
  return sum_within("host bytes of one rank", {windows, peer}, kInt64Max, limit);
}

std::optional<std::string> shared_windows_disabled() {
  const char* v = std::getenv("SCALEBENCH_NO_SHARED_WINDOWS");
  if (v == nullptr) return std::nullopt;
  std::string value(v, strnlen(v, 64));
  std::string word;
  for (const char ch : value) word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* no : {"", "0", "no", "false", "off"}) {
    if (word == no) return std::nullopt;
  }
  for (const char* yes : {"1", "yes", "true", "on"}) {
    if (word == yes) return value;
  }
  throw UsageError(fmt::format("SCALEBENCH_NO_SHARED_WINDOWS='{}' (environment): use 1 (or yes, true, on) to run "
                               "--distribution shared as replicated, 0 (or unset) for shared windows",
                               printable(value)));
}

template <class T>
NodeSharedMatrices<T>::NodeSharedMatrices(const GemmConfig& cfg, const Communicator& comm, const RowPartition& rows,
                                          std::int64_t chunk)
    : cfg_(cfg),
      comm_(comm),
      rows_(rows),
      chunk_(chunk),
      node_(comm.split_shared()),
      layout_(make_node_layout(comm, node_, rows)),
      lanes_(layout_.nodes > 1
                 ? b_lanes(layout_.fewest_ranks, cfg.shape.k * cfg.shape.n * static_cast<std::int64_t>(sizeof(T)))
                 : 1),
      // B's lanes: rank j of each node, rank 0's node first (each lane's root), then in rank order.
      lane_(comm.split(std::min(node_.rank(), lanes_),
                       (layout_.on_root_node(comm.rank()) ? 0 : comm.size()) + comm.rank())),
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
  // Decided together, before any window: a rank that skipped the allocation would leave the others
  // in it, and a node leader that Open MPI fails to make a backing file for leaves its node's
  // other ranks waiting for that file.
  const std::string refusal = shared_windows_refusal(cfg, comm);
  if (!refusal.empty()) throw AgreedError(ExitCode::resource, refusal, 0);
  // Window sizes in bytes as MPI_Aint (64-bit): counts above 2^31 elements are one window.
  agree(comm, [&] {
    a_win_ = SharedWindow(node_, rows_held * s.k * e);
    b_win_ = SharedWindow(node_, domain_.rank() == 0 ? s.k * s.n * e : 0);
    c_win_ = SharedWindow(node_, rows_held * s.n * e);
    a_ = static_cast<T*>(a_win_.segment(0));
    b_ = static_cast<T*>(b_win_.segment(b_owner));
    c_ = static_cast<T*>(c_win_.segment(0));
  });
  // Agreed: where one rank's pages have no room every rank falls back (the windows are freed
  // together as this constructor unwinds).
  agree(comm, [&] { prefault(); });
}

template <class T>
void NodeSharedMatrices<T>::prefault() const {
  const auto& s = cfg_.shape;
  const Block mine = rows_.block(comm_.rank());
  const auto e = static_cast<std::int64_t>(sizeof(T));
  std::vector<std::pair<T*, std::int64_t>> ranges = {{a_mine(), mine.count * s.k}, {c_mine(), mine.count * s.n}};
  if (comm_.is_root()) {
    for_remote_blocks([&](int, Block b) {
      ranges.emplace_back(a_ + b.offset * s.k, b.count * s.k);
      ranges.emplace_back(c_ + b.offset * s.n, b.count * s.n);
    });
  }
  if (domain_.rank() == 0) ranges.emplace_back(b_, s.k * s.n);
  // In pieces of 256 MiB on all of the rank's CPUs at once: the kernel makes and zeroes a shared
  // page on the faulting thread (25.7 GB took 9 s on one thread of an H200 host).
  constexpr std::int64_t kPieceBytes = std::int64_t{256} << 20;
  std::vector<std::pair<char*, std::int64_t>> pieces;
  for (const auto& [p, count] : ranges) {
    for (std::int64_t off = 0; off < count * e; off += kPieceBytes) {
      pieces.emplace_back(reinterpret_cast<char*>(p) + off, std::min(kPieceBytes, count * e - off));
    }
  }
  std::vector<int> errors(pieces.size(), 0);
  for_each_range(static_cast<std::int64_t>(pieces.size()), host_threads(), 1,
                 [&](int /*part*/, std::int64_t first, std::int64_t last) {
                   for (std::int64_t i = first; i < last; ++i) {
                     const auto iu = static_cast<std::size_t>(i);
                     errors[iu] = prefault_writable(pieces[iu].first, pieces[iu].second);
                   }
                 });
  for (const int err : errors) {
    if (err != 0) {
      const BackingFolder f = backing_folder();
      throw ResourceError(fmt::format("rank {} on {} could not fault in its pages of the node's windows ({}): the "
                                      "shared-memory backing folder {} ({}) has filled since it was checked",
                                      comm_.rank(), host_name(), std::strerror(err), printable(f.path), f.origin));
    }
  }
}

template <class T>
int NodeSharedMatrices<T>::generate() {
  const auto& s = cfg_.shape;
  const int threads = host_threads();
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
  if (carries_b()) {  // this lane's slice, into the node's B (its leader's)
    const Block slice = RowPartition(count, lanes_).block(node_.rank());
    t.relay(view_of(static_cast<T*>(b_win_.segment(0)) + slice.offset, slice.count), 0, lane_);
  }
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
  // B: rank j of each other node receives lane j's slice.
  const RowPartition slices(s.k * s.n, lanes_);
  for (std::size_t r = 0; r < n; ++r) {
    const int j = layout_.node_rank[r];
    if (!layout_.on_root_node(static_cast<int>(r)) && j < lanes_) bcast[r] = slices.block(j).count;
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
