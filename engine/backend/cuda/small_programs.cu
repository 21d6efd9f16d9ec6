// The small programs of NG-SGD (engine/backend/ngsgd_small.h) and of the RBM
// (engine/backend/rbm_small.h), each launched as one block of threads (block.cuh).
#include "engine/backend/cuda/block.cuh"
#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"

namespace mavg::cuda {
namespace {

struct NgsgdProgram {
  __device__ static void Run(CudaBlock& b, const NgsgdSmallTask& t) { RunNgsgdSmallTask(b, t); }
};
struct RbmProgram {
  __device__ static void Run(CudaBlock& b, const RbmSmallTask& t) { RunRbmSmallTask(b, t); }
};

template <typename Program, typename Task>
void Launch(Stream s, const Task& task) {
  SmallProgramKernel<Program><<<1, kBlockThreads, 0, s>>>(task);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void LaunchNgsgdSmall(Stream s, const NgsgdSmallTask& task) { Launch<NgsgdProgram>(s, task); }
void LaunchRbmSmall(Stream s, const RbmSmallTask& task) { Launch<RbmProgram>(s, task); }

}  // namespace mavg::cuda
