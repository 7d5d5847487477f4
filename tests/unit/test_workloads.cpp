// The workload registry and what the drivers read through it: names, the figures of a record
// (rates and the compute / communication / transfer split by phase kind), the contrast rows'
// arguments and sizes, the work behind the time estimates; each workload's own subcommand (its
// options, checked configuration and prediction) and the contrast options it brings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "drivers/launch/time_left.hpp"
#include "drivers/results/files.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/workloads/command.hpp"
#include "scalebench/workloads/workload.hpp"

namespace sb = scalebench;

namespace {

nlohmann::json phase(double median) { return {{"median_s", median}}; }

bool has(const std::vector<std::string>& args, const std::string& a) {
  return std::find(args.begin(), args.end(), a) != args.end();
}

// The workload's subcommand parsed from `args` (as typed) and configured.
std::shared_ptr<sb::WorkloadCommand> configured(const sb::Workload& w, std::vector<std::string> args) {
  CLI::App app;
  auto command = w.add_command(app);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector reversed
  app.parse(args);
  command->configure();
  return command;
}

}  // namespace

TEST(WorkloadCommand, EachWorkloadDeclaresItsOptionsWithTheSharedOnesAndChecksItsConfiguration) {
  for (const sb::Workload* w : sb::workloads()) {
    SCOPED_TRACE(std::string(w->name()));
    EXPECT_NE(w->description(), "");
    EXPECT_NE(w->predict_description().find("scalebench " + std::string(w->name())), std::string_view::npos);
    const std::string size_option = "--" + std::string(w->size_key());
    const std::string size = w->contrast_sizing().naive;
    const auto command = configured(*w, {size_option, size, "--reps", "2", "--json", "run.json"});
    EXPECT_EQ(command->json_path().value_or(""), "run.json");
    EXPECT_FALSE(configured(*w, {size_option, size})->json_path().has_value());
    // Checked before MPI would start: a bad size or a shared option out of range is a UsageError.
    EXPECT_THROW(configured(*w, {size_option, "0"}), sb::UsageError);
    EXPECT_THROW(configured(*w, {size_option, size, "--reps", "0"}), sb::UsageError);
    EXPECT_THROW(configured(*w, {"--no-such-option"}), CLI::ParseError);
  }
}

// The schedule options not given are `auto` by default: predict ranks them and says which were
// not given; those given stay pinned; with all pinned there is nothing to choose.
TEST(WorkloadCommand, GemmLeavesTheScheduleOptionsNotGivenToTheModel) {
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  const sb::Profile p = sb::load_profile(std::string(src ? src : ".") + "/tests/data/profile-synthetic.json");
  const sb::MachineLayout four{1, 4, 0}, gpus{1, 4, 4};
  const sb::PredictedWorkload plain = configured(sb::workload("gemm"), {"--n", "2048"})->predict(p, four);
  ASSERT_TRUE(plain.choice.is_object());
  EXPECT_EQ(plain.choice["defaulted"], "algorithm,grid,distribution,lookahead") << plain.choice.dump(1);
  EXPECT_EQ(plain.choice["by"], "model");
  const sb::PredictedWorkload gpu =
      configured(sb::workload("gemm"), {"--n", "4096", "--backend", "cublas"})->predict(p, gpus);
  EXPECT_EQ(gpu.choice["defaulted"], "algorithm,grid,distribution,transport,overlap,lookahead");
  const sb::PredictedWorkload row = configured(sb::workload("gemm"),
                                               {"--n", "2048", "--algorithm", "row1d", "--distribution", "auto"})
                                        ->predict(p, four);
  EXPECT_EQ(row.choice["options"], "distribution");
  EXPECT_EQ(row.choice["asked"], "distribution");
  for (const auto& a : row.choice["alternatives"]) EXPECT_EQ(a["algorithm"], "row1d");
  const sb::PredictedWorkload pinned = configured(sb::workload("gemm"), {"--n", "2048", "--algorithm", "row1d",
                                                                         "--distribution", "replicated"})
                                           ->predict(p, four);
  EXPECT_TRUE(pinned.choice.is_null()) << pinned.choice.dump();
  EXPECT_THROW(configured(sb::workload("gemm"), {"--overlap", "sometimes"}), sb::UsageError);
}

TEST(WorkloadCommand, PredictsItsConfigurationFromAProfile) {
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  const sb::Profile p = sb::load_profile(std::string(src ? src : ".") + "/tests/data/profile-synthetic.json");
  const sb::MachineLayout one{1, 1, 0}, four{1, 4, 0};
  const auto gemm = configured(sb::workload("gemm"), {"--n", "2048", "--threads", "1"});
  const sb::PredictedWorkload g = gemm->predict(p, one);
  EXPECT_EQ(g.unit, "GFLOP/s");
  EXPECT_DOUBLE_EQ(g.work, 2.0 * 2048.0 * 2048.0 * 2048.0 * 1e-9);
  EXPECT_EQ(g.repeats, 5 + 1);
  // Four ranks do the multiply sooner than one.
  const auto compute_s = [](const sb::Prediction& pred) {
    const auto it = std::find_if(pred.phases.begin(), pred.phases.end(),
                                 [](const auto& ph) { return ph.first == sb::phase::compute; });
    return it == pred.phases.end() ? 0.0 : it->second;
  };
  EXPECT_GT(compute_s(g.here(one)), 0.0);
  EXPECT_LT(compute_s(g.here(four)), compute_s(g.here(one)));
  const auto mc = configured(sb::workload("montecarlo"), {"--samples", "1e8", "--reps", "2", "--warmup", "0"});
  const sb::PredictedWorkload m = mc->predict(p, one);
  EXPECT_EQ(m.unit, "samples/s");
  EXPECT_DOUBLE_EQ(m.work, 1e8);
  EXPECT_EQ(m.repeats, 2);
  EXPECT_GT(m.here(one).end_to_end, 0.0);
}

TEST(WorkloadContrast, EachWorkloadBringsItsOwnSizeOptionsAndOnePrecisionAtMost) {
  std::set<std::string> names = {"--precision"};
  int precisions = 0;
  for (const sb::Workload* w : sb::workloads()) {
    const sb::ContrastSizing s = w->contrast_sizing();
    for (const auto* o : {&s.cpu_option, &s.gpu_option, &s.naive_option}) {
      EXPECT_EQ(o->name.rfind("--", 0), 0u) << o->name;
      EXPECT_NE(o->help, "") << o->name;
      EXPECT_TRUE(names.insert(o->name).second) << o->name << " declared twice";
    }
    precisions += s.precision_help.empty() ? 0 : 1;
  }
  EXPECT_EQ(sb::workload("gemm").contrast_sizing().cpu_option.name, "--n");
  EXPECT_EQ(sb::workload("montecarlo").contrast_sizing().naive_option.name, "--naive-samples");
  EXPECT_LE(precisions, 1);
}

TEST(WorkloadRegistry, FindsEachWorkloadByItsNameAndRefusesOthersNamingTheRegistered) {
  ASSERT_EQ(sb::workloads().size(), 2u);
  EXPECT_EQ(sb::workload_names(), "gemm or montecarlo");
  EXPECT_EQ(sb::workload_names(" | "), "gemm | montecarlo");
  for (const sb::Workload* w : sb::workloads()) EXPECT_EQ(sb::find_workload(w->name()), w);
  EXPECT_EQ(sb::find_workload("fft"), nullptr);
  try {
    sb::workload("fft");
    FAIL() << "no UsageError";
  } catch (const sb::UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown workload 'fft'; use gemm or montecarlo");
  }
  EXPECT_EQ(sb::workload("gemm").size_key(), "n");
  EXPECT_EQ(sb::workload("montecarlo").size_key(), "samples");
}

TEST(WorkloadFigures, GemmSplitsPhasesByKindAndReadsGflops) {
  const nlohmann::json record = {{"subcommand", "gemm"},
                                 {"ranks", 2},
                                 {"config", {{"backend", "cublas"}, {"threads_per_rank", 1}}},
                                 {"phases",
                                  {{"setup_generate", phase(9.0)},
                                   {"scatter", phase(0.1)},
                                   {"broadcast", phase(0.2)},
                                   {"h2d", phase(0.3)},
                                   {"compute", phase(1.0)},
                                   {"d2h", phase(0.4)},
                                   {"gather", phase(0.5)},
                                   {"verify", phase(7.0)},
                                   {"end_to_end", phase(2.5)}}},
                                 {"rates", {{"compute_gflops", 100.0}, {"end_to_end_gflops", 40.0}}}};
  const sb::RunFigures f = sb::results::run_figures(record);
  EXPECT_TRUE(f.gpu);
  EXPECT_EQ(f.resources(), 2);  // GPUs
  EXPECT_DOUBLE_EQ(f.time_s, 2.5);
  EXPECT_DOUBLE_EQ(f.compute_s, 1.0);
  EXPECT_DOUBLE_EQ(f.comm_s, 0.1 + 0.2 + 0.5);
  EXPECT_DOUBLE_EQ(f.transfer_s, 0.3 + 0.4);
  EXPECT_DOUBLE_EQ(f.rate, 40.0);
  EXPECT_DOUBLE_EQ(f.compute_rate, 100.0);
  EXPECT_EQ(f.rate_unit, "GFLOP/s");
}

TEST(WorkloadFigures, MonteCarloCountsTheReductionAsCommunicationAndFallsBackToTheComputeRate) {
  const nlohmann::json record = {{"subcommand", "montecarlo"},
                                 {"ranks", 3},
                                 {"config", {{"backend", "cpu"}, {"threads_per_rank", 4}}},
                                 {"phases", {{"compute", phase(2.0)}, {"reduce", phase(0.25)}}},
                                 {"rates", {{"samples_per_s", 5e8}}}};
  const sb::RunFigures f = sb::results::run_figures(record);
  EXPECT_FALSE(f.gpu);
  EXPECT_EQ(f.resources(), 12);     // cores
  EXPECT_DOUBLE_EQ(f.time_s, 2.0);  // no end_to_end: compute
  EXPECT_DOUBLE_EQ(f.comm_s, 0.25);
  EXPECT_DOUBLE_EQ(f.transfer_s, 0.0);
  EXPECT_DOUBLE_EQ(f.rate, 5e8);
  EXPECT_EQ(f.rate_unit, "samples/s");
  // A record of no registered workload has no figures.
  EXPECT_EQ(sb::results::run_figures({{"subcommand", "fft"}}).ranks, 0);
}

TEST(WorkloadContrast, RowsGetTheirBackendsAndSchedules) {
  const sb::Workload& gemm = sb::workload("gemm");
  const auto multi = gemm.contrast_args({sb::Mode::gpu, "", true, 2, "8192", "fp32", 3, 1});
  EXPECT_EQ(multi.front(), "gemm");
  EXPECT_TRUE(has(multi, "cublas") && has(multi, "--transport") && has(multi, "--overlap") && has(multi, "fp32"));
  // The schedule is the model's choice (`auto`), except the staged row's, which is the lesson.
  EXPECT_TRUE(has(multi, "auto"));
  const auto staged = gemm.contrast_args({sb::Mode::gpu, "gpu-staged", true, 2, "8192", "fp64", 3, 1});
  // Every option pinned: the staged row is never left to `auto`, by option or by default.
  EXPECT_TRUE(has(staged, "mpi") && has(staged, "off") && has(staged, "row1d") && has(staged, "replicated") &&
              !has(staged, "auto"));
  EXPECT_TRUE(has(gemm.contrast_args({sb::Mode::numa, "", false, 2, "4096", "fp64", 3, 1}), "--distribution"));
  EXPECT_FALSE(has(gemm.contrast_args({sb::Mode::multi_thread, "", false, 1, "4096", "fp64", 3, 1}), "auto"));
  EXPECT_TRUE(has(gemm.contrast_args({sb::Mode::naive, "", false, 1, "768", "fp64", 3, 1}), "naive"));
  // The multinode row on GPU nodes (the gpu layout) runs on the GPUs, its schedule left to `auto`;
  // on CPU nodes, on the CPUs with the library's peer when asked.
  const auto nodes_gpu = gemm.contrast_args({sb::Mode::multinode, "", true, 8, "32768", "fp64", 3, 1, "scalapack"});
  EXPECT_TRUE(has(nodes_gpu, "cublas") && has(nodes_gpu, "--transport") && !has(nodes_gpu, "openblas") &&
              !has(nodes_gpu, "--peer"));
  const auto nodes_cpu = gemm.contrast_args({sb::Mode::multinode, "", false, 8, "4096", "fp64", 3, 1, "scalapack"});
  EXPECT_TRUE(has(nodes_cpu, "openblas") && has(nodes_cpu, "--peer") && !has(nodes_cpu, "cublas"));

  const sb::Workload& mc = sb::workload("montecarlo");
  const auto curand = mc.contrast_args({sb::Mode::gpu, "gpu-naive", true, 1, "1e9", "fp64", 3, 1});
  EXPECT_EQ(curand.front(), "montecarlo");
  EXPECT_TRUE(has(curand, "curand") && has(curand, "1e9") && !has(curand, "fp64"));
  EXPECT_TRUE(has(mc.contrast_args({sb::Mode::multi_thread, "", false, 1, "1e8", "fp64", 3, 1}), "cpu"));
  EXPECT_TRUE(has(mc.contrast_args({sb::Mode::multinode, "", true, 8, "1e12", "fp64", 3, 1}), "cuda"));
  EXPECT_TRUE(has(mc.contrast_args({sb::Mode::multinode, "", false, 8, "1e9", "fp64", 3, 1}), "cpu"));
  // Every workload's gpu mode starts with its own row.
  for (const sb::Workload* w : sb::workloads()) EXPECT_EQ(w->gpu_rows().front().label, "");
}

TEST(WorkloadContrast, SizesScaleFromTheProbeAndWorkFollowsTheSize) {
  EXPECT_EQ(sb::workload("gemm").scaled_size(512, 0.01, 6.0), "4096");
  EXPECT_EQ(sb::workload("montecarlo").scaled_size(1e7, 0.1, 6.0), "6e8");
  EXPECT_EQ(sb::workload("gemm").size_text("4096"), "n=4096");
  EXPECT_EQ(sb::workload("montecarlo").size_text("1e8"), "1e8 samples");
  EXPECT_DOUBLE_EQ(sb::launch::run_work("gemm", "100", 2, 4), 1e6 * 2 / 4);
  EXPECT_DOUBLE_EQ(sb::launch::run_work("montecarlo", "1e8", 3, 2), 1e8 * 3 / 2);
}

TEST(PhaseNames, KindsDriveTheTablesSplit) {
  EXPECT_EQ(sb::phase::kind_of(sb::phase::compute), sb::phase::Kind::computation);
  for (const char* p : {sb::phase::scatter, sb::phase::broadcast, sb::phase::gather, sb::phase::reduce}) {
    EXPECT_EQ(sb::phase::kind_of(p), sb::phase::Kind::communication) << p;
  }
  for (const char* p : {sb::phase::h2d, sb::phase::d2h}) EXPECT_EQ(sb::phase::kind_of(p), sb::phase::Kind::transfer);
  for (const char* p : {sb::phase::verify, sb::phase::end_to_end, sb::phase::generate, sb::phase::fill}) {
    EXPECT_EQ(sb::phase::kind_of(p), sb::phase::Kind::other) << p;
  }
}
