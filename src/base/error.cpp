#include "scalebench/base/error.hpp"

#include <fmt/format.h>

namespace scalebench {

namespace {

// The length of the UTF-8 sequence starting at text[i] (1 to 4), or 0 when it is not one: an
// overlong form, a surrogate, beyond U+10FFFF, cut short or a stray continuation byte.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::size_t bad_utf8_at(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
    } else if (const std::size_t n = utf8_length(text, i); n > 0) {
      i += n;
    } else {
      return i;
    }
  }
  return std::string_view::npos;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) {
        out += fmt::format("\\x{:02x}", c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
    } else if (const std::size_t n = utf8_length(text, i); n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

std::string_view exit_code_name(ExitCode code) {
  switch (code) {
    case ExitCode::ok: return "ok";
    case ExitCode::internal: return "internal error";
    case ExitCode::usage: return "usage error";
    case ExitCode::resource: return "resource error";
    case ExitCode::verification_failed: return "verification failed";
    case ExitCode::runtime: return "runtime library error";
    case ExitCode::no_cuda: return "built without CUDA";
    case ExitCode::timeout: return "timeout";
    case ExitCode::partial: return "some runs failed";
    case ExitCode::launch: return "launch failed";
  }
  return "unknown";
}

std::string exit_code_table() {
  std::string out;
  const ExitCode all[] = {
      ExitCode::ok,      ExitCode::internal, ExitCode::usage,   ExitCode::resource, ExitCode::verification_failed,
      ExitCode::runtime, ExitCode::no_cuda,  ExitCode::timeout, ExitCode::partial,  ExitCode::launch};
  const char* why[] = {"success, every result verified",
                       "a bug in scalebench (please report it)",
                       "bad option or value (see --help)",
                       "not enough memory, no GPU, too many ranks, unwritable output",
                       "a computed result is wrong (\"ok\": false in the record)",
                       "MPI, BLAS, CUDA, cuBLAS, NCCL or hwloc reported an error",
                       "a GPU feature was asked of a build without CUDA",
                       "a launched run exceeded its time limit",
                       "a driver finished but some of its runs failed",
                       "a driver's runs failed to launch (mpirun, srun, PMIx, a rank lost) or none could run here"};
  for (std::size_t i = 0; i < std::size(all); ++i) {
    out += fmt::format("  {}  {:<22} {}\n", static_cast<int>(all[i]), exit_code_name(all[i]), why[i]);
  }
  // Not a failure class but a verdict: `scalebench compare`'s code for a run that got slower
  // (kCompareSlowerExit in scalebench/drivers/compare.hpp).
  out += fmt::format("  {}  {:<21} {}\n", 10, "slower", "compare: a matched run got slower (docs/compare.md)");
  out += "  128+n (134 abort, 137 SIGKILL, 143 SIGTERM): ended by signal n; mpirun returns the first failing\n"
         "  rank's code, 128+n for a rank ended by a signal, or a code of its own (docs/cli.md: Exit codes)\n";
  return out;
}

}  // namespace scalebench
