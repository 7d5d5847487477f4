#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gemm/algorithms/algorithms.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {

template <class T>
int generate_inputs(const GemmConfig& cfg, HostMatrix<T>& a, HostMatrix<T>& b, HostMatrix<T>& c) {
  const auto& s = cfg.shape;
  a.resize(static_cast<std::size_t>(s.m * s.k));
  b.resize(static_cast<std::size_t>(s.k * s.n));
  c.resize(static_cast<std::size_t>(s.m * s.n));
  const int threads = host_threads();
  fill_zero(c.data(), s.m * s.n, threads);
  fill_matrix(a.data(), s.m * s.k, 0, gemm_input_key(cfg.seed, GemmInput::a), cfg.fill, cfg.precision, threads);
  fill_matrix(b.data(), s.k * s.n, 0, gemm_input_key(cfg.seed, GemmInput::b), cfg.fill, cfg.precision, threads);
  return threads;
}
template int generate_inputs<double>(const GemmConfig&, HostMatrix<double>&, HostMatrix<double>&, HostMatrix<double>&);
template int generate_inputs<float>(const GemmConfig&, HostMatrix<float>&, HostMatrix<float>&, HostMatrix<float>&);

GemmCheck agree_on_rows(const RowCheck& mine, std::int64_t row_offset, bool gather_ok_on_root,
                        const Communicator& comm) {
  GemmCheck v;
  int gather_ok = gather_ok_on_root ? 1 : 0;
  SCALEBENCH_MPI(MPI_Bcast(&gather_ok, 1, MPI_INT, 0, comm.get()));
  v.gather_ok = gather_ok == 1;
  v.rows_failed = comm.sum(mine.rows_failed);
  v.worst_ratio = comm.max(std::isfinite(mine.worst_ratio) ? mine.worst_ratio : 1e300);
  const int my_fail = mine.rows_failed > 0 ? comm.rank() : comm.size();
  int first = comm.size();
  SCALEBENCH_MPI(MPI_Allreduce(&my_fail, &first, 1, MPI_INT, MPI_MIN, comm.get()));
  if (first < comm.size()) {
    std::int64_t row = mine.first_failed_row + row_offset;
    SCALEBENCH_MPI(MPI_Bcast(&row, 1, MPI_INT64_T, first, comm.get()));
    v.first_failed_rank = first;
    v.first_failed_row = row;
  }
  v.ok = v.rows_failed == 0 && v.gather_ok;
  return v;
}

nlohmann::json bytes_per_rank_json(const std::vector<std::int64_t>& elements, std::size_t element_bytes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto e : elements) out.push_back(e * static_cast<std::int64_t>(element_bytes));
  return out;
}

std::unique_ptr<DistributedGemm> make_distributed_gemm(const GemmConfig& cfg, const GemmTestHooks& hooks,
                                                       const Communicator& comm, LocalGemm& local, GpuGemm* gpu) {
  const bool fp64 = cfg.precision == Precision::fp64;
  if (cfg.algorithm == GemmAlgorithm::summa2d) {
    return fp64 ? make_summa2d<double>(cfg, hooks, comm, local, gpu)
                : make_summa2d<float>(cfg, hooks, comm, local, gpu);
  }
  return fp64 ? make_row1d<double>(cfg, hooks, comm, local, gpu) : make_row1d<float>(cfg, hooks, comm, local, gpu);
}

}  // namespace scalebench

namespace scalebench {

std::string communication_line(const nlohmann::json& c) {
  if (c.is_null()) return {};
  std::int64_t most = 0;
  for (const auto& b : c["bytes_received_per_rank"]) most = std::max(most, b.get<std::int64_t>());
  return fmt::format("communication: {:.6f} s median in {} transport calls (slowest rank), at most {:.1f} MiB received "
                     "by a rank per repeat\n",
                     c["seconds"]["median_s"].get<double>(), c["transport"].get<std::string>(),
                     static_cast<double>(most) / (1 << 20));
}

}  // namespace scalebench
