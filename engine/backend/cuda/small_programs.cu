// The small programs of NG-SGD (engine/backend/ngsgd_small.h) and of the RBM
// (engine/backend/rbm_small.h), each launched as one block of threads (block.cuh); a batch of
// NG-SGD's tasks (all layers' eigenproblems of a minibatch) as one launch, a block each. NG-SGD's
// subspace and reorthogonalisation steps keep their R x R working matrices in shared memory
// (past the default 48 KB where the device allows: about 100 KB at rank 80), where every Jacobi
// step reads and writes them; a rank too large for it runs from global memory.
#include "engine/backend/cuda/block.cuh"
#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"

namespace mavg::cuda {
namespace {

// NG-SGD's block: wide, since a Jacobi step of rank 80 has 4,800 independent items.
constexpr int kNgsgdThreads = 512;
constexpr int kRbmThreads = 256;

// A batch of tasks, a block each.
struct NgsgdProgram {
  template <typename Block>
  __device__ static void Run(Block& b, const NgsgdSmallBatch& batch) {
    RunNgsgdSmallBatchTask(b, batch, static_cast<int>(blockIdx.x));
  }
};
struct RbmProgram {
  template <typename Block>
  __device__ static void Run(Block& b, const RbmSmallTask& t) {
    RunRbmSmallTask(b, t);
  }
};

constexpr auto* kNgsgdKernel = &SmallProgramKernel<NgsgdProgram, kNgsgdThreads, NgsgdSmallBatch>;
constexpr auto* kRbmKernel = &SmallProgramKernel<RbmProgram, kRbmThreads, RbmSmallTask>;

}  // namespace

int64_t PrepareSmallPrograms() {
  int device = 0, optin = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kNgsgdKernel));
  const int dynamic = optin - static_cast<int>(attr.sharedSizeBytes);
  if (dynamic <= 0) return 0;
  CUDA_CHECK(
      cudaFuncSetAttribute(kNgsgdKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic));
  return dynamic / static_cast<int64_t>(sizeof(double));
}

void LaunchNgsgdSmallBatch(Stream s, const NgsgdSmallTask* tasks, int count,
                           int64_t max_fast_doubles) {
  for (int begin = 0; begin < count; begin += NgsgdSmallBatch::kMaxTasks) {
    const NgsgdSmallBatch batch = MakeNgsgdSmallBatch(tasks + begin, count - begin);
    const int64_t fast = NgsgdSmallBatchFastDoubles(batch, max_fast_doubles);
    kNgsgdKernel<<<batch.count, kNgsgdThreads, static_cast<size_t>(fast) * sizeof(double), s>>>(
        batch, fast);
    CUDA_CHECK(cudaGetLastError());
  }
}

void LaunchNgsgdSmall(Stream s, const NgsgdSmallTask& task, int64_t max_fast_doubles) {
  LaunchNgsgdSmallBatch(s, &task, 1, max_fast_doubles);
}

void LaunchRbmSmall(Stream s, const RbmSmallTask& task) {
  kRbmKernel<<<1, kRbmThreads, 0, s>>>(task, 0);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace mavg::cuda
