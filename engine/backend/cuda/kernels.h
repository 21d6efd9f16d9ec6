#pragma once
// The CUDA kernel launchers, one group per kernel family (each family's bodies are in its
// *.cuh, its kernels and launchers in its *.cu). Every launcher queues work on `stream` and
// returns; shapes are checked by the caller (cuda_backend.cu). No CUDA headers: a stream is
// the runtime's opaque CUstream_st*.

#include <cstdint>

#include "engine/backend/adam_scalars.h"
#include "engine/backend/matrix_view.h"
#include "engine/backend/ngsgd_small.h"
#include "engine/backend/rbm_small.h"

struct CUstream_st;

namespace mavg::cuda {

using Stream = CUstream_st*;

// Where a kernel reports a bad input it cannot throw for (host-mapped memory, read by the
// backend after every synchronization). Written with single 64-bit stores, no atomics (which
// mapped host memory does not support everywhere): of several bad rows, one is reported whole.
struct KernelError {
  int64_t label_row;  // 0: none; else PackLabelError(row, label) (softmax.cuh)
  int64_t cols;       // the number of outputs
};

// elementwise.cu
void LaunchFill(Stream s, MatrixView x, float value);
void LaunchAxpby(Stream s, float alpha, ConstMatrixView x, float beta, MatrixView y);
void LaunchAddRowVector(Stream s, float alpha, ConstMatrixView row, float beta, MatrixView m);
void LaunchAdamUpdate(Stream s, const AdamScalars& a, ConstMatrixView g, MatrixView m, MatrixView v,
                      MatrixView p);

// activation.cu
enum class Activation { kSigmoid, kTanh, kRelu };
void LaunchActivation(Stream s, Activation f, ConstMatrixView x, MatrixView y);
void LaunchActivationBackward(Stream s, Activation f, ConstMatrixView y, ConstMatrixView dy,
                              MatrixView dx);

// softmax.cu. row_loss / row_correct: device scratch of x.rows doubles each.
void LaunchSoftmax(Stream s, ConstMatrixView x, MatrixView y);
void LaunchSoftmaxCrossEntropy(Stream s, ConstMatrixView logits, const int32_t* labels,
                               MatrixView grad, double* row_loss, double* row_correct,
                               double* stats, KernelError* error);

// reduce.cu. SumSquares leaves the total in *result (device); row_sums: x.rows doubles.
void LaunchSumRows(Stream s, float alpha, ConstMatrixView m, float beta, MatrixView out);
void LaunchSumSquares(Stream s, ConstMatrixView x, double* row_sums, double* result);

// row_ops.cu (the NG-SGD row products and scalings); LaunchRowSquares: in double.
void LaunchRowSumSquares(Stream s, ConstMatrixView x, MatrixView out);
void LaunchRowSquares(Stream s, ConstMatrixView x, double* out);
void LaunchAxpbyScaled(Stream s, const float* scalar, float alpha, ConstMatrixView x, float beta,
                       MatrixView y);
void LaunchMulRowsAdd(Stream s, ConstMatrixView scales, ConstMatrixView x, float beta,
                      MatrixView y);

// random.cu
void LaunchRandomUniform(Stream s, uint64_t seed, uint64_t offset, MatrixView x);
void LaunchRandomGaussian(Stream s, uint64_t seed, uint64_t offset, float stddev, MatrixView x);
void LaunchSampleBernoulli(Stream s, uint64_t seed, uint64_t offset, ConstMatrixView probs,
                           MatrixView out);

// small_programs.cu: one small program as one block of threads. PrepareSmallPrograms (once
// per device, that device current) lets NG-SGD's kernel use all the shared memory a block may
// opt into and returns it in doubles: LaunchNgsgdSmall's max_fast_doubles.
int64_t PrepareSmallPrograms();
void LaunchNgsgdSmall(Stream s, const NgsgdSmallTask& task, int64_t max_fast_doubles);
// count tasks sharing no memory they write, a block each, NgsgdSmallBatch::kMaxTasks a launch.
void LaunchNgsgdSmallBatch(Stream s, const NgsgdSmallTask* tasks, int count,
                           int64_t max_fast_doubles);
void LaunchRbmSmall(Stream s, const RbmSmallTask& task);

// replica_mean.cu: every replica (same shape) set to their rank-order mean; at most
// kMaxFusedReplicas (replica_mean.cuh).
void LaunchReplicaMean(Stream s, const MatrixView* replicas, int n);

}  // namespace mavg::cuda
