#pragma once
// Verification of C = A·B: Freivalds' randomized check by rows, and a full comparison.
#include <cstdint>
#include <string>
#include <vector>

namespace scalebench {

// x_j = ±(0.5 + 0.5u), u uniform in [0,1): never near zero, so a wrong element of C moves C·x.
// A pure function of (seed, n): every rank draws the same x.
std::vector<double> freivalds_vector(std::uint64_t seed, std::int64_t n);

struct RowCheck {
  std::int64_t rows_checked = 0;
  std::int64_t rows_failed = 0;
  std::int64_t first_failed_row = -1;  // local row index
  double worst_ratio = 0;              // max over rows of |Cx - A(Bx)|_i / tol_i
};

// Tolerance per row: tol_i = (2k + 2n + 4) · u · (|A_i| (|B| |x|))_i + tiny, with u the unit
// roundoff of the computation (see unit_roundoff). All sums are taken in double.
// `bx` = B·x and `abs_bx` = |B||x| (k entries each) are computed once per run.
// Every function here splits its rows over `threads` threads (the rank's CPUs: host_threads());
// each row's sum is one sequential loop whatever the thread count, so the results, C·x included,
// are bit-identical on any number of threads.
template <class T>
RowCheck freivalds_rows(const T* a, const T* c, std::int64_t rows, std::int64_t n, std::int64_t k,
                        const std::vector<double>& x, const std::vector<double>& bx, const std::vector<double>& abs_bx,
                        double unit_roundoff, std::vector<double>* cx_out, int threads = 1);
template <class T>
void b_times_x(const T* b, std::int64_t k, std::int64_t n, const std::vector<double>& x, std::vector<double>& bx,
               std::vector<double>& abs_bx, int threads = 1);
// C·x in double (row order, sequential sums: bit-reproducible for the same rows).
template <class T>
void c_times_x(const T* c, std::int64_t rows, std::int64_t n, const std::vector<double>& x, std::vector<double>& cx,
               int threads = 1);

// Full check: |C - A·B|_ij ≤ (2k+4)·u·(|A||B|)_ij, reference computed in double by a blocked loop.
template <class T>
RowCheck full_check(const T* a, const T* b, const T* c, std::int64_t m, std::int64_t n, std::int64_t k,
                    double unit_roundoff, int threads = 1);

std::string freivalds_tolerance_text();
std::string full_tolerance_text();

}  // namespace scalebench
