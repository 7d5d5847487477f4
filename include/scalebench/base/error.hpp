#pragma once
// Failure classes and their exit codes. Every failure that scalebench detects maps to exactly one
// of these; README.md and `scalebench --help` list the same table.
#include <stdexcept>
#include <string>
#include <string_view>

namespace scalebench {

enum class ExitCode : int {
  ok = 0,
  internal = 1,             // a bug in scalebench: please report it
  usage = 2,                // bad option, bad value, impossible request
  resource = 3,             // not enough memory, no GPU, unwritable output, too many ranks
  verification_failed = 4,  // the computed result is wrong
  runtime = 5,              // MPI, BLAS, CUDA, cuBLAS, NCCL or hwloc reported an error
  no_cuda = 6,              // a GPU feature was asked of a build without CUDA
  timeout = 7,              // a launched step ran past its time limit
  partial = 8,              // a driver (contrast, study) finished but some of its runs failed
  launch = 9,               // a driver's runs failed to launch (launcher, MPI start-up) or none could run
};

std::string_view exit_code_name(ExitCode code);

// `text` as one printable line of UTF-8: bytes that are not UTF-8 become U+FFFD and control
// characters (a newline, a carriage return, an escape sequence) their \xNN spelling. What a user
// typed, a file held or the environment said may be quoted in a message or a record; neither a
// terminal nor a JSON writer then sees anything but text.
std::string printable(std::string_view text);
// Where `text` stops being UTF-8 (the offset of the first byte that is not), or npos when all is.
std::size_t bad_utf8_at(std::string_view text);
// The exit-code table as text, one line per code (for --help and docs).
std::string exit_code_table();

// An error with its class. The message is one line: what is wrong and what to do (printable():
// whatever it quotes cannot break the line or the record it lands in).
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(printable(message)), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

class UsageError : public Error {
 public:
  explicit UsageError(const std::string& m) : Error(ExitCode::usage, m) {}
};
class ResourceError : public Error {
 public:
  explicit ResourceError(const std::string& m) : Error(ExitCode::resource, m) {}
};
class RuntimeLibraryError : public Error {
 public:
  explicit RuntimeLibraryError(const std::string& m) : Error(ExitCode::runtime, m) {}
};
class LaunchError : public Error {
 public:
  explicit LaunchError(const std::string& m) : Error(ExitCode::launch, m) {}
};
class NoCudaError : public Error {
 public:
  explicit NoCudaError(const std::string& what_needs_it)
      : Error(ExitCode::no_cuda, what_needs_it + " needs CUDA, but this scalebench was built without CUDA; "
                                                 "rebuild with a CUDA toolkit (cmake -DSCALEBENCH_CUDA=ON)") {}
};

}  // namespace scalebench
