#pragma once
// The Block policy of backend/block.h on one CUDA block of kBlockThreads threads, and the
// kernel that runs a small program with it.

#include <math.h>

#include "engine/backend/block.h"

namespace mavg::cuda {

constexpr int kBlockThreads = 256;  // a power of two (the tree reductions below)

struct CudaBlock {
  static constexpr bool kHostEigen = false;
  double* red;  // [kBlockThreads] shared

  template <typename F>
  __device__ void For(int64_t n, F f) {
    for (int64_t i = threadIdx.x; i < n; i += kBlockThreads) f(i);
  }
  __device__ void Sync() { __syncthreads(); }
  template <typename F>
  __device__ double Sum(int64_t n, F f) {
    double p = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += kBlockThreads) p += f(i);
    return Reduce(p, [](double a, double b) { return a + b; });
  }
  template <typename F>
  __device__ double Max(int64_t n, F f) {
    double p = -HUGE_VAL;
    for (int64_t i = threadIdx.x; i < n; i += kBlockThreads) p = fmax(p, f(i));
    return Reduce(p, [](double a, double b) { return fmax(a, b); });
  }
  __device__ bool Leader() const { return threadIdx.x == 0; }

  template <typename Op>
  __device__ double Reduce(double p, Op op) {
    red[threadIdx.x] = p;
    __syncthreads();
    for (int s = kBlockThreads / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) red[threadIdx.x] = op(red[threadIdx.x], red[threadIdx.x + s]);
      __syncthreads();
    }
    const double r = red[0];
    __syncthreads();  // before red is reused
    return r;
  }
};

// Runs `Program::Run(block, task)` on one block.
template <typename Program, typename Task>
__global__ void SmallProgramKernel(Task task) {
  __shared__ double red[kBlockThreads];
  CudaBlock block{red};
  Program::Run(block, task);
}

}  // namespace mavg::cuda
