// The CUDA backend: cuBLAS GEMMs (row-major mapping in gemm_mapping.cuh), mavg's kernels
// (kernels.h, one .cu/.cuh pair per family), device memory from a caching allocator over
// cudaMalloc, all work queued on one stream. Shape checks are the CPU backend's
// (shape_checks.h); bad labels are caught by the kernel and thrown at the next synchronization.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "engine/backend/caching_allocator.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.cuh"
#include "engine/backend/cuda/cuda_resources.cuh"
#include "engine/backend/cuda/gemm_mapping.cuh"
#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/replica_mean.cuh"
#include "engine/backend/cuda/softmax.cuh"
#include "engine/backend/shape_checks.h"

namespace mavg {
namespace {

using cuda::Activation;

// True when `p` is page-locked host memory (an asynchronous copy from it is still reading when
// the call returns).
bool IsPinned(const void* p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, bool tf32)
      : device_(device),
        tf32_(tf32),
        device_guard_(device),
        cublas_(stream_.Get(), tf32),
        allocator_(CachingAllocator::RawAllocator{
            [](size_t bytes) -> void* {
              void* p = nullptr;
              if (cudaMalloc(&p, bytes) != cudaSuccess) {
                cudaGetLastError();  // out of memory is reported by the allocator
                return nullptr;
              }
              return p;
            },
            [](void* p) { cudaFree(p); }, fmt::format("cuda:{}", device)}) {
    CUDA_CHECK(cudaGetDeviceProperties(&props_, device));
    small_fast_doubles_ = cuda::PrepareSmallPrograms();
  }
  ~CudaBackend() override {
    cudaStreamSynchronize(copy_stream_.Get());
    cudaStreamSynchronize(stream_.Get());
    allocator_.Free(scratch_);
  }

  DeviceKind Kind() const override { return DeviceKind::kCuda; }

  std::string Kernels() const override { return tf32_ ? "cuBLAS TF32" : "cuBLAS FP32"; }
  std::string Describe() const override {
    return fmt::format("cuda:{} ({}, {:.1f} GiB, compute {}.{}; cuBLAS {}; tf32 {})", device_,
                       props_.name, static_cast<double>(props_.totalGlobalMem) / (1 << 30),
                       props_.major, props_.minor, cuda::Cublas().version, tf32_ ? "on" : "off");
  }

  // ---- Memory -------------------------------------------------------------------------------
  void* AllocateBytes(size_t bytes) override { return allocator_.Allocate(bytes); }
  void FreeBytes(void* ptr) override { allocator_.Free(ptr); }
  void CopyBytesToDevice(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_.Get()));
    AfterHostSourceCopy(src);
  }
  void CopyBytesToHost(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_.Get()));
    Synchronize();
  }
  void CopyBytesOnDevice(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_.Get()));
  }
  void Synchronize() override {
    copy_stream_.Synchronize();
    stream_.Synchronize();
    ThrowKernelError();
  }
  void* AllocateHostStaging(size_t bytes) override {
    void* p = nullptr;
    CUDA_CHECK(cudaMallocHost(&p, std::max<size_t>(bytes, 1)));
    return p;
  }
  void FreeHostStaging(void* ptr) override { cudaFreeHost(ptr); }

  void CopyFromHost(const float* src, MatrixView dst) override {
    if (dst.Empty()) return;
    CopyMatrix(ConstMatrixView(src, dst.rows, dst.cols), dst, cudaMemcpyHostToDevice);
    AfterHostSourceCopy(src);
  }
  void CopyToHost(ConstMatrixView src, float* dst) override {
    if (src.Empty()) return;
    CopyMatrix(src, MatrixView(dst, src.rows, src.cols), cudaMemcpyDeviceToHost);
    Synchronize();
  }

  // ---- Asynchronous copies and events -------------------------------------------------------
  bool RunsAsynchronously() const override { return true; }
  void CopyFromStagingAsync(const void* staging, void* dst, size_t bytes) override {
    if (bytes == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, staging, bytes, cudaMemcpyHostToDevice, copy_stream_.Get()));
  }
  void CopiesWaitFor(void* event) override {  // a never recorded event: no wait
    CUDA_CHECK(cudaStreamWaitEvent(copy_stream_.Get(), static_cast<cudaEvent_t>(event), 0));
  }
  void RecordCopiesEvent(void* event) override {
    CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), copy_stream_.Get()));
  }
  void WorkWaitsFor(void* event) override {
    CUDA_CHECK(cudaStreamWaitEvent(stream_.Get(), static_cast<cudaEvent_t>(event), 0));
  }
  void* CreateEvent() override {
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreate(&event));  // with timing
    return event;
  }
  void DestroyEvent(void* event) override {
    if (event != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event));
  }
  void RecordEvent(void* event) override {
    CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), stream_.Get()));
  }
  void WaitEvent(void* event) override {
    // Not ThrowKernelError: kernels queued after the event may be writing the error record.
    CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  }
  double SecondsBetween(void* start, void* end) override {
    WaitEvent(end);
    float ms = 0.0f;
    CUDA_CHECK(
        cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
    return static_cast<double>(ms) * 1e-3;
  }

  // ---- BLAS-like ----------------------------------------------------------------------------
  void Gemm(bool trans_a, bool trans_b, float alpha, ConstMatrixView a, ConstMatrixView b,
            float beta, MatrixView c) override {
    const GemmDims d = CheckGemm(trans_a, trans_b, a, b, c);
    if (d.m == 0 || d.n == 0) return;
    if (d.k == 0) {
      if (beta == 0.0f) {
        Fill(c, 0.0f);
      } else {
        Axpby(0.0f, c, beta, c);
      }
      return;
    }
    const cuda::ColumnMajorGemm g = cuda::MapRowMajorGemm(trans_a, trans_b, a, b, c);
    CUDA_CHECK(cuda::Cublas().sgemm(cublas_.Get(), g.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N,
                                    g.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N, Int(g.m), Int(g.n),
                                    Int(g.k), &alpha, g.first, Int(g.ld_first), g.second,
                                    Int(g.ld_second), &beta, g.c, Int(g.ldc)));
  }

  void Copy(ConstMatrixView src, MatrixView dst) override {
    CheckSameShape("Copy", src, dst);
    if (src.Empty()) return;
    CopyMatrix(src, dst, cudaMemcpyDeviceToDevice);
  }
  void Fill(MatrixView x, float value) override { cuda::LaunchFill(S(), x, value); }
  void Axpby(float alpha, ConstMatrixView x, float beta, MatrixView y) override {
    CheckSameShape("Axpby", x, y);
    cuda::LaunchAxpby(S(), alpha, x, beta, y);
  }
  void AdamUpdate(const AdamScalars& a, ConstMatrixView g, MatrixView m, MatrixView v,
                  MatrixView p) override {
    CheckSameShape("AdamUpdate", g, m);
    CheckSameShape("AdamUpdate", g, v);
    CheckSameShape("AdamUpdate", g, p);
    cuda::LaunchAdamUpdate(S(), a, g, m, v, p);
  }
  void AddRowVector(float alpha, ConstMatrixView row, float beta, MatrixView m) override {
    CheckRowVector("AddRowVector", "row", row, m.cols);
    cuda::LaunchAddRowVector(S(), alpha, row, beta, m);
  }
  void SumRows(float alpha, ConstMatrixView m, float beta, MatrixView out) override {
    CheckRowVector("SumRows", "out", out, m.cols);
    cuda::LaunchSumRows(S(), alpha, m, beta, out);
  }
  double SumSquares(ConstMatrixView x) override {
    double* scratch = Scratch(x.rows + 1);
    cuda::LaunchSumSquares(S(), x, scratch + 1, scratch);
    double total = 0.0;
    CopyBytesToHost(&total, scratch, sizeof(double));
    return total;
  }
  void RowSumSquares(ConstMatrixView x, MatrixView out) override {
    CheckRowVector("RowSumSquares", "out", out, x.rows);
    cuda::LaunchRowSumSquares(S(), x, out);
  }
  void MulRowsAdd(ConstMatrixView scales, ConstMatrixView x, float beta, MatrixView y) override {
    CheckSameShape("MulRowsAdd", x, y);
    CheckRowVector("MulRowsAdd", "scales", scales, x.rows);
    cuda::LaunchMulRowsAdd(S(), scales, x, beta, y);
  }
  void MeanOfReplicas(const std::vector<MatrixView>& replicas) override {
    MAVG_CHECK(!replicas.empty(), "no replicas to average");
    if (replicas.size() > static_cast<size_t>(cuda::kMaxFusedReplicas)) {
      Backend::MeanOfReplicas(replicas);
      return;
    }
    for (const MatrixView& r : replicas) CheckSameShape("MeanOfReplicas", replicas[0], r);
    cuda::LaunchReplicaMean(S(), replicas.data(), static_cast<int>(replicas.size()));
  }

  void AxpbyScaled(const float* scalar, float alpha, ConstMatrixView x, float beta,
                   MatrixView y) override {
    CheckSameShape("AxpbyScaled", x, y);
    cuda::LaunchAxpbyScaled(S(), scalar, alpha, x, beta, y);
  }
  void RunNgsgdSmall(const NgsgdSmallTask& task) override {
    cuda::LaunchNgsgdSmall(S(), task, small_fast_doubles_);
  }
  void RunNgsgdSmallBatch(const std::vector<NgsgdSmallTask>& tasks) override {
    cuda::LaunchNgsgdSmallBatch(S(), tasks.data(), static_cast<int>(tasks.size()),
                                small_fast_doubles_);
  }
  void RunRbmSmall(const RbmSmallTask& task) override { cuda::LaunchRbmSmall(S(), task); }

  // ---- Random numbers -----------------------------------------------------------------------
  void RandomUniform(uint64_t seed, uint64_t offset, MatrixView x) override {
    cuda::LaunchRandomUniform(S(), seed, offset, x);
  }
  void RandomGaussian(uint64_t seed, uint64_t offset, float stddev, MatrixView x) override {
    cuda::LaunchRandomGaussian(S(), seed, offset, stddev, x);
  }
  void SampleBernoulli(uint64_t seed, uint64_t offset, ConstMatrixView probs,
                       MatrixView out) override {
    CheckSameShape("SampleBernoulli", probs, out);
    cuda::LaunchSampleBernoulli(S(), seed, offset, probs, out);
  }

  // ---- Activations and loss -----------------------------------------------------------------
  void Sigmoid(ConstMatrixView x, MatrixView y) override { Apply(Activation::kSigmoid, x, y); }
  void Tanh(ConstMatrixView x, MatrixView y) override { Apply(Activation::kTanh, x, y); }
  void Relu(ConstMatrixView x, MatrixView y) override { Apply(Activation::kRelu, x, y); }
  void Softmax(ConstMatrixView x, MatrixView y) override {
    CheckSameShape("Softmax", x, y);
    cuda::LaunchSoftmax(S(), x, y);
  }
  void SigmoidBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) override {
    ApplyBackward(Activation::kSigmoid, y, dy, dx);
  }
  void TanhBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) override {
    ApplyBackward(Activation::kTanh, y, dy, dx);
  }
  void ReluBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) override {
    ApplyBackward(Activation::kRelu, y, dy, dx);
  }

  void SoftmaxCrossEntropy(ConstMatrixView logits, const int32_t* labels, MatrixView grad,
                           double* stats) override {
    if (!grad.Empty()) CheckSameShape("SoftmaxCrossEntropy", logits, grad);
    double* scratch = Scratch(2 * logits.rows);
    cuda::LaunchSoftmaxCrossEntropy(S(), logits, labels, grad, scratch, scratch + logits.rows,
                                    stats, error_.Device());
  }

 private:
  // Makes `device` current before any other member is built.
  struct DeviceGuard {
    explicit DeviceGuard(int device) { CUDA_CHECK(cudaSetDevice(device)); }
  };

  cuda::Stream S() const { return stream_.Get(); }
  static size_t Pitch(int64_t elements) { return static_cast<size_t>(elements) * sizeof(float); }
  static int Int(int64_t v) {
    MAVG_CHECK(v <= INT32_MAX, "matrix dimension {} exceeds cuBLAS's 32-bit limit", v);
    return static_cast<int>(v);
  }

  // src to dst (same shape, not empty), queued on the stream. A 2-D copy takes pitches up to the
  // device's limit (cudaDeviceProp::memPitch, 2^31 - 1 bytes on current GPUs) only, which a
  // 1 x P view of P > 2^29 floats exceeds: views whose rows follow each other are one plain
  // copy, and a strided view with a pitch past the limit is copied row by row.
  void CopyMatrix(ConstMatrixView src, MatrixView dst, cudaMemcpyKind kind) {
    if (src.Contiguous() && dst.Contiguous()) {
      CUDA_CHECK(cudaMemcpyAsync(dst.data, src.data, Pitch(src.Size()), kind, stream_.Get()));
    } else if (Pitch(std::max(src.stride, dst.stride)) <= props_.memPitch) {
      CUDA_CHECK(cudaMemcpy2DAsync(dst.data, Pitch(dst.stride), src.data, Pitch(src.stride),
                                   Pitch(src.cols), static_cast<size_t>(src.rows), kind,
                                   stream_.Get()));
    } else {
      for (int64_t r = 0; r < src.rows; ++r) {
        CUDA_CHECK(cudaMemcpyAsync(dst.Row(r), src.Row(r), Pitch(src.cols), kind, stream_.Get()));
      }
    }
  }

  // A copy from page-locked memory reads it after the call returns: wait, so the caller may
  // reuse it at once (pageable memory is staged by the driver before the call returns).
  void AfterHostSourceCopy(const void* src) {
    if (IsPinned(src)) stream_.Synchronize();
  }

  void Apply(Activation f, ConstMatrixView x, MatrixView y) {
    CheckSameShape("element-wise op", x, y);
    cuda::LaunchActivation(S(), f, x, y);
  }
  void ApplyBackward(Activation f, ConstMatrixView y, ConstMatrixView dy, MatrixView dx) {
    CheckSameShape("element-wise op", y, dy);
    CheckSameShape("element-wise op", y, dx);
    cuda::LaunchActivationBackward(S(), f, y, dy, dx);
  }

  // Device scratch of at least n doubles, reused by later calls in stream order.
  double* Scratch(int64_t n) {
    const size_t want = static_cast<size_t>(std::max<int64_t>(n, 1));
    if (scratch_size_ < want) {
      allocator_.Free(scratch_);
      scratch_ = static_cast<double*>(allocator_.Allocate(want * sizeof(double)));
      scratch_size_ = want;
    }
    return scratch_;
  }

  void ThrowKernelError() {
    cuda::KernelError& e = error_.Host();
    const int64_t label_row = e.label_row;
    if (label_row == 0) return;
    const int64_t cols = e.cols;
    e = cuda::KernelError{};
    int64_t row = 0;
    int32_t label = 0;
    cuda::UnpackLabelError(label_row, &row, &label);
    MAVG_FAIL("label {} outside the {} network outputs (row {} of the minibatch)", label, cols,
              row);
  }

  int device_;
  bool tf32_;
  DeviceGuard device_guard_;
  cudaDeviceProp props_{};
  cuda::StreamHandle stream_;
  cuda::StreamHandle copy_stream_;  // CopyFromStagingAsync's: beside stream_, ordered by events
  cuda::CublasHandle cublas_;
  CachingAllocator allocator_;
  cuda::MappedHostValue<cuda::KernelError> error_;
  double* scratch_ = nullptr;  // [scratch_size_], from allocator_
  size_t scratch_size_ = 0;
  int64_t small_fast_doubles_ = 0;  // shared memory NG-SGD's small programs may use, in doubles
};

}  // namespace

int CudaDeviceCount() {
  int count = 0;
  // No driver or no device is not an error here: it means zero usable devices.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error state
    return 0;
  }
  return count;
}

std::vector<CudaDeviceInfo> CudaDevices() {
  std::vector<CudaDeviceInfo> out;
  for (int i = 0; i < CudaDeviceCount(); ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    CudaDeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.memory_bytes = p.totalGlobalMem;
    d.compute_major = p.major;
    d.compute_minor = p.minor;
    d.multiprocessors = p.multiProcessorCount;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), i) == cudaSuccess) d.pci_bus_id = bus;
    out.push_back(std::move(d));
  }
  return out;
}

std::unique_ptr<Backend> CreateCudaBackend(const BackendOptions& options) {
  const int count = CudaDeviceCount();
  MAVG_CHECK(count > 0, "device 'cuda' requested but no CUDA device is visible");
  MAVG_CHECK(options.device_index >= 0 && options.device_index < count,
             "device_index {} is out of range: {} CUDA device(s) visible", options.device_index,
             count);
  return std::make_unique<CudaBackend>(options.device_index, options.tf32);
}

}  // namespace mavg
