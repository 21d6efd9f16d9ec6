// Reductions (bodies in reduce.cuh): column sums and the sum of squares (over row_ops.cu's
// per-row squares).
#include <cub/block/block_reduce.cuh>

#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"
#include "engine/backend/cuda/reduce.cuh"

namespace mavg::cuda {
namespace {

__global__ void ColumnSumKernel(ColumnSumBody body, int64_t cols) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
       c += step) {
    body(c);
  }
}

__global__ void SumKernel(const double* values, int64_t n, double* result) {
  using SumReduce = cub::BlockReduce<double, kRowThreads>;
  __shared__ typename SumReduce::TempStorage temp;
  const double s = SumReduce(temp).Sum(StridedSumPartial(values, n, threadIdx.x, kRowThreads));
  if (threadIdx.x == 0) *result = s;
}

}  // namespace

void LaunchSumRows(Stream s, float alpha, ConstMatrixView m, float beta, MatrixView out) {
  if (m.cols == 0) return;
  const auto blocks = static_cast<unsigned>(
      std::min<int64_t>((m.cols + kElementThreads - 1) / kElementThreads, kMaxGridX));
  ColumnSumKernel<<<blocks, kElementThreads, 0, s>>>(
      ColumnSumBody{Dev(m), m.rows, out.data, alpha, beta}, m.cols);
  CUDA_CHECK(cudaGetLastError());
}

void LaunchSumSquares(Stream s, ConstMatrixView x, double* row_sums, double* result) {
  LaunchRowSquares(s, x, row_sums);
  SumKernel<<<1, kRowThreads, 0, s>>>(row_sums, x.rows, result);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace mavg::cuda
