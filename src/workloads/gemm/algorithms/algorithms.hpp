#pragma once
// What the algorithms share, and their factories (make_distributed_gemm picks one).
#include <cstdint>
#include <memory>

#include "scalebench/base/verify.hpp"
#include "scalebench/problem/gemm_fill.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"

namespace scalebench {

// Rank 0's inputs: A (m×k) and B (k×n) from the seed (gemm_fill.hpp), C (m×n) zeroed, on every
// CPU this rank may use (they are first-touched there). Returns the threads used.
template <class T>
int generate_inputs(const GemmConfig& cfg, HostMatrix<T>& a, HostMatrix<T>& b, HostMatrix<T>& c);

// The verdict from every rank's check of its rows (`row_offset`: its first global row), and the
// gathered-C check decided on rank 0. Collective.
GemmCheck agree_on_rows(const RowCheck& mine, std::int64_t row_offset, bool gather_ok_on_root,
                        const Communicator& comm);

// Bytes of one element on the host, and per-rank byte counts as the record shows them.
nlohmann::json bytes_per_rank_json(const std::vector<std::int64_t>& elements, std::size_t element_bytes);

template <class T>
std::unique_ptr<DistributedGemm> make_row1d(const GemmConfig& cfg, const GemmTestHooks& hooks, const Communicator& comm,
                                            LocalGemm& local, GpuGemm* gpu);
template <class T>
std::unique_ptr<DistributedGemm> make_summa2d(const GemmConfig& cfg, const GemmTestHooks& hooks,
                                              const Communicator& comm, LocalGemm& local, GpuGemm* gpu);

// The record's one line on the communication section (TimedTransport::to_json): seconds in
// transport calls and the most bytes a rank received; empty where it is null.
std::string communication_line(const nlohmann::json& communication);

}  // namespace scalebench
