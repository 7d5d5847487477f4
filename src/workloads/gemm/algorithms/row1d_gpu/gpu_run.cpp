#include "gemm/algorithms/row1d_gpu/gpu_run.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/json_field.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {

double median_of_phase(const std::vector<std::pair<std::string, PhaseStats>>& phases, const std::string& name) {
  for (const auto& [n, st] : phases) {
    if (n == name) return st.median;
  }
  return 0.0;
}
bool has_phase(const std::vector<std::pair<std::string, PhaseStats>>& phases, const std::string& name) {
  return std::any_of(phases.begin(), phases.end(), [&](const auto& p) { return p.first == name; });
}

std::int64_t widest_panel(const OverlapPlan& plan) {
  std::int64_t w = 0;
  for (int p = 0; p < plan.panels(); ++p) w = std::max(w, plan.panel_first[p + 1] - plan.panel_first[p]);
  return w;
}

// The peer copy: large enough to reach the bus's full speed, the same size on every rank.
constexpr double kPeerCopyMaxBytes = 1024.0 * 1024 * 1024;

}  // namespace

GpuGemmRun::GpuGemmRun(const GemmConfig& cfg, const Communicator& comm, GpuGemm& gpu, const RowPartition& rows,
                       int inject_error_rank)
    : cfg_(cfg),
      comm_(comm),
      gpu_(gpu),
      rows_(rows),
      inject_error_rank_(inject_error_rank),
      mine_(rows.block(comm.rank())) {}

void GpuGemmRun::pin(const std::vector<std::pair<void*, std::size_t>>& ranges, PhaseRecorder& setup) {
  const double t0 = wall_seconds();
  agree(comm_, [&] {
    for (const auto& [p, bytes] : ranges) {
      if (p != nullptr && bytes > 0) pins_.emplace_back(p, bytes);
    }
  });
  setup.add(phase::pin_host, wall_seconds() - t0);
}

void GpuGemmRun::prepare(const GemmShape& local, const Communicator* node, PhaseRecorder& setup) {
  shared_ = node != nullptr;
  const row1d_gpu::Context ctx{cfg_, comm_, gpu_, rows_, shared_, node};
  if (shared_) {
    const Communicator& group = row1d_gpu::b_slice_group(ctx);
    const std::int64_t mine = RowPartition(cfg_.shape.k, group.size()).block(group.rank()).count;
    b_slice_rows_.assign(static_cast<std::size_t>(comm_.size()), 0);
    SCALEBENCH_MPI(MPI_Allgather(&mine, 1, MPI_INT64_T, b_slice_rows_.data(), 1, MPI_INT64_T, comm_.get()));
    b_group_ranks_ = static_cast<int>(comm_.max(static_cast<std::int64_t>(group.size())));
  }
  schedule_ = row1d_gpu::make_schedule(ctx);
  if (cfg_.overlap) plan_ = make_overlap_plan(cfg_.shape, rows_);
  gpu_.reserve({schedule_->rows_held(), schedule_->own_inputs()});
  for (const auto& [step, seconds] : gpu_.setup().seconds) setup.add(step, seconds);
  if (cfg_.transport == Transport::nccl && !cfg_.resident) {
    transport_ctas_ = schedule_->transport_ctas();
    ScopedPhase t(setup, phase::nccl_comm);
    transport_ = make_device_buffer_transport(comm_, schedule_->transport_stream(), transport_ctas_);
  }
  agree(comm_, [&] { gpu_.prepare(local, cfg_.precision, setup); });
  schedule_->prepare(transport_.get());
  if (cfg_.resident) {
    ScopedPhase t(setup, phase::generate);
    agree(comm_, [&] { gpu_.generate(cfg_.shape, mine_.offset, cfg_.seed, cfg_.fill); });
  }
}

void GpuGemmRun::multiply(const void* a_full, const void* a_i, const void* b, void* c_i, void* c_full,
                          PhaseRecorder& rec) {
  const auto& s = cfg_.shape;
  // The element the CPU path corrupts, corrupted where the result lives (on the device), by more
  // than the precision's tolerance can hide.
  const auto inject = [&] {
    if (inject_error_rank_ == comm_.rank() && mine_.count > 0) {
      corrupt_c(gpu_, (mine_.count / 2) * s.n + s.n / 2, detectable_corruption(s, cfg_.precision));
    }
  };
  schedule_->multiply({a_full, a_i, b, c_i, c_full}, rec, inject);
}

namespace {

// C·x over `rows` host rows of C in the run's host format, on every CPU of the rank.
std::vector<double> host_c_times_x(Precision p, const void* c, std::int64_t rows, std::int64_t n,
                                   const std::vector<double>& x) {
  std::vector<double> cx;
  if (p == Precision::fp64) {
    c_times_x(static_cast<const double*>(c), rows, n, x, cx, host_threads());
  } else {
    c_times_x(static_cast<const float*>(c), rows, n, x, cx, host_threads());
  }
  return cx;
}

}  // namespace

// The check of the gathered C: each rank's C·x of the rows it holds, gathered to rank 0, equals
// bit for bit rank 0's C·x of the same rows of the gathered C. Both sides are summed the same way:
// on the host for transport mpi and --distribution shared (the gathered C is on the host), on the
// device for nccl (the gathered C is on rank 0's device). On the host, a rank whose rows already
// lie in the gathered C (`rows_in_gathered_c`: rank 0's own rows, and under --distribution shared
// every rank of rank 0's node, whose rows are in that node's window) has nothing to compare: both
// sides would be one sum of the same memory, so neither is taken.
GpuGemmRun::Check GpuGemmRun::verify(const std::vector<double>& x, const void* c_i, const void* c_full,
                                     bool rows_in_gathered_c) {
  Check out;
  std::vector<double> cx;
  agree(comm_, [&] { out.rows = gpu_.verify(x, &cx); });
  if (cfg_.resident) return out;  // C was never gathered
  const bool on_host = cfg_.transport == Transport::mpi || shared_;
  out.gather_ok = on_host ? host_gather_check(x, c_i, c_full, rows_in_gathered_c) : device_gather_check(x, cx);
  return out;
}

bool GpuGemmRun::device_gather_check(const std::vector<double>& x, const std::vector<double>& cx) {
  const auto& s = cfg_.shape;
  std::vector<double> cx_all(comm_.is_root() ? static_cast<std::size_t>(s.m) : 0);
  gatherv(cx.data(), mine_.count, cx_all.data(), rows_.counts(), rows_.offsets(), 0, comm_);
  int ok = 1;
  agree(comm_, [&] {
    if (!comm_.is_root()) return;
    const std::vector<double> cx_full = gpu_.c_times_x(x, s.m);
    ok = std::memcmp(cx_full.data(), cx_all.data(), cx_full.size() * sizeof(double)) == 0 ? 1 : 0;
  });
  SCALEBENCH_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm_.get()));
  return ok == 1;
}

bool GpuGemmRun::host_gather_check(const std::vector<double>& x, const void* c_i, const void* c_full,
                                   bool rows_in_gathered_c) {
  const auto& s = cfg_.shape;
  const int size = comm_.size();
  // Which ranks' rows are compared: rank 0 learns each rank's answer.
  int moved = rows_in_gathered_c ? 0 : 1;
  std::vector<int> moved_of(comm_.is_root() ? static_cast<std::size_t>(size) : 0);
  SCALEBENCH_MPI(MPI_Gather(&moved, 1, MPI_INT, moved_of.data(), 1, MPI_INT, 0, comm_.get()));
  std::vector<std::int64_t> counts(moved_of.size(), 0);
  for (std::size_t r = 0; r < moved_of.size(); ++r) counts[r] = moved_of[r] != 0 ? rows_.counts()[r] : 0;
  std::vector<double> cx;
  agree(comm_, [&] {
    if (moved != 0) cx = host_c_times_x(cfg_.precision, c_i, mine_.count, s.n, x);
  });
  std::vector<double> cx_all(comm_.is_root() ? static_cast<std::size_t>(s.m) : 0);
  gatherv(cx.data(), static_cast<std::int64_t>(cx.size()), cx_all.data(), counts, rows_.offsets(), 0, comm_);
  int ok = 1;
  agree(comm_, [&] {
    const std::size_t e = host_element_bytes(cfg_.precision);
    for (std::size_t r = 0; r < counts.size() && ok == 1; ++r) {
      if (counts[r] == 0) continue;
      const std::int64_t first = rows_.offsets()[r];
      const std::vector<double> expect =
          host_c_times_x(cfg_.precision, static_cast<const char*>(c_full) + static_cast<std::size_t>(first * s.n) * e,
                         counts[r], s.n, x);
      ok = std::memcmp(expect.data(), cx_all.data() + first, expect.size() * sizeof(double)) == 0 ? 1 : 0;
    }
  });
  SCALEBENCH_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm_.get()));
  return ok == 1;
}

double GpuGemmRun::peer_copy_bytes() const {
  const double b_bytes = static_cast<double>(cfg_.shape.k * cfg_.shape.n) *
                         static_cast<double>(device_input_bytes(cfg_.precision));
  return std::min(kPeerCopyMaxBytes, b_bytes);
}

void GpuGemmRun::time_peers(PhaseRecorder& peer_rec, const RepeatLoop& loop) {
  const bool copies = !cfg_.resident;
  const double bytes = peer_copy_bytes();
  for (int rep = 0; rep < loop.total(); ++rep) {
    loop.begin(rep, peer_rec);
    agree(comm_, [&] { peer_rec.add(phase::bare_compute, gpu_.bare_device_gemm_seconds()); });
    if (copies) {
      // Every GPU copies at once (each over its own link): the aggregate the run's h2d is
      // compared with.
      comm_.barrier();
      agree(comm_, [&] {
        const double bw = copy_peer_.bandwidth(gpu_, static_cast<std::int64_t>(bytes));
        peer_rec.add(phase::pinned_copy, bw > 0 ? bytes / bw : 0.0);
      });
    }
    peer_rec.next_repeat();
  }
}

std::string GpuGemmRun::peer_call_name() const {
  switch (cfg_.precision) {
    case Precision::fp64: return "cublasDgemm";
    case Precision::fp32: return "cublasSgemm";
    case Precision::tf32: return "cublasSgemm (CUBLAS_TF32_TENSOR_OP_MATH)";
    case Precision::bf16: return "cublasGemmEx (bf16 inputs, fp32 compute)";
  }
  return "cuBLAS";
}

void GpuGemmRun::add_copy_peer(nlohmann::json& peer, const std::vector<std::pair<std::string, PhaseStats>>& phases,
                               const std::vector<std::pair<std::string, PhaseStats>>& peer_phases) const {
  peer["on"] = "the same device buffers, its own cuBLAS handle and stream, same GPU, same run";
  if (!has_phase(peer_phases, phase::pinned_copy) || !has_phase(phases, phase::h2d)) return;
  const double copy_s = median_of_phase(peer_phases, phase::pinned_copy);
  const double bytes = peer_copy_bytes();
  const double copy_bw = copy_s > 0 ? bytes / copy_s : 0.0;
  // h2d of the rank that moves the most, and of all ranks together (the h2d phase is the
  // busiest rank's time: the aggregate is every rank's bytes over it).
  const std::vector<double> moved = h2d_bytes_per_rank();
  const double h2d_bytes = *std::max_element(moved.begin(), moved.end());
  double total = 0;
  for (const double b : moved) total += b;
  const double h2d_s = median_of_phase(phases, phase::h2d);
  const double h2d_bw = h2d_s > 0 ? h2d_bytes / h2d_s : 0.0;
  const double ranks = static_cast<double>(comm_.size());
  const double aggregate_copy = copy_s > 0 ? ranks * bytes / copy_s : 0.0;
  const double aggregate_h2d = h2d_s > 0 ? total / h2d_s : 0.0;
  peer[phase::pinned_copy] = {{"what", "cudaMemcpyAsync from cudaMallocHost memory, one copy per GPU, every GPU of the "
                                       "run at once"},
                              {"bytes", bytes},
                              {"median_s", copy_s},
                              {"GBps", copy_bw * 1e-9},
                              {"aggregate_GBps", aggregate_copy * 1e-9}};
  peer["h2d_GBps"] = h2d_bw * 1e-9;
  peer["ratio_h2d_vs_pinned_copy"] = copy_bw > 0 ? h2d_bw / copy_bw : 0.0;
  peer["aggregate_h2d_GBps"] = aggregate_h2d * 1e-9;
  peer["ratio_aggregate_h2d_vs_pinned_copy"] = aggregate_copy > 0 ? aggregate_h2d / aggregate_copy : 0.0;
}

std::vector<double> GpuGemmRun::h2d_bytes_per_rank() const {
  const auto& s = cfg_.shape;
  const double he = static_cast<double>(host_element_bytes(cfg_.precision));
  const bool nccl = cfg_.transport == Transport::nccl || cfg_.overlap;
  std::vector<double> out(static_cast<std::size_t>(comm_.size()), 0.0);
  for (int r = 0; r < comm_.size(); ++r) {
    const double rows = static_cast<double>(rows_.block(r).count);
    const auto i = static_cast<std::size_t>(r);
    if (shared_) {
      // Its rows of A, and B whole (mpi) or its slice of B's rows (nccl, --overlap).
      const double b_rows = nccl && comm_.size() > 1 ? static_cast<double>(b_slice_rows_[i]) : static_cast<double>(s.k);
      out[i] = (rows * static_cast<double>(s.k) + b_rows * static_cast<double>(s.n)) * he;
    } else if (nccl && comm_.size() > 1) {
      // Rank 0 copies all of A and B in; the others receive over NCCL.
      out[i] = r == 0 ? static_cast<double>(s.m * s.k + s.k * s.n) * he : 0.0;
    } else {
      out[i] = (rows * static_cast<double>(s.k) + static_cast<double>(s.k * s.n)) * he;
    }
  }
  return out;
}

nlohmann::json GpuGemmRun::rank_info() const { return {{"gpu", gpu_.setup().placement["gpu"]}}; }

nlohmann::json GpuGemmRun::gather_map() const {
  const auto all = comm_.gather_strings(json_text(gpu_.setup().placement));
  nlohmann::json map = nlohmann::json::array();
  for (const auto& s : all) {
    const auto p = nlohmann::json::parse(s);
    const auto& g = p["gpu"];
    map.push_back({{"host", p["host"]},
                   {"rank", p["rank"]},
                   {"local_rank", p["local_rank"]},
                   {"gpu_index", g["index"]},
                   {"name", g["name"]},
                   {"pci_bus_id", g["pci_bus_id"]},
                   {"uuid", g["uuid"]}});
  }
  return map;
}

nlohmann::json GpuGemmRun::transfers(const std::vector<std::pair<std::string, PhaseStats>>& phases) const {
  const auto& s = cfg_.shape;
  const int ranks = comm_.size();
  const double he = static_cast<double>(host_element_bytes(cfg_.precision));
  const double din = static_cast<double>(device_input_bytes(cfg_.precision));
  const double dout = static_cast<double>(device_output_bytes(cfg_.precision));
  const double a = static_cast<double>(s.m * s.k), b = static_cast<double>(s.k * s.n),
               c = static_cast<double>(s.m * s.n);
  const double largest = static_cast<double>(*std::max_element(rows_.counts().begin(), rows_.counts().end()));
  // --overlap moves what nccl moves (nothing between ranks with one rank).
  const bool nccl = cfg_.transport == Transport::nccl || cfg_.overlap;

  // Bytes per phase: what the rank that moves the most moves (h2d/d2h), or the whole matrix
  // (collectives, as nccl-tests counts them).
  struct Moved {
    const char* phase;
    TransferPattern pattern;
    double bytes;
  };
  std::vector<Moved> moved;
  if (shared_) {
    // Each rank copies its own rows; the table's h2d/d2h are the busiest rank's bytes. Between
    // GPUs only B's slices travel (nccl, --overlap), all-gathered among a node's ranks:
    // nccl-tests' bytes = all of B, over the node's ranks.
    const auto per_rank = h2d_bytes_per_rank();
    moved.push_back({phase::h2d, TransferPattern::copy, *std::max_element(per_rank.begin(), per_rank.end())});
    if (nccl && b_group_ranks_ > 1) moved.push_back({phase::allgather, TransferPattern::allgather, b * din});
    moved.push_back({phase::d2h, TransferPattern::copy, largest * static_cast<double>(s.n) * he});
  } else if (!cfg_.resident) {
    // With one rank nothing travels between ranks: NCCL moves nothing at all, MPI only copies
    // rank 0's own block of A and C within the host (scatter, gather).
    const double elem = nccl ? din : he;
    if (ranks > 1 || !nccl) moved.push_back({phase::scatter, TransferPattern::scatter, a * elem});
    if (ranks > 1) moved.push_back({phase::broadcast, TransferPattern::broadcast, b * elem});
    if (ranks > 1 || !nccl) moved.push_back({phase::gather, TransferPattern::gather, c * (nccl ? dout : he)});
    const double h2d_rows = nccl && ranks > 1 ? static_cast<double>(s.m) : largest;
    moved.push_back({phase::h2d, TransferPattern::copy, (h2d_rows * static_cast<double>(s.k) + b) * he});
    moved.push_back({phase::d2h, TransferPattern::copy, h2d_rows * static_cast<double>(s.n) * he});
  }
  nlohmann::json transfers = nlohmann::json::object();
  for (const auto& m : moved) {
    if (!has_phase(phases, m.phase)) continue;
    const int over = m.pattern == TransferPattern::allgather ? b_group_ranks_ : ranks;
    transfers[m.phase] = transfer_json(m.pattern, over, m.bytes, median_of_phase(phases, m.phase));
    transfers[m.phase]["pattern"] = to_string(m.pattern);
    if (m.pattern == TransferPattern::allgather) transfers[m.phase]["ranks"] = over;
  }
  return transfers;
}

nlohmann::json GpuGemmRun::record_section(const nlohmann::json& map,
                                          const std::vector<std::pair<std::string, PhaseStats>>& phases) const {
  const int ranks = comm_.size();
  const bool nccl = cfg_.transport == Transport::nccl || cfg_.overlap;
  nlohmann::json section = {{"map", map},
                            {"transport", to_string(cfg_.transport)},
                            {"host_matrices", shared_ ? "node-shared windows, each rank's rows over its own link"
                                                      : "per rank (rank 0 stages A, B and C for nccl and --overlap)"},
                            {"resident", cfg_.resident},
                            {"share_gpu", cfg_.share_gpu},
                            {"transfers", transfers(phases)},
                            {"bandwidth_definitions",
                             "algbw = bytes / median time; busbw = algbw x 1 (copy, broadcast) or x (n-1)/n (scatter, "
                             "gather; bytes = the whole matrix), as nccl-tests defines them"}};
  if (transport_) {
    section["nccl"] = transport_->describe();
    section["nccl"]["ranks"] = ranks;
  }
  if (cfg_.overlap) section["overlap"] = overlap_section(phases);
  nlohmann::json notes = nlohmann::json::array();
  if (nccl && ranks == 1 && !cfg_.resident) {
    notes.push_back("--transport nccl with one rank: scatter, broadcast and gather have nothing to move");
  }
  if (cfg_.resident) {
    notes.push_back("--resident: inputs made on the device by the counter-based generator (the same values as the "
                    "host generator); C is not gathered; --transport has nothing to move");
  }
  section["notes"] = notes;
  return section;
}

nlohmann::json GpuGemmRun::overlap_section(const std::vector<std::pair<std::string, PhaseStats>>& phases) const {
  // How much of the transfer time the pipeline hid behind the multiply (medians, max over ranks).
  double transfer = 0;
  for (const char* p : {phase::h2d, phase::broadcast, phase::scatter, phase::gather, phase::d2h})
    transfer += median_of_phase(phases, p);
  if (shared_)
    transfer = median_of_phase(phases, phase::h2d) + median_of_phase(phases, phase::allgather) +
               median_of_phase(phases, phase::d2h);
  const double compute = median_of_phase(phases, phase::compute), e2e = median_of_phase(phases, phase::end_to_end);
  const double exposed = std::max(0.0, e2e - compute);
  return {{"panels", plan_.panels()},
          {"panel_columns", widest_panel(plan_)},
          {"head_rows_per_rank", plan_.head},
          {"rounds", plan_.rounds()},
          {"transfer_s", transfer},
          {"compute_s", compute},
          {"end_to_end_s", e2e},
          {"exposed_s", exposed},
          {"fill_s", median_of_phase(phases, phase::fill)},
          {"drain_s", median_of_phase(phases, phase::drain)},
          {"hidden_fraction", transfer > 0 ? std::clamp(1.0 - exposed / transfer, 0.0, 1.0) : 0.0},
          {"definitions",
           "transfer_s: summed device time of the copies and NCCL calls (as timed inside the pipeline); exposed_s = "
           "end_to_end - compute (time the busiest GPU was not multiplying); hidden_fraction = 1 - exposed_s / "
           "transfer_s; fill_s: start to first multiply; drain_s: last multiply to the end"}};
}

std::string GpuGemmRun::table_lines(const nlohmann::json& section) const {
  std::string out;
  for (const auto& g : section["map"]) {
    out += fmt::format("gpu: rank {:>3}  {:<16} GPU {}  {}  {}  {}\n", g["rank"].get<int>(),
                       g["host"].get<std::string>(), g["gpu_index"].get<int>(), g["name"].get<std::string>(),
                       g["pci_bus_id"].get<std::string>(), g["uuid"].get<std::string>());
  }
  for (const auto& [phase, t] : section["transfers"].items()) {
    out += fmt::format("transfer: {:<10} {:>10.3f} GB  algbw {:>8.2f} GB/s  busbw {:>8.2f} GB/s\n", phase,
                       t["bytes"].get<double>() * 1e-9, t["algbw_GBps"].get<double>(), t["busbw_GBps"].get<double>());
  }
  if (section.contains("overlap")) {
    const auto& o = section["overlap"];
    out += fmt::format(
        "overlap: {} panels of up to {} columns, {} rounds; transfers {:.3f} s, compute {:.3f} s, end to end "
        "{:.3f} s: {:.0f}% of the transfer time hidden (fill {:.3f} s, drain {:.3f} s)\n",
        o["panels"].get<int>(), o["panel_columns"].get<std::int64_t>(), o["rounds"].get<int>(),
        o["transfer_s"].get<double>(), o["compute_s"].get<double>(), o["end_to_end_s"].get<double>(),
        100.0 * o["hidden_fraction"].get<double>(), o["fill_s"].get<double>(), o["drain_s"].get<double>());
  }
  for (const auto& n : section["notes"]) out += fmt::format("note: {}\n", n.get<std::string>());
  return out;
}

}  // namespace scalebench
