#pragma once
// MPI test helpers: reduce a verdict over ranks before asserting, so that an assertion on one
// rank never leaves the others waiting in a collective.
#include <mpi.h>

inline bool all_ranks(bool ok) {
  int local = ok ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}
inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
