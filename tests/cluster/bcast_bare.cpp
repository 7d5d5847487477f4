// A bare MPI_Bcast of N doubles from rank 0, timed like scalebench's broadcast phase: a barrier,
// the call, the maximum over ranks; the median over the repeats. Used by tests/cluster/measure_bcast
// to put gemm's broadcast phase beside the bare collective between the same hosts.
//   bcast_bare N REPS [scatter]  ->  one line: "bcast_bare doubles=N bytes=B reps=R median_s=T ..."
// With `scatter`, each repeat first scatters N doubles from rank 0 (as gemm scatters A) and
// starts the broadcast right after, without a barrier, as gemm's phases follow each other.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3 && argc != 4) {
    if (rank == 0) std::fprintf(stderr, "usage: bcast_bare N REPS [scatter]\n");
    MPI_Finalize();
    return 2;
  }
  const long n = std::atol(argv[1]);
  const int reps = std::atoi(argv[2]);
  std::vector<double> buf(static_cast<size_t>(n), rank == 0 ? 1.5 : 0.0);
  const bool scatter = argc == 4;
  const int share = static_cast<int>(n / size);
  std::vector<double> whole(scatter && rank == 0 ? static_cast<size_t>(share) * size : 0, 2.5);
  std::vector<double> part(scatter ? static_cast<size_t>(share) : 0);
  std::vector<double> times;
  for (int r = 0; r <= reps; ++r) {  // repeat 0 is the warm-up
    MPI_Barrier(MPI_COMM_WORLD);
    if (scatter) MPI_Scatter(whole.data(), share, MPI_DOUBLE, part.data(), share, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Bcast(buf.data(), static_cast<int>(n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0, tmax = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r > 0) times.push_back(tmax);
  }
  const bool ok = std::all_of(buf.begin(), buf.end(), [](double v) { return v == 1.5; });
  int all_ok = 0, mine = ok ? 1 : 0;
  MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  std::sort(times.begin(), times.end());
  if (rank == 0)
    std::printf("bcast_bare doubles=%ld bytes=%ld reps=%d median_s=%.6f min_s=%.6f ok=%d after_scatter=%d\n", n,
                n * static_cast<long>(sizeof(double)), reps, times[times.size() / 2], times.front(), all_ok,
                scatter ? 1 : 0);
  MPI_Finalize();
  return all_ok ? 0 : 4;
}
