#include "engine/backend/cpu/cpu_backend.h"

#include <cblas.h>
#include <omp.h>

// NG-SGD's eigenproblems are small and run on a single thread here, in the same order at any
// thread count (an OpenMP-enabled Eigen would split its products by the thread count).
#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>

#include "engine/backend/counter_rng.h"
#include "engine/backend/cpu/blas_kernels.h"
#include "engine/backend/cpu/float_env.h"
#include "engine/backend/cpu/gemm_tiles.h"
#include "engine/backend/cpu/vector_math.h"
#include "engine/backend/shape_checks.h"
#include "engine/core/error.h"
#include "engine/core/logging.h"
#include "engine/core/thread_pool.h"

extern "C" {
// Declared by OpenBLAS's cblas.h in most versions; repeated here for the ones that do not.
void openblas_set_num_threads(int num_threads);
char* openblas_get_config(void);
}

namespace mavg {
namespace {

// Element-wise work below this many elements stays on one thread; above, it is cut into tasks
// of about kTaskElements (rows are never split: each row is computed the same way anywhere).
constexpr int64_t kParallelThreshold = 1 << 15;
constexpr int64_t kTaskElements = 1 << 14;

// OpenBLAS (its OpenMP build) runs a call on as many threads as omp_get_max_threads() says
// for the calling thread (one inside a parallel region). Every call here must run on the
// calling thread alone (gemm_tiles.h): each thread that calls BLAS sets its own count to one.
void SerialBlasOnThisThread() {
  thread_local const bool done = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)done;
}

void StartComputeThread() {
  FlushSubnormalsOnThisThread();
  SerialBlasOnThisThread();
}

// NG-SGD's small steps on the host, with Eigen's symmetric eigensolver (tridiagonal QR: much
// faster on one core than the Jacobi rotations a GPU block runs in parallel; both converge to
// double precision).
struct CpuBlock : SerialBlock {
  static constexpr bool kHostEigen = true;
  void HostEigen(double* a, double* v, int r) {
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> am(a, r, r);
    // The solver's workspace is kept per thread and size (a new one would allocate each time).
    thread_local Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig;
    eig.compute(am);
    MAVG_CHECK(eig.info() == Eigen::Success, "NG-SGD: eigendecomposition failed");
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> vm(v, r, r);
    vm = eig.eigenvectors();
    am.setZero();
    am.diagonal() = eig.eigenvalues();
  }
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads) : kernels_(SelectBlasKernels()) {
    MAVG_CHECK(kernels_.error.empty(), "{}", kernels_.error);
    LogKernelsOnce(kernels_);
    threads_ = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
    if (threads_ <= 0) threads_ = 1;
    // OpenBLAS never starts threads of its own: the backend's tiles are its parallelism.
    openblas_set_num_threads(1);
    // Subnormals flushed to zero on this thread and on each of the pool's (float_env.h): a
    // saturated unit's gradients would otherwise run every GEMM through microcode assists.
    flushed_ = FlushSubnormalsOnThisThread();
    SerialBlasOnThisThread();
    pool_ = std::make_unique<ThreadPool>(threads_, StartComputeThread);
  }

  ~CpuBackend() override {
    if (pool_->Threads() > 1 && pool_->RunSeconds() > 0) {
      spdlog::debug(
          "[cpu] {} threads: {:.2f} s in parallel work, {:.0f} % of it waiting for tasks other "
          "threads had claimed; {} spans on one thread (shared cores)",
          pool_->Threads(), pool_->RunSeconds(), 100 * pool_->WaitSeconds() / pool_->RunSeconds(),
          pool_->SoloSpans());
    }
  }

  DeviceKind Kind() const override { return DeviceKind::kCpu; }

  std::string Kernels() const override { return "OpenBLAS " + kernels_.family; }
  std::string Describe() const override {
    return fmt::format("cpu ({}; {} threads{})", openblas_get_config(), threads_,
                       flushed_ ? "; subnormals flushed to zero" : "");
  }

  void* AllocateBytes(size_t bytes) override {
    size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    MAVG_CHECK(p != nullptr, "out of host memory allocating {} bytes", bytes);
    return p;
  }
  void FreeBytes(void* ptr) override { std::free(ptr); }
  // Empty buffers may have null pointers, which memcpy must not be given even for 0 bytes.
  void CopyBytesToDevice(void* dst, const void* src, size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  void CopyBytesToHost(void* dst, const void* src, size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  void CopyBytesOnDevice(void* dst, const void* src, size_t bytes) override {
    if (bytes > 0) std::memmove(dst, src, bytes);
  }
  void Synchronize() override {}
  bool HostReadsDeviceMemory() const override { return true; }

  void CopyFromHost(const float* src, MatrixView dst) override {
    Copy(ConstMatrixView(src, dst.rows, dst.cols), dst);
  }
  void CopyToHost(ConstMatrixView src, float* dst) override {
    Copy(src, MatrixView(dst, src.rows, src.cols));
  }

  void Gemm(bool trans_a, bool trans_b, float alpha, ConstMatrixView a, ConstMatrixView b,
            float beta, MatrixView c) override {
    const GemmDims dims = CheckGemm(trans_a, trans_b, a, b, c);
    // Plain variables, not a structured binding: the tiles' lambda captures them.
    const int64_t m = dims.m, n = dims.n, k = dims.k;
    if (m == 0 || n == 0) return;
    if (k == 0) {
      if (beta == 0.0f) {
        Fill(c, 0.0f);
      } else {
        Axpby(0.0f, c, beta, c);
      }
      return;
    }
    const int lda = static_cast<int>(std::max<int64_t>(a.stride, 1));
    const int ldb = static_cast<int>(std::max<int64_t>(b.stride, 1));
    const int ldc = static_cast<int>(std::max<int64_t>(c.stride, 1));
    // Tile (i, j) is C[i0:i0+mm, j0:j0+nn] = alpha op(A)[i0:i0+mm, :] op(B)[:, j0:j0+nn] + beta C:
    // rows of op(A) are rows of A, or columns when A is transposed; likewise columns of op(B).
    const GemmTiling tiling = GemmTilesOf(m, n, k);
    const int64_t tiles_across = (n + tiling.tile_cols - 1) / tiling.tile_cols;
    pool_->Run(tiling.Tiles(m, n), [&](int64_t t) {
      SerialBlasOnThisThread();
      const int64_t i0 = (t / tiles_across) * tiling.tile_rows;
      const int64_t j0 = (t % tiles_across) * tiling.tile_cols;
      const int mm = static_cast<int>(std::min(tiling.tile_rows, m - i0));
      const int nn = static_cast<int>(std::min(tiling.tile_cols, n - j0));
      const float* at = trans_a ? a.data + i0 : a.data + i0 * a.stride;
      const float* bt = trans_b ? b.data + j0 * b.stride : b.data + j0;
      float* ct = c.data + i0 * c.stride + j0;
      // A product with one row or one column is a matrix-vector product: OpenBLAS (before
      // 0.3.27) would run it through the GEMM path and copy the whole matrix operand into its
      // packed layout first (NG-SGD's bias update, [1 x N] x [N x D], costs 5 times the GEMV
      // that way).
      if (nn == 1 && n == 1) {  // C[:, 0] = alpha op(A) op(B)[:, 0] + beta C[:, 0]
        cblas_sgemv(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                    static_cast<int>(trans_a ? k : mm), static_cast<int>(trans_a ? mm : k), alpha,
                    at, lda, bt, trans_b ? 1 : ldb, beta, ct, ldc);
      } else if (mm == 1 && m == 1) {  // C[0, :]^T = alpha op(B)^T op(A)[0, :]^T + beta C[0, :]^T
        cblas_sgemv(CblasRowMajor, trans_b ? CblasNoTrans : CblasTrans,
                    static_cast<int>(trans_b ? nn : k), static_cast<int>(trans_b ? k : nn), alpha,
                    bt, ldb, at, trans_a ? lda : 1, beta, ct, 1);
      } else {
        cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                    trans_b ? CblasTrans : CblasNoTrans, mm, nn, static_cast<int>(k), alpha, at,
                    lda, bt, ldb, beta, ct, ldc);
      }
    });
  }

  void Copy(ConstMatrixView src, MatrixView dst) override {
    CheckSameShape("Copy", src, dst);
    if (src.Contiguous() && dst.Contiguous()) {
      std::memmove(dst.data, src.data, static_cast<size_t>(src.Size()) * sizeof(float));
      return;
    }
    ForRows(src.Size(), src.rows, [&](int64_t r) {
      std::memmove(dst.Row(r), src.Row(r), static_cast<size_t>(src.cols) * sizeof(float));
    });
  }

  void Fill(MatrixView x, float value) override {
    ForRows(x.Size(), x.rows, [&](int64_t r) { std::fill_n(x.Row(r), x.cols, value); });
  }

  void Axpby(float alpha, ConstMatrixView x, float beta, MatrixView y) override {
    CheckSameShape("Axpby", x, y);
    ForRows(x.Size(), x.rows, [&](int64_t r) {
      const float* xr = x.Row(r);
      float* yr = y.Row(r);
      if (beta == 0.0f) {
        for (int64_t c = 0; c < x.cols; ++c) yr[c] = alpha * xr[c];
      } else {
        for (int64_t c = 0; c < x.cols; ++c) yr[c] = alpha * xr[c] + beta * yr[c];
      }
    });
  }

  void AdamUpdate(const AdamScalars& s, ConstMatrixView g, MatrixView m, MatrixView v,
                  MatrixView p) override {
    CheckSameShape("AdamUpdate", g, m);
    CheckSameShape("AdamUpdate", g, v);
    CheckSameShape("AdamUpdate", g, p);
    ForRows(g.Size(), g.rows, [&](int64_t r) {
      const float* gr = g.Row(r);
      float* mr = m.Row(r);
      float* vr = v.Row(r);
      float* pr = p.Row(r);
      for (int64_t c = 0; c < g.cols; ++c) {
        const float gc = gr[c];
        const float w = s.decay == 1.0f ? pr[c] : s.decay * pr[c];
        mr[c] = s.beta1 * mr[c] + s.one_minus_beta1 * gc;
        vr[c] = s.beta2 * vr[c] + s.one_minus_beta2 * (gc * gc);
        const float denom = std::sqrt(vr[c]) * s.inv_sqrt_bc2 + s.epsilon;
        pr[c] = w - (s.step_size * mr[c]) / denom;
      }
    });
  }

  void AddRowVector(float alpha, ConstMatrixView row, float beta, MatrixView m) override {
    CheckRowVector("AddRowVector", "row", row, m.cols);
    const float* v = row.data;
    ForRows(m.Size(), m.rows, [&](int64_t r) {
      float* mr = m.Row(r);
      if (beta == 0.0f) {
        for (int64_t c = 0; c < m.cols; ++c) mr[c] = alpha * v[c];
      } else {
        for (int64_t c = 0; c < m.cols; ++c) mr[c] = alpha * v[c] + beta * mr[c];
      }
    });
  }

  void SumRows(float alpha, ConstMatrixView m, float beta, MatrixView out) override {
    CheckRowVector("SumRows", "out", out, m.cols);
    // Column blocks in parallel; each column summed in row order (deterministic).
    const int64_t cols = m.cols;
    constexpr int64_t kBlock = 256;
    const int64_t blocks = (cols + kBlock - 1) / kBlock;
    auto block = [&](int64_t b) {
      const int64_t c0 = b * kBlock;
      const int64_t c1 = std::min(cols, c0 + kBlock);
      double acc[kBlock] = {};
      for (int64_t r = 0; r < m.rows; ++r) {
        const float* mr = m.Row(r);
        for (int64_t c = c0; c < c1; ++c) acc[c - c0] += mr[c];
      }
      for (int64_t c = c0; c < c1; ++c) {
        const float s = static_cast<float>(alpha * acc[c - c0]);
        out.data[c] = beta == 0.0f ? s : s + beta * out.data[c];
      }
    };
    if (m.Size() > kParallelThreshold) {
      pool_->Run(blocks, block);
    } else {
      for (int64_t b = 0; b < blocks; ++b) block(b);
    }
  }

  double SumSquares(ConstMatrixView x) override {
    return SumInRowOrder(x.Size(), x.rows,
                         [&](int64_t r) { return vector_math::SumSquares(x.Row(r), x.cols); });
  }

  void RowSumSquares(ConstMatrixView x, MatrixView out) override {
    CheckRowVector("RowSumSquares", "out", out, x.rows);
    ForRows(x.Size(), x.rows, [&](int64_t r) {
      out.data[r] = static_cast<float>(vector_math::SumSquares(x.Row(r), x.cols));
    });
  }

  void MulRowsAdd(ConstMatrixView scales, ConstMatrixView x, float beta, MatrixView y) override {
    CheckSameShape("MulRowsAdd", x, y);
    CheckRowVector("MulRowsAdd", "scales", scales, x.rows);
    ForRows(x.Size(), x.rows, [&](int64_t r) {
      const float s = scales.data[r];
      const float* xr = x.Row(r);
      float* yr = y.Row(r);
      if (beta == 0.0f) {
        for (int64_t c = 0; c < x.cols; ++c) yr[c] = s * xr[c];
      } else {
        for (int64_t c = 0; c < x.cols; ++c) yr[c] = s * xr[c] + beta * yr[c];
      }
    });
  }

  void AxpbyScaled(const float* scalar, float alpha, ConstMatrixView x, float beta,
                   MatrixView y) override {
    const float a = alpha * *scalar;
    if (a == 1.0f && beta == 0.0f && x.data == y.data && x.stride == y.stride) {
      CheckSameShape("AxpbyScaled", x, y);
      return;  // a scaling by one
    }
    Axpby(a, x, beta, y);
  }
  void RunNgsgdSmall(const NgsgdSmallTask& task) override {
    CpuBlock block;
    RunNgsgdSmallTask(block, task);
  }
  void RunRbmSmall(const RbmSmallTask& task) override {
    SerialBlock block;
    RunRbmSmallTask(block, task);
  }

  void RandomUniform(uint64_t seed, uint64_t offset, MatrixView x) override {
    FillIndexed(x, [&](uint64_t i) { return counter_rng::Uniform(seed, offset + i); });
  }
  void RandomGaussian(uint64_t seed, uint64_t offset, float stddev, MatrixView x) override {
    FillIndexed(x, [&](uint64_t i) { return stddev * counter_rng::Gaussian(seed, offset + i); });
  }
  void SampleBernoulli(uint64_t seed, uint64_t offset, ConstMatrixView probs,
                       MatrixView out) override {
    CheckSameShape("SampleBernoulli", probs, out);
    ForRows(probs.Size(), probs.rows, [&](int64_t r) {
      const float* pr = probs.Row(r);
      float* orow = out.Row(r);
      const uint64_t base = offset + static_cast<uint64_t>(r) * static_cast<uint64_t>(probs.cols);
      for (int64_t c = 0; c < probs.cols; ++c) {
        orow[c] = counter_rng::Uniform(seed, base + static_cast<uint64_t>(c)) < pr[c] ? 1.0f : 0.0f;
      }
    });
  }

  void Sigmoid(ConstMatrixView x, MatrixView y) override {
    CheckSameShape("Sigmoid", x, y);
    ForRows(x.Size(), x.rows, [&](int64_t r) { vector_math::Sigmoid(x.Row(r), y.Row(r), x.cols); });
  }
  void Tanh(ConstMatrixView x, MatrixView y) override {
    Map(x, y, [](float v) { return std::tanh(v); });
  }
  void Relu(ConstMatrixView x, MatrixView y) override {
    Map(x, y, [](float v) { return v > 0.0f ? v : 0.0f; });
  }

  void Softmax(ConstMatrixView x, MatrixView y) override {
    CheckSameShape("Softmax", x, y);
    if (x.Empty()) return;  // rows without columns have no maximum, and nothing to write
    ForRows(x.Size(), x.rows, [&](int64_t r) {
      const float* xr = x.Row(r);
      float* yr = y.Row(r);
      const float mx = *std::max_element(xr, xr + x.cols);
      float sum = 0.0f;
      for (int64_t c = 0; c < x.cols; ++c) {
        yr[c] = std::exp(xr[c] - mx);
        sum += yr[c];
      }
      const float inv = 1.0f / sum;
      for (int64_t c = 0; c < x.cols; ++c) yr[c] *= inv;
    });
  }

  void SigmoidBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) override {
    Map2(y, dy, dx, [](float yv, float g) { return g * yv * (1.0f - yv); });
  }
  void TanhBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) override {
    Map2(y, dy, dx, [](float yv, float g) { return g * (1.0f - yv * yv); });
  }
  void ReluBackward(ConstMatrixView y, ConstMatrixView dy, MatrixView dx) override {
    Map2(y, dy, dx, [](float yv, float g) { return yv > 0.0f ? g : 0.0f; });
  }

  void SoftmaxCrossEntropy(ConstMatrixView logits, const int32_t* labels, MatrixView grad,
                           double* stats) override {
    const bool want_grad = !grad.Empty();
    if (want_grad) CheckSameShape("SoftmaxCrossEntropy", logits, grad);
    const int64_t cols = logits.cols;
    for (int64_t r = 0; r < logits.rows; ++r) {
      MAVG_CHECK(labels[r] >= 0 && labels[r] < cols, "label {} outside the {} network outputs",
                 labels[r], cols);
    }
    std::atomic<int64_t> correct{0};  // an integer: exact in any order
    const double loss = SumInRowOrder(logits.Size(), logits.rows, [&](int64_t r) {
      const float* xr = logits.Row(r);
      const int32_t label = labels[r];
      int64_t arg = 0;
      for (int64_t c = 1; c < cols; ++c) {
        if (xr[c] > xr[arg]) arg = c;
      }
      const float mx = xr[arg];
      if (arg == label) correct.fetch_add(1, std::memory_order_relaxed);
      // Read before the gradient is written: grad may be the logits themselves.
      const double shifted_label = static_cast<double>(xr[label] - mx);
      // exp(x - max) for the row (vectorised, in float; every value in (0, 1]), into the
      // gradient's row or a scratch row; their sum in double, in column order.
      thread_local std::vector<float> scratch;
      float* e = nullptr;
      if (want_grad) {
        e = grad.Row(r);
      } else {
        scratch.resize(static_cast<size_t>(cols));
        e = scratch.data();
      }
      for (int64_t c = 0; c < cols; ++c) e[c] = xr[c] - mx;
      vector_math::Exp(e, e, cols);
      double sum = 0.0;
      for (int64_t c = 0; c < cols; ++c) sum += e[c];
      if (want_grad) {
        const float inv = static_cast<float>(1.0 / sum);
        for (int64_t c = 0; c < cols; ++c) e[c] *= inv;
        e[label] -= 1.0f;
      }
      return std::log(sum) - shifted_label;
    });
    stats[0] += loss;
    stats[1] += static_cast<double>(correct.load());
    stats[2] += static_cast<double>(logits.rows);
  }

 private:
  // The sum of f(r) over the rows, added in row order whatever the thread count: the rows'
  // values are computed in parallel, then summed one after another. (An OpenMP reduction adds
  // per-thread partial sums, so its bits change with the number of threads.)
  // The row values live in a per-thread buffer that is reused, so this hot path (every minibatch's
  // loss, NG-SGD's every step) does not allocate.
  template <typename F>
  double SumInRowOrder(int64_t size, int64_t rows, F&& f) {
    thread_local std::vector<double> buffer;
    // A reference, captured by the lambda: inside it `buffer` would name the pool thread's own.
    std::vector<double>& values = buffer;
    values.resize(static_cast<size_t>(rows));
    ForRows(size, rows, [&](int64_t r) { values[static_cast<size_t>(r)] = f(r); });
    double total = 0.0;
    for (double v : values) total += v;
    return total;
  }

  // Rows in parallel where there are threads and work enough for them, in tasks of whole rows.
  // One thread, small work or a caller already inside a task (simulated workers stepping at
  // once) runs the plain loop.
  template <typename F>
  void ForRows(int64_t size, int64_t rows, F&& f) {
    if (threads_ == 1 || size <= kParallelThreshold || ThreadPool::InTask()) {
      for (int64_t r = 0; r < rows; ++r) f(r);
      return;
    }
    const int64_t cols = std::max<int64_t>(size / std::max<int64_t>(rows, 1), 1);
    const int64_t rows_per_task = std::max<int64_t>(kTaskElements / cols, 1);
    const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
    pool_->Run(tasks, [&](int64_t t) {
      const int64_t end = std::min(rows, (t + 1) * rows_per_task);
      for (int64_t r = t * rows_per_task; r < end; ++r) f(r);
    });
  }

  // x[r][c] = f(r * cols + c): the row-major element index, whatever the stride.
  template <typename F>
  void FillIndexed(MatrixView x, F f) {
    ForRows(x.Size(), x.rows, [&](int64_t r) {
      float* xr = x.Row(r);
      const uint64_t base = static_cast<uint64_t>(r) * static_cast<uint64_t>(x.cols);
      for (int64_t c = 0; c < x.cols; ++c) xr[c] = f(base + static_cast<uint64_t>(c));
    });
  }

  template <typename F>
  void Map(ConstMatrixView x, MatrixView y, F f) {
    CheckSameShape("element-wise op", x, y);
    ForRows(x.Size(), x.rows, [&](int64_t r) {
      const float* xr = x.Row(r);
      float* yr = y.Row(r);
      for (int64_t c = 0; c < x.cols; ++c) yr[c] = f(xr[c]);
    });
  }

  template <typename F>
  void Map2(ConstMatrixView a, ConstMatrixView b, MatrixView out, F f) {
    CheckSameShape("element-wise op", a, b);
    CheckSameShape("element-wise op", a, out);
    ForRows(a.Size(), a.rows, [&](int64_t r) {
      const float* ar = a.Row(r);
      const float* br = b.Row(r);
      float* orow = out.Row(r);
      for (int64_t c = 0; c < a.cols; ++c) orow[c] = f(ar[c], br[c]);
    });
  }

  // Once per process, at info level (a warning where the kernels are slower than the CPU
  // allows and mavg could not fix it).
  static void LogKernelsOnce(const BlasKernels& k) {
    static std::once_flag once;
    std::call_once(once, [&] {
      if (k.below_cpu) {
        spdlog::warn("[blas] OpenBLAS {} kernels: {}", k.family, k.note);
      } else {
        spdlog::info("[blas] OpenBLAS {} kernels: {}", k.family, k.note);
      }
    });
  }

  const BlasKernels& kernels_;  // the process's, settled before this backend's first GEMM
  bool flushed_ = false;        // subnormals flushed to zero (float_env.h)
  int threads_ = 1;
  std::unique_ptr<ThreadPool> pool_;  // [threads_ threads, the caller one of them]
};

}  // namespace

std::unique_ptr<Backend> CreateCpuBackend(int threads) {
  return std::make_unique<CpuBackend>(threads);
}

}  // namespace mavg
