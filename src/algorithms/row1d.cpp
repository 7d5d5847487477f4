// Row1D: rank 0 generates A and B; row blocks of A are scattered, B is broadcast whole, each rank
// multiplies its block on its backend, C is gathered to rank 0. Freivalds' check runs by rows on
// every rank. On a GPU the device schedules of GpuGemmRun (core/gemm_gpu_run.hpp) run instead of
// the host movement where the transport or --resident/--overlap says so.
#include <cstring>
#include <optional>

#include "algorithms/algorithms.hpp"
#include "algorithms/timed_transport.hpp"
#include "core/gemm_gpu_run.hpp"
#include "scalebench/gpu.hpp"
#include "scalebench/mpi.hpp"
#include "scalebench/network.hpp"
#include "scalebench/partition.hpp"
#include "scalebench/placement.hpp"
#include "scalebench/record.hpp"

namespace scalebench {
namespace {

template <class T>
class Row1D final : public DistributedGemm {
 public:
  Row1D(const GemmConfig& cfg, const Communicator& comm, LocalGemm& local, GpuGemm* gpu)
      : cfg_(cfg),
        comm_(comm),
        local_(local),
        rows_(cfg.shape.m, comm.size()),
        mine_(rows_.block(comm.rank())),
        a_counts_(rows_.counts_times(cfg.shape.k)),
        a_displs_(rows_.offsets_times(cfg.shape.k)),
        c_counts_(rows_.counts_times(cfg.shape.n)),
        c_displs_(rows_.offsets_times(cfg.shape.n)),
        chunk_(cfg.mpi_chunk > 0 ? cfg.mpi_chunk : kMaxMpiCount),
        transport_(std::make_unique<TimedTransport>(make_mpi_transport(chunk_))) {
    if (gpu != nullptr) gpu_run_.emplace(cfg, comm, *gpu, rows_);
  }

  GemmAlgorithm algorithm() const override { return GemmAlgorithm::row1d; }

  void prepare(PhaseRecorder& setup) override {
    const auto& s = cfg_.shape;
    const bool host_matrices = !gpu_run_ || gpu_run_->needs_host_matrices();
    if (host_matrices) {
      ScopedPhase t(setup, "generate");
      if (comm_.is_root()) {
        generate_inputs(cfg_, a_full_, b_, c_full_);
      } else if (host_moves()) {
        // B arrives by broadcast (with transport nccl it goes device to device: no host copy).
        b_.resize(static_cast<std::size_t>(s.k * s.n));
        fill_zero(b_.data(), s.k * s.n, host_fill_threads());
      }
      // Rank 0 keeps its own rows in A and C (in place): no copy of its block, no extra memory.
      if (!comm_.is_root()) {
        a_i_.assign(static_cast<std::size_t>(mine_.count * s.k), T(0));
        c_i_.assign(static_cast<std::size_t>(mine_.count * s.n), T(0));
      }
      if (cfg_.peer && !gpu_run_) c_peer_.assign(static_cast<std::size_t>(mine_.count * s.n), T(0));
    }
    a_mine_ = comm_.is_root() && host_matrices ? a_full_.data() + mine_.offset * s.k : a_i_.data();
    c_mine_ = comm_.is_root() && host_matrices ? c_full_.data() + mine_.offset * s.n : c_i_.data();
    const GemmShape local{mine_.count, s.n, s.k};
    if (gpu_run_) {
      if (host_matrices) {
        auto range = [](auto& v) { return std::pair<void*, std::size_t>(v.data(), v.size() * sizeof(T)); };
        gpu_run_->pin({range(a_full_), range(c_full_), range(a_i_), range(b_), range(c_i_)}, setup);
      }
      gpu_run_->prepare(local, setup);
    } else {
      agree(comm_, [&] { local_.prepare(local, cfg_.precision, setup); });
    }
  }

  void multiply(PhaseRecorder& rec) override {
    const auto& s = cfg_.shape;
    transport_->begin_repeat(rec);
    if (host_moves()) {
      ScopedPhase t(rec, "scatter");
      transport_->scatter(view_of(a_full_.data(), s.m * s.k), a_counts_, a_displs_,
                          view_of(a_mine_, mine_.count * s.k), 0, comm_);
    }
    if (host_moves()) {
      ScopedPhase t(rec, "broadcast");
      transport_->broadcast(view_of(b_.data(), s.k * s.n), 0, comm_);
    }
    if (gpu_run_) {
      gpu_run_->multiply(a_full_.data(), a_mine_, b_.data(), c_mine_, c_full_.data(), rec);
    } else {
      local_.multiply(a_mine_, b_.data(), c_mine_, rec);
      if (cfg_.inject_error_rank == comm_.rank() && mine_.count > 0) {
        c_mine_[static_cast<std::size_t>((mine_.count / 2) * s.n + s.n / 2)] += T(1);  // test hook
      }
    }
    if (host_moves()) {
      ScopedPhase t(rec, "gather");
      transport_->gather(view_of(c_mine_, mine_.count * s.n), view_of(c_full_.data(), s.m * s.n), c_counts_,
                         c_displs_, 0, comm_);
    }
    transport_->end_repeat();
  }

  GemmCheck verify(const std::vector<double>& x) override {
    const auto& s = cfg_.shape;
    if (gpu_run_) {
      // The same check computed on each rank's device (gemm_gpu_run.hpp).
      const auto check = gpu_run_->verify(x, c_mine_, c_full_.data());
      return agree_on_rows(check.rows, mine_.offset, check.gather_ok, comm_);
    }
    if (bx_.empty()) b_times_x(b_.data(), s.k, s.n, x, bx_, abs_bx_);
    std::vector<double> cx;
    const RowCheck rc = freivalds_rows(a_mine_, c_mine_, mine_.count, s.n, s.k, x, bx_, abs_bx_,
                                       unit_roundoff(cfg_.precision), &cx);
    // The gathered C must be exactly the blocks the ranks computed: compare C·x bit for bit.
    std::vector<double> cx_all(comm_.is_root() ? static_cast<std::size_t>(s.m) : 0);
    gatherv(cx.data(), mine_.count, cx_all.data(), rows_.counts(), rows_.offsets(), 0, comm_, chunk_);
    bool gather_ok = true;
    if (comm_.is_root()) {
      std::vector<double> cx_full;
      c_times_x(c_full_.data(), s.m, s.n, x, cx_full);
      gather_ok = std::memcmp(cx_full.data(), cx_all.data(), cx_full.size() * sizeof(double)) == 0;
    }
    return agree_on_rows(rc, mine_.offset, gather_ok, comm_);
  }

  HostMatrices full() const override { return {a_full_.data(), b_.data(), c_full_.data()}; }

  void time_peers(const RepeatLoop& loop, PhaseRecorder& peer) override {
    const auto& s = cfg_.shape;
    if (cfg_.peer && cfg_.backend == GemmBackendKind::openblas) {
      const GemmShape local{mine_.count, s.n, s.k};
      for (int rep = 0; rep < loop.total(); ++rep) {
        loop.begin(rep, peer);
        peer.add("bare_compute", time_bare_cblas(local, cfg_.precision, a_mine_, b_.data(), c_peer_.data()));
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
    std::vector<std::int64_t> scatter = rows_.counts_times(s.k), bcast(rows_.parts(), s.k * s.n),
                              gather = rows_.counts_times(s.n);
    scatter[0] = bcast[0] = gather[0] = 0;
    const std::size_t e = sizeof(T);
    record["distribution"] = {{"algorithm", "row1d"},
                              {"grid", {comm_.size(), 1}},
                              {"transport", to_string(cfg_.transport)},
                              {"bytes_per_rank", {{"scatter", bytes_per_rank_json(scatter, e)},
                                                  {"broadcast", bytes_per_rank_json(bcast, e)},
                                                  {"gather", bytes_per_rank_json(gather, e)}}},
                              {"communication", communication}};
    record["partition"] = {{"rows_per_rank", rows_.counts()}};
    record["network"] = gemm_network(rank_hosts(record), a_counts_, c_counts_, s.k * s.n, sizeof(T), phases, net_phases);
    if (gpu_run_) {
      record["gpu"] = gpu_run_->record_section(gpu_map, phases);
      if (!record["peer"].is_null()) gpu_run_->add_copy_peer(record["peer"], phases, peer_phases);
    }
  }

  std::string table_lines(const nlohmann::json& record) const override {
    return (gpu_run_ ? gpu_run_->table_lines(record["gpu"]) : std::string()) +
           communication_line(record["distribution"]["communication"]);
  }

 private:
  // Whether the host MPI scatter, broadcast and gather run (not the device schedules).
  bool host_moves() const { return !gpu_run_ || gpu_run_->moves_through_host(); }

  const GemmConfig& cfg_;
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
  // --backend cublas: the GPU steps. Declared after the host matrices, so that their
  // page-locking ends before they are freed.
  std::optional<GpuGemmRun> gpu_run_;
};

}  // namespace

template <class T>
std::unique_ptr<DistributedGemm> make_row1d(const GemmConfig& cfg, const Communicator& comm, LocalGemm& local,
                                            GpuGemm* gpu) {
  return std::make_unique<Row1D<T>>(cfg, comm, local, gpu);
}
template std::unique_ptr<DistributedGemm> make_row1d<double>(const GemmConfig&, const Communicator&, LocalGemm&, GpuGemm*);
template std::unique_ptr<DistributedGemm> make_row1d<float>(const GemmConfig&, const Communicator&, LocalGemm&, GpuGemm*);

}  // namespace scalebench
