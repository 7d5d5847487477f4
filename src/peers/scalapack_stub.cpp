// The ScaLAPACK peer in a build without ScaLAPACK: says so where the peer is asked for.
#include "scalebench/base/error.hpp"
#include "scalebench/peers/scalapack.hpp"

namespace scalebench {

bool scalapack_available() noexcept { return false; }

void require_scalapack() {
  throw ResourceError("--peer scalapack needs ScaLAPACK, but this scalebench was built without it; install "
                      "libscalapack-openmpi-dev (tools/setup does) and rebuild");
}

void check_scalapack_peer(const ScalapackPeerSettings& /*settings*/, int /*ranks*/) { require_scalapack(); }

std::string scalapack_library_text() { return "none: this scalebench was built without ScaLAPACK"; }

ScalapackPeerResult time_scalapack_peer(const ScalapackPeerSettings& /*settings*/, const Communicator& /*comm*/,
                                        const void* /*a*/, const void* /*b*/, const std::vector<double>& /*x*/,
                                        bool /*keep_c*/) {
  require_scalapack();
  return {};
}

}  // namespace scalebench
