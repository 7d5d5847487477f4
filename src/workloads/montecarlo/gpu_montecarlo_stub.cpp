// The Monte Carlo GPU kernels in a build without CUDA: each factory says so where the backend is
// asked for (NoCudaError naming the option, exit 6), as every GPU entry point does with no device.
#include "montecarlo/gpu_montecarlo.hpp"

#include "scalebench/base/error.hpp"

namespace scalebench {

std::unique_ptr<McKernel> make_gpu_montecarlo(const MonteCarloConfig& cfg, const Communicator& /*comm*/) {
  throw NoCudaError("montecarlo --backend " + to_string(cfg.backend));
}

std::unique_ptr<McKernel> make_gpu_library_montecarlo(const MonteCarloConfig& cfg, const Communicator& /*comm*/) {
  throw NoCudaError("montecarlo --backend " + to_string(cfg.backend));
}

}  // namespace scalebench
