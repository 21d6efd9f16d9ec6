#pragma once
// The Block policy of backend/block.h on one CUDA block of kBlockThreads threads, and the
// kernel that runs a small program with it.

#include <math.h>

#include <cub/block/block_reduce.cuh>

#include "engine/backend/block.h"

namespace mavg::cuda {

constexpr int kBlockThreads = 256;
using BlockReduceDouble = cub::BlockReduce<double, kBlockThreads>;

struct CudaBlock {
  static constexpr bool kHostEigen = false;
  BlockReduceDouble::TempStorage* temp;  // shared
  double* result;                        // shared: a reduction's value, for every thread

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

  // CUB's block reduction (thread 0 gets the value), broadcast to every thread.
  template <typename Op>
  __device__ double Reduce(double p, Op op) {
    const double r = BlockReduceDouble(*temp).Reduce(p, op);
    if (threadIdx.x == 0) *result = r;
    __syncthreads();
    const double all = *result;
    __syncthreads();  // before temp and result are reused
    return all;
  }
};

// Runs `Program::Run(block, task)` on one block.
template <typename Program, typename Task>
__global__ void SmallProgramKernel(Task task) {
  __shared__ BlockReduceDouble::TempStorage temp;
  __shared__ double result;
  CudaBlock block{&temp, &result};
  Program::Run(block, task);
}

}  // namespace mavg::cuda
