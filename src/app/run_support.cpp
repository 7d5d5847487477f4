#include "run_support.hpp"

#include <exception>
#include <ios>
#include <new>

#include <fmt/format.h>

namespace scalebench::app {
namespace {

int fail(ExitCode code, const std::string& message) {
  print_error(message);
  return static_cast<int>(code);
}

}  // namespace

int run_guarded(const std::function<int()>& run) {
  try {
    return run();
  } catch (const Error& e) {
    return fail(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return fail(ExitCode::resource, "out of host memory; use a smaller size or more ranks");
  } catch (const std::ios_base::failure& e) {
    return fail(ExitCode::resource, fmt::format("input/output failed: {}", e.what()));
  } catch (const std::exception& e) {
    return fail(ExitCode::internal, fmt::format("internal error: {} (please report it)", e.what()));
  } catch (...) {
    return fail(ExitCode::internal, "internal error: an unknown exception (please report it)");
  }
}

int run_reporting(const std::function<int()>& run) {
  try {
    return run();
  } catch (const Error& e) {
    return fail(e.code(), e.what());
  } catch (const std::exception& e) {
    return fail(ExitCode::internal, fmt::format("internal error: {}; please report it", e.what()));
  }
}

}  // namespace scalebench::app
