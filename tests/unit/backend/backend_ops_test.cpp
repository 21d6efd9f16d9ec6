// Every Backend op against a plain reference computed here on the host, on every backend.
#include <algorithm>
#include <array>
#include <cmath>

#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::HostMat;
using testing::NormalizedError;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;

class BackendOps : public testing::BackendTest {};

HostMat RefGemm(bool ta, bool tb, float alpha, const HostMat& a, const HostMat& b, float beta,
                const HostMat& c) {
  const int64_t m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols;
  const int64_t n = tb ? b.rows : b.cols;
  HostMat out(m, n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t p = 0; p < k; ++p) s += (ta ? a(p, i) : a(i, p)) * (tb ? b(j, p) : b(p, j));
      out(i, j) = static_cast<float>(alpha * s + (beta != 0.0f ? beta * c(i, j) : 0.0));
    }
  }
  return out;
}

TEST_P(BackendOps, GemmAllTransposes) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const int64_t m = 17, k = 33, n = 9;
      HostMat a = ta ? RandomHost(k, m, 1) : RandomHost(m, k, 1);
      HostMat b = tb ? RandomHost(n, k, 2) : RandomHost(k, n, 2);
      HostMat c = RandomHost(m, n, 3);
      Matrix da = ToDevice(B(), a), db = ToDevice(B(), b), dc = ToDevice(B(), c);
      B().Gemm(ta, tb, 0.7f, da, db, -0.3f, dc);
      EXPECT_LT(NormalizedError(ToHost(B(), dc), RefGemm(ta, tb, 0.7f, a, b, -0.3f, c)), 1e-5)
          << "ta=" << ta << " tb=" << tb;
    }
  }
}

// Products with one row or one column (the CPU backend runs them as matrix-vector products),
// every transpose, on strided views, with beta 0 (NaN in C ignored) and not.
TEST_P(BackendOps, GemmVectorShapesOnStridedViews) {
  struct Shape {
    int64_t m, k, n;
  };
  for (const Shape& sh : {Shape{1, 23, 7}, Shape{6, 23, 1}, Shape{1, 23, 1}, Shape{1, 1, 5}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (float beta : {0.0f, 0.5f}) {
          const int64_t ar = ta ? sh.k : sh.m, ac = ta ? sh.m : sh.k;
          const int64_t br = tb ? sh.n : sh.k, bc = tb ? sh.k : sh.n;
          // Each operand a view into a wider matrix (stride > cols), offset by one column.
          const HostMat abig = RandomHost(ar, ac + 3, 31), bbig = RandomHost(br, bc + 2, 32);
          HostMat cbig = RandomHost(sh.m, sh.n + 4, 33);
          if (beta == 0.0f) cbig(0, 1) = std::nanf("");
          Matrix da = ToDevice(B(), abig), db = ToDevice(B(), bbig), dc = ToDevice(B(), cbig);
          const ConstMatrixView av = ConstMatrixView(da).ColRange(1, ac);
          const ConstMatrixView bv = ConstMatrixView(db).ColRange(1, bc);
          const MatrixView cv = MatrixView(dc).ColRange(1, sh.n);
          B().Gemm(ta, tb, 0.7f, av, bv, beta, cv);
          HostMat a(ar, ac), b(br, bc), c(sh.m, sh.n);
          for (int64_t i = 0; i < ar; ++i)
            for (int64_t j = 0; j < ac; ++j) a(i, j) = abig(i, j + 1);
          for (int64_t i = 0; i < br; ++i)
            for (int64_t j = 0; j < bc; ++j) b(i, j) = bbig(i, j + 1);
          for (int64_t i = 0; i < sh.m; ++i)
            for (int64_t j = 0; j < sh.n; ++j) c(i, j) = cbig(i, j + 1);
          const HostMat got = ToHost(B(), dc);
          HostMat got_view(sh.m, sh.n);
          for (int64_t i = 0; i < sh.m; ++i) {
            for (int64_t j = 0; j < sh.n + 4; ++j) {
              if (j >= 1 && j <= sh.n) {
                got_view(i, j - 1) = got(i, j);
              } else if (!(std::isnan(got(i, j)) && std::isnan(cbig(i, j)))) {
                EXPECT_EQ(got(i, j), cbig(i, j)) << "outside the view";
              }
            }
          }
          EXPECT_LT(NormalizedError(got_view, RefGemm(ta, tb, 0.7f, a, b, beta, c)), 1e-5)
              << sh.m << "x" << sh.k << "x" << sh.n << " ta=" << ta << " tb=" << tb
              << " beta=" << beta;
        }
      }
    }
  }
}

TEST_P(BackendOps, GemmOnStridedViewsAndBetaZeroIgnoresNaN) {
  HostMat big = RandomHost(10, 12, 4);
  HostMat b = RandomHost(5, 3, 5);
  Matrix dbig = ToDevice(B(), big), db = ToDevice(B(), b);
  ConstMatrixView a = ConstMatrixView(dbig).RowRange(2, 6).ColRange(3, 5);  // 6x5, stride 12
  HostMat c(6, 3, std::nanf(""));
  Matrix dc = ToDevice(B(), c);
  B().Gemm(false, false, 1.0f, a, db, 0.0f, dc);
  HostMat ah(6, 5);
  for (int r = 0; r < 6; ++r)
    for (int col = 0; col < 5; ++col) ah(r, col) = big(r + 2, col + 3);
  EXPECT_LT(NormalizedError(ToHost(B(), dc), RefGemm(false, false, 1.0f, ah, b, 0.0f, c)), 1e-5);
}

TEST_P(BackendOps, GemmRejectsMismatchedShapes) {
  Matrix a(B(), 3, 4), b(B(), 5, 2), c(B(), 3, 2);
  EXPECT_THROW(B().Gemm(false, false, 1.0f, a, b, 0.0f, c), Error);
}

TEST_P(BackendOps, CopyFillAxpby) {
  HostMat x = RandomHost(7, 5, 6), y = RandomHost(7, 5, 7);
  Matrix dx = ToDevice(B(), x), dy = ToDevice(B(), y);
  B().Axpby(2.0f, dx, -0.5f, dy);
  HostMat ref(7, 5);
  for (size_t i = 0; i < ref.v.size(); ++i) ref.v[i] = 2.0f * x.v[i] - 0.5f * y.v[i];
  EXPECT_LT(NormalizedError(ToHost(B(), dy), ref), 1e-6);
  B().Fill(dy, 3.5f);
  for (float v : ToHost(B(), dy).v) EXPECT_EQ(v, 3.5f);
  B().Copy(dx, dy);
  EXPECT_EQ(ToHost(B(), dy).v, x.v);
}

TEST_P(BackendOps, AddRowVectorAndSumRows) {
  HostMat m = RandomHost(9, 6, 8), row = RandomHost(1, 6, 9);
  Matrix dm = ToDevice(B(), m), drow = ToDevice(B(), row);
  B().AddRowVector(0.5f, drow, 2.0f, dm);
  HostMat ref(9, 6);
  for (int r = 0; r < 9; ++r)
    for (int c = 0; c < 6; ++c) ref(r, c) = 2.0f * m(r, c) + 0.5f * row(0, c);
  EXPECT_LT(NormalizedError(ToHost(B(), dm), ref), 1e-6);

  HostMat out = RandomHost(1, 6, 10);
  Matrix dout = ToDevice(B(), out);
  B().SumRows(-1.5f, dm, 0.25f, dout);
  HostMat sref(1, 6);
  for (int c = 0; c < 6; ++c) {
    double s = 0;
    for (int r = 0; r < 9; ++r) s += ref(r, c);
    sref(0, c) = static_cast<float>(-1.5 * s + 0.25 * out(0, c));
  }
  EXPECT_LT(NormalizedError(ToHost(B(), dout), sref), 1e-5);
}

TEST_P(BackendOps, SumRowsLargeMatrixUsesEveryRow) {
  // Large enough to take the parallel path.
  HostMat m(3000, 300, 1.0f);
  Matrix dm = ToDevice(B(), m);
  Matrix out(B(), 1, 300);
  B().SumRows(1.0f, dm, 0.0f, out);
  for (float v : ToHost(B(), out).v) EXPECT_EQ(v, 3000.0f);
}

TEST_P(BackendOps, SumSquares) {
  HostMat x = RandomHost(40, 30, 11);
  double ref = 0;
  for (float v : x.v) ref += static_cast<double>(v) * v;
  EXPECT_NEAR(B().SumSquares(ToDevice(B(), x)), ref, 1e-9 * ref);
}

TEST_P(BackendOps, RowSumSquaresAndMulRowsAdd) {
  HostMat x = RandomHost(6, 9, 30), y = RandomHost(6, 9, 31), s = RandomHost(1, 6, 32);
  Matrix dx = ToDevice(B(), x), dy = ToDevice(B(), y), ds = ToDevice(B(), s), dn(B(), 1, 6);
  B().RowSumSquares(dx, dn);
  HostMat n = ToHost(B(), dn);
  for (int r = 0; r < 6; ++r) {
    double ref = 0;
    for (int c = 0; c < 9; ++c) ref += static_cast<double>(x(r, c)) * x(r, c);
    EXPECT_NEAR(n(0, r), ref, 1e-5 * ref);
  }
  B().MulRowsAdd(ds, dx, 0.5f, dy);
  HostMat ref(6, 9);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 9; ++c) ref(r, c) = s(0, r) * x(r, c) + 0.5f * y(r, c);
  EXPECT_LT(NormalizedError(ToHost(B(), dy), ref), 1e-6);
  B().MulRowsAdd(ds, dx, 0.0f, dy);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 9; ++c) ref(r, c) = s(0, r) * x(r, c);
  EXPECT_LT(NormalizedError(ToHost(B(), dy), ref), 1e-6);
}

TEST_P(BackendOps, ActivationsAndTheirDerivatives) {
  HostMat x = RandomHost(8, 11, 12, 3.0), dy = RandomHost(8, 11, 13);
  Matrix dx = ToDevice(B(), x), ddy = ToDevice(B(), dy);
  Matrix y(B(), 8, 11), g(B(), 8, 11);
  struct Case {
    const char* name;
    void (Backend::*fwd)(ConstMatrixView, MatrixView);
    void (Backend::*bwd)(ConstMatrixView, ConstMatrixView, MatrixView);
    float (*f)(float);
    float (*df)(float);
  };
  const Case cases[] = {
      {"sigmoid", &Backend::Sigmoid, &Backend::SigmoidBackward,
       [](float v) { return 1.0f / (1.0f + std::exp(-v)); },
       [](float v) {
         const float s = 1.0f / (1.0f + std::exp(-v));
         return s * (1 - s);
       }},
      {"tanh", &Backend::Tanh, &Backend::TanhBackward, [](float v) { return std::tanh(v); },
       [](float v) { return 1.0f - std::tanh(v) * std::tanh(v); }},
      {"relu", &Backend::Relu, &Backend::ReluBackward, [](float v) { return v > 0 ? v : 0.0f; },
       [](float v) { return v > 0 ? 1.0f : 0.0f; }},
  };
  for (const Case& c : cases) {
    (B().*c.fwd)(dx, y);
    (B().*c.bwd)(y, ddy, g);
    HostMat ry(8, 11), rg(8, 11);
    for (size_t i = 0; i < x.v.size(); ++i) {
      ry.v[i] = c.f(x.v[i]);
      rg.v[i] = dy.v[i] * c.df(x.v[i]);
    }
    EXPECT_LT(NormalizedError(ToHost(B(), y), ry), 1e-6) << c.name;
    EXPECT_LT(NormalizedError(ToHost(B(), g), rg), 1e-5) << c.name;
  }
}

TEST_P(BackendOps, ActivationInPlace) {
  HostMat x = RandomHost(5, 5, 14);
  Matrix dx = ToDevice(B(), x);
  B().Sigmoid(dx, dx);
  for (size_t i = 0; i < x.v.size(); ++i) {
    EXPECT_NEAR(ToHost(B(), dx).v[i], 1.0f / (1.0f + std::exp(-x.v[i])), 1e-6);
  }
}

TEST_P(BackendOps, SoftmaxRowsSumToOneAndSurviveLargeLogits) {
  HostMat x = RandomHost(6, 9, 15, 5.0);
  x(0, 3) = 1000.0f;  // would overflow exp without the max shift
  x(1, 0) = -1000.0f;
  Matrix dx = ToDevice(B(), x), dy(B(), 6, 9);
  B().Softmax(dx, dy);
  HostMat y = ToHost(B(), dy);
  for (int r = 0; r < 6; ++r) {
    double s = 0;
    for (int c = 0; c < 9; ++c) {
      EXPECT_TRUE(std::isfinite(y(r, c)));
      s += y(r, c);
    }
    EXPECT_NEAR(s, 1.0, 1e-5);
  }
  EXPECT_NEAR(y(0, 3), 1.0f, 1e-6);
}

// A copy from staging memory without waiting, on the copy queue, and events: the copy waits
// for the work that made its destination, waiting for an event recorded on the copy queue after
// it lets the host reuse the staging, and work waits for the copy on the device; the time
// between two events is not negative; one never recorded is waited for at once.
TEST_P(BackendOps, StagingCopiesAndEvents) {
  HostStaging staging(B());
  float* s = staging.Floats(6);
  for (int i = 0; i < 6; ++i) s[i] = static_cast<float>(i) + 0.5f;
  Matrix m(B(), 2, 3);
  BackendEvent never(B());
  never.Wait();
  BackendEvent start(B()), copied(B()), end(B());
  start.Record();
  B().CopiesWaitFor(start.Get());  // m is made (zeroed) by the work queue
  B().CopyFromStagingAsync(s, m.View().data, 6 * sizeof(float));
  B().RecordCopiesEvent(copied.Get());
  B().WorkWaitsFor(copied.Get());
  B().Axpby(2.0f, m, 0.0f, m);
  copied.Wait();
  for (int i = 0; i < 6; ++i) s[i] = -1.0f;  // the copy has read it
  end.Record();
  EXPECT_GE(end.SecondsSince(start), 0.0);
  const HostMat h = ToHost(B(), m);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(h.v[i], 2.0f * (static_cast<float>(i) + 0.5f)) << i;
  // Events are reused: recorded again, they mark the work queued since.
  start.Record();
  end.Record();
  EXPECT_GE(end.SecondsSince(start), 0.0);
  EXPECT_EQ(B().RunsAsynchronously(), B().Kind() == DeviceKind::kCuda);
}

// Rows without columns: nothing to read or write (the CUDA backend launches nothing for them;
// the CPU backend once took the maximum of an empty row).
TEST_P(BackendOps, SoftmaxOfRowsWithoutColumnsWritesNothing) {
  Matrix none_x(B(), 4, 0), none_y(B(), 4, 0);  // no memory at all
  B().Softmax(none_x, none_y);
  const HostMat x = RandomHost(4, 3, 16);
  Matrix dx = ToDevice(B(), x), dy = ToDevice(B(), x);
  B().Softmax(dx.View().ColRange(1, 0), dy.View().ColRange(1, 0));
  EXPECT_EQ(ToHost(B(), dy).v, x.v);
}

TEST_P(BackendOps, SoftmaxCrossEntropyLossGradAccuracy) {
  const int rows = 12, cols = 7;
  HostMat x = RandomHost(rows, cols, 16, 2.0);
  x(2, 1) = 500.0f;  // stability: a huge logit
  std::vector<int32_t> labels(rows);
  for (int r = 0; r < rows; ++r) labels[r] = (r * 3) % cols;
  labels[2] = 1;
  Matrix dx = ToDevice(B(), x), grad(B(), rows, cols);
  DeviceBuffer<int32_t> dl(B(), rows);
  dl.CopyFromHost(labels.data(), rows);
  DeviceBuffer<double> stats(B(), 3);
  const double init[3] = {1.0, 2.0, 3.0};  // the op accumulates
  stats.CopyFromHost(init, 3);
  B().SoftmaxCrossEntropy(dx, dl.Data(), grad, stats.Data());

  double loss = 0, correct = 0;
  HostMat gref(rows, cols);
  for (int r = 0; r < rows; ++r) {
    double mx = x(r, 0);
    int arg = 0;
    for (int c = 1; c < cols; ++c) {
      if (x(r, c) > mx) mx = x(r, c), arg = c;
    }
    double s = 0;
    for (int c = 0; c < cols; ++c) s += std::exp(x(r, c) - mx);
    loss += -(x(r, labels[r]) - mx - std::log(s));
    correct += arg == labels[r];
    for (int c = 0; c < cols; ++c) {
      gref(r, c) = static_cast<float>(std::exp(x(r, c) - mx) / s - (c == labels[r]));
    }
  }
  const std::vector<double> st = stats.ToHost();
  EXPECT_NEAR(st[0], 1.0 + loss, 1e-4);
  EXPECT_EQ(st[1], 2.0 + correct);
  EXPECT_EQ(st[2], 3.0 + rows);
  EXPECT_LT(NormalizedError(ToHost(B(), grad), gref), 1e-5);

  // In place (grad aliases logits) gives the same gradient; no grad leaves logits untouched.
  B().SoftmaxCrossEntropy(dx, dl.Data(), MatrixView(), stats.Data());
  EXPECT_EQ(ToHost(B(), dx).v, x.v);
  B().SoftmaxCrossEntropy(dx, dl.Data(), dx, stats.Data());
  EXPECT_LT(NormalizedError(ToHost(B(), dx), gref), 1e-5);
}

TEST_P(BackendOps, SoftmaxCrossEntropyRejectsLabelOutsideOutputs) {
  Matrix x(B(), 2, 3);
  const int32_t labels[2] = {0, 3};
  DeviceBuffer<int32_t> dl(B(), 2);
  dl.CopyFromHost(labels, 2);
  DeviceBuffer<double> stats(B(), 3);
  // On a device the kernel reports it at the next synchronization.
  EXPECT_THROW(
      {
        B().SoftmaxCrossEntropy(x, dl.Data(), MatrixView(), stats.Data());
        B().Synchronize();
      },
      Error);
}

TEST_P(BackendOps, DeviceBufferRoundTrip) {
  std::vector<int32_t> v = {1, -2, 3, 99};
  DeviceBuffer<int32_t> buf(B(), v.size());
  buf.CopyFromHost(v.data(), v.size());
  EXPECT_EQ(buf.ToHost(), v);
  DeviceBuffer<int32_t> moved = std::move(buf);
  EXPECT_EQ(moved.ToHost(), v);
  EXPECT_EQ(buf.Size(), 0u);
}

TEST_P(BackendOps, RandomFillsHaveTheirMoments) {
  const int64_t rows = 200, cols = 500;  // 100,000 draws: standard errors ~0.1 % of the moments
  Matrix u(B(), rows, cols), g(B(), rows, cols);
  B().RandomUniform(11, 0, u);
  B().RandomGaussian(12, 0, 0.5f, g);
  auto moments = [](const HostMat& m) {
    double s = 0, s2 = 0, lo = 1e30, hi = -1e30;
    for (float x : m.v)
      s += x, s2 += double(x) * x, lo = std::min<double>(lo, x), hi = std::max<double>(hi, x);
    const double n = static_cast<double>(m.v.size());
    return std::array<double, 4>{s / n, s2 / n - (s / n) * (s / n), lo, hi};
  };
  const auto mu = moments(ToHost(B(), u));
  EXPECT_NEAR(mu[0], 0.5, 0.005);
  EXPECT_NEAR(mu[1], 1.0 / 12, 0.002);
  EXPECT_GE(mu[2], 0.0);
  EXPECT_LT(mu[3], 1.0);
  const auto mg = moments(ToHost(B(), g));
  EXPECT_NEAR(mg[0], 0.0, 0.005);
  EXPECT_NEAR(std::sqrt(mg[1]), 0.5, 0.005);
}

TEST_P(BackendOps, RandomFillsAreCounterBased) {
  // Same (seed, offset): same numbers; a [2 x n] fill equals two [1 x n] fills at offsets 0
  // and n; a strided view gets the same numbers as a contiguous one; another seed differs.
  const int64_t n = 37;
  Matrix a(B(), 2, n), b(B(), 2, n), wide(B(), 2, n + 5);
  B().RandomGaussian(5, 100, 1.0f, a);
  B().RandomGaussian(5, 100, 1.0f, b.View().RowRange(0, 1));
  B().RandomGaussian(5, 100 + n, 1.0f, b.View().RowRange(1, 1));
  EXPECT_EQ(ToHost(B(), a).v, ToHost(B(), b).v);
  B().RandomGaussian(5, 100, 1.0f, wide.View().ColRange(2, n));
  HostMat w = ToHost(B(), wide), ha = ToHost(B(), a);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < n; ++c) EXPECT_EQ(w(r, c + 2), ha(r, c));
  }
  B().RandomGaussian(6, 100, 1.0f, b);
  EXPECT_NE(ToHost(B(), b).v, ha.v);
}

TEST_P(BackendOps, SampleBernoulliFollowsTheProbabilities) {
  const int64_t rows = 4000, cols = 5;
  HostMat p(rows, cols);
  const float probs[cols] = {0.0f, 0.1f, 0.5f, 0.9f, 1.0f};
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) p(r, c) = probs[c];
  }
  Matrix dp = ToDevice(B(), p), out(B(), rows, cols);
  B().SampleBernoulli(3, 0, dp, out);
  const HostMat h = ToHost(B(), out);
  for (int64_t c = 0; c < cols; ++c) {
    double ones = 0;
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_TRUE(h(r, c) == 0.0f || h(r, c) == 1.0f);
      ones += h(r, c);
    }
    // 4000 draws: standard error at most 0.008.
    EXPECT_NEAR(ones / rows, probs[c], 0.03) << "column " << c;
  }
  // In place (out aliases probs) gives the same samples.
  B().SampleBernoulli(3, 0, dp, dp);
  EXPECT_EQ(ToHost(B(), dp).v, h.v);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BackendOps, ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& p) { return p.param; });

// The CPU backend's sums do not depend on its thread count: NG-SGD's gamma and the RBM guard
// (SumSquares) and the CV loss that newbob decides on (SoftmaxCrossEntropy) are the same bits with
// 1, 2 or 3 threads, and SumSquares is the plain row-order sum written out here. (An OpenMP
// reduction adds the threads' partial sums in an order that depends on the thread count.)
TEST(CpuBackend, ReductionsDoNotDependOnTheThreadCount) {
  const int64_t rows = 512, cols = 130;  // 66,560 elements: above the parallel threshold
  const HostMat x = RandomHost(rows, cols, 21, 3.0);
  std::vector<int32_t> labels(rows);
  for (int64_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 37) % cols);
  // Rows in order; within a row (vector_math::SumSquares) 16 interleaved partial sums, added
  // pairwise, then the last cols % 16 elements in order.
  double ref = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    double lane[16] = {};
    int64_t c = 0;
    for (; c + 16 <= cols; c += 16) {
      for (int j = 0; j < 16; ++j) lane[j] += static_cast<double>(x(r, c + j)) * x(r, c + j);
    }
    for (int width = 8; width >= 1; width /= 2) {
      for (int j = 0; j < width; ++j) lane[j] = lane[2 * j] + lane[2 * j + 1];
    }
    double s = lane[0];
    for (; c < cols; ++c) s += static_cast<double>(x(r, c)) * x(r, c);
    ref += s;
  }
  std::vector<double> sums, losses;
  for (int threads : {1, 2, 3}) {
    BackendOptions o;
    o.threads = threads;
    const auto backend = CreateBackend(o);
    const Matrix dx = ToDevice(*backend, x);
    sums.push_back(backend->SumSquares(dx));
    DeviceBuffer<int32_t> dl(*backend, labels.size());
    dl.CopyFromHost(labels.data(), labels.size());
    Matrix grad(*backend, rows, cols);
    double stats[3] = {0, 0, 0};
    backend->SoftmaxCrossEntropy(dx, dl.Data(), grad, stats);
    losses.push_back(stats[0]);
  }
  EXPECT_EQ(sums[0], ref);
  for (size_t i = 1; i < sums.size(); ++i) {
    EXPECT_EQ(sums[i], sums[0]) << "threads " << i + 1;
    EXPECT_EQ(losses[i], losses[0]) << "threads " << i + 1;
  }
}

TEST(Backend, CudaInCpuOnlyOrDevicelessBuildIsAClearError) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device is present";
  BackendOptions o;
  o.kind = DeviceKind::kCuda;
  try {
    CreateBackend(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mavg
