// Without CUDA there is no GPU to calibrate: callers check visible_gpu_count() first.
#include "scalebench/base/error.hpp"
#include "scalebench/gpu/gpu_calibrate.hpp"

namespace scalebench {

nlohmann::json calibrate_gpu(bool) { throw NoCudaError("GPU calibration"); }

}  // namespace scalebench
