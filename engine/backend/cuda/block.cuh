#pragma once
// The Block policy of backend/block.h on one CUDA block of kThreads threads, and the kernel that
// runs a small program with it (its fast memory: the launch's dynamic shared memory).

#include <math.h>

#include <cub/block/block_reduce.cuh>

#include "engine/backend/block.h"

namespace mavg::cuda {

template <int kThreads>
struct CudaBlock {
  using BlockReduceDouble = cub::BlockReduce<double, kThreads>;
  static constexpr bool kHostEigen = false;
  typename BlockReduceDouble::TempStorage* temp;  // shared
  double* result;                                 // shared: a reduction's value, for every thread
  double* fast;                                   // [fast_doubles], shared (dynamic)
  int64_t fast_doubles;

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
  __device__ double* FastMemory(int64_t n) const { return n <= fast_doubles ? fast : nullptr; }

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

// Runs `Program::Run(block, task)` on every block of kThreads threads, with fast_doubles doubles
// of dynamic shared memory as each block's fast memory. The task is read where the launch put
// it (__grid_constant__: a batch of tasks indexed by block is not copied per thread).
template <typename Program, int kThreads, typename Task>
__global__ void __launch_bounds__(kThreads)
    SmallProgramKernel(const __grid_constant__ Task task, int64_t fast_doubles) {
  using Block = CudaBlock<kThreads>;
  __shared__ typename Block::BlockReduceDouble::TempStorage temp;
  __shared__ double result;
  extern __shared__ double fast[];
  Block block{&temp, &result, fast, fast_doubles};
  Program::Run(block, task);
}

}  // namespace mavg::cuda
