// Collectives whose element counts may exceed what one MPI call takes (int counts). Small
// transfers use one MPI_Scatterv / MPI_Gatherv / MPI_Bcast; larger ones are cut into chunks of at
// most `chunk` elements (point-to-point for scatter/gather, successive broadcasts for bcast).
// When the root's own block is already in place (its receive buffer is its block of the send
// buffer, or the reverse for gather) it is not copied (MPI_IN_PLACE).
#include <algorithm>
#include <cstring>
#include <vector>

#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {

constexpr int kChunkTag = 7301;

std::int64_t effective_chunk(std::int64_t chunk) { return chunk <= 0 || chunk > kMaxMpiCount ? kMaxMpiCount : chunk; }

char* at(void* base, std::int64_t elems, std::size_t elem_size) {
  return static_cast<char*>(base) + static_cast<std::size_t>(elems) * elem_size;
}
const char* at(const void* base, std::int64_t elems, std::size_t elem_size) {
  return static_cast<const char*>(base) + static_cast<std::size_t>(elems) * elem_size;
}

// Calls f(done, n) for the successive pieces [done, done + n) of `count` elements, n <= `chunk`.
template <class F>
void for_each_chunk(std::int64_t count, std::int64_t chunk, F&& f) {
  for (std::int64_t done = 0; done < count; done += chunk) f(done, static_cast<int>(std::min(chunk, count - done)));
}

// A new request at the end of `requests`, for the next MPI_Isend / MPI_Irecv.
MPI_Request* next_request(std::vector<MPI_Request>& requests) { return &requests.emplace_back(); }

// Whether one MPI_Scatterv / MPI_Gatherv takes the whole transfer, and the int counts and
// displacements it takes (the root's; empty elsewhere). Every rank must take the same path, so
// it is decided on what all know: the largest rank's count and the end of the root's last block.
struct OneCall {
  bool fits = false;
  std::vector<int> counts, displs;
};

OneCall one_call(std::int64_t my_count, const std::vector<std::int64_t>& counts,
                 const std::vector<std::int64_t>& displs, int root, const Communicator& comm, std::int64_t chunk) {
  const std::int64_t largest = comm.max(my_count);
  std::int64_t last_end = 0;
  if (comm.rank() == root) {
    for (std::size_t i = 0; i < counts.size(); ++i) last_end = std::max(last_end, displs[i] + counts[i]);
  }
  SCALEBENCH_MPI(MPI_Bcast(&last_end, 1, MPI_INT64_T, root, comm.get()));
  OneCall out;
  out.fits = largest <= chunk && last_end <= kMaxMpiCount;
  if (out.fits && comm.rank() == root) {
    for (std::size_t i = 0; i < counts.size(); ++i) {
      out.counts.push_back(static_cast<int>(counts[i]));
      out.displs.push_back(static_cast<int>(displs[i]));
    }
  }
  return out;
}

}  // namespace

void bcast_bytes(void* data, std::int64_t count, MPI_Datatype type, std::size_t elem_size, int root,
                 const Communicator& comm, std::int64_t chunk) {
  chunk = effective_chunk(chunk);
  for_each_chunk(count, chunk, [&](std::int64_t done, int n) {
    SCALEBENCH_MPI(MPI_Bcast(at(data, done, elem_size), n, type, root, comm.get()));
  });
}

void scatterv_bytes(const void* send, const std::vector<std::int64_t>& counts, const std::vector<std::int64_t>& displs,
                    void* recv, std::int64_t recv_count, MPI_Datatype type, std::size_t elem_size, int root,
                    const Communicator& comm, std::int64_t chunk) {
  chunk = effective_chunk(chunk);
  if (const OneCall one = one_call(recv_count, counts, displs, root, comm, chunk); one.fits) {
    // The root's block already in place (recv points at it inside send): MPI_IN_PLACE, no copy.
    const bool in_place = comm.rank() == root && recv == at(send, displs[root], elem_size);
    SCALEBENCH_MPI(MPI_Scatterv(send, one.counts.data(), one.displs.data(), type, in_place ? MPI_IN_PLACE : recv,
                                static_cast<int>(recv_count), type, root, comm.get()));
    return;
  }
  std::vector<MPI_Request> requests;
  if (comm.rank() == root) {
    for (int r = 0; r < comm.size(); ++r) {
      if (r == root) {
        if (counts[r] > 0 && recv != at(send, displs[r], elem_size)) {
          std::memcpy(recv, at(send, displs[r], elem_size), static_cast<std::size_t>(counts[r]) * elem_size);
        }
        continue;
      }
      for_each_chunk(counts[r], chunk, [&](std::int64_t done, int n) {
        SCALEBENCH_MPI(MPI_Isend(at(send, displs[r] + done, elem_size), n, type, r, kChunkTag, comm.get(),
                                 next_request(requests)));
      });
    }
  } else {
    for_each_chunk(recv_count, chunk, [&](std::int64_t done, int n) {
      SCALEBENCH_MPI(
          MPI_Irecv(at(recv, done, elem_size), n, type, root, kChunkTag, comm.get(), next_request(requests)));
    });
  }
  SCALEBENCH_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

void gatherv_bytes(const void* send, std::int64_t send_count, void* recv, const std::vector<std::int64_t>& counts,
                   const std::vector<std::int64_t>& displs, MPI_Datatype type, std::size_t elem_size, int root,
                   const Communicator& comm, std::int64_t chunk) {
  chunk = effective_chunk(chunk);
  if (const OneCall one = one_call(send_count, counts, displs, root, comm, chunk); one.fits) {
    const bool in_place = comm.rank() == root && send == at(static_cast<const void*>(recv), displs[root], elem_size);
    SCALEBENCH_MPI(MPI_Gatherv(in_place ? MPI_IN_PLACE : send, static_cast<int>(send_count), type, recv,
                               one.counts.data(), one.displs.data(), type, root, comm.get()));
    return;
  }
  std::vector<MPI_Request> requests;
  if (comm.rank() == root) {
    for (int r = 0; r < comm.size(); ++r) {
      if (r == root) {
        if (counts[r] > 0 && send != at(static_cast<const void*>(recv), displs[r], elem_size)) {
          std::memcpy(at(recv, displs[r], elem_size), send, static_cast<std::size_t>(counts[r]) * elem_size);
        }
        continue;
      }
      for_each_chunk(counts[r], chunk, [&](std::int64_t done, int n) {
        SCALEBENCH_MPI(MPI_Irecv(at(recv, displs[r] + done, elem_size), n, type, r, kChunkTag, comm.get(),
                                 next_request(requests)));
      });
    }
  } else {
    for_each_chunk(send_count, chunk, [&](std::int64_t done, int n) {
      SCALEBENCH_MPI(
          MPI_Isend(at(send, done, elem_size), n, type, root, kChunkTag, comm.get(), next_request(requests)));
    });
  }
  SCALEBENCH_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

}  // namespace scalebench
