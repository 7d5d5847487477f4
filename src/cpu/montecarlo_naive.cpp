// The baseline as a newcomer writes it: one std::mt19937 per rank seeded with seed + rank,
// std::uniform_real_distribution / std::normal_distribution in double, one thread, an even split of
// the samples. Each rank's stream depends on its rank, so the estimate changes with the rank
// count (it is still a valid estimate; it is just not reproducible across launch shapes).
#include <algorithm>
#include <cmath>
#include <random>

#include "scalebench/base/partition.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/cpu/montecarlo.hpp"

namespace scalebench {
namespace {

class NaiveMonteCarlo final : public McKernel {
 public:
  NaiveMonteCarlo(int rank, int ranks) : rank_(rank), ranks_(ranks) {}

  std::string name() const override { return "naive"; }

  void prepare(const MonteCarloConfig& cfg, ChunkRange, PhaseRecorder& setup) override {
    ScopedPhase t(setup, phase::prepare);
    cfg_ = cfg;
    count_ = RowPartition(cfg.samples, ranks_).block(rank_).count;
  }

  McPartial run(PhaseRecorder& rec) override {
    ScopedPhase t(rec, phase::compute);
    McPartial out;
    out.plain_count = count_;
    std::mt19937 gen(static_cast<std::mt19937::result_type>(cfg_.seed + static_cast<std::uint64_t>(rank_)));
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::normal_distribution<double> normal(0.0, 1.0);
    const auto& m = cfg_.market;
    const bool call = cfg_.option == OptionKind::call;
    auto payoff = [&](double s) { return call ? std::max(s - m.strike, 0.0) : std::max(m.strike - s, 0.0); };
    auto& v = out.plain.v;
    if (cfg_.problem == McProblem::pi) {
      for (std::int64_t i = 0; i < count_; ++i) {
        const double x = uniform(gen), y = uniform(gen);
        if (x * x + y * y < 1.0) ++out.hits;
      }
    } else if (cfg_.problem == McProblem::european) {
      for (std::int64_t i = 0; i < count_; ++i) {
        const double s = m.spot * std::exp((m.rate - 0.5 * m.sigma * m.sigma) * m.maturity +
                                           m.sigma * std::sqrt(m.maturity) * normal(gen));
        const double p = payoff(s);
        v[kSumY] += p;
        v[kSumYY] += p * p;
      }
    } else {
      const double dt = m.maturity / cfg_.steps;
      for (std::int64_t i = 0; i < count_; ++i) {
        double s = m.spot, sum = 0, sum_log = 0;
        for (int j = 0; j < cfg_.steps; ++j) {
          s *= std::exp((m.rate - 0.5 * m.sigma * m.sigma) * dt + m.sigma * std::sqrt(dt) * normal(gen));
          sum += s;
          sum_log += std::log(s);
        }
        const double py = payoff(sum / cfg_.steps), px = payoff(std::exp(sum_log / cfg_.steps));
        v[kSumY] += py;
        v[kSumYY] += py * py;
        v[kSumX] += px;
        v[kSumXX] += px * px;
        v[kSumXY] += px * py;
      }
    }
    return out;
  }

  nlohmann::json describe() const override {
    return {{"name", "naive"},
            {"threads", 1},
            {"rng", "std::mt19937 seeded with seed + rank"},
            {"arithmetic", "fp64, one running sum per rank"},
            {"reproducible_across_rank_counts", false}};
  }

 private:
  int rank_, ranks_;
  MonteCarloConfig cfg_;
  std::int64_t count_ = 0;
};

}  // namespace

std::unique_ptr<McKernel> make_naive_montecarlo(int rank, int ranks) {
  return std::make_unique<NaiveMonteCarlo>(rank, ranks);
}

}  // namespace scalebench
