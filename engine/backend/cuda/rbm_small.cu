// The RBM's per-minibatch decisions (engine/backend/rbm_small.h) as one block of threads.
#include "engine/backend/cuda/block.cuh"
#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"
#include "engine/backend/rbm_small.h"

namespace mavg::cuda {
namespace {

struct RbmProgram {
  __device__ static void Run(CudaBlock& b, const RbmSmallTask& t) { RunRbmSmallTask(b, t); }
};

}  // namespace

void LaunchRbmSmall(Stream s, const RbmSmallTask& task) {
  SmallProgramKernel<RbmProgram><<<1, kBlockThreads, 0, s>>>(task);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace mavg::cuda
