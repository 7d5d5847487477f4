#pragma once
// The MPI datatype of a transport's element type (bf16 moves bit for bit as 16-bit words).
#include <mpi.h>

#include "scalebench/mpi/transport.hpp"

namespace scalebench {

inline MPI_Datatype mpi_type_of(ElementType t) {
  return t == ElementType::f64 ? MPI_DOUBLE : t == ElementType::f32 ? MPI_FLOAT : MPI_UINT16_T;
}

}  // namespace scalebench
