#pragma once
// Row1D's GPU half (--backend cublas), as Row1D (row1d.cpp) calls it at fixed points: set-up,
// one repeat, verification, peers and the record's "gpu" section. Backend-free: it sees the GPU
// only through gpu.hpp. What moves in a repeat is the schedule's (schedule.hpp: staged, nccl,
// resident, shared, overlap, shared overlap). Verification is Freivalds' check computed on each
// rank's device; the gathered C is checked against the blocks the ranks computed (C·x bit for
// bit).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemm/algorithms/row1d_gpu/schedule.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/base/verify.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/repeats.hpp"
#include "scalebench/mpi/timing.hpp"
#include "scalebench/mpi/transport.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

namespace scalebench {

class GpuGemmRun {
 public:
  // `inject_error_rank`: the test hook (GemmTestHooks) that corrupts one element of this rank's C.
  GpuGemmRun(const GemmConfig& cfg, const Communicator& comm, GpuGemm& gpu, const RowPartition& rows,
             int inject_error_rank);

  // Host matrices: none with --resident.
  bool needs_host_matrices() const noexcept { return !cfg_.resident; }
  // Whether the driver's MPI scatter, broadcast and gather run (transport mpi, not resident).
  bool moves_through_host() const noexcept {
    return !cfg_.resident && !cfg_.overlap && cfg_.transport == Transport::mpi;
  }

  // Page-locks the host matrices in place ("pin_host" in `setup`); empty ranges are skipped.
  void pin(const std::vector<std::pair<void*, std::size_t>>& ranges, PhaseRecorder& setup);
  // Set-up after the backend exists: the schedule, rows held, the device transport ("nccl_comm"),
  // allocation (prepare), --resident generation (into "generate"). Collective.
  // `node` (--distribution shared; null otherwise): the ranks whose shared windows hold this
  // rank's host matrices: every rank copies its own rows of A in and of C out over its own link,
  // and B's slices are all-gathered among the node's ranks.
  void prepare(const GemmShape& local, const Communicator* node, PhaseRecorder& setup);

  // One repeat: the schedule's device work and device-side movement; records its phases.
  void multiply(const void* a_full, const void* a_i, const void* b, void* c_i, void* c_full, PhaseRecorder& rec);

  struct Check {
    RowCheck rows;
    bool gather_ok = true;
  };
  // Collective: device Freivalds of the local block, and the gathered-C check (rank 0 decides,
  // every rank learns the verdict). `c_i`, `c_full`: the driver's host buffers (mpi transport,
  // --distribution shared); `rows_in_gathered_c`: this rank's host rows are rank 0's gathered C
  // itself (the same memory: rank 0's own block, a shared window on rank 0's node).
  Check verify(const std::vector<double>& x, const void* c_i, const void* c_full, bool rows_in_gathered_c);

  // Peers: a bare cuBLAS call ("bare_compute") and a plain pinned copy ("pinned_copy") per repeat.
  void time_peers(PhaseRecorder& peer_rec, const RepeatLoop& loop);
  std::string peer_call_name() const;
  // Adds the pinned-copy peer and the h2d comparison to the driver's peer object (rank 0).
  void add_copy_peer(nlohmann::json& peer, const std::vector<std::pair<std::string, PhaseStats>>& phases,
                     const std::vector<std::pair<std::string, PhaseStats>>& peer_phases) const;

  // This rank's entry for run_context(): its GPU.
  nlohmann::json rank_info() const;
  // Collective: the rank -> GPU map (valid on rank 0).
  nlohmann::json gather_map() const;
  // Record section "gpu" and "transfers" (rank 0), and the lines for the human table.
  nlohmann::json record_section(const nlohmann::json& map,
                                const std::vector<std::pair<std::string, PhaseStats>>& phases) const;
  std::string table_lines(const nlohmann::json& section) const;

 private:
  bool device_gather_check(const std::vector<double>& x, const std::vector<double>& cx);
  bool host_gather_check(const std::vector<double>& x, const void* c_i, const void* c_full, bool rows_in_gathered_c);
  double peer_copy_bytes() const;
  // The record's "transfers" (bytes and bandwidth per phase) and --overlap's "overlap".
  nlohmann::json transfers(const std::vector<std::pair<std::string, PhaseStats>>& phases) const;
  nlohmann::json overlap_section(const std::vector<std::pair<std::string, PhaseStats>>& phases) const;
  // Host-to-device bytes each rank copies per repeat under this run's schedule.
  std::vector<double> h2d_bytes_per_rank() const;

  const GemmConfig& cfg_;
  const Communicator& comm_;
  GpuGemm& gpu_;
  const RowPartition& rows_;
  const int inject_error_rank_;
  Block mine_;
  // --distribution shared: per rank, the rows of B it copies in when B's slices are all-gathered
  // (its share of its node's), and the most ranks a node all-gathers among.
  std::vector<std::int64_t> b_slice_rows_;
  int b_group_ranks_ = 1;
  OverlapPlan plan_;  // --overlap (the record's description of the pipeline)
  bool shared_ = false;
  std::vector<HostMemoryPin> pins_;
  PinnedCopyPeer copy_peer_;  // the pinned-copy peer's page-locked host memory, kept between repeats
  // Declared before the transport it uses: the transport ends first.
  std::unique_ptr<row1d_gpu::Schedule> schedule_;
  std::unique_ptr<BufferTransport> transport_;  // --transport nccl: the device buffer transport
  int transport_ctas_ = 0;
};

}  // namespace scalebench
