// The NCCL transport (one GPU per rank): small-integer matrices give C equal to the exact
// product at every precision, so identical to the MPI transport's and to one GPU's; a wrong
// element on the last rank fails the run everywhere. The same for --overlap, the pipelined
// schedule (k-panels, row blocks, several rounds) on shapes that make every piece of it odd. Every test here needs as
// many visible GPUs as ranks and skips, with the reason, otherwise.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gemm_checks.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"
#include "test_gemm_gpu_util.hpp"

using namespace scalebench;
using namespace gpu_test;

TEST(NcclGemm, ExactAtEveryPrecisionSameAsMpiTransport) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  // Every precision on one shape; the other at the widest and the narrowest element (what moves
  // depends on the element's size, not its arithmetic): each run makes its own communicators.
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::bf16}) {
    expect_exact({37, 23, 41}, p, Transport::nccl);
    expect_exact({37, 23, 41}, p, Transport::mpi);
  }
  for (Precision p : {Precision::fp64, Precision::bf16}) {
    expect_exact({129, 67, 95}, p, Transport::nccl);
    expect_exact({129, 67, 95}, p, Transport::mpi);
  }
}

TEST(NcclGemm, RecordCarriesBusBandwidthPerPhase) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  GemmConfig cfg = integer_config({256, 192, 160}, Precision::fp64, Transport::nccl);
  cfg.reps = 3;
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root() && comm.size() == 1) {
    // Alone, NCCL moves nothing: only the host copies are listed, and a note says why.
    const auto& t = r.record.at("gpu").at("transfers");
    ok = ok && t.contains("h2d") && t.contains("d2h") && !t.contains("scatter") && !t.contains("broadcast") &&
         !t.contains("gather") && r.record["gpu"]["notes"].dump().find("nothing to move") != std::string::npos;
    EXPECT_TRUE(ok) << r.record.dump(2);
  } else if (comm.is_root()) {
    const auto& t = r.record.at("gpu").at("transfers");
    // nccl-tests: scatter and gather count the whole matrix, busbw = algbw·(n-1)/n.
    const double factor = static_cast<double>(comm.size() - 1) / comm.size();
    ok = ok && t.at("scatter").at("bytes").get<double>() == 256.0 * 160 * 8;
    ok = ok && t.at("broadcast").at("bytes").get<double>() == 160.0 * 192 * 8;
    ok = ok && t.at("gather").at("bytes").get<double>() == 256.0 * 192 * 8;
    ok = ok && std::abs(t["scatter"]["busbw_GBps"].get<double>() - factor * t["scatter"]["algbw_GBps"].get<double>()) <=
                   1e-12 * t["scatter"]["algbw_GBps"].get<double>() + 1e-300;
    ok = ok && r.record.at("gpu").contains("nccl");
    // The communication bound counts what NCCL moved: rank 0 sends every other rank's rows of A
    // and B once, and receives their rows of C (words of 8 bytes).
    const auto& b = r.record.at("comm_bound");
    const double rows0 = r.record.at("partition").at("rows_per_rank").at(0).get<double>();
    ok = ok && b.at("moved_source") == "layout" && b.at("moved_rank") == 0 &&
         b.at("moved_words").get<double>() == (256.0 - rows0) * (160 + 192) + 160.0 * 192 &&
         b.at("moved_to_bound").get<double>() > 0;
    EXPECT_TRUE(ok) << r.record.dump(2);
  }
  EXPECT_TRUE(all_ranks(ok));
}

namespace {
// A wrong element on the last rank: every rank fails, and the record names that rank.
void expect_corruption_caught(const GemmShape& shape, bool overlap) {
  expect_corruption_named(integer_config(shape, Precision::fp64, Transport::nccl, overlap), Communicator::world(),
                          overlap ? "--overlap" : "phased");
}
}  // namespace

TEST(NcclGemm, CorruptedElementOnOneRankFailsEverywhere) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  expect_corruption_caught({40, 40, 40}, false);
}

TEST(NcclGemm, OverlapIsExactOnOddShapes) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  // k < 4 (one-column panels); one row per rank (heads only, no row blocks); uneven panels and
  // blocks; more rounds than some ranks have blocks.
  const auto both = [&](const GemmShape& s, Precision p) {
    expect_exact(s, p, Transport::nccl, true);
    if (comm.size() == 1) expect_exact(s, p, Transport::mpi, true);
  };
  // Every shape at fp64; fp32 and tf32 (4-byte elements) on the first.
  for (const GemmShape& s : {GemmShape{37, 23, 41}, GemmShape{129, 67, 95}, GemmShape{comm.size(), 50, 70},
                             GemmShape{61, 33, 3}, GemmShape{300, 17, 257}}) {
    both(s, Precision::fp64);
  }
  for (Precision p : {Precision::fp32, Precision::tf32}) both({37, 23, 41}, p);
}

TEST(NcclGemm, OverlapRecordSaysWhatWasHidden) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  GemmConfig cfg = integer_config({512, 384, 320}, Precision::fp64, Transport::nccl, true);
  cfg.fill = Fill::uniform;
  cfg.reps = 3;
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root()) {
    const auto& o = r.record.at("gpu").at("overlap");
    const OverlapPlan plan = make_overlap_plan(cfg.shape, RowPartition(cfg.shape.m, comm.size()));
    ok = ok && o.at("panels").get<int>() == plan.panels() && o.at("rounds").get<int>() == plan.rounds();
    const double hidden = o.at("hidden_fraction").get<double>();
    ok = ok && hidden >= 0.0 && hidden <= 1.0 && o.at("transfer_s").get<double>() > 0.0;
    ok = ok && o.at("exposed_s").get<double>() >= 0.0 && o.at("fill_s").get<double>() > 0.0;
    const auto& ph = r.record.at("phases");
    for (const char* p : {"h2d", "compute", "d2h", "fill", "drain", "end_to_end"}) {
      ok = ok && ph.contains(p) && ph.at(p).at("median_s").get<double>() > 0.0;
    }
    // A pipeline cannot end before its multiplies.
    ok = ok && ph.at("end_to_end").at("median_s").get<double>() >= ph.at("compute").at("median_s").get<double>();
    ok = ok && r.record.at("config").at("overlap").get<bool>();
    EXPECT_TRUE(ok) << r.record.dump(2);
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(NcclGemm, OverlapCorruptedElementOnOneRankFailsEverywhere) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  expect_corruption_caught({80, 40, 40}, true);
}
