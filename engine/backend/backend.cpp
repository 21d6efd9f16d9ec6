#include "engine/backend/backend.h"

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cuda/cuda_backend.h"

namespace mavg {

std::unique_ptr<Backend> CreateBackend(const BackendOptions& options) {
  switch (options.kind) {
    case DeviceKind::kCpu:
      return CreateCpuBackend(options.threads);
    case DeviceKind::kCuda:
      return CreateCudaBackend(options.device_index);
  }
  MAVG_FAIL("unknown device kind");
}

const char* DeviceKindName(DeviceKind kind) { return kind == DeviceKind::kCuda ? "cuda" : "cpu"; }

}  // namespace mavg
