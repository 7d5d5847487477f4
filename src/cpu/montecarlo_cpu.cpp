// The CPU backend: threads of one rank take work units (aligned blocks of chunks) from a shared
// counter; π hits add up as integers, option sums fold over the fixed chunk tree, so neither
// depends on which thread took which unit or on the number of threads.
#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "montecarlo_kernels.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/cpu/montecarlo.hpp"

namespace scalebench {
namespace {

// Options: up to 16 chunks per work unit (fewer, larger units for the tree; still many per
// thread at benchmark sizes). π: one chunk per unit (its chunks are already large).
constexpr int kOptionUnitLevel = 4;

class CpuMonteCarlo final : public McKernel {
 public:
  explicit CpuMonteCarlo(int threads) : threads_(std::max(threads, 1)) {}

  std::string name() const override { return "cpu"; }

  void prepare(const MonteCarloConfig& cfg, ChunkRange range, PhaseRecorder& setup) override {
    ScopedPhase t(setup, phase::prepare);
    cfg_ = cfg;
    range_ = range;
    model_ = mc::model_for(cfg);
    units_ = dyadic_blocks(range.first, range.last, cfg.problem == McProblem::pi ? 0 : kOptionUnitLevel);
  }

  McPartial run(PhaseRecorder& rec) override {
    ScopedPhase t(rec, phase::compute);
    McPartial out;
    const bool pi = cfg_.problem == McProblem::pi;
    std::vector<std::uint64_t> hits(pi ? units_.size() : 0);
    std::vector<TreeNode> nodes(pi ? 0 : units_.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t u = next.fetch_add(1); u < units_.size(); u = next.fetch_add(1)) {
        const auto [first_chunk, level] = units_[u];
        const std::int64_t end_chunk = first_chunk + (std::int64_t{1} << level);
        if (pi) {
          const std::int64_t first = first_chunk * cfg_.chunk_size;
          const std::int64_t last = std::min(end_chunk * cfg_.chunk_size, cfg_.samples);
          hits[u] = mc::pi_hits(cfg_.seed, first, last);
        } else {
          ChunkTree unit;
          for (std::int64_t c = first_chunk; c < end_chunk; ++c)
            unit.push_leaf(c, mc::option_chunk_sums(cfg_, model_, c));
          nodes[u] = unit.nodes().front();  // an aligned full block folds to one node
        }
      }
    };
    run_on_threads(work);
    if (pi) {
      for (const auto h : hits) out.hits += static_cast<std::int64_t>(h);
    } else {
      ChunkTree tree;
      for (const auto& n : nodes) tree.push(n);
      out.nodes = tree.nodes();
    }
    return out;
  }

  nlohmann::json describe() const override {
    return {{"name", "cpu"},
            {"threads", threads_},
            {"rng", "Philox4x32-10 (Random123)"},
            {"arithmetic", "fp64 paths, fp64 sums per chunk; pi in 32-bit integer coordinates"},
            {"work_units", units_.size()}};
  }

 private:
  // Runs `work` on threads_ threads (this one included); rethrows the first exception.
  void run_on_threads(const std::function<void()>& work) const {
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto guarded = [&] {
      try {
        work();
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    };
    const int helpers = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads_ - 1), units_.size()));
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(helpers));
    try {
      for (int i = 0; i < helpers; ++i) pool.emplace_back(guarded);
    } catch (const std::system_error& e) {
      for (auto& th : pool) th.join();
      throw ResourceError(fmt::format("cannot start {} CPU threads ({}); use fewer --threads", threads_, e.what()));
    }
    guarded();
    for (auto& th : pool) th.join();
    if (failure) std::rethrow_exception(failure);
  }

  int threads_;
  MonteCarloConfig cfg_;
  ChunkRange range_;
  mc::GbmModel model_;
  std::vector<std::pair<std::int64_t, int>> units_;
};

}  // namespace

std::unique_ptr<McKernel> make_cpu_montecarlo(int threads) { return std::make_unique<CpuMonteCarlo>(threads); }

}  // namespace scalebench
