#pragma once
// The Backend interface: every numerical operation the algorithms need, at the level of whole
// matrices, for one device. Algorithm code (nn/, optim/, pretrain/, train/) calls only this
// interface, so the CPU (OpenBLAS) and CUDA (cuBLAS) backends are interchangeable.
// See engine/backend/README.md for the conventions and how to add a backend.
//
// Conventions:
//   * Row-major matrices, addressed through MatrixView (data, rows, cols, stride).
//   * Views passed to a backend must point to memory that backend allocated.
//   * Operations are asynchronous with respect to the host on devices that allow it; results
//     that come back to the host (CopyToHost, reductions returning a value) synchronize. A bad
//     input only a kernel can see (a label outside the outputs) throws at the next
//     synchronization on such devices, at once on the CPU.
//   * Unless stated otherwise, outputs must not overlap inputs.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/adam_scalars.h"
#include "engine/backend/matrix_view.h"
#include "engine/backend/ngsgd_small.h"
#include "engine/backend/rbm_small.h"

namespace mavg {

enum class DeviceKind { kCpu, kCuda };

struct BackendOptions {
  DeviceKind kind = DeviceKind::kCpu;
  int device_index = 0;  // CUDA device ordinal
  int threads = 0;       // CPU threads for BLAS and element-wise work (0: all cores)
  bool tf32 = false;     // CUDA: let cuBLAS use TF32 tensor cores for FP32 GEMMs
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual DeviceKind Kind() const = 0;
  // Human-readable description, e.g. "cpu (OpenBLAS 0.3.21, 2 threads)".
  virtual std::string Describe() const = 0;
  // The GEMM kernels it runs, short, for comparing runs' timings: "OpenBLAS Zen",
  // "OpenBLAS Cooperlake", "cuBLAS FP32", "cuBLAS TF32".
  virtual std::string Kernels() const = 0;

  // ---- Memory ------------------------------------------------------------------------------
  virtual void* AllocateBytes(size_t bytes) = 0;
  virtual void FreeBytes(void* ptr) = 0;
  virtual void CopyBytesToDevice(void* dst, const void* src, size_t bytes) = 0;
  virtual void CopyBytesToHost(void* dst, const void* src, size_t bytes) = 0;
  virtual void CopyBytesOnDevice(void* dst, const void* src, size_t bytes) = 0;
  // Waits for all queued work.
  virtual void Synchronize() = 0;
  // Whether device memory is host memory (the CPU): the host may read what an op wrote as soon
  // as it returns, so code may skip work that a result it can read makes unnecessary.
  virtual bool HostReadsDeviceMemory() const { return false; }
  // Host memory for staging transfers (page-locked on CUDA: faster copies). A host source may
  // be reused as soon as the copy call returns, whatever memory it is in.
  virtual void* AllocateHostStaging(size_t bytes);
  virtual void FreeHostStaging(void* ptr);

  // Host [rows x cols] contiguous <-> device view.
  virtual void CopyFromHost(const float* src, MatrixView dst) = 0;
  virtual void CopyToHost(ConstMatrixView src, float* dst) = 0;

  // ---- Host and device at once: asynchronous copies and events -------------------------------
  // Whether operations return before their work is done (a GPU: the host may prepare the next
  // minibatch while the device steps). The CPU's are done when they return.
  virtual bool RunsAsynchronously() const { return false; }
  // Queues a copy from staging memory (AllocateHostStaging) on the copy queue and returns
  // without waiting for it. The copy queue runs beside the work queue (a GPU: a stream of its
  // own, so the copy overlaps the work queued before): the source must stay unchanged until an
  // event recorded on the copy queue after this call has completed (RecordCopiesEvent,
  // WaitEvent); the destination must not be in use by queued work unless the copy queue waits
  // for it first (CopiesWaitFor); work that reads the destination waits for the copy first
  // (WorkWaitsFor). The CPU's copy is done when it returns.
  virtual void CopyFromStagingAsync(const void* staging, void* dst, size_t bytes) {
    CopyBytesToDevice(dst, staging, bytes);
  }
  // Copies queued after this call start once the work the event marks is done (no host wait).
  virtual void CopiesWaitFor(void* /*event*/) {}
  // Marks the copies queued so far on the copy queue.
  virtual void RecordCopiesEvent(void* event) { RecordEvent(event); }
  // Work queued after this call starts once what the event marks is done (no host wait).
  virtual void WorkWaitsFor(void* /*event*/) {}
  // Events mark a point in the queue of work (BackendEvent, device_buffer.h, owns one). On a
  // backend whose operations finish in the call, an event is the host clock when recorded.
  virtual void* CreateEvent();
  virtual void DestroyEvent(void* event);
  // Marks the work queued so far: the event completes when that work is done.
  virtual void RecordEvent(void* event);
  // Waits until the work the event marks is done (at once if it was never recorded). Errors
  // the device's kernels report are raised by Synchronize, not here (later work may be running).
  virtual void WaitEvent(void* event);
  // Seconds from `start`'s completion to `end`'s (waits for `end`; both recorded): the device
  // time of the work queued between them.
  virtual double SecondsBetween(void* start, void* end);

  // ---- BLAS-like -----------------------------------------------------------------------------
  // c = alpha * op(a) * op(b) + beta * c, op(x) = x or x^T. (beta == 0 ignores c's contents.)
  virtual void Gemm(bool trans_a, bool trans_b, float alpha, ConstMatrixView a, ConstMatrixView b,
                    float beta, MatrixView c) = 0;
  // dst = src (same shape; may have different strides).
  virtual void Copy(ConstMatrixView src, MatrixView dst) = 0;
  virtual void Fill(MatrixView x, float value) = 0;
  // y = alpha * x + beta * y (beta == 0 ignores y's contents). x may be y itself (a scaling).
  virtual void Axpby(float alpha, ConstMatrixView x, float beta, MatrixView y) = 0;
  // m = beta * m + alpha * row, broadcast over rows; row is [1 x m.cols].
  virtual void AddRowVector(float alpha, ConstMatrixView row, float beta, MatrixView m) = 0;
  // out = beta * out + alpha * (sum over the rows of m); out is [1 x m.cols].
  virtual void SumRows(float alpha, ConstMatrixView m, float beta, MatrixView out) = 0;
  // Sum of squares of all elements (synchronizes).
  virtual double SumSquares(ConstMatrixView x) = 0;
  // out[0][i] = sum_j x[i][j]^2 (squared norm of every row); out is [1 x x.rows].
  virtual void RowSumSquares(ConstMatrixView x, MatrixView out) = 0;
  // y = beta * y + diag(scales) * x, i.e. row i of x scaled by scales[0][i]; scales is
  // [1 x x.rows]. (beta == 0 ignores y's contents.)
  virtual void MulRowsAdd(ConstMatrixView scales, ConstMatrixView x, float beta, MatrixView y) = 0;
  // Every replica (all of one shape) set to their mean (((r0 + r1) + r2) + ...) * (1/N), summed
  // in this order in float: the operations of a deterministic all-reduce and its scaling, so
  // simulated workers match MPI ranks bit for bit. The default is a sequence of Axpby calls.
  virtual void MeanOfReplicas(const std::vector<MatrixView>& replicas);
  // y = alpha * (*scalar) * x + beta * y, the scalar in this backend's memory (a result of an
  // earlier op: no round trip to the host); beta == 0 ignores y's contents; x may be y.
  virtual void AxpbyScaled(const float* scalar, float alpha, ConstMatrixView x, float beta,
                           MatrixView y) = 0;
  // One Adam step (AdamScalars) on every element: the gradient g, the moments m and v and the
  // parameters p, all of one shape (p and g must not overlap; each element on its own, so the
  // bits do not depend on how the work is split).
  virtual void AdamUpdate(const AdamScalars& s, ConstMatrixView g, MatrixView m, MatrixView v,
                          MatrixView p) = 0;
  // One of NG-SGD's small dense steps (backend/ngsgd_small.h), on this backend's memory.
  virtual void RunNgsgdSmall(const NgsgdSmallTask& task) = 0;
  // Small steps that share no memory they write (those of different preconditioners), all
  // queued at once: one launch of a block each on a GPU. The default runs them one by one, in
  // order; each gives the bits it gives alone.
  virtual void RunNgsgdSmallBatch(const std::vector<NgsgdSmallTask>& tasks);
  // The RBM's per-minibatch decisions (backend/rbm_small.h), on this backend's memory.
  virtual void RunRbmSmall(const RbmSmallTask& task) = 0;

  // ---- Random numbers ------------------------------------------------------------------------
  // Counter-based (engine/backend/counter_rng.h): element i of x in row-major order is draw
  // offset + i of the stream `seed`, the same on every backend. Callers advance `offset` by
  // x.rows * x.cols per fill and use distinct seeds for distinct purposes.
  // x[i] ~ U[0, 1).
  virtual void RandomUniform(uint64_t seed, uint64_t offset, MatrixView x) = 0;
  // x[i] ~ N(0, stddev^2).
  virtual void RandomGaussian(uint64_t seed, uint64_t offset, float stddev, MatrixView x) = 0;
  // out[i] = 1 if U[0, 1) draw i < probs[i], else 0 (Kaldi's CuRand::BinarizeProbs); out may
  // alias probs.
  virtual void SampleBernoulli(uint64_t seed, uint64_t offset, ConstMatrixView probs,
                               MatrixView out) = 0;

  // ---- Activations (y may alias x; dx may alias dy) ------------------------------------------
  virtual void Sigmoid(ConstMatrixView x, MatrixView y) = 0;
  virtual void Tanh(ConstMatrixView x, MatrixView y) = 0;
  virtual void Relu(ConstMatrixView x, MatrixView y) = 0;
  // Row-wise softmax.
  virtual void Softmax(ConstMatrixView x, MatrixView y) = 0;
  // dx = dy * f'(x), written in terms of the forward output y.
  virtual void SigmoidBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) = 0;
  virtual void TanhBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) = 0;
  virtual void ReluBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) = 0;

  // ---- Loss ----------------------------------------------------------------------------------
  // Softmax + cross-entropy against integer labels (device array, one per row), numerically
  // stable (log-sum-exp with the row maximum). Adds to stats (device array of 3 doubles):
  // [0] += sum over rows of -log p(label), [1] += rows whose arg-max equals the label
  // (first maximum on ties), [2] += rows. If grad is not empty it receives softmax - onehot,
  // i.e. the gradient of the *summed* loss (Kaldi's convention); grad may alias logits.
  virtual void SoftmaxCrossEntropy(ConstMatrixView logits, const int32_t* labels, MatrixView grad,
                                   double* stats) = 0;
};

// Creates the backend for `options`; throws with a clear message when it is unavailable
// (e.g. "built without CUDA").
std::unique_ptr<Backend> CreateBackend(const BackendOptions& options);

// Number of usable CUDA devices (0 in a CPU-only build or without a driver/device).
int CudaDeviceCount();

const char* DeviceKindName(DeviceKind kind);

}  // namespace mavg
