// `scalebench montecarlo`'s options, its configuration from them and the model's prediction of
// it: the command MonteCarloWorkload::add_command returns (command.hpp). One sharded Monte Carlo
// configuration per launch, run by run_distributed_montecarlo (montecarlo_driver.cpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/problem/montecarlo.hpp"
#include "scalebench/topology/placement.hpp"
#include "scalebench/workloads/command.hpp"
#include "scalebench/workloads/distributed_montecarlo.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/prediction.hpp"

namespace scalebench {
namespace {

struct MonteCarloOptions {
  std::string problem = "pi";
  std::string backend = "cpu";
  std::string samples;
  std::string option = "call";
  std::string control_variate = "none";
  std::string spot = "100", strike = "100", rate = "0.05", sigma = "0.2", maturity = "1";
  std::string steps = "252";
  RunOptions run;
  std::string chunk_size;
  std::string batch;
  std::string curand_generator = "philox";
};

// --batch: whole samples >= 1, or 0 for automatic, judged by its value ("00" and "0e0" are 0).
std::int64_t parse_batch(const std::string& text) {
  const double value = parse_real("--batch", text);
  if (value == 0) return 0;
  if (value < 0) throw UsageError(fmt::format("--batch must be >= 1 samples, or 0 for automatic (got '{}')", text));
  return parse_positive_count("--batch", text);
}

MonteCarloConfig to_config(const MonteCarloOptions& o, const CLI::App& app) {
  MonteCarloConfig cfg;
  // Every option given, whatever its value: validate() refuses those the problem or backend does
  // not read (--spot with --problem pi, --batch without --backend curand).
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0) continue;
    for (const std::string& name : option->get_lnames()) cfg.given_options.insert("--" + name);
  }
  cfg.problem = parse_mc_problem(o.problem);
  cfg.backend = parse_mc_backend(o.backend);
  cfg.samples = o.samples.empty() ? default_samples(cfg.problem) : parse_positive_count("--samples", o.samples);
  cfg.option = parse_option_kind(o.option);
  cfg.control_variate = parse_control_variate(o.control_variate);
  cfg.market.spot = parse_real("--spot", o.spot);
  cfg.market.strike = parse_real("--strike", o.strike);
  cfg.market.rate = parse_real("--rate", o.rate);
  cfg.market.sigma = parse_real("--sigma", o.sigma);
  cfg.market.maturity = parse_real("--maturity", o.maturity);
  cfg.steps = static_cast<int>(parse_integer("--steps", o.steps, 1, std::int64_t{1} << 20));
  apply_run_options(o.run, app, cfg);
  cfg.chunk_size = o.chunk_size.empty() ? 0 : parse_integer("--chunk-size", o.chunk_size, 4, std::int64_t{1} << 30);
  if (app.count("--batch") > 0) cfg.batch = parse_batch(o.batch);
  cfg.curand_generator = parse_curand_generator(o.curand_generator);
  resolve_defaults(cfg);
  validate(cfg);
  return cfg;
}

}  // namespace

// The prediction `scalebench predict` answers with, and the one a run's record carries (montecarlo_driver.cpp).
PredictedWorkload montecarlo_prediction(const MonteCarloConfig& cfg_in, const Profile& p, const MachineLayout& m) {
  MonteCarloConfig cfg = cfg_in;
  resolve_defaults(cfg);
  if (cfg.backend != McBackendKind::cpu) cfg.threads = 1;  // naive is one thread; GPU backends one host thread
  if (cfg.threads <= 0) cfg.threads = std::max(1, p.cores / m.ranks_per_node);
  PredictedWorkload w;
  w.what = fmt::format("montecarlo {} {} samples {}", to_string(cfg.problem), to_string(cfg.backend), cfg.samples);
  w.unit = "samples/s";
  w.work = static_cast<double>(cfg.samples);
  w.gpu = cfg.backend == McBackendKind::cuda || cfg.backend == McBackendKind::curand;
  w.threads = cfg.threads;
  w.repeats = cfg.reps + cfg.warmup;
  w.kernel = {w.gpu ? PowerDevice::gpu : PowerDevice::cpu, "montecarlo", to_string(cfg.problem)};
  w.here = [&p, cfg](const MachineLayout& l) { return predict_montecarlo(p, cfg, l); };
  auto variant = [cfg](McBackendKind b, int threads) {
    MonteCarloConfig c = cfg;
    c.backend = b;
    c.threads = threads;
    return c;
  };
  w.one_core = [&p, c = variant(McBackendKind::cpu, 1)](const MachineLayout& l) { return predict_montecarlo(p, c, l); };
  w.one_gpu = [&p, c = variant(McBackendKind::cuda, 1)](const MachineLayout& l) { return predict_montecarlo(p, c, l); };
  w.crossover = [&p, variant] {
    auto at = [&](MonteCarloConfig c, double samples, int gpus) -> std::optional<double> {
      c.samples = std::max<std::int64_t>(c.chunk_size, std::llround(samples / 4) * 4);
      return try_seconds([&](const MachineLayout& l) { return predict_montecarlo(p, c, l); }, {1, 1, gpus});
    };
    const auto x = crossover_size(
        1e3, 1e13, [&](double n) { return at(variant(McBackendKind::cuda, 1), n, 1); },
        [&](double n) { return at(variant(McBackendKind::cpu, p.cores), n, 0); });
    return x ? fmt::format("samples >= {:.3g} (one GPU beats one node's {} cores)", *x, p.cores)
             : std::string("none found for samples in [1e3, 1e13] (or no GPU figures in the profile)");
  };
  return w;
}

namespace {

std::function<MonteCarloConfig()> add_montecarlo_options(CLI::App* app) {
  auto opts = std::make_shared<MonteCarloOptions>();
  app->add_option("--problem", opts->problem,
                  "pi (quarter-circle hits) | european (Black-Scholes checked) | asian (arithmetic average; "
                  "geometric average checked) [pi]");
  app->add_option("--samples", opts->samples,
                  "Points (pi) or paths (options), e.g. 1e9; the z-test needs 100 effective samples: pi at least 128, "
                  "options N*E[Y]^2/E[Y^2] >= 100 for the checked payoff Y [pi 1e9, european 1e7, asian 1e5]");
  app->add_option("--backend", opts->backend,
                  "naive (std::mt19937 per rank, one thread: the baseline) | cpu (Philox, threads) | cuda (one GPU "
                  "per rank, fused kernel) | curand (one GPU per rank, the tutorials' pattern: cuRAND fills device "
                  "arrays, a kernel and a CUB reduction follow; pi and european; its estimate is NOT bit-identical "
                  "to the other backends' nor across rank counts) [cpu]");
  add_run_options(app, opts->run,
                  {"CPU threads per rank (--backend cpu) [OMP_NUM_THREADS, else the cores this rank owns (--pin) "
                   "or may use]",
                   "Philox key: the whole run is a pure function of it [42]",
                   "Print the resolved configuration and the chunks per rank; compute nothing",
                   "cuda, curand: allow several ranks per GPU"});
  // The option model: european and asian read it, pi refuses it (given, whatever the value).
  app->add_option("--option", opts->option, "european, asian: call | put [call]");
  app->add_option("--spot", opts->spot, "european, asian: spot price S in [1e-100, 1e100] [100]");
  app->add_option("--strike", opts->strike, "european, asian: strike K in [1e-100, 1e100] [100]");
  app->add_option("--rate", opts->rate,
                  "european, asian: risk-free rate r in [-10, 10], continuously compounded; the forward S*exp(rT) "
                  "in [1e-100, 1e100] [0.05]");
  app->add_option("--sigma", opts->sigma, "european, asian: volatility sigma > 0, sigma^2*T <= 4 [0.2]");
  app->add_option("--maturity", opts->maturity, "european, asian: maturity T > 0 in years [1]");
  app->add_option("--steps", opts->steps, "asian: equally spaced fixings up to T, 1 to 2^20 [252]");
  app->add_option("--control-variate", opts->control_variate,
                  "asian: none | geometric (the geometric-average option, whose price is known) [none]");
  app->add_option("--batch", opts->batch,
                  "curand: samples per batch of device arrays, e.g. 1e7; need not divide the samples; 0: from the "
                  "GPU's free memory, at most 2^26 [0]");
  app->add_option("--curand-generator", opts->curand_generator,
                  "curand: philox (CURAND_RNG_PSEUDO_PHILOX4_32_10) | xorwow (CURAND_RNG_PSEUDO_XORWOW) [philox]");
  app->add_option("--chunk-size", opts->chunk_size,
                  "Samples per chunk (a multiple of 4); part of the result's definition (testing)")
      ->group("");

  return [opts, app] { return to_config(*opts, *app); };
}

}  // namespace

std::shared_ptr<WorkloadCommand> add_montecarlo_command(CLI::App& app) {
  return std::make_shared<ConfigCommand<MonteCarloConfig, MonteCarloResult>>(add_montecarlo_options(&app),
                                                                             run_distributed_montecarlo,
                                                                             montecarlo_prediction);
}

}  // namespace scalebench
