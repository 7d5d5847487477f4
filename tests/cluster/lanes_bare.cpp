// B between the hosts of a test cluster the way the shared distribution moves it, in bare MPI:
// the node leaders alone, or on lanes. Timed like scalebench's broadcast phase: a barrier, the
// transfer and the node's barrier, the maximum over ranks; the median and the fastest of the
// repeats. Built with mpicxx; not a test (docs/benchmarks.md, the what-if across CPU hosts).
//   lanes_bare BYTES REPS MODE  (BYTES a multiple of 8, moved as doubles)  ->  one line: "lanes_bare mode=M bytes=B
//   reps=R median_s=T min_s=T"
// MODE: `leaders` (MPI_Bcast among the node leaders, the other ranks waiting in MPI_Barrier; with
// one rank a host, one pair alone), `leaders-sleep` (the same, the others sleeping 50 us between
// MPI_Test calls of an MPI_Ibarrier), `lanes` (rank j of every node broadcasts the j-th of L
// slices, L the ranks of the smallest node, all at once).
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string mode = argc == 4 ? argv[3] : "";
  if (mode != "leaders" && mode != "leaders-sleep" && mode != "lanes") {
    if (rank == 0) std::fprintf(stderr, "usage: lanes_bare BYTES REPS leaders|leaders-sleep|lanes\n");
    MPI_Finalize();
    return 2;
  }
  const long bytes = std::atol(argv[1]);
  const int reps = std::atoi(argv[2]);
  if (bytes <= 0 || bytes % 8 != 0 || reps < 1) {
    if (rank == 0) std::fprintf(stderr, "lanes_bare: BYTES must be a positive multiple of 8, REPS at least 1\n");
    MPI_Finalize();
    return 2;
  }
  MPI_Comm node = MPI_COMM_NULL, lane = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_rank = 0, node_size = 1, lanes = 1;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  MPI_Allreduce(&node_size, &lanes, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (mode != "lanes") lanes = 1;
  MPI_Comm_split(MPI_COMM_WORLD, node_rank < lanes ? node_rank : lanes, rank, &lane);
  // Moved as doubles (B's elements), so that one call carries more than 2^31 bytes.
  const long elements = bytes / 8;
  std::vector<double> buf(static_cast<size_t>(elements), rank == 0 ? 1.0 : 0.0);
  const long slice = elements / lanes;
  const long mine = node_rank == lanes - 1 ? elements - slice * (lanes - 1) : slice;
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    if (node_rank < lanes) MPI_Bcast(buf.data() + node_rank * slice, static_cast<int>(mine), MPI_DOUBLE, 0, lane);
    if (mode == "leaders-sleep") {
      MPI_Request q = MPI_REQUEST_NULL;
      MPI_Ibarrier(node, &q);
      int done = 0;
      while (MPI_Test(&q, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done == 0) {
        if (node_rank != 0) usleep(50);
      }
    } else {
      MPI_Barrier(node);
    }
    t = MPI_Wtime() - t;
    double slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
  }
  if (rank == 0) {
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    std::printf("lanes_bare mode=%s bytes=%ld reps=%d lanes=%d median_s=%.6f min_s=%.6f\n", mode.c_str(), bytes, reps,
                lanes, sorted[sorted.size() / 2], sorted.front());
  }
  MPI_Comm_free(&lane);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
