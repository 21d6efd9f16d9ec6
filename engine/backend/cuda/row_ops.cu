// The NG-SGD row products and scalings (bodies in row_ops.cuh): squared norms of rows, a block
// per row with a CUB block reduction, and rows scaled by a vector.
#include <cub/block/block_reduce.cuh>

#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"
#include "engine/backend/cuda/row_ops.cuh"

namespace mavg::cuda {
namespace {

template <typename Out>
__global__ void RowSquaresKernel(DevConstView x, int64_t rows, int64_t cols, Out* out) {
  using SumReduce = cub::BlockReduce<double, kRowThreads>;
  __shared__ typename SumReduce::TempStorage temp;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const double s =
        SumReduce(temp).Sum(RowSquaresPartial(x.Row(r), cols, threadIdx.x, kRowThreads));
    if (threadIdx.x == 0) out[r] = static_cast<Out>(s);
    __syncthreads();
  }
}

template <typename Out>
void Launch(Stream s, ConstMatrixView x, Out* out) {
  if (x.rows == 0) return;
  RowSquaresKernel<Out><<<RowBlocks(x.rows), kRowThreads, 0, s>>>(Dev(x), x.rows, x.cols, out);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void LaunchRowSumSquares(Stream s, ConstMatrixView x, MatrixView out) { Launch(s, x, out.data); }

void LaunchRowSquares(Stream s, ConstMatrixView x, double* out) { Launch(s, x, out); }

void LaunchAxpbyScaled(Stream s, const float* scalar, float alpha, ConstMatrixView x, float beta,
                       MatrixView y) {
  const Extent e = CommonExtent(x, y);
  LaunchElementwise(s, e.rows, e.cols,
                    AxpbyScaledBody{WithExtent(x, e), WithExtent(y, e), scalar, alpha, beta});
}

void LaunchMulRowsAdd(Stream s, ConstMatrixView scales, ConstMatrixView x, float beta,
                      MatrixView y) {
  LaunchElementwise(s, x.rows, x.cols, MulRowsAddBody{scales.data, Dev(x), Dev(y), beta});
}

}  // namespace mavg::cuda
