// The CUDA backend past the sizes one launch covers, where its kernels' grid-stride loops take
// over (launch.cuh): more than 1,048,576 elements of a flat element-wise launch (4,096 blocks of
// 256), more than 65,535 rows of a strided one, more than 1,048,560 rows of a row kernel
// (softmax, cross-entropy, row norms), more than 1,048,576 columns of the column sums; and
// copies past the 2-D copy's pitch limit (2^31 - 1 bytes). Each against the CPU backend, with
// the tolerances of cuda_vs_cpu_test.cpp. CudaLaunchLimits.* are small enough (tens of MB) for
// compute-sanitizer's memcheck and initcheck; CudaLargeCopies.* move gigabytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/gpu/cuda_vs_cpu.h"

namespace mavg {
namespace {

using testing::HostMat;
using testing::NormalizedError;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;

class CudaLaunchLimits : public CudaVsCpu {};

constexpr int64_t kFlatLimit = 4096 * 256;       // elements of one flat element-wise launch
constexpr int64_t kStridedRowLimit = 65535;      // rows of one strided element-wise launch
constexpr int64_t kRowKernelLimit = 65535 * 16;  // rows of one row-kernel launch
constexpr int64_t kColumnSumLimit = 4096 * 256;  // columns of one column-sum launch

TEST_F(CudaLaunchLimits, FlatElementWiseOpsPastOneLaunch) {
  const int64_t rows = 1031, cols = 2039;  // contiguous: one flat row of 2,102,209 elements
  ASSERT_GT(rows * cols, 2 * kFlatLimit);
  const HostMat x = RandomHost(rows, cols, 50), y = RandomHost(rows, cols, 51);
  auto exact = [&](const char* name, auto op) {
    const auto [want, got] = Both({x, y}, 1, op);
    EXPECT_EQ(got.v, want.v) << name;
  };
  exact("fill", [](Backend& b, auto& m) { b.Fill(m[1], 0.25f); });
  exact("axpby", [](Backend& b, auto& m) { b.Axpby(0.7f, m[0], 0.3f, m[1]); });
  exact("relu", [](Backend& b, auto& m) { b.Relu(m[0], m[1]); });
  exact("relu'", [](Backend& b, auto& m) { b.ReluBackward(m[0], m[0], m[1]); });
  exact("uniform", [](Backend& b, auto& m) { b.RandomUniform(3, 17, m[1]); });
  exact("bernoulli", [](Backend& b, auto& m) {
    b.RandomUniform(4, 0, m[0]);
    b.SampleBernoulli(5, 99, m[0], m[1]);
  });
  exact("replica mean", [](Backend& b, auto& m) {
    Matrix third(b, m[0].Rows(), m[0].Cols());
    b.Fill(third, 0.125f);
    b.MeanOfReplicas({m[0], m[1], third});
  });
  const auto [want, got] = Both({x, y}, 1, [](Backend& b, auto& m) { b.Sigmoid(m[0], m[1]); });
  EXPECT_LT(NormalizedError(got, want), 1e-5) << "sigmoid";
}

TEST_F(CudaLaunchLimits, StridedElementWiseOpsPastOneLaunch) {
  const int64_t rows = kStridedRowLimit + 4466, cols = 12;  // views of 9 columns: strided
  const HostMat x = RandomHost(rows, cols, 52), y = RandomHost(rows, cols, 53);
  const HostMat row = RandomHost(1, 9, 54), scales = RandomHost(1, rows, 55);
  auto exact = [&](const char* name, auto op) {
    const auto [want, got] = Both({x, y, row, scales}, 1, op);
    EXPECT_EQ(got.v, want.v) << name;
  };
  auto sub = [](Matrix& m, int64_t c0) { return MatrixView(m).ColRange(c0, 9); };
  exact("fill", [&](Backend& b, auto& m) { b.Fill(sub(m[1], 2), -1.5f); });
  exact("copy", [&](Backend& b, auto& m) { b.Copy(sub(m[0], 0), sub(m[1], 3)); });
  exact("axpby", [&](Backend& b, auto& m) { b.Axpby(0.7f, sub(m[0], 1), 0.3f, sub(m[1], 2)); });
  exact("add row", [&](Backend& b, auto& m) { b.AddRowVector(0.7f, m[2], 0.3f, sub(m[1], 3)); });
  exact("mul rows",
        [&](Backend& b, auto& m) { b.MulRowsAdd(m[3], sub(m[0], 0), 0.3f, sub(m[1], 1)); });
  exact("tanh'",
        [&](Backend& b, auto& m) { b.TanhBackward(sub(m[0], 0), sub(m[0], 3), sub(m[1], 1)); });
  exact("uniform", [&](Backend& b, auto& m) { b.RandomUniform(6, 5, sub(m[1], 2)); });
  exact("replica mean", [&](Backend& b, auto& m) {
    Matrix third(b, m[0].Rows(), 9);
    b.Fill(third, 0.125f);
    b.MeanOfReplicas({sub(m[0], 0), sub(m[1], 2), third});
  });
  const auto [want, got] =
      Both({x, y}, 1, [&](Backend& b, auto& m) { b.RandomGaussian(7, 3, 0.5f, sub(m[1], 1)); });
  EXPECT_LT(NormalizedError(got, want), 1e-6) << "gaussian";
}

TEST_F(CudaLaunchLimits, RowKernelsPastOneLaunch) {
  const int64_t rows = kRowKernelLimit + 1000, cols = 3;
  const HostMat x = RandomHost(rows, cols, 56, 3.0);
  std::vector<int32_t> labels(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 7) % cols);
  struct Result {
    HostMat softmax, grad, norms;
    std::vector<double> stats;
    double sum_squares;
  };
  auto run = [&](Backend& b) {
    Result out;
    Matrix m = ToDevice(b, x), y(b, rows, cols), n(b, 1, rows);
    b.Softmax(m, y);
    out.softmax = ToHost(b, y);
    b.RowSumSquares(m, n);
    out.norms = ToHost(b, n);
    out.sum_squares = b.SumSquares(m);
    DeviceBuffer<int32_t> l(b, labels.size());
    l.CopyFromHost(labels.data(), labels.size());
    DeviceBuffer<double> stats(b, 3);
    const double zeros[3] = {0, 0, 0};
    stats.CopyFromHost(zeros, 3);
    b.SoftmaxCrossEntropy(m, l.Data(), m, stats.Data());
    out.stats = stats.ToHost();
    out.grad = ToHost(b, m);
    return out;
  };
  const Result c = run(Cpu()), g = run(Gpu());
  EXPECT_LT(NormalizedError(g.softmax, c.softmax), 1e-5);
  EXPECT_LT(NormalizedError(g.grad, c.grad), 1e-5);
  EXPECT_LT(NormalizedError(g.norms, c.norms), 1e-6);
  EXPECT_NEAR(g.sum_squares, c.sum_squares, 1e-12 * c.sum_squares);
  EXPECT_NEAR(g.stats[0], c.stats[0], 1e-9 * c.stats[0]);
  EXPECT_EQ(g.stats[1], c.stats[1]);
  EXPECT_EQ(g.stats[2], static_cast<double>(rows));
}

TEST_F(CudaLaunchLimits, ColumnSumsPastOneLaunch) {
  const HostMat m = RandomHost(2, kColumnSumLimit + 77, 57);
  const HostMat out = RandomHost(1, kColumnSumLimit + 77, 58);
  const auto [want, got] =
      Both({m, out}, 1, [](Backend& b, auto& v) { b.SumRows(0.7f, v[0], 0.3f, v[1]); });
  EXPECT_EQ(got.v, want.v);
}

// Gigabytes on the device (4 GiB at once) and on the host (2 GiB).
class CudaLargeCopies : public CudaVsCpu {
 protected:
  void SetUp() override {
    CudaVsCpu::SetUp();
    if (IsSkipped()) return;
    const std::vector<CudaDeviceInfo> devices = CudaDevices();
    if (devices.empty() || devices[0].memory_bytes < (uint64_t{12} << 30)) {
      GTEST_SKIP() << "the large copies need a device with 12 GiB";
    }
  }
};

// A 1 x P view of P > 2^29 floats: a pitch past the 2-D copy's limit, in one plain copy.
TEST_F(CudaLargeCopies, ContiguousPastThePitchLimit) {
  const int64_t p = (int64_t{1} << 29) + 7;
  std::vector<float> h(static_cast<size_t>(p));
  for (int64_t i = 0; i < p; ++i) h[i] = static_cast<float>(i & 0xffffff);
  Matrix a(Gpu(), 1, p), b(Gpu(), 1, p);
  Gpu().CopyFromHost(h.data(), a);
  Gpu().Copy(a, b);
  std::fill(h.begin(), h.end(), -1.0f);
  Gpu().CopyToHost(b, h.data());
  int64_t wrong = 0;
  for (int64_t i = 0; i < p; ++i) wrong += h[i] != static_cast<float>(i & 0xffffff);
  EXPECT_EQ(wrong, 0);
}

// Rows further apart than the pitch limit: copied row by row.
TEST_F(CudaLargeCopies, StridedPastThePitchLimit) {
  const int64_t stride = (int64_t{1} << 29) + 16;
  Matrix big(Gpu(), 2, stride), packed(Gpu(), 2, 16);
  const MatrixView v = MatrixView(big).ColRange(5, 16), w = MatrixView(big).ColRange(100, 16);
  const HostMat src = RandomHost(2, 16, 59);
  Gpu().CopyFromHost(src.v.data(), v);
  EXPECT_EQ(ToHost(Gpu(), v).v, src.v);
  Gpu().Copy(v, packed);
  Gpu().Copy(packed, w);
  EXPECT_EQ(ToHost(Gpu(), w).v, src.v);
  EXPECT_EQ(ToHost(Gpu(), MatrixView(big).ColRange(21, 79)).v, HostMat(2, 79).v) << "untouched";
}

}  // namespace
}  // namespace mavg
