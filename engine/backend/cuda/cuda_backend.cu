// CUDA build of the backend entry points. The device query is real; the training kernels and
// cuBLAS GEMMs of the CUDA backend are not written yet, so CreateCudaBackend refuses with a
// clear message instead of pretending.
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.cuh"

namespace mavg {

int CudaDeviceCount() {
  int count = 0;
  // No driver or no device is not an error here: it means zero usable devices.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error state
    return 0;
  }
  return count;
}

std::unique_ptr<Backend> CreateCudaBackend(int device_index) {
  const int count = CudaDeviceCount();
  MAVG_CHECK(count > 0, "device 'cuda' requested but no CUDA device is visible");
  MAVG_CHECK(device_index >= 0 && device_index < count,
             "device_index {} is out of range: {} CUDA device(s) visible", device_index, count);
  MAVG_FAIL("the CUDA training backend is not implemented yet in this version; use device: cpu");
}

}  // namespace mavg
