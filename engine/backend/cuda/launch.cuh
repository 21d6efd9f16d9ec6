#pragma once
// Launch shapes shared by the kernel families: an element-wise body over a matrix (a 2-D grid,
// blocks across columns and rows, grid-stride in both so any size is covered) and the block
// size of the per-row kernels. CUDA-only (the bodies themselves are in the plain *.cuh files).

#include <cuda_runtime.h>

#include <algorithm>

#include "engine/backend/cuda/cuda_check.cuh"
#include "engine/backend/cuda/dev_view.cuh"

namespace mavg::cuda {

constexpr int kElementThreads = 256;
constexpr int kRowThreads = 256;  // threads per row in row kernels (a CUB block reduction)
constexpr int64_t kMaxGridX = 4096, kMaxGridY = 65535;

template <typename Body>
__global__ void ElementwiseKernel(Body body, int64_t rows, int64_t cols) {
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t cstep = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    for (int64_t c = c0; c < cols; c += cstep) body(r, c);
  }
}

// body(r, c) for every element of a rows x cols matrix, on `stream`.
template <typename Body>
void LaunchElementwise(cudaStream_t stream, int64_t rows, int64_t cols, const Body& body) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 grid(
      static_cast<unsigned>(std::min((cols + kElementThreads - 1) / kElementThreads, kMaxGridX)),
      static_cast<unsigned>(std::min(rows, kMaxGridY)));
  ElementwiseKernel<<<grid, kElementThreads, 0, stream>>>(body, rows, cols);
  CUDA_CHECK(cudaGetLastError());
}

// Blocks for a kernel with one block per row (grid-stride over rows beyond the limit).
inline unsigned RowBlocks(int64_t rows) {
  return static_cast<unsigned>(std::min<int64_t>(rows, kMaxGridY * 16));
}

}  // namespace mavg::cuda
