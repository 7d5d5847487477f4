// Page-locking host memory in place for the CUDA device (HostMemoryPin in gpu.hpp).
//
// A run's host matrices are tens of GiB at the sizes GPUs are measured at, and one
// cudaHostRegister call locks them a page at a time on one thread (1.4 s for 25.7 GiB on an H200
// host). The range is cut into pieces of 1 GiB on 2 MiB boundaries (no page in two pieces) and
// the pieces are locked on the rank's host threads at once, each thread on the caller's device;
// unpin_host releases them so too.
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "gpu_device.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/parallel.hpp"

namespace scalebench::gpu {
namespace {

constexpr std::uintptr_t kPieceBytes = std::uintptr_t{1} << 30;
constexpr std::uintptr_t kBoundary = std::uintptr_t{2} << 20;

using Piece = std::pair<char*, std::size_t>;

std::mutex g_mutex;
std::map<void*, std::vector<Piece>> g_pieces;  // each pinned range's pieces, by its start

std::vector<Piece> cut(void* data, std::size_t bytes) {
  std::vector<Piece> out;
  char* p = static_cast<char*>(data);
  char* const end = p + bytes;
  while (p < end) {
    const std::uintptr_t next = (reinterpret_cast<std::uintptr_t>(p) + kPieceBytes) & ~(kBoundary - 1);
    char* const stop = next >= reinterpret_cast<std::uintptr_t>(end) ? end : reinterpret_cast<char*>(next);
    out.emplace_back(p, static_cast<std::size_t>(stop - p));
    p = stop;
  }
  return out;
}

// op(piece) for every piece, on up to the rank's host threads, each on `device`; op's results.
template <class Op>
std::vector<cudaError_t> on_threads(const std::vector<Piece>& pieces, int device, Op op) {
  std::vector<cudaError_t> rc(pieces.size(), cudaSuccess);
  for_each_range(static_cast<std::int64_t>(pieces.size()), host_threads(), 1,
                 [&](int /*part*/, std::int64_t first, std::int64_t last) {
                   const cudaError_t set = cudaSetDevice(device);
                   for (std::int64_t i = first; i < last; ++i) {
                     const auto iu = static_cast<std::size_t>(i);
                     rc[iu] = set != cudaSuccess ? set : op(pieces[iu]);
                   }
                 });
  return rc;
}

void unregister(const std::vector<Piece>& pieces, int device) noexcept {
  try {
    on_threads(pieces, device, [](const Piece& p) { return cudaHostUnregister(p.first); });
  } catch (...) {  // no thread to be had: one at a time
    for (const Piece& p : pieces) cudaHostUnregister(p.first);
  }
  cudaGetLastError();
}

}  // namespace

void pin_host(void* data, std::size_t bytes) {
  const std::vector<Piece> pieces = cut(data, bytes);
  int device = 0;
  SCALEBENCH_CUDA_CHECK(cudaGetDevice(&device));
  const std::vector<cudaError_t> rc =
      on_threads(pieces, device, [](const Piece& p) { return cudaHostRegister(p.first, p.second, cudaHostRegisterDefault); });
  cudaError_t failed = cudaSuccess;
  std::vector<Piece> locked;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (rc[i] == cudaSuccess) locked.push_back(pieces[i]);
    else if (failed == cudaSuccess) failed = rc[i];
  }
  if (failed != cudaSuccess) {
    unregister(locked, device);
    throw ResourceError(fmt::format("cannot page-lock {:.2f} GiB of host memory for GPU copies (cudaHostRegister: {}); "
                                    "use a smaller size or raise the locked-memory limit (ulimit -l)",
                                    static_cast<double>(bytes) / (1 << 30), cudaGetErrorString(failed)));
  }
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_pieces[data] = pieces;
}

void unpin_host(void* data) noexcept {
  std::vector<Piece> pieces;
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    const auto it = g_pieces.find(data);
    if (it == g_pieces.end()) return;
    pieces = std::move(it->second);
    g_pieces.erase(it);
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) device = 0;
  unregister(pieces, device);
}

}  // namespace scalebench::gpu
