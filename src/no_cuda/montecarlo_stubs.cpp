// Linked when scalebench is built without CUDA: the GPU Monte Carlo says so.
#include "scalebench/base/error.hpp"
#include "scalebench/cpu/montecarlo.hpp"

namespace scalebench {

std::unique_ptr<McKernel> make_cuda_montecarlo(const MonteCarloConfig&, const Communicator&) {
  throw NoCudaError("montecarlo --backend cuda");
}

std::unique_ptr<McKernel> make_curand_montecarlo(const MonteCarloConfig&, const Communicator&) {
  throw NoCudaError("montecarlo --backend curand");
}

}  // namespace scalebench
