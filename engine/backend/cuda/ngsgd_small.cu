// NG-SGD's small dense steps (engine/backend/ngsgd_small.h) as one block of kThreads threads.
#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"

namespace mavg::cuda {
namespace {

constexpr int kThreads = 256;  // a power of two (the tree reductions below)

// The Block policy of ngsgd_small.h on a CUDA block.
struct CudaBlock {
  double* red;  // [kThreads] shared

  template <typename F>
  __device__ void For(int64_t n, F f) {
    for (int64_t i = threadIdx.x; i < n; i += kThreads) f(i);
  }
  __device__ void Sync() { __syncthreads(); }
  template <typename F>
  __device__ double Sum(int64_t n, F f) {
    double p = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) p += f(i);
    return Reduce(p, [](double a, double b) { return a + b; });
  }
  template <typename F>
  __device__ double Max(int64_t n, F f) {
    double p = -HUGE_VAL;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) p = fmax(p, f(i));
    return Reduce(p, [](double a, double b) { return fmax(a, b); });
  }
  __device__ bool Leader() const { return threadIdx.x == 0; }
  __device__ void SymmetricEigen(double* a, double* v, double* rot, int r) {
    ngsgd_small::JacobiEigen(*this, a, v, rot, r);
  }

  template <typename Op>
  __device__ double Reduce(double p, Op op) {
    red[threadIdx.x] = p;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) red[threadIdx.x] = op(red[threadIdx.x], red[threadIdx.x + s]);
      __syncthreads();
    }
    const double r = red[0];
    __syncthreads();  // before red is reused
    return r;
  }
};

__global__ void NgsgdSmallKernel(NgsgdSmallTask task) {
  __shared__ double red[kThreads];
  CudaBlock block{red};
  RunNgsgdSmallTask(block, task);
}

}  // namespace

void LaunchNgsgdSmall(Stream s, const NgsgdSmallTask& task) {
  NgsgdSmallKernel<<<1, kThreads, 0, s>>>(task);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace mavg::cuda
