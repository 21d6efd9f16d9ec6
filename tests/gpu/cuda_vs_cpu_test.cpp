// Every Backend op on the CUDA device against the CPU backend on the same inputs, and short
// runs of every training algorithm on both (ctest label `gpu`; scripts/device/check.sh runs
// them on a GPU machine). Without a visible device each test skips with one line saying so.
//
// Tolerances: sigmoid, tanh, softmax and row reductions differ from the CPU by the last bits
// of float rounding (device expf/tanhf within 2 ulp, other orders of summation), so they are
// compared at a normalized error of 1e-5. Ops that do the same float operations in the same
// order agree bit for bit and are compared exactly: the element-wise arithmetic (axpby, add-row,
// mul-rows, the activation derivatives: products rounded before they are added, never fused,
// backend/cuda/rounding.cuh), uniform and Bernoulli fills, column sums, the replica mean. FP32
// GEMMs sum in a different order (cuBLAS vs OpenBLAS): 1e-5 relative to the largest element for
// k <= 600; TF32 keeps 10 mantissa bits of the inputs: 5e-3. Sizes past the launch limits:
// cuda_limits_test.cpp.
#include "tests/gpu/cuda_vs_cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/nn/init.h"
#include "engine/nn/network.h"
#include "engine/optim/factory.h"
#include "engine/pretrain/rbm.h"
#include "engine/train/step.h"

namespace mavg {
namespace {

using testing::HostMat;
using testing::NormalizedError;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;
TEST_F(CudaVsCpu, GemmAllTransposesStridedViewsAndTf32) {
  const int64_t m = 67, n = 129, k = 300;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const HostMat a = RandomHost(ta ? k : m, ta ? m : k, 1),
                    b = RandomHost(tb ? n : k, tb ? k : n, 2);
      const HostMat c = RandomHost(m, n + 5, 3);
      const auto [want, got] = Both({a, b, c}, 2, [&](Backend& be, std::vector<Matrix>& x) {
        be.Gemm(ta, tb, 0.5f, x[0], x[1], 0.25f, MatrixView(x[2]).ColRange(0, n));
      });
      EXPECT_LT(NormalizedError(got, want), 1e-5) << "trans " << ta << tb;
      EXPECT_EQ(std::vector<float>(got.v.end() - 5, got.v.end()),
                std::vector<float>(want.v.end() - 5, want.v.end()));  // outside the view
    }
  }
  BackendOptions o;
  o.kind = DeviceKind::kCuda;
  o.tf32 = true;
  auto tf32 = CreateBackend(o);
  EXPECT_NE(tf32->Describe().find("tf32 on"), std::string::npos);
  const HostMat a = RandomHost(256, 512, 4), b = RandomHost(512, 256, 5);
  Matrix ga = ToDevice(*tf32, a), gb = ToDevice(*tf32, b), gc(*tf32, 256, 256);
  tf32->Gemm(false, false, 1.0f, ga, gb, 0.0f, gc);
  Matrix ca = ToDevice(Cpu(), a), cb = ToDevice(Cpu(), b), cc(Cpu(), 256, 256);
  Cpu().Gemm(false, false, 1.0f, ca, cb, 0.0f, cc);
  EXPECT_LT(NormalizedError(ToHost(*tf32, gc), ToHost(Cpu(), cc)), 5e-3);
}

TEST_F(CudaVsCpu, ElementWiseOpsOnContiguousAndStridedViews) {
  const HostMat x = RandomHost(33, 70, 6), y = RandomHost(33, 70, 7), row = RandomHost(1, 40, 8);
  auto check = [&](const char* name, auto op) {
    const auto [want, got] = Both({x, y, row}, 1, op);
    EXPECT_LT(NormalizedError(got, want), 1e-5) << name;
  };
  check("fill", [](Backend& b, auto& m) { b.Fill(MatrixView(m[1]).ColRange(3, 40), 2.5f); });
  check("axpby", [](Backend& b, auto& m) { b.Axpby(1.5f, m[0], -0.5f, m[1]); });
  check("axpby beta 0", [](Backend& b, auto& m) { b.Axpby(1.5f, m[0], 0.0f, m[1]); });
  check("axpby strided", [](Backend& b, auto& m) {
    b.Axpby(2.0f, MatrixView(m[0]).ColRange(0, 40), 1.0f, MatrixView(m[1]).ColRange(30, 40));
  });
  check("add row", [](Backend& b, auto& m) {
    b.AddRowVector(0.5f, m[2], 2.0f, MatrixView(m[1]).ColRange(10, 40));
  });
  check("copy strided", [](Backend& b, auto& m) {
    b.Copy(MatrixView(m[0]).ColRange(1, 40), MatrixView(m[1]).ColRange(20, 40));
  });
  check("sigmoid", [](Backend& b, auto& m) { b.Sigmoid(m[0], m[1]); });
  check("tanh in place", [](Backend& b, auto& m) { b.Tanh(m[1], m[1]); });
  check("relu strided", [](Backend& b, auto& m) {
    b.Relu(MatrixView(m[0]).ColRange(0, 40), MatrixView(m[1]).ColRange(5, 40));
  });
  check("sigmoid'", [](Backend& b, auto& m) { b.SigmoidBackward(m[0], m[1], m[1]); });
  check("tanh'", [](Backend& b, auto& m) { b.TanhBackward(m[0], m[1], m[1]); });
  check("relu'", [](Backend& b, auto& m) { b.ReluBackward(m[0], m[1], m[1]); });
  check("mul rows", [](Backend& b, auto& m) {
    Matrix s(b, 1, 33);
    b.RowSumSquares(m[0], s);
    b.MulRowsAdd(s, m[0], 0.5f, m[1]);
  });
}

TEST_F(CudaVsCpu, ReductionsAndRandomFillsAgreeBitForBitWhereTheOperationsAreTheSame) {
  const HostMat x = RandomHost(1000, 300, 9), out = RandomHost(1, 300, 10);
  const auto [want, got] =
      Both({x, out}, 1, [](Backend& b, auto& m) { b.SumRows(0.5f, m[0], 2.0f, m[1]); });
  EXPECT_EQ(got.v, want.v) << "column sums";
  Matrix cx = ToDevice(Cpu(), x), gx = ToDevice(Gpu(), x);
  const double s_cpu = Cpu().SumSquares(cx), s_gpu = Gpu().SumSquares(gx);
  EXPECT_NEAR(s_gpu, s_cpu, 1e-12 * s_cpu);
  EXPECT_EQ(Gpu().SumSquares(gx), s_gpu) << "repeatable";
  Matrix cr(Cpu(), 1, 1000), gr(Gpu(), 1, 1000);
  Cpu().RowSumSquares(cx, cr);
  Gpu().RowSumSquares(gx, gr);
  EXPECT_LT(NormalizedError(ToHost(Gpu(), gr), ToHost(Cpu(), cr)), 1e-6);

  for (int kind = 0; kind < 3; ++kind) {
    const auto [w, g] = Both({x}, 0, [&](Backend& b, auto& m) {
      MatrixView v = MatrixView(m[0]).ColRange(7, 200);
      if (kind == 0) b.RandomUniform(5, 1000, v);
      if (kind == 1) b.RandomGaussian(5, 1000, 0.3f, v);
      if (kind == 2) b.SampleBernoulli(5, 1000, v, v);
    });
    if (kind == 1) {
      EXPECT_LT(NormalizedError(g, w), 1e-6) << "gaussian";  // device log/cos in double
    } else {
      EXPECT_EQ(g.v, w.v) << "fill " << kind;
    }
  }
}

// Factors whose products are inexact (0.7, 0.3, a momentum's 0.9): an FMA rounds once where the
// CPU rounds the product and the sum, so any contraction would show here.
TEST_F(CudaVsCpu, ElementWiseArithmeticIsBitForBitWithInexactFactors) {
  const float alpha = 0.7f, beta = 0.3f;
  const HostMat x = RandomHost(33, 70, 30), y = RandomHost(33, 70, 31), row = RandomHost(1, 40, 32);
  const HostMat act = RandomHost(33, 70, 33, 0.5);
  auto check = [&](const char* name, auto op) {
    const auto [want, got] = Both({x, y, row, act}, 1, op);
    EXPECT_EQ(got.v, want.v) << name;
  };
  check("axpby", [&](Backend& b, auto& m) { b.Axpby(alpha, m[0], beta, m[1]); });
  check("axpby strided", [&](Backend& b, auto& m) {
    b.Axpby(alpha, MatrixView(m[0]).ColRange(0, 40), beta, MatrixView(m[1]).ColRange(30, 40));
  });
  check("momentum", [&](Backend& b, auto& m) { b.Axpby(-0.008f, m[0], 0.9f, m[1]); });
  check("add row", [&](Backend& b, auto& m) {
    b.AddRowVector(alpha, m[2], beta, MatrixView(m[1]).ColRange(10, 40));
  });
  check("mul rows", [&](Backend& b, auto& m) {
    Matrix s(b, 1, 33);
    b.Fill(s, 1.3f);
    b.MulRowsAdd(s, m[0], beta, m[1]);
  });
  check("axpby scaled", [&](Backend& b, auto& m) {
    DeviceBuffer<float> scalar(b, 1);
    const float v = 1.3f;
    scalar.CopyFromHost(&v, 1);
    b.AxpbyScaled(scalar.Data(), alpha, m[0], beta, m[1]);
  });
  check("tanh'", [](Backend& b, auto& m) { b.TanhBackward(m[3], m[0], m[1]); });
  {  // one AdamW step: g, m, v (non-negative), p; the parameters and both moments compared
    HostMat v = y;
    for (float& e : v.v) e *= e;
    const AdamScalars s{0.9f, 0.1f, 0.95f, 0.05f, 0.0123f, 1.37f, 1e-3f, 0.9993f};
    for (int out = 1; out <= 3; ++out) {
      const auto [want, got] = Both({x, y, v, act}, out, [&](Backend& b, auto& m) {
        b.AdamUpdate(s, m[0], m[1], m[2], m[3]);
      });
      EXPECT_EQ(got.v, want.v) << "adam, tensor " << out;
    }
  }
  check("sigmoid'", [](Backend& b, auto& m) { b.SigmoidBackward(m[3], m[0], m[1]); });
  check("relu'", [](Backend& b, auto& m) { b.ReluBackward(m[0], m[3], m[1]); });
  check("relu", [](Backend& b, auto& m) { b.Relu(m[0], m[1]); });
  const HostMat big = RandomHost(1000, 300, 34), out = RandomHost(1, 300, 35);
  const auto [want, got] =
      Both({big, out}, 1, [&](Backend& b, auto& m) { b.SumRows(alpha, m[0], beta, m[1]); });
  EXPECT_EQ(got.v, want.v) << "column sums";
}

TEST_F(CudaVsCpu, SoftmaxCrossEntropyAndTheLabelCheck) {
  const int64_t rows = 300, cols = 8806;
  HostMat x = RandomHost(rows, cols, 11, 3.0);
  std::vector<int32_t> labels(rows);
  for (int64_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 131) % cols);
  auto run = [&](Backend& b, double* out_stats) {
    Matrix m = ToDevice(b, x), y(b, rows, cols);
    b.Softmax(m, y);
    DeviceBuffer<int32_t> l(b, labels.size());
    l.CopyFromHost(labels.data(), labels.size());
    DeviceBuffer<double> stats(b, 3);
    const double zeros[3] = {0, 0, 0};
    stats.CopyFromHost(zeros, 3);
    b.SoftmaxCrossEntropy(m, l.Data(), m, stats.Data());  // gradient in place
    const std::vector<double> s = stats.ToHost();
    std::copy(s.begin(), s.end(), out_stats);
    return std::make_pair(ToHost(b, y), ToHost(b, m));
  };
  double sc[3], sg[3];
  const auto [yc, gc] = run(Cpu(), sc);
  const auto [yg, gg] = run(Gpu(), sg);
  EXPECT_LT(NormalizedError(yg, yc), 1e-5);
  EXPECT_LT(NormalizedError(gg, gc), 1e-5);
  EXPECT_NEAR(sg[0], sc[0], 1e-9 * sc[0]);
  EXPECT_EQ(sg[1], sc[1]);
  EXPECT_EQ(sg[2], sc[2]);

  Matrix m(Gpu(), 2, 3);
  const int32_t bad[2] = {0, 3};
  DeviceBuffer<int32_t> l(Gpu(), 2);
  l.CopyFromHost(bad, 2);
  DeviceBuffer<double> stats(Gpu(), 3);
  Gpu().SoftmaxCrossEntropy(m, l.Data(), MatrixView(), stats.Data());
  try {
    Gpu().Synchronize();
    FAIL() << "expected the bad label to be reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("label 3 outside the 3 network outputs"),
              std::string::npos)
        << e.what();
  }
  Gpu().Synchronize();  // reported once
}

// Rows without columns: every label is outside the outputs. The CPU backend throws at once;
// the device reports it at the next synchronization, having summed no uninitialised scratch.
TEST_F(CudaVsCpu, CrossEntropyOfRowsWithoutColumnsReportsTheirLabels) {
  Matrix cm(Cpu(), 3, 0), gm(Gpu(), 3, 0);
  const int32_t labels[3] = {0, 0, 0};
  double cstats[3] = {0, 0, 0};
  EXPECT_THROW(Cpu().SoftmaxCrossEntropy(cm, labels, MatrixView(), cstats), Error);
  DeviceBuffer<int32_t> l(Gpu(), 3);
  l.CopyFromHost(labels, 3);
  DeviceBuffer<double> stats(Gpu(), 3);
  const double zeros[3] = {0, 0, 0};
  stats.CopyFromHost(zeros, 3);
  Gpu().SoftmaxCrossEntropy(gm, l.Data(), MatrixView(), stats.Data());
  try {
    Gpu().Synchronize();
    FAIL() << "expected the labels to be reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside the 0 network outputs"), std::string::npos)
        << e.what();
  }
  const std::vector<double> s = stats.ToHost();
  EXPECT_EQ(s[0], 0.0);
  EXPECT_EQ(s[1], 0.0);
}

// NaN logits: the arg-max (hence the accuracy) is the CPU backend's left-to-right scan's. Rows
// longer than the block, NaNs in column 0, in a thread's first or later column, everywhere.
TEST_F(CudaVsCpu, ArgMaxWithNaNLogitsIsTheCpus) {
  const int64_t rows = 8, cols = 600;
  HostMat x = RandomHost(rows, cols, 36);
  const float nan = NAN;
  x(0, 0) = nan;
  x(1, 4) = nan, x(1, 300) = 50.0f;
  x(2, 256) = nan, x(2, 1) = 50.0f;
  for (int64_t c = 0; c < cols; ++c) x(3, c) = nan;
  for (int64_t c = 1; c < cols; ++c) x(4, c) = nan;
  for (int64_t c = 0; c < cols; c += 3) x(5, c + 1) = nan, x(5, c) = 7.0f;
  x(6, 599) = nan, x(6, 598) = 50.0f, x(6, 0) = 50.0f;
  for (int64_t c = 0; c < cols; c += 2) x(7, c + 1) = nan;
  std::vector<int32_t> labels(rows);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t arg = 0;
    for (int64_t c = 1; c < cols; ++c) {
      if (x(r, c) > x(r, arg)) arg = c;
    }
    labels[r] = static_cast<int32_t>(arg);
  }
  auto run = [&](Backend& b) {
    Matrix m = ToDevice(b, x), y(b, rows, cols);
    b.Softmax(m, y);
    DeviceBuffer<int32_t> l(b, labels.size());
    l.CopyFromHost(labels.data(), labels.size());
    DeviceBuffer<double> stats(b, 3);
    const double zeros[3] = {0, 0, 0};
    stats.CopyFromHost(zeros, 3);
    b.SoftmaxCrossEntropy(m, l.Data(), MatrixView(), stats.Data());
    return std::make_pair(stats.ToHost(), ToHost(b, y));
  };
  const auto [sc, yc] = run(Cpu());
  const auto [sg, yg] = run(Gpu());
  EXPECT_EQ(sc[1], static_cast<double>(rows));
  EXPECT_EQ(sg[1], sc[1]) << "rows whose arg-max is the CPU's";
  EXPECT_EQ(sg[2], sc[2]);
  EXPECT_TRUE(std::isnan(sg[0]) && std::isnan(sc[0]));
  for (size_t i = 0; i < yc.v.size(); ++i) {
    ASSERT_EQ(std::isnan(yg.v[i]), std::isnan(yc.v[i])) << "softmax element " << i;
  }
}

TEST_F(CudaVsCpu, ReplicaMeanIsBitIdenticalFusedAndInTheFallback) {
  for (int n : {2, 16, 70}) {  // 70 > the fused limit: pairwise sums
    std::vector<HostMat> h;
    for (int k = 0; k < n; ++k) h.push_back(RandomHost(3, 1000, 200 + k));
    auto run = [&](Backend& b) {
      std::vector<Matrix> m;
      std::vector<MatrixView> v;
      for (const HostMat& x : h) m.push_back(ToDevice(b, x));
      for (Matrix& x : m) v.push_back(x);
      b.MeanOfReplicas(v);
      HostMat first = ToHost(b, m[0]);
      for (int k = 1; k < n; ++k) EXPECT_EQ(ToHost(b, m[k]).v, first.v);
      return first;
    };
    EXPECT_EQ(run(Gpu()).v, run(Cpu()).v) << n << " replicas";
  }
}

TEST_F(CudaVsCpu, TransfersThroughPinnedAndPageableMemory) {
  const HostMat x = RandomHost(17, 33, 12);
  HostStaging pinned(Gpu());
  float* p = pinned.Floats(x.v.size());
  std::copy(x.v.begin(), x.v.end(), p);
  Matrix big(Gpu(), 17, 40);
  MatrixView view = MatrixView(big).ColRange(4, 33);
  Gpu().CopyFromHost(p, view);
  std::fill(p, p + x.v.size(), -1.0f);  // the source may be reused at once
  HostMat back(17, 33);
  Gpu().CopyToHost(view, back.v.data());
  EXPECT_EQ(back.v, x.v);
  DeviceBuffer<double> d(Gpu(), 5);
  const double src[5] = {1, 2, 3, 4, 5};
  d.CopyFromHost(src, 5);
  EXPECT_EQ(d.ToHost(), std::vector<double>(src, src + 5));
}

// A few minibatches of SGD (with momentum) and of NG-SGD with max-change from the same
// initialisation on both backends: the parameters stay within 1e-4 relative (float rounding
// differences grow slowly over steps; a wrong kernel gives O(1) differences at once).
TEST_F(CudaVsCpu, TrainingStepsOfEveryOptimizerAgree) {
  NetworkSpec spec;
  spec.input_dim = 40;
  spec.output_dim = 30;
  spec.hidden_dims = {64, 64};
  spec.activation = LayerKind::kSigmoid;
  const HostMat x = RandomHost(128, 40, 13);
  std::vector<int32_t> labels(128);
  for (int i = 0; i < 128; ++i) labels[i] = (i * 7) % 30;
  for (const OptimizerType type : {OptimizerType::kSgd, OptimizerType::kNgsgd}) {
    OptimizerConfig oc;
    oc.type = type;
    oc.momentum = type == OptimizerType::kSgd ? 0.9 : 0.0;
    oc.minibatch = 128;
    auto run = [&](Backend& b) {
      Network net(b, spec);
      InitializeKaldiNnet1(net, 7);
      auto opt = CreateOptimizer(b, oc);
      opt->Prepare(net);
      Matrix xm = ToDevice(b, x);
      DeviceBuffer<int32_t> l(b, labels.size());
      l.CopyFromHost(labels.data(), labels.size());
      DeviceBuffer<double> stats(b, 3);
      const double zeros[3] = {0, 0, 0};
      stats.CopyFromHost(zeros, 3);
      for (int step = 0; step < 12; ++step) TrainStep(net, *opt, xm, l.Data(), 0.02f, stats.Data());
      return ToHost(b, net.Params());
    };
    EXPECT_LT(NormalizedError(run(Gpu()), run(Cpu())), 1e-4) << type;
  }
}

TEST_F(CudaVsCpu, RbmContrastiveDivergenceAgrees) {
  const HostMat v = RandomHost(100, 20, 14);
  auto run = [&](Backend& b, RbmUnits units) {
    Rbm rbm(b, 20, 32, units);
    rbm.InitRandom(0.1f, 3);
    Matrix vm = ToDevice(b, v);
    rbm.SetLearningRate(0.01f);
    for (int step = 0; step < 5; ++step) {
      rbm.Cd1(vm, 0.5f, 0.0002f, 9, static_cast<uint64_t>(step) * 100 * 32);
    }
    const double err = rbm.TakeStats().recon_sq_error;

    return std::make_pair(ToHost(b, rbm.Params()), err);
  };
  for (RbmUnits units : {RbmUnits::kGaussian, RbmUnits::kBernoulli}) {
    const auto [pc, ec] = run(Cpu(), units);
    const auto [pg, eg] = run(Gpu(), units);
    // Bernoulli samples compare draws with probabilities: a probability within rounding of its
    // draw may flip one sample, so the tolerance is that of a few flipped hidden units.
    EXPECT_LT(NormalizedError(pg, pc), 1e-3);
    EXPECT_NEAR(eg, ec, 1e-3 * ec);
  }
}

}  // namespace
}  // namespace mavg
