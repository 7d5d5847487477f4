// ScaLAPACK's PDGEMM/PSGEMM timed on the run's ranks (scalebench/peers/scalapack.hpp), and the
// PILAENV that sets its k-step.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <mpi.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/verify.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/peers/scalapack.hpp"

// The C and Fortran entry points of BLACS, PBLAS and the ScaLAPACK tools (no header is installed).
extern "C" {
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridinit(int* context, const char* order, int rows, int cols);
void Cblacs_gridinfo(int context, int* rows, int* cols, int* row, int* col);
void Cblacs_gridexit(int context);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* row_src,
               const int* col_src, const int* context, const int* lld, int* info);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc);
void psgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
             const float* a, const int* ia, const int* ja, const int* desca, const float* b, const int* ib,
             const int* jb, const int* descb, const float* beta, float* c, const int* ic, const int* jc,
             const int* descc);
int pilaenv_(const int* context, const char* precision);
}

namespace {

// The tuned k-step PILAENV answers while a tuned multiply runs (0: the library's own answer),
// its calls and last answer. Atomics: PBLAS may be called from any thread of the rank.
std::atomic<int> tuned_k_step{0};
std::atomic<std::int64_t> pilaenv_calls{0};
std::atomic<int> pilaenv_last{0};

using PilaenvFunction = int (*)(const int*, const char*);

// The shared library's PILAENV, the next definition after this executable's.
PilaenvFunction library_pilaenv() {
  static const auto f = reinterpret_cast<PilaenvFunction>(dlsym(RTLD_NEXT, "pilaenv_"));
  return f;
}

}  // namespace

// PBLAS asks PILAENV for its k-step (the width of the panels it multiplies at once). Interposes
// the shared library's: the tuned step while one is set, otherwise the library's answer (32 in the
// reference implementation, also where the library's cannot be found).
extern "C" int pilaenv_(const int* context, const char* precision) {
  const int tuned = tuned_k_step.load();
  int answer = tuned;
  if (tuned <= 0) {
    const PilaenvFunction f = library_pilaenv();
    answer = f != nullptr ? f(context, precision) : 32;
  }
  pilaenv_calls.fetch_add(1);
  pilaenv_last.store(answer);
  return answer;
}

namespace scalebench {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A BLACS grid made from the communicator (row-major: rank r at row r / cols, column r % cols),
// released with the object.
class BlacsGrid {
 public:
  BlacsGrid(const Communicator& comm, int rows, int cols) : handle_(Csys2blacs_handle(comm.get())) {
    context_ = handle_;
    Cblacs_gridinit(&context_, "Row", rows, cols);
    int r = 0, c = 0;
    Cblacs_gridinfo(context_, &r, &c, &row_, &col_);
    if (r != rows || c != cols || row_ < 0 || col_ < 0) {
      Cfree_blacs_system_handle(handle_);
      throw RuntimeLibraryError(fmt::format("BLACS made a {}x{} grid where {}x{} was asked (rank {} at {}, {})", r, c,
                                            rows, cols, comm.rank(), row_, col_));
    }
  }
  BlacsGrid(const BlacsGrid&) = delete;
  BlacsGrid& operator=(const BlacsGrid&) = delete;
  ~BlacsGrid() {
    Cblacs_gridexit(context_);
    Cfree_blacs_system_handle(handle_);
  }
  int context() const noexcept { return context_; }
  int row() const noexcept { return row_; }
  int col() const noexcept { return col_; }

 private:
  int handle_ = 0, context_ = 0, row_ = -1, col_ = -1;
};

// Block-cyclic pieces of one dimension: how many of `n` indices process `p` of `procs` holds with
// blocks of `nb` from process 0 (ScaLAPACK's NUMROC), and the global index of its local index `l`.
std::int64_t local_count(std::int64_t n, std::int64_t nb, int p, int procs) {
  const std::int64_t blocks = n / nb;
  std::int64_t count = (blocks / procs) * nb;
  const std::int64_t extra = blocks % procs;
  if (p < extra) {
    count += nb;
  } else if (p == extra) {
    count += n % nb;
  }
  return count;
}
std::vector<std::int64_t> global_indices(std::int64_t n, std::int64_t nb, int p, int procs) {
  std::vector<std::int64_t> g(static_cast<std::size_t>(local_count(n, nb, p, procs)));
  for (std::int64_t l = 0; l < static_cast<std::int64_t>(g.size()); ++l) {
    g[static_cast<std::size_t>(l)] = (l / nb) * procs * nb + p * nb + l % nb;
  }
  return g;
}

// One matrix (rows × cols, row-major on rank 0) as every rank's column-major block-cyclic piece.
struct CyclicLayout {
  std::int64_t rows = 0, cols = 0, nb = 1;
  int grid_rows = 1, grid_cols = 1;
  std::vector<std::int64_t> counts, displs;  // elements per rank, in rank order

  CyclicLayout(std::int64_t r, std::int64_t c, std::int64_t block, int gr, int gc)
      : rows(r), cols(c), nb(block), grid_rows(gr), grid_cols(gc) {
    std::int64_t offset = 0;
    for (int rank = 0; rank < gr * gc; ++rank) {
      const std::int64_t n = local_count(r, block, rank / gc, gr) * local_count(c, block, rank % gc, gc);
      counts.push_back(n);
      displs.push_back(offset);
      offset += n;
    }
  }
  std::int64_t total() const { return displs.back() + counts.back(); }
  std::int64_t local_rows(int row) const { return local_count(rows, nb, row, grid_rows); }
  std::int64_t local_cols(int col) const { return local_count(cols, nb, col, grid_cols); }

  // Row-major `whole` into every rank's piece of `packed` (true), or back (false).
  template <class T>
  void convert(T* whole, T* packed, bool pack) const {
    for (int rank = 0; rank < grid_rows * grid_cols; ++rank) {
      const auto gi = global_indices(rows, nb, rank / grid_cols, grid_rows);
      const auto gj = global_indices(cols, nb, rank % grid_cols, grid_cols);
      T* piece = packed + displs[static_cast<std::size_t>(rank)];
      const auto lr = static_cast<std::int64_t>(gi.size());
      for (std::int64_t li = 0; li < lr; ++li) {
        T* row = whole + gi[static_cast<std::size_t>(li)] * cols;
        for (std::size_t lj = 0; lj < gj.size(); ++lj) {
          T& local = piece[li + static_cast<std::int64_t>(lj) * lr];
          if (pack) {
            local = row[gj[lj]];
          } else {
            row[gj[lj]] = local;
          }
        }
      }
    }
  }
};

int as_int(std::int64_t v, const char* what) {
  if (v > INT_MAX) {
    throw UsageError(fmt::format("--peer scalapack: {} {} exceeds ScaLAPACK's integer ({}); use a smaller size or more "
                                 "ranks",
                                 what, v, INT_MAX));
  }
  return static_cast<int>(v);
}

// ScaLAPACK's descriptor of one matrix's piece on this rank.
std::vector<int> descriptor(const CyclicLayout& l, const BlacsGrid& grid) {
  std::vector<int> desc(9);
  const int m = as_int(l.rows, "a dimension"), n = as_int(l.cols, "a dimension");
  const int nb = as_int(l.nb, "the block width");
  const int zero = 0, context = grid.context();
  const int lld = as_int(std::max<std::int64_t>(1, l.local_rows(grid.row())), "a local leading dimension");
  int info = 0;
  descinit_(desc.data(), &m, &n, &nb, &nb, &zero, &zero, &context, &lld, &info);
  if (info != 0) throw RuntimeLibraryError(fmt::format("ScaLAPACK's DESCINIT refused argument {}", -info));
  return desc;
}

void parallel_gemm(const ScalapackPeerSettings& s, const void* a, const int* da, const void* b, const int* db, void* c,
                   const int* dc) {
  const int m = static_cast<int>(s.shape.m), n = static_cast<int>(s.shape.n), k = static_cast<int>(s.shape.k);
  const int one = 1;
  tuned_k_step.store(s.k_step);
  if (s.precision == Precision::fp64) {
    const double alpha = 1, beta = 0;
    pdgemm_("N", "N", &m, &n, &k, &alpha, static_cast<const double*>(a), &one, &one, da, static_cast<const double*>(b),
            &one, &one, db, &beta, static_cast<double*>(c), &one, &one, dc);
  } else {
    const float alpha = 1, beta = 0;
    psgemm_("N", "N", &m, &n, &k, &alpha, static_cast<const float*>(a), &one, &one, da, static_cast<const float*>(b),
            &one, &one, db, &beta, static_cast<float*>(c), &one, &one, dc);
  }
  tuned_k_step.store(0);
}

template <class T>
ScalapackPeerResult run(const ScalapackPeerSettings& s, const Communicator& comm, const T* a, const T* b,
                        const std::vector<double>& x, bool keep_c) {
  const BlacsGrid grid(comm, s.grid_rows, s.grid_cols);
  const auto& sh = s.shape;
  const CyclicLayout la(sh.m, sh.k, s.block_width, s.grid_rows, s.grid_cols);
  const CyclicLayout lb(sh.k, sh.n, s.block_width, s.grid_rows, s.grid_cols);
  const CyclicLayout lc(sh.m, sh.n, s.block_width, s.grid_rows, s.grid_cols);
  const auto da = descriptor(la, grid), db = descriptor(lb, grid), dc = descriptor(lc, grid);
  const auto me = static_cast<std::size_t>(comm.rank());
  // Local pieces (at least one element: PBLAS may touch the first of an empty piece).
  std::vector<T> a_mine(std::max<std::int64_t>(1, la.counts[me])), b_mine(std::max<std::int64_t>(1, lb.counts[me]));
  std::vector<T> c_mine(std::max<std::int64_t>(1, lc.counts[me]));
  std::vector<T> a_packed, b_packed, c_packed, c_whole;
  if (comm.is_root()) {
    a_packed.resize(static_cast<std::size_t>(la.total()));
    b_packed.resize(static_cast<std::size_t>(lb.total()));
    c_packed.resize(static_cast<std::size_t>(lc.total()));
    c_whole.resize(static_cast<std::size_t>(sh.m * sh.n));
  }
  const std::int64_t chunk = s.mpi_chunk > 0 ? s.mpi_chunk : kMaxMpiCount;
  ScalapackPeerResult result;
  for (int rep = 0; rep < s.warmup + s.reps; ++rep) {
    if (rep == s.warmup) {  // count the timed multiplies' calls only
      pilaenv_calls.store(0);
      pilaenv_last.store(0);
    }
    comm.barrier();
    auto t0 = Clock::now();
    if (comm.is_root()) {
      la.convert(const_cast<T*>(a), a_packed.data(), true);
      lb.convert(const_cast<T*>(b), b_packed.data(), true);
    }
    scatterv(a_packed.data(), la.counts, la.displs, a_mine.data(), la.counts[me], 0, comm, chunk);
    scatterv(b_packed.data(), lb.counts, lb.displs, b_mine.data(), lb.counts[me], 0, comm, chunk);
    const double scatter_s = seconds_since(t0);
    comm.barrier();
    t0 = Clock::now();
    parallel_gemm(s, a_mine.data(), da.data(), b_mine.data(), db.data(), c_mine.data(), dc.data());
    const double multiply_s = seconds_since(t0);
    t0 = Clock::now();
    gatherv(c_mine.data(), lc.counts[me], c_packed.data(), lc.counts, lc.displs, 0, comm, chunk);
    if (comm.is_root()) lc.convert(c_whole.data(), c_packed.data(), false);
    const double gather_s = seconds_since(t0);
    if (rep >= s.warmup) {
      result.times.scatter.push_back(comm.max(scatter_s));
      result.times.multiply.push_back(comm.max(multiply_s));
      result.times.gather.push_back(comm.max(gather_s));
    }
  }
  result.pilaenv_calls = pilaenv_calls.load();
  result.k_step_used = pilaenv_last.load();
  // Freivalds by rows on the last C, on rank 0, as the run checks its own.
  std::int64_t failed = 0;
  double worst = 0;
  if (comm.is_root()) {
    std::vector<double> bx, abs_bx;
    b_times_x(b, sh.k, sh.n, x, bx, abs_bx);
    const RowCheck rc = freivalds_rows(a, c_whole.data(), sh.m, sh.n, sh.k, x, bx, abs_bx, unit_roundoff(s.precision),
                                       nullptr);
    failed = rc.rows_failed;
    worst = rc.worst_ratio;
    if (keep_c) result.c.assign(c_whole.begin(), c_whole.end());
  }
  result.rows_failed = comm.max(failed);
  result.worst_ratio = comm.max(worst);
  result.ok = result.rows_failed == 0;
  return result;
}

}  // namespace

bool scalapack_available() noexcept { return true; }

void check_scalapack_peer(const ScalapackPeerSettings& settings, int ranks) {
  const int gr = settings.grid_rows, gc = settings.grid_cols;
  if (gr < 1 || gc < 1 || gr * gc != ranks) {
    throw UsageError(
        fmt::format("--peer scalapack: a {}x{} grid needs {} ranks, the run has {}", gr, gc, gr * gc, ranks));
  }
  if (settings.block_width < 1) {
    throw UsageError(
        fmt::format("--peer scalapack: its block width (--panel-width) must be >= 1 (got {})", settings.block_width));
  }
  check_repeats(settings.reps, settings.warmup);
  const auto& sh = settings.shape;
  for (const auto& [d, option] : {std::pair{sh.m, "--m"}, {sh.n, "--n"}, {sh.k, "--k"}}) {
    if (d > INT_MAX) {
      throw UsageError(fmt::format("--peer scalapack: {} {} exceeds ScaLAPACK's integer ({}); give a smaller {} or "
                                   "drop --peer",
                                   option, d, INT_MAX, option));
    }
  }
  if (settings.block_width > INT_MAX) {
    throw UsageError(fmt::format("--peer scalapack: its block width (--panel-width {}) exceeds ScaLAPACK's integer "
                                 "({}); give a smaller --panel-width",
                                 settings.block_width, INT_MAX));
  }
  // PBLAS indexes a rank's piece with its integer: the largest piece (process (0, 0)'s) must fit.
  for (const auto& [rows, cols] : {std::pair{sh.m, sh.k}, std::pair{sh.k, sh.n}, std::pair{sh.m, sh.n}}) {
    const std::int64_t r = local_count(rows, settings.block_width, 0, gr);
    const std::int64_t c = local_count(cols, settings.block_width, 0, gc);
    if (c > 0 && r > INT_MAX / c) {
      throw UsageError(fmt::format("--peer scalapack: one rank's block-cyclic piece of {}x{} elements exceeds "
                                   "ScaLAPACK's integer ({}); give a smaller --n (--m, --k), more ranks, or drop "
                                   "--peer",
                                   r, c, INT_MAX));
    }
  }
}

void require_scalapack() {}

std::string scalapack_library_text() {
  Dl_info info{};
  const PilaenvFunction f = library_pilaenv();
  if (f != nullptr && dladdr(reinterpret_cast<void*>(f), &info) != 0 && info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return "ScaLAPACK (linked; its shared library not found by name)";
}

ScalapackPeerResult time_scalapack_peer(const ScalapackPeerSettings& settings, const Communicator& comm, const void* a,
                                        const void* b, const std::vector<double>& x, bool keep_c) {
  check_scalapack_peer(settings, comm.size());
  if (settings.precision == Precision::fp64) {
    return run(settings, comm, static_cast<const double*>(a), static_cast<const double*>(b), x, keep_c);
  }
  if (settings.precision == Precision::fp32) {
    return run(settings, comm, static_cast<const float*>(a), static_cast<const float*>(b), x, keep_c);
  }
  throw UsageError(
      fmt::format("--peer scalapack times fp64 (PDGEMM) or fp32 (PSGEMM), not {}", to_string(settings.precision)));
}

}  // namespace scalebench
