#pragma once
// One CUDA_CHECK for CUDA runtime and cuBLAS status codes: throws mavg::Error naming
// the failed call and the library's own message.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "engine/backend/cuda/cublas_api.cuh"
#include "engine/core/error.h"

namespace mavg::cuda {

inline const char* StatusString(cudaError_t s) { return cudaGetErrorString(s); }
inline const char* StatusString(cublasStatus_t s) { return Cublas().status_string(s); }
inline bool IsSuccess(cudaError_t s) { return s == cudaSuccess; }
inline bool IsSuccess(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS; }

}  // namespace mavg::cuda

#define CUDA_CHECK(call)                                                                    \
  do {                                                                                      \
    auto mavg_cuda_status_ = (call);                                                        \
    if (!::mavg::cuda::IsSuccess(mavg_cuda_status_)) {                                      \
      MAVG_FAIL("{} failed: {} ({})", #call, ::mavg::cuda::StatusString(mavg_cuda_status_), \
                static_cast<int>(mavg_cuda_status_));                                       \
    }                                                                                       \
  } while (0)
