#pragma once
// RAII owners of CUDA runtime and cuBLAS resources: a stream, a cuBLAS handle bound to it, an
// event, and page-locked host memory mapped into the device's address space. Destructors
// ignore errors (they run during unwinding and at exit, when the context may be gone).

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <utility>

#include "engine/backend/cuda/cuda_check.cuh"

namespace mavg::cuda {

class StreamHandle {
 public:
  StreamHandle() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~StreamHandle() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;
  cudaStream_t Get() const { return stream_; }
  void Synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class EventHandle {
 public:
  EventHandle() { CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~EventHandle() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  EventHandle(const EventHandle&) = delete;
  EventHandle& operator=(const EventHandle&) = delete;
  cudaEvent_t Get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class CublasHandle {
 public:
  CublasHandle(cudaStream_t stream, bool tf32) {
    const CublasApi& cublas = Cublas();
    CUDA_CHECK(cublas.create(&handle_));
    CUDA_CHECK(cublas.set_stream(handle_, stream));
    // FP32 GEMMs stay FP32 unless TF32 is asked for (it keeps 10 mantissa bits of the inputs).
    CUDA_CHECK(
        cublas.set_math_mode(handle_, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  }
  ~CublasHandle() {
    if (handle_ != nullptr) Cublas().destroy(handle_);
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t Get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// One T in page-locked host memory that kernels write through a device pointer (for error
// reports the host reads after a synchronization, without a copy).
template <typename T>
class MappedHostValue {
 public:
  MappedHostValue() {
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), sizeof(T), cudaHostAllocMapped));
    *host_ = T{};
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
  }
  ~MappedHostValue() {
    if (host_ != nullptr) cudaFreeHost(host_);
  }
  MappedHostValue(const MappedHostValue&) = delete;
  MappedHostValue& operator=(const MappedHostValue&) = delete;
  T& Host() { return *host_; }
  T* Device() const { return device_; }

 private:
  T* host_ = nullptr;
  T* device_ = nullptr;
};

}  // namespace mavg::cuda
