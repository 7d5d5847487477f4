// A build without ScaLAPACK: this test links the stub the build would use (src/peers/
// scalapack_stub.cpp) in place of the library, so it runs in every build. `--peer scalapack` is
// refused before any work with one line saying the build has no ScaLAPACK (exit 3, resource).
#include <gtest/gtest.h>

#include <string>

#include "gemm_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/peers/scalapack.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"

using namespace scalebench;

TEST(ScalapackStub, PeerIsRefusedSayingTheBuildHasNoScalapack) {
  const auto comm = Communicator::world();
  EXPECT_FALSE(scalapack_available());
  GemmConfig cfg = exact_gemm_config({16, 16, 16}, Precision::fp64, 3);
  cfg.peer_library = GemmPeerLibrary::scalapack;
  std::string message;
  ExitCode code = ExitCode::ok;
  try {
    run_distributed_gemm(cfg, comm);
  } catch (const Error& e) {
    message = e.what();
    code = e.code();
  }
  EXPECT_TRUE(all_ranks(code == ExitCode::resource)) << message;
  EXPECT_NE(message.find("built without"), std::string::npos) << message;
  EXPECT_NE(message.find("ScaLAPACK"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

TEST(ScalapackStub, WithoutThePeerTheRunIsUntouched) {
  const auto comm = Communicator::world();
  const GemmResult r = run_distributed_gemm(exact_gemm_config({16, 16, 16}, Precision::fp64, 3), comm);
  EXPECT_TRUE(all_ranks(r.ok));
  EXPECT_TRUE(all_ranks(!comm.is_root() || !r.record.contains("peers")));
}
