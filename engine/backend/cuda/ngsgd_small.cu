// NG-SGD's small dense steps (engine/backend/ngsgd_small.h) as one block of threads.
#include "engine/backend/cuda/block.cuh"
#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"

namespace mavg::cuda {
namespace {

struct NgsgdProgram {
  __device__ static void Run(CudaBlock& b, const NgsgdSmallTask& t) { RunNgsgdSmallTask(b, t); }
};

}  // namespace

void LaunchNgsgdSmall(Stream s, const NgsgdSmallTask& task) {
  SmallProgramKernel<NgsgdProgram><<<1, kBlockThreads, 0, s>>>(task);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace mavg::cuda
