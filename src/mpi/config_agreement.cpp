// Ranks of one job must run the same configuration: with different sizes or repeat counts their
// collectives no longer match (a hang, or buffers of the wrong size). An MPMD launch
// (`mpirun -np 1 scalebench gemm --n 256 : -np 1 scalebench gemm --n 512`) is the usual way.
#include <cstdint>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {

// FNV-1a, 64 bits: the same text gives the same hash on every rank and every host.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Rank 0: which rank differs first, and the first field that differs.
std::string disagreement(const std::string& command, const std::vector<std::string>& all) {
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (all[r] == all[0]) continue;
    const auto a = words_of(all[0]), b = words_of(all[r]);
    std::string field = "(the list of fields)";
    for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      const std::string x = i < a.size() ? a[i] : "(none)", y = i < b.size() ? b[i] : "(none)";
      if (x != y) {
        field = fmt::format("rank 0 has {}, rank {} has {}", x, r, y);
        break;
      }
    }
    return fmt::format("the ranks of this {} run were given different configurations ({}); give every rank the "
                       "same options (check each part of an MPMD launch)",
                       command, field);
  }
  return fmt::format("the ranks of this {} run were given different configurations; give every rank the same options",
                     command);
}

}  // namespace

void agree_on_configuration(const Communicator& comm, const std::string& command, const std::string& fields) {
  if (comm.size() == 1) return;
  // One allreduce gives the smallest and (as ~min(~h)) the largest hash.
  const std::uint64_t h = fnv1a(fields);
  const std::uint64_t mine[2] = {h, ~h};
  std::uint64_t least[2] = {0, 0};
  SCALEBENCH_MPI(MPI_Allreduce(mine, least, 2, MPI_UINT64_T, MPI_MIN, comm.get()));
  if (least[0] == ~least[1]) return;
  const auto all = comm.gather_strings(fields);
  const std::string message = comm.bcast_string(comm.is_root() ? disagreement(command, all) : std::string(), 0);
  throw AgreedError(ExitCode::usage, message, 0);
}

}  // namespace scalebench
