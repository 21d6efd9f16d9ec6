// CPU-only build: the CUDA entry points exist and say why they cannot work.
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/core/error.h"

namespace mavg {

std::unique_ptr<Backend> CreateCudaBackend(const BackendOptions& /*options*/) {
  MAVG_FAIL(
      "device 'cuda' requested but mavg was built without CUDA (configure with nvcc "
      "available, MAVG_WITH_CUDA=ON)");
}

int CudaDeviceCount() { return 0; }

std::vector<CudaDeviceInfo> CudaDevices() { return {}; }

CublasLibraryInfo ProbeCublas() { return {}; }

}  // namespace mavg
