// The GEMM workload's GPU multiplies by device (device_gemm.hpp): a table, not a virtual of the
// device seam, so that the device makes no workload's objects and a new device's multiply is one
// row here.
#include "gemm/device_gemm.hpp"

#include <string>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/gpu/device.hpp"

namespace scalebench {
namespace {

struct DeviceGemm {
  const char* device;  // DeviceBackend::name()
  std::unique_ptr<GpuGemm> (*make)(const GemmConfig&, const Communicator&);
};

constexpr DeviceGemm kDeviceGemms[] = {{"cuda", make_cublas_gemm}};

}  // namespace

std::unique_ptr<GpuGemm> make_device_gemm(const GemmConfig& cfg, const Communicator& comm) {
  const std::string asked_by = "--backend " + to_string(cfg.backend);
  // NoCudaError (exit 6) when no device is registered, as every GPU entry point says it.
  const std::string device = device_backend(asked_by).name();
  for (const DeviceGemm& d : kDeviceGemms) {
    if (device == d.device) return d.make(cfg, comm);
  }
  throw Error(ExitCode::internal,
              fmt::format("{}: the GEMM workload has no multiply for the device \"{}\"", asked_by, device));
}

}  // namespace scalebench
