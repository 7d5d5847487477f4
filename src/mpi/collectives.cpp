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
constexpr int kRelayTag = 7302;
// Segments a relaying rank has on their way at once, each way: enough to keep a link busy while
// the rank waits for the next one.
constexpr std::int64_t kRelayWindow = 8;

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

void relay_bytes(void* data, std::int64_t bytes, int root, const Communicator& comm, std::int64_t segment) {
  const int size = comm.size();
  if (size <= 1 || bytes <= 0) return;
  if (segment <= 0 || segment > kMaxMpiCount) segment = kRelaySegmentBytes;
  if (!relay_goes_along_chain(size, bytes, segment)) {
    bcast_bytes(data, bytes, MPI_BYTE, 1, root, comm, kMaxMpiCount);
    return;
  }
  const int position = (comm.rank() - root + size) % size;  // along the chain, the root first
  const int prev = (comm.rank() - 1 + size) % size;
  const int next = (comm.rank() + 1) % size;
  const bool receives = position != 0;
  const bool forwards = position != size - 1;
  const std::int64_t segments = (bytes + segment - 1) / segment;
  auto* p = static_cast<char*>(data);
  auto length = [&](std::int64_t i) { return static_cast<int>(std::min(segment, bytes - i * segment)); };
  // Request slot i % window holds segment i's receive (and its send): at most `window` each way.
  std::vector<MPI_Request> received(kRelayWindow, MPI_REQUEST_NULL), sent(kRelayWindow, MPI_REQUEST_NULL);
  auto slot = [](std::int64_t i) { return static_cast<std::size_t>(i % kRelayWindow); };
  auto post_receive = [&](std::int64_t i) {
    SCALEBENCH_MPI(MPI_Irecv(p + i * segment, length(i), MPI_BYTE, prev, kRelayTag, comm.get(), &received[slot(i)]));
  };
  if (receives) {
    for (std::int64_t i = 0; i < std::min(segments, kRelayWindow); ++i) post_receive(i);
  }
  for (std::int64_t i = 0; i < segments; ++i) {
    if (receives) {
      SCALEBENCH_MPI(MPI_Wait(&received[slot(i)], MPI_STATUS_IGNORE));
      if (i + kRelayWindow < segments) post_receive(i + kRelayWindow);
    }
    if (forwards) {
      SCALEBENCH_MPI(MPI_Wait(&sent[slot(i)], MPI_STATUS_IGNORE));
      SCALEBENCH_MPI(MPI_Isend(p + i * segment, length(i), MPI_BYTE, next, kRelayTag, comm.get(), &sent[slot(i)]));
    }
  }
  SCALEBENCH_MPI(MPI_Waitall(static_cast<int>(sent.size()), sent.data(), MPI_STATUSES_IGNORE));
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
