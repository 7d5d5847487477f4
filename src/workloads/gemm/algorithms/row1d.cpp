// Row1D: rank 0 generates A and B; row blocks of A are scattered, B is broadcast whole, each rank
// multiplies its block on its backend, C is gathered to rank 0. Freivalds' check runs by rows on
// every rank. On a GPU, GpuGemmRun (row1d_gpu/gpu_run.hpp) runs one of Row1D's GPU schedules
// (row1d_gpu/schedule.hpp), instead of the host movement where the transport or
// --resident/--overlap says so. With --distribution
// shared the matrices live once per node (NodeSharedMatrices, node_shared.hpp) and only node
// leaders move data; where shared windows cannot be made, the replicated scheme runs and the
// record says why.
#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "gemm/algorithms/algorithms.hpp"
#include "gemm/algorithms/node_shared.hpp"
#include "gemm/algorithms/row1d_gpu/gpu_run.hpp"
#include "gemm/algorithms/timed_transport.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/network.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {
namespace {

// One line of the table: the scheme, what crossed nodes, B's copies per node.
std::string distribution_line(const nlohmann::json& d) {
  const auto& moved = d["bytes_moved"];
  double inter = 0, intra = 0;
  for (const auto& [phase, m] : moved.items()) {
    inter += m["inter_node_bytes"].get<double>();
    intra += m["intra_node_bytes"].get<double>();
  }
  int copies = 0;
  double matrix_bytes = 0;
  for (const auto& n : d["host_memory_per_node"]) {
    copies = std::max(copies, n["b_copies"].get<int>());
    matrix_bytes = std::max(matrix_bytes, n["matrix_bytes"].get<double>());
  }
  return fmt::format("distribution: {}  moved per repeat {:.3f} GB between nodes, {:.3f} GB within nodes; B copies "
                     "per node {}; host matrices per node up to {:.3f} GB\n",
                     d["scheme"].get<std::string>(), inter * 1e-9, intra * 1e-9, copies, matrix_bytes * 1e-9);
}

template <class T>
class Row1D final : public DistributedGemm {
 public:
  Row1D(const GemmConfig& cfg, const GemmTestHooks& hooks, const Communicator& comm, LocalGemm& local, GpuGemm* gpu)
      : cfg_(cfg),
        hooks_(hooks),
        comm_(comm),
        local_(local),
        rows_(cfg.shape.m, comm.size()),
        mine_(rows_.block(comm.rank())),
        a_counts_(rows_.counts_times(cfg.shape.k)),
        a_displs_(rows_.offsets_times(cfg.shape.k)),
        c_counts_(rows_.counts_times(cfg.shape.n)),
        c_displs_(rows_.offsets_times(cfg.shape.n)),
        chunk_(hooks.mpi_chunk > 0 ? hooks.mpi_chunk : kMaxMpiCount),
        transport_(std::make_unique<TimedTransport>(make_mpi_transport(chunk_))) {
    if (gpu != nullptr) gpu_run_.emplace(cfg, comm, *gpu, rows_, hooks.inject_error_rank);
    gpu_ = gpu;
  }
  // The transport first: its NCCL communicators end on every rank at the same point, before the
  // memory they move is unpinned and freed.
  ~Row1D() override { transport_.reset(); }
  Row1D(const Row1D&) = delete;
  Row1D& operator=(const Row1D&) = delete;

  GemmAlgorithm algorithm() const override { return GemmAlgorithm::row1d; }
  GemmDistribution scheme() const override { return shared_ ? GemmDistribution::shared : GemmDistribution::replicated; }

  void prepare(PhaseRecorder& setup) override {
    const auto& s = cfg_.shape;
    if (cfg_.distribution == GemmDistribution::shared) {
      try {
        ScopedPhase t(setup, phase::shared_windows);
        shared_.emplace(cfg_, comm_, rows_, chunk_);
      } catch (const AgreedError& e) {
        fallback_ = fmt::format("--distribution shared fell back to replicated: no node-shared window ({})", e.what());
      }
    }
    const bool host_matrices = !gpu_run_ || gpu_run_->needs_host_matrices();
    if (shared_ || host_matrices) {
      ScopedPhase t(setup, phase::generate);
      if (shared_) {
        shared_->generate();
      } else {
        generate_replicated();
      }
      if (cfg_.peer && !gpu_run_) c_peer_.assign(static_cast<std::size_t>(mine_.count * s.n), T(0));
    }
    if (shared_) {
      a_mine_ = shared_->a_mine();
      c_mine_ = shared_->c_mine();
    } else {
      // Rank 0 keeps its own rows in A and C (in place): no copy of its block, no extra memory.
      a_mine_ = comm_.is_root() && host_matrices ? a_full_.data() + mine_.offset * s.k : a_i_.data();
      c_mine_ = comm_.is_root() && host_matrices ? c_full_.data() + mine_.offset * s.n : c_i_.data();
    }
    const GemmShape local{mine_.count, s.n, s.k};
    if (gpu_run_) {
      if (host_matrices) pin_host(setup);
      gpu_run_->prepare(local, shared_ ? &shared_->node() : nullptr, setup);
      lanes_on_device(setup);
    } else {
      agree(comm_, [&] { local_.prepare(local, cfg_.precision, setup); });
    }
  }

  void multiply(PhaseRecorder& rec) override {
    const auto& s = cfg_.shape;
    transport_->begin_repeat(rec);
    if (shared_) {
      shared_->scatter(*transport_, rec);
      shared_->broadcast(*transport_, rec);
    }
    if (host_moves()) {
      ScopedPhase t(rec, phase::scatter);
      transport_->scatter(view_of(a_full_.data(), s.m * s.k), a_counts_, a_displs_, view_of(a_mine_, mine_.count * s.k),
                          0, comm_);
    }
    if (host_moves()) {
      ScopedPhase t(rec, phase::broadcast);
      // Along the chain of ranks (from 3 ranks and 4 segments on): every rank has B within a few
      // segments of the others, where a tree's last leaf gets it rounds after the first and the
      // gather then waits for it.
      transport_->relay(view_of(b_.data(), s.k * s.n), 0, comm_);
    }
    if (gpu_run_) {
      gpu_run_->multiply(a_full(), a_mine_, b(), c_mine_, c_full(), rec);
    } else {
      local_.multiply(a_mine_, b(), c_mine_, rec);
      if (hooks_.inject_error_rank == comm_.rank() && mine_.count > 0) {
        c_mine_[static_cast<std::size_t>((mine_.count / 2) * s.n + s.n / 2)] += T(1);  // test hook
      }
    }
    if (shared_) shared_->gather(*transport_, rec);
    if (host_moves()) {
      ScopedPhase t(rec, phase::gather);
      transport_->gather(view_of(c_mine_, mine_.count * s.n), view_of(c_full_.data(), s.m * s.n), c_counts_, c_displs_,
                         0, comm_);
    }
    transport_->end_repeat();
  }

  GemmCheck verify(const std::vector<double>& x) override {
    const auto& s = cfg_.shape;
    if (gpu_run_) {
      // The same check computed on each rank's device (row1d_gpu/gpu_run.hpp).
      const bool in_gathered_c = shared_ ? shared_->on_root_node()
                                         : comm_.is_root() && c_mine_ == c_full() + mine_.offset * s.n;
      const auto check = gpu_run_->verify(x, c_mine_, c_full(), in_gathered_c);
      return agree_on_rows(check.rows, mine_.offset, check.gather_ok, comm_);
    }
    const int threads = host_threads();
    if (bx_.empty()) b_times_x(b(), s.k, s.n, x, bx_, abs_bx_, threads);
    std::vector<double> cx;
    const RowCheck rc = freivalds_rows(a_mine_, c_mine_, mine_.count, s.n, s.k, x, bx_, abs_bx_,
                                       unit_roundoff(cfg_.precision), &cx, threads);
    // The gathered C must be exactly the blocks the ranks computed: compare C·x bit for bit.
    std::vector<double> cx_all(comm_.is_root() ? static_cast<std::size_t>(s.m) : 0);
    gatherv(cx.data(), mine_.count, cx_all.data(), rows_.counts(), rows_.offsets(), 0, comm_, chunk_);
    bool gather_ok = true;
    if (comm_.is_root()) {
      const std::vector<double> cx_full = gathered_c_times_x(cx, x, threads);
      gather_ok = std::memcmp(cx_full.data(), cx_all.data(), cx_full.size() * sizeof(double)) == 0;
    }
    return agree_on_rows(rc, mine_.offset, gather_ok, comm_);
  }

  // Rank 0: C·x of the gathered C. Its own rows, already in the gathered C (the same memory), are
  // the `own` sums its check made; the others are summed from the gathered C.
  std::vector<double> gathered_c_times_x(const std::vector<double>& own, const std::vector<double>& x,
                                         int threads) const {
    const auto& s = cfg_.shape;
    std::vector<double> cx_full;
    if (c_mine_ != c_full() + mine_.offset * s.n) {
      c_times_x(c_full(), s.m, s.n, x, cx_full, threads);
      return cx_full;
    }
    cx_full.resize(static_cast<std::size_t>(s.m));
    std::copy(own.begin(), own.end(), cx_full.begin() + mine_.offset);
    std::vector<double> part;
    c_times_x(c_full(), mine_.offset, s.n, x, part, threads);
    std::copy(part.begin(), part.end(), cx_full.begin());
    const std::int64_t after = mine_.offset + mine_.count;
    c_times_x(c_full() + after * s.n, s.m - after, s.n, x, part, threads);
    std::copy(part.begin(), part.end(), cx_full.begin() + after);
    return cx_full;
  }

  HostMatrices full() const override { return {a_full(), b(), c_full()}; }

  void time_peers(const RepeatLoop& loop, PhaseRecorder& peer) override {
    const auto& s = cfg_.shape;
    if (cfg_.peer && cfg_.backend == GemmBackendKind::openblas) {
      const GemmShape local{mine_.count, s.n, s.k};
      for (int rep = 0; rep < loop.total(); ++rep) {
        loop.begin(rep, peer);
        peer.add(phase::bare_compute, time_bare_cblas(local, cfg_.precision, a_mine_, b(), c_peer_.data()));
        peer.next_repeat();
      }
    }
    if (cfg_.peer && gpu_run_) gpu_run_->time_peers(peer, loop);
    // The network peer: the bare MPI calls of the scatter's and the broadcast's bytes.
    if (cfg_.peer && host_moves() && comm_.size() > 1) {
      time_bare_collectives(loop, comm_, net_, a_full_.data(), a_counts_, a_displs_, a_mine_, mine_.count * s.k,
                            b_.data(), s.k * s.n);
    }
  }

  std::string peer_call_name() const override {
    if (gpu_run_) return gpu_run_->peer_call_name();
    return cfg_.precision == Precision::fp64 ? "cblas_dgemm" : "cblas_sgemm";
  }

  nlohmann::json rank_info(PlacementReport& placement) const override {
    const auto& s = cfg_.shape;
    if (a_mine_ && mine_.count > 0) {
      placement.record_buffer("A_i", a_mine_, static_cast<std::size_t>(mine_.count * s.k) * sizeof(T));
    }
    if (c_mine_ && mine_.count > 0) {
      placement.record_buffer("C_i", c_mine_, static_cast<std::size_t>(mine_.count * s.n) * sizeof(T));
    }
    if (!b_.empty()) placement.record_buffer("B", b_.data(), b_.size() * sizeof(T));
    // The node's (or NUMA domain's) B: its pages are where the rank that first wrote it runs.
    if (shared_ && shared_->holds_b()) {
      placement.record_buffer("B", shared_->b(), static_cast<std::size_t>(s.k * s.n) * sizeof(T));
    }
    nlohmann::json info = {{"rows", mine_.count}, {"row_offset", mine_.offset}};
    if (gpu_run_) info.update(gpu_run_->rank_info());
    return info;
  }

  void add_to_record(nlohmann::json& record, const std::vector<std::pair<std::string, PhaseStats>>& phases,
                     const std::vector<std::pair<std::string, PhaseStats>>& peer_phases) override {
    const auto& s = cfg_.shape;
    const auto net_phases = summarize_phases(net_, comm_);
    const nlohmann::json gpu_map = gpu_run_ ? gpu_run_->gather_map() : nlohmann::json();
    const nlohmann::json communication = transport_->to_json(comm_);  // null on the device schedules
    if (!comm_.is_root()) return;
    // What each rank receives (scatter, broadcast) or sends (gather) between ranks: rank 0's
    // own block never moves; every other rank receives all of B.
    // Under the shared distribution only node leaders receive: the rows of their node's ranks
    // and B (bytes_per_rank counts them at the leader).
    std::vector<std::int64_t> scatter = rows_.counts_times(s.k), bcast(rows_.parts(), s.k * s.n),
                              gather = rows_.counts_times(s.n);
    scatter[0] = bcast[0] = gather[0] = 0;
    const auto hosts = rank_hosts(record);
    const bool b_along_chain = host_moves() &&
                               relay_goes_along_chain(comm_.size(), s.k * s.n * static_cast<std::int64_t>(sizeof(T)));
    record["network"] = gemm_network(hosts, a_counts_, c_counts_, s.k * s.n, sizeof(T), phases, net_phases,
                                     b_along_chain);
    if (shared_) shared_->leader_bytes(scatter, bcast, gather);
    const std::size_t e = sizeof(T);
    record["distribution"] = {{"algorithm", "row1d"},
                              {"grid", {comm_.size(), 1}},
                              {"transport", to_string(cfg_.transport)},
                              {"scheme", shared_ ? "shared" : "replicated"},
                              {"requested_scheme", to_string(cfg_.distribution)},
                              {"bytes_per_rank",
                               {{phase::scatter, bytes_per_rank_json(scatter, e)},
                                {phase::broadcast, bytes_per_rank_json(bcast, e)},
                                {phase::gather, bytes_per_rank_json(gather, e)}}},
                              {"communication", communication}};
    if (shared_) record["network"]["phases"] = shared_->traffic();
    if (shared_) {
      record["network"]["model"] = fmt::format(
          "shared: rank 0 sends each other node its ranks' rows of A and receives their rows of C through the node "
          "leaders, B is relayed among the nodes on {} (rank j of each node carries the j-th slice; from 3 nodes on "
          "a chain of 512 KiB segments, each link carrying B once); nothing is copied inside a node",
          shared_->lanes() == 1 ? std::string("1 lane, the node leaders")
                                : fmt::format("{} lanes at once", shared_->lanes()));
    }
    record["distribution"]["bytes_moved"] = record["network"]["phases"];
    record["distribution"]["host_memory_per_node"] = memory_per_node(hosts);
    if (shared_) {
      record["distribution"]["b_lanes"] = shared_->lanes();
      record["distribution"]["b_lanes_transport"] = b_lanes_transport_;
    }
    if (!fallback_.empty()) record["distribution"]["warning"] = fallback_;
    record["partition"] = {{"rows_per_rank", rows_.counts()}};
    if (gpu_run_) {
      record["gpu"] = gpu_run_->record_section(gpu_map, phases);
      if (!record["peer"].is_null()) gpu_run_->add_copy_peer(record["peer"], phases, peer_phases);
    }
  }

  std::string table_lines(const nlohmann::json& record) const override {
    return distribution_line(record["distribution"]) +
           (gpu_run_ ? gpu_run_->table_lines(record["gpu"]) : std::string()) +
           communication_line(record["distribution"]["communication"]);
  }

 private:
  // Whether the host MPI scatter, broadcast and gather run (not the device schedules).
  bool host_moves() const { return !shared_ && (!gpu_run_ || gpu_run_->moves_through_host()); }
  // Replicated: rank 0's A, B and C; the others' B (when it comes through the host), A_i, C_i.
  void generate_replicated() {
    const auto& s = cfg_.shape;
    if (comm_.is_root()) {
      generate_inputs(cfg_, a_full_, b_, c_full_);
    } else if (host_moves()) {
      // B arrives by broadcast (with transport nccl it goes device to device: no host copy).
      b_.resize(static_cast<std::size_t>(s.k * s.n));
      fill_zero(b_.data(), s.k * s.n, host_threads());
    }
    if (!comm_.is_root()) {
      a_i_.assign(static_cast<std::size_t>(mine_.count * s.k), T(0));
      c_i_.assign(static_cast<std::size_t>(mine_.count * s.n), T(0));
    }
  }

  // Page-locks the host matrices the GPU copies from and to. Shared: each GPU rank registers its
  // own part of the node's windows — its rows of A and C, and B (every rank of the node registers
  // B: each process maps it for itself). Where the driver refuses to page-lock shared memory the
  // copies still work, staged through pinned chunks (slower): the run goes on and says so.
  void pin_host(PhaseRecorder& setup) {
    const auto& s = cfg_.shape;
    auto range = [](auto& v) { return std::pair<void*, std::size_t>(v.data(), v.size() * sizeof(T)); };
    if (!shared_) {
      gpu_run_->pin({range(a_full_), range(c_full_), range(a_i_), range(b_), range(c_i_)}, setup);
      return;
    }
    const std::size_t e = sizeof(T);
    try {
      gpu_run_->pin({{a_mine_, static_cast<std::size_t>(mine_.count * s.k) * e},
                     {c_mine_, static_cast<std::size_t>(mine_.count * s.n) * e},
                     {shared_->b(), static_cast<std::size_t>(s.k * s.n) * e}},
                    setup);
    } catch (const AgreedError& err) {
      fallback_ = fmt::format("the node-shared windows could not be page-locked ({}): copies are staged through "
                              "pinned chunks",
                              err.what());
    }
  }

  // Shared, on GPUs over NCCL, across nodes: B's lanes between the nodes go through NCCL (its
  // socket or network transport), reading and writing the node's page-locked B in place, where
  // one MPI TCP connection a node fell short of the link (docs/cluster.md). Where any lane rank's
  // B is not the page-locked one it relays into (the windows not page-locked; one B per NUMA
  // domain), B stays on MPI.
  void lanes_on_device(PhaseRecorder& setup) {
    if (!shared_ || shared_->nodes() < 2 || cfg_.transport != Transport::nccl) return;
    const bool ok = fallback_.empty() && (!shared_->carries_b() || shared_->relays_into_own_b());
    if (comm_.max(static_cast<std::int64_t>(!ok)) != 0) return;
    ScopedPhase t(setup, phase::nccl_comm);
    std::unique_ptr<BufferTransport> device;
    agree(comm_, [&] {
      if (shared_->carries_b()) device = make_device_buffer_transport(shared_->lane(), gpu_->stream());
    });
    transport_ = std::make_unique<TimedTransport>(
        make_lanes_on_device(make_mpi_transport(chunk_), std::move(device), shared_->lane()));
    b_lanes_transport_ = "nccl";
  }

  // Host matrix bytes per node: one B per node (shared), or one per rank (replicated).
  nlohmann::json memory_per_node(const std::vector<std::string>& hosts) const {
    if (shared_) return shared_->memory_per_node(hosts);
    const auto& s = cfg_.shape;
    const double e = sizeof(T), b = static_cast<double>(s.k * s.n) * e;
    nlohmann::json out = nlohmann::json::array();
    std::vector<std::string> seen;
    for (std::size_t r = 0; r < hosts.size(); ++r) {
      if (std::find(seen.begin(), seen.end(), hosts[r]) != seen.end()) continue;
      seen.push_back(hosts[r]);
      int ranks = 0;
      double rows = 0;
      for (std::size_t q = 0; q < hosts.size(); ++q) {
        if (hosts[q] != hosts[r]) continue;
        ++ranks;
        rows += static_cast<double>(q == 0 ? s.m : rows_.counts()[q]);  // rank 0 holds A and C whole
      }
      out.push_back({{"host", hosts[r]},
                     {"leader", static_cast<int>(r)},
                     {"ranks", ranks},
                     {"b_copies", ranks},
                     {"b_bytes", b * ranks},
                     {"matrix_bytes", rows * static_cast<double>(s.k + s.n) * e + b * ranks}});
    }
    return out;
  }
  // Rank 0's whole matrices and this rank's B, wherever the distribution keeps them.
  T* a_full() const { return shared_ ? shared_->a_full() : const_cast<T*>(a_full_.data()); }
  T* c_full() const { return shared_ ? shared_->c_full() : const_cast<T*>(c_full_.data()); }
  T* b() const { return shared_ ? shared_->b() : const_cast<T*>(b_.data()); }

  const GemmConfig& cfg_;
  const GemmTestHooks& hooks_;
  const Communicator& comm_;
  LocalGemm& local_;
  const RowPartition rows_;
  const Block mine_;
  const std::vector<std::int64_t> a_counts_, a_displs_, c_counts_, c_displs_;
  const std::int64_t chunk_;
  std::unique_ptr<TimedTransport> transport_;
  // Rank 0's A, B and C are GiBs at benchmark sizes: allocated uninitialised, then written by
  // every thread this rank may use (HostMatrix, gemm_fill.hpp).
  HostMatrix<T> a_full_, c_full_, b_;
  std::vector<T> a_i_, c_i_, c_peer_;
  T* a_mine_ = nullptr;  // this rank's rows of A and C: its own buffers, or (rank 0) inside A, C
  T* c_mine_ = nullptr;
  std::vector<double> bx_, abs_bx_;
  PhaseRecorder net_;
  // --distribution shared: the node's windows (declared before gpu_run_: unpinned first), or
  // why they could not be made.
  std::optional<NodeSharedMatrices<T>> shared_;
  std::string fallback_;
  std::string b_lanes_transport_ = "mpi";  // what carries B's lanes between nodes
  GpuGemm* gpu_ = nullptr;                 // --backend cublas
  // --backend cublas: the GPU steps. Declared after the host matrices, so that their
  // page-locking ends before they are freed.
  std::optional<GpuGemmRun> gpu_run_;
};

}  // namespace

template <class T>
std::unique_ptr<DistributedGemm> make_row1d(const GemmConfig& cfg, const GemmTestHooks& hooks, const Communicator& comm,
                                            LocalGemm& local, GpuGemm* gpu) {
  return std::make_unique<Row1D<T>>(cfg, hooks, comm, local, gpu);
}
template std::unique_ptr<DistributedGemm> make_row1d<double>(const GemmConfig&, const GemmTestHooks&,
                                                             const Communicator&, LocalGemm&, GpuGemm*);
template std::unique_ptr<DistributedGemm> make_row1d<float>(const GemmConfig&, const GemmTestHooks&,
                                                            const Communicator&, LocalGemm&, GpuGemm*);

}  // namespace scalebench
