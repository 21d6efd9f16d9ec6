// Softmax and softmax + cross-entropy: a block per row, CUB block reductions between the
// phases of softmax.cuh; the loss and accuracy of each row go to scratch and are added to the
// stats by one block in a fixed order (no atomics: the sums do not depend on timing).
#include <cub/block/block_reduce.cuh>

#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"
#include "engine/backend/cuda/reduce.cuh"
#include "engine/backend/cuda/softmax.cuh"

namespace mavg::cuda {
namespace {

__global__ void SoftmaxKernel(DevConstView x, DevView y, int64_t rows, int64_t cols) {
  using ArgMaxReduce = cub::BlockReduce<ArgMax, kRowThreads>;
  using SumReduce = cub::BlockReduce<float, kRowThreads>;
  __shared__ union {
    typename ArgMaxReduce::TempStorage argmax;
    typename SumReduce::TempStorage sum;
  } temp;
  __shared__ float mx, inv;
  const int tid = threadIdx.x;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x.Row(r);
    const ArgMax m =
        ArgMaxReduce(temp.argmax).Reduce(RowArgMaxPartial(xr, cols, tid, kRowThreads), ArgMaxOp{});
    if (tid == 0) mx = m.value;
    __syncthreads();
    const float s = SumReduce(temp.sum).Sum(RowExpSumPartial(xr, cols, mx, tid, kRowThreads));
    if (tid == 0) inv = 1.0f / s;
    __syncthreads();
    SoftmaxWrite(xr, y.Row(r), cols, mx, inv, tid, kRowThreads);
    __syncthreads();  // before the next row reuses mx, inv and temp
  }
}

__global__ void CrossEntropyKernel(DevConstView x, const int32_t* labels, DevView grad,
                                   bool want_grad, int64_t rows, int64_t cols, double* row_loss,
                                   double* row_correct, KernelError* error) {
  using ArgMaxReduce = cub::BlockReduce<ArgMax, kRowThreads>;
  using SumReduce = cub::BlockReduce<double, kRowThreads>;
  __shared__ union {
    typename ArgMaxReduce::TempStorage argmax;
    typename SumReduce::TempStorage sum;
  } temp;
  __shared__ float mx;
  __shared__ double inv;
  const int tid = threadIdx.x;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int32_t label = labels[r];
    if (!LabelValid(label, cols)) {  // uniform over the block: every thread skips the row
      if (tid == 0) {
        error->cols = cols;
        error->label_row = PackLabelError(r, label);
        row_loss[r] = 0.0;
        row_correct[r] = 0.0;
      }
      continue;
    }
    const float* xr = x.Row(r);
    const ArgMax m =
        ArgMaxReduce(temp.argmax).Reduce(RowArgMaxPartial(xr, cols, tid, kRowThreads), ArgMaxOp{});
    if (tid == 0) mx = m.value;
    __syncthreads();
    const double s =
        SumReduce(temp.sum).Sum(RowExpSumPartialDouble(xr, cols, mx, tid, kRowThreads));
    if (tid == 0) {
      inv = 1.0 / s;
      row_loss[r] = RowCrossEntropy(s, xr[label], mx);  // before the gradient overwrites x
      row_correct[r] = m.index == label ? 1.0 : 0.0;
    }
    __syncthreads();
    if (want_grad) {
      CrossEntropyGradWrite(xr, grad.Row(r), cols, mx, static_cast<float>(inv), label, tid,
                            kRowThreads);
    }
    __syncthreads();
  }
}

// stats[0] += sum of row_loss, stats[1] += sum of row_correct, stats[2] += rows; one block.
__global__ void AddRowStatsKernel(const double* row_loss, const double* row_correct, int64_t rows,
                                  double* stats) {
  using SumReduce = cub::BlockReduce<double, kRowThreads>;
  __shared__ typename SumReduce::TempStorage temp;
  const int tid = threadIdx.x;
  const double loss = SumReduce(temp).Sum(StridedSumPartial(row_loss, rows, tid, kRowThreads));
  __syncthreads();
  const double correct =
      SumReduce(temp).Sum(StridedSumPartial(row_correct, rows, tid, kRowThreads));
  if (tid == 0) {
    stats[0] += loss;
    stats[1] += correct;
    stats[2] += static_cast<double>(rows);
  }
}

}  // namespace

void LaunchSoftmax(Stream s, ConstMatrixView x, MatrixView y) {
  if (x.Empty()) return;
  SoftmaxKernel<<<RowBlocks(x.rows), kRowThreads, 0, s>>>(Dev(x), Dev(y), x.rows, x.cols);
  CUDA_CHECK(cudaGetLastError());
}

void LaunchSoftmaxCrossEntropy(Stream s, ConstMatrixView logits, const int32_t* labels,
                               MatrixView grad, double* row_loss, double* row_correct,
                               double* stats, KernelError* error) {
  // Every row writes its scratch, rows without columns too: all their labels are outside the
  // (zero) outputs, which the kernel reports, as the CPU backend does.
  if (logits.rows > 0) {
    CrossEntropyKernel<<<RowBlocks(logits.rows), kRowThreads, 0, s>>>(
        Dev(logits), labels, Dev(grad), !grad.Empty(), logits.rows, logits.cols, row_loss,
        row_correct, error);
    CUDA_CHECK(cudaGetLastError());
  }
  AddRowStatsKernel<<<1, kRowThreads, 0, s>>>(row_loss, row_correct, logits.rows, stats);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace mavg::cuda
