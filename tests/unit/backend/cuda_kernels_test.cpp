// The CUDA backend's kernel bodies (backend/cuda/*.cuh), run on the host exactly as the kernels
// run them on a device: element-wise bodies for every (r, c) of the launch extent, row kernels
// phase by phase for every thread of a block, the partials combined as the block reduction
// does. Compared with the CPU backend, which is written independently; bit for bit where the
// two perform the same float operations (random fills, column sums, the replica mean).
// These run in every CI run, so the indexing and arithmetic of the kernels are checked without
// a GPU; only launches and transfers are left to tests/gpu.
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cuda/activation.cuh"
#include "engine/backend/cuda/elementwise.cuh"
#include "engine/backend/cuda/gemm_mapping.cuh"
#include "engine/backend/cuda/random.cuh"
#include "engine/backend/cuda/reduce.cuh"
#include "engine/backend/cuda/replica_mean.cuh"
#include "engine/backend/cuda/row_ops.cuh"
#include "engine/backend/cuda/softmax.cuh"
#include "tests/testing/test_util.h"

namespace mavg::cuda {
namespace {

using testing::HostMat;
using testing::NormalizedError;
using testing::RandomHost;

// A padded matrix: a rows x cols view with row stride cols + 3 (a sub-block, as the network's
// views are), and its contiguous twin.
struct Strided {
  std::vector<float> storage;
  MatrixView view;
  Strided(const HostMat& h, int64_t pad = 3)
      : storage(static_cast<size_t>(h.rows * (h.cols + pad)), -777.0f),
        view(storage.data(), h.rows, h.cols, h.cols + pad) {
    for (int64_t r = 0; r < h.rows; ++r) {
      std::copy_n(h.v.data() + r * h.cols, h.cols, view.Row(r));
    }
  }
  HostMat Host() const {
    HostMat h(view.rows, view.cols);
    for (int64_t r = 0; r < view.rows; ++r) std::copy_n(view.Row(r), view.cols, &h(r, 0));
    return h;
  }
  // The padding is untouched.
  bool PaddingIntact() const {
    for (int64_t r = 0; r < view.rows; ++r) {
      for (int64_t c = view.cols; c < view.stride; ++c) {
        if (view.Row(r)[c] != -777.0f) return false;
      }
    }
    return true;
  }
};

MatrixView ViewOf(HostMat& h) { return MatrixView(h.v.data(), h.rows, h.cols); }

// The element-wise launch of launch.cuh, on the host: every (r, c) of the extent.
template <typename Body>
void RunElementwise(const Extent& e, const Body& body) {
  for (int64_t r = 0; r < e.rows; ++r) {
    for (int64_t c = 0; c < e.cols; ++c) body(r, c);
  }
}

class CudaKernelBodies : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> cpu_ = CreateCpuBackend(1);
  Backend& Cpu() { return *cpu_; }
};

TEST_F(CudaKernelBodies, ExtentFlattensOnlyWhenEveryViewIsContiguous) {
  HostMat a = RandomHost(4, 5, 1);
  Strided s(a);
  const Extent flat = CommonExtent(ViewOf(a), ViewOf(a));
  EXPECT_TRUE(flat.flat);
  EXPECT_EQ(flat.rows, 1);
  EXPECT_EQ(flat.cols, 20);
  const Extent mixed = CommonExtent(ViewOf(a), s.view);
  EXPECT_FALSE(mixed.flat);
  EXPECT_EQ(mixed.rows, 4);
  EXPECT_EQ(mixed.cols, 5);
  EXPECT_EQ(WithExtent(s.view, mixed).stride, 8);
  HostMat empty(0, 5);
  EXPECT_EQ(CommonExtent(ViewOf(empty)).rows, 0);
}

TEST_F(CudaKernelBodies, FillAxpbyAddRowVectorMatchCpuOnStridedViews) {
  const HostMat x = RandomHost(6, 7, 2), y0 = RandomHost(6, 7, 3), row = RandomHost(1, 7, 4);
  for (bool strided_y : {false, true}) {
    for (float beta : {0.0f, 0.5f}) {
      HostMat xc = x, yc = y0, want = y0;
      Strided ys(y0);
      MatrixView y = strided_y ? ys.view : ViewOf(yc);
      const Extent e = CommonExtent(ConstMatrixView(ViewOf(xc)), ConstMatrixView(y));
      RunElementwise(
          e, AxpbyBody{WithExtent(ConstMatrixView(ViewOf(xc)), e), WithExtent(y, e), 1.5f, beta});
      Cpu().Axpby(1.5f, ViewOf(xc), beta, ViewOf(want));
      const HostMat got = strided_y ? ys.Host() : yc;
      EXPECT_LT(NormalizedError(got, want), 1e-7) << "beta " << beta;
      if (strided_y) {
        EXPECT_TRUE(ys.PaddingIntact());
      }
    }
  }
  // beta == 0 ignores NaN in y.
  HostMat nan_y(2, 3, NAN), ones(2, 3, 1.0f);
  const Extent e = CommonExtent(ViewOf(nan_y));
  RunElementwise(e, AxpbyBody{WithExtent(ConstMatrixView(ViewOf(ones)), e),
                              WithExtent(ViewOf(nan_y), e), 2.0f, 0.0f});
  for (float v : nan_y.v) EXPECT_EQ(v, 2.0f);

  Strided ms(y0);
  HostMat want = y0;
  HostMat rowc = row;
  RunElementwise(Extent{6, 7, false}, AddRowVectorBody{rowc.v.data(), Dev(ms.view), 2.0f, 0.25f});
  Cpu().AddRowVector(2.0f, ViewOf(rowc), 0.25f, ViewOf(want));
  EXPECT_LT(NormalizedError(ms.Host(), want), 1e-7);
  EXPECT_TRUE(ms.PaddingIntact());

  Strided fs(y0);
  const Extent fe = CommonExtent(fs.view);
  RunElementwise(fe, FillBody{WithExtent(fs.view, fe), 3.25f});
  for (float v : fs.Host().v) EXPECT_EQ(v, 3.25f);
  EXPECT_TRUE(fs.PaddingIntact());
}

template <typename Op>
HostMat Mapped(const HostMat& x) {
  HostMat xc = x, y(x.rows, x.cols);
  const Extent e = CommonExtent(ViewOf(xc), ViewOf(y));
  RunElementwise(
      e, MapBody<Op>{WithExtent(ConstMatrixView(ViewOf(xc)), e), WithExtent(ViewOf(y), e), Op{}});
  return y;
}
template <typename Op>
HostMat Mapped2(const HostMat& a, const HostMat& b) {
  HostMat ac = a, bc = b;
  Strided out(HostMat(a.rows, a.cols));
  const Extent e = CommonExtent(ViewOf(ac), ViewOf(bc), out.view);
  RunElementwise(
      e, Map2Body<Op>{WithExtent(ConstMatrixView(ViewOf(ac)), e),
                      WithExtent(ConstMatrixView(ViewOf(bc)), e), WithExtent(out.view, e), Op{}});
  EXPECT_TRUE(out.PaddingIntact());
  return out.Host();
}

TEST_F(CudaKernelBodies, ActivationsAndDerivativesMatchCpu) {
  const HostMat x = RandomHost(5, 9, 5, 4.0), dy = RandomHost(5, 9, 6);
  HostMat xc = x, want(5, 9), dwant(5, 9), dyc = dy;
  Cpu().Sigmoid(ViewOf(xc), ViewOf(want));
  EXPECT_LT(NormalizedError(Mapped<SigmoidOp>(x), want), 1e-6);
  const HostMat ys = want;
  HostMat ysc = ys;
  Cpu().SigmoidBackward(ViewOf(ysc), ViewOf(dyc), ViewOf(dwant));
  EXPECT_LT(NormalizedError(Mapped2<SigmoidGradOp>(ys, dy), dwant), 1e-6);

  Cpu().Tanh(ViewOf(xc), ViewOf(want));
  EXPECT_LT(NormalizedError(Mapped<TanhOp>(x), want), 1e-6);
  ysc = want;
  Cpu().TanhBackward(ViewOf(ysc), ViewOf(dyc), ViewOf(dwant));
  EXPECT_LT(NormalizedError(Mapped2<TanhGradOp>(want, dy), dwant), 1e-6);

  Cpu().Relu(ViewOf(xc), ViewOf(want));
  EXPECT_EQ(Mapped<ReluOp>(x).v, want.v);
  ysc = want;
  Cpu().ReluBackward(ViewOf(ysc), ViewOf(dyc), ViewOf(dwant));
  EXPECT_EQ(Mapped2<ReluGradOp>(want, dy).v, dwant.v);
}

TEST_F(CudaKernelBodies, RandomFillsAreTheCpuBackendsNumbersBitForBit) {
  const uint64_t seed = 99, offset = 12345;
  Strided s(HostMat(7, 11));
  HostMat want(7, 11);
  for (int kind = 0; kind < 3; ++kind) {
    const Extent e = CommonExtent(s.view);
    HostMat probs = RandomHost(7, 11, 8);
    for (float& p : probs.v) p = 0.5f + 0.4f * std::tanh(p);
    if (kind == 0) {
      RunElementwise(e, UniformBody{WithExtent(s.view, e), e.cols, seed, offset});
      Cpu().RandomUniform(seed, offset, ViewOf(want));
    } else if (kind == 1) {
      RunElementwise(e, GaussianBody{WithExtent(s.view, e), e.cols, seed, offset, 0.5f});
      Cpu().RandomGaussian(seed, offset, 0.5f, ViewOf(want));
    } else {
      const Extent pe = CommonExtent(ConstMatrixView(ViewOf(probs)), s.view);
      RunElementwise(pe, BernoulliBody{WithExtent(ConstMatrixView(ViewOf(probs)), pe),
                                       WithExtent(s.view, pe), pe.cols, seed, offset});
      Cpu().SampleBernoulli(seed, offset, ViewOf(probs), ViewOf(want));
    }
    EXPECT_EQ(s.Host().v, want.v) << "fill kind " << kind;
    EXPECT_TRUE(s.PaddingIntact());
  }
  // A contiguous fill (one flattened row) numbers its elements the same way.
  HostMat flat(7, 11);
  const Extent fe = CommonExtent(ViewOf(flat));
  ASSERT_TRUE(fe.flat);
  RunElementwise(fe, UniformBody{WithExtent(ViewOf(flat), fe), fe.cols, seed, offset});
  Cpu().RandomUniform(seed, offset, ViewOf(want));
  EXPECT_EQ(flat.v, want.v);
}

// One block of `nt` threads over a row, phase by phase.
struct RowRun {
  float max;
  int64_t arg;
  double exp_sum;
};
RowRun ReduceRowPhases(const float* row, int64_t cols, int nt) {
  ArgMax m{0.0f, -1};
  for (int t = 0; t < nt; ++t) m = CombineArgMax(m, RowArgMaxPartial(row, cols, t, nt));
  double s = 0.0;
  for (int t = 0; t < nt; ++t) s += RowExpSumPartialDouble(row, cols, m.value, t, nt);
  return RowRun{m.value, m.index, s};
}

TEST_F(CudaKernelBodies, ArgMaxTakesTheFirstMaximumWhateverTheThreadCount) {
  std::vector<float> row = {1, 5, 2, 5, 0, 5, -1};
  for (int nt : {1, 2, 3, 4, 7, 256}) {
    const RowRun r = ReduceRowPhases(row.data(), 7, nt);
    EXPECT_EQ(r.arg, 1) << nt << " threads";
    EXPECT_EQ(r.max, 5.0f);
  }
}

TEST_F(CudaKernelBodies, ArgMaxWithNaNIsTheCpuBackendsWhateverTheThreadCount) {
  const float nan = NAN, inf = INFINITY;
  const std::vector<std::vector<float>> rows = {
      {nan, 1, 2, 3, 4, 5},         {1, nan, 3, 2, 3, 0},
      {3, nan, 1, nan, 2, 3},       {nan, nan, nan, nan, nan, nan},
      {1, nan, nan, nan, nan, nan}, {-inf, nan, -inf, -inf, nan, -inf},
      {2, nan, 2, nan, 5, 5},       {nan, inf, 1, 2, 3, 4},
      {0, 1, 2, nan, inf, inf}};
  const int64_t cols = 6;
  HostMat x(static_cast<int64_t>(rows.size()), cols);
  std::vector<int32_t> want(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    std::copy(rows[r].begin(), rows[r].end(), &x(static_cast<int64_t>(r), 0));
    int64_t arg = 0;  // the CPU backend's scan
    for (int64_t c = 1; c < cols; ++c) {
      if (rows[r][c] > rows[r][arg]) arg = c;
    }
    want[r] = static_cast<int32_t>(arg);
  }
  for (int nt : {1, 2, 3, 4, 5, 7, 256}) {
    for (size_t r = 0; r < rows.size(); ++r) {
      const RowRun run = ReduceRowPhases(rows[r].data(), cols, nt);
      EXPECT_EQ(run.arg, want[r]) << "row " << r << ", " << nt << " threads";
      EXPECT_EQ(std::isnan(run.max), std::isnan(rows[r][want[r]])) << "row " << r;
    }
  }
  // The CPU backend counts every row correct when its label is that arg-max.
  double stats[3] = {0, 0, 0};
  Cpu().SoftmaxCrossEntropy(ViewOf(x), want.data(), MatrixView(), stats);
  EXPECT_EQ(stats[1], static_cast<double>(rows.size()));
}

TEST_F(CudaKernelBodies, RowsWithoutColumnsHaveNoValidLabel) {
  // The cross-entropy kernel runs for rows > 0 with no columns too: each row's label is then
  // reported and its scratch written (zeros), as the CPU backend throws for such labels.
  for (int32_t label : {0, 1, -1}) EXPECT_FALSE(LabelValid(label, 0));
}

TEST_F(CudaKernelBodies, SoftmaxPhasesMatchCpu) {
  HostMat x = RandomHost(9, 300, 9, 3.0);
  x(0, 4) = 80.0f;  // a large logit: the maximum is subtracted first
  HostMat want(9, 300);
  Cpu().Softmax(ViewOf(x), ViewOf(want));
  for (int nt : {1, 5, 256}) {
    HostMat y(9, 300);
    for (int64_t r = 0; r < x.rows; ++r) {
      const float* xr = &x(r, 0);
      ArgMax m{0.0f, -1};
      for (int t = 0; t < nt; ++t) m = CombineArgMax(m, RowArgMaxPartial(xr, x.cols, t, nt));
      float s = 0.0f;
      for (int t = 0; t < nt; ++t) s += RowExpSumPartial(xr, x.cols, m.value, t, nt);
      for (int t = 0; t < nt; ++t) SoftmaxWrite(xr, &y(r, 0), x.cols, m.value, 1.0f / s, t, nt);
    }
    EXPECT_LT(NormalizedError(y, want), 1e-6) << nt << " threads";
  }
}

TEST_F(CudaKernelBodies, CrossEntropyPhasesMatchCpuLossAccuracyAndGradientInPlace) {
  const int64_t rows = 13, cols = 41;
  HostMat x = RandomHost(rows, cols, 10, 2.0);
  std::vector<int32_t> labels(rows);
  for (int64_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>((r * 7) % cols);
  // Make some rows correct: the label is the arg-max.
  for (int64_t r = 0; r < rows; r += 3) x(r, labels[r]) = 9.0f;
  HostMat want_grad = x;
  double want[3] = {0, 0, 0};
  Cpu().SoftmaxCrossEntropy(ViewOf(want_grad), labels.data(), ViewOf(want_grad), want);

  const int nt = 6;
  HostMat g = x;  // the gradient overwrites the logits, as in training
  std::vector<double> row_loss(rows), row_correct(rows);
  for (int64_t r = 0; r < rows; ++r) {
    ASSERT_TRUE(LabelValid(labels[r], cols));
    float* xr = &g(r, 0);
    const RowRun run = ReduceRowPhases(xr, cols, nt);
    row_loss[r] = RowCrossEntropy(run.exp_sum, xr[labels[r]], run.max);
    row_correct[r] = run.arg == labels[r] ? 1.0 : 0.0;
    const float inv = static_cast<float>(1.0 / run.exp_sum);
    for (int t = 0; t < nt; ++t)
      CrossEntropyGradWrite(xr, xr, cols, run.max, inv, labels[r], t, nt);
  }
  double loss = 0.0, correct = 0.0;
  for (int t = 0; t < nt; ++t) {
    loss += StridedSumPartial(row_loss.data(), rows, t, nt);
    correct += StridedSumPartial(row_correct.data(), rows, t, nt);
  }
  EXPECT_NEAR(loss, want[0], 1e-9 * std::fabs(want[0]));
  EXPECT_EQ(correct, want[1]);
  EXPECT_GE(correct, 5.0);
  EXPECT_LT(NormalizedError(g, want_grad), 1e-6);
  EXPECT_FALSE(LabelValid(-1, cols));
  EXPECT_FALSE(LabelValid(static_cast<int32_t>(cols), cols));
  for (const auto& [row, label] : std::vector<std::pair<int64_t, int32_t>>{
           {0, -1}, {0, 41}, {1023, INT32_MIN}, {(int64_t{1} << 30), INT32_MAX}}) {
    const int64_t packed = PackLabelError(row, label);
    EXPECT_NE(packed, 0);  // 0 means "no error"
    int64_t r = -5;
    int32_t l = 0;
    UnpackLabelError(packed, &r, &l);
    EXPECT_EQ(r, row);
    EXPECT_EQ(l, label);
  }
}

TEST_F(CudaKernelBodies, ColumnSumsAreTheCpuBackendsBitForBit) {
  const HostMat m = RandomHost(37, 19, 11);
  Strided ms(m);
  HostMat want = RandomHost(1, 19, 12), got = want;
  for (int64_t c = 0; c < 19; ++c) {
    ColumnSumBody{Dev(ConstMatrixView(ms.view)), 37, got.v.data(), 0.5f, 2.0f}(c);
  }
  HostMat mc = m;
  Cpu().SumRows(0.5f, ViewOf(mc), 2.0f, ViewOf(want));
  EXPECT_EQ(got.v, want.v);
}

// Products that meet sums are rounded one at a time on a device too (rounding.cuh); on the host
// these run the plain expressions, so this pins the CPU backend's formulas, with factors whose
// products are inexact (tests/gpu repeats it on a device, where contraction would show).
TEST_F(CudaKernelBodies, ArithmeticBodiesAreTheCpuBackendsBitForBitAtAnyScale) {
  const float alpha = 0.7f, beta = 0.3f, scalar = 1.3f;
  const HostMat x = RandomHost(6, 7, 40), y0 = RandomHost(6, 7, 41), row = RandomHost(1, 7, 42);
  const HostMat scales = RandomHost(1, 6, 43);
  HostMat xc = x, rowc = row, sc = scales;
  const ConstMatrixView xv = ViewOf(xc);
  auto body = [&](auto make) {
    Strided ys(y0);
    RunElementwise(Extent{6, 7, false}, make(Dev(ys.view)));
    EXPECT_TRUE(ys.PaddingIntact());
    return ys.Host();
  };
  HostMat want = y0;
  Cpu().Axpby(alpha, xv, beta, ViewOf(want));
  EXPECT_EQ(body([&](DevView y) { return AxpbyBody{Dev(xv), y, alpha, beta}; }).v, want.v);
  want = y0;
  Cpu().AxpbyScaled(&scalar, alpha, xv, beta, ViewOf(want));
  EXPECT_EQ(body([&](DevView y) {
              return AxpbyScaledBody{Dev(xv), y, &scalar, alpha, beta};
            }).v,
            want.v);
  want = y0;
  Cpu().AddRowVector(alpha, ViewOf(rowc), beta, ViewOf(want));
  EXPECT_EQ(body([&](DevView y) {
              return AddRowVectorBody{rowc.v.data(), y, alpha, beta};
            }).v,
            want.v);
  want = y0;
  Cpu().MulRowsAdd(ViewOf(sc), xv, beta, ViewOf(want));
  EXPECT_EQ(body([&](DevView y) {
              return MulRowsAddBody{sc.v.data(), Dev(xv), y, beta};
            }).v,
            want.v);

  {  // one AdamW step (the parameters strided; the quotient and square root as the CPU's)
    const AdamScalars s{0.9f, 0.1f, 0.95f, 0.05f, 0.0123f, 1.37f, 1e-3f, 0.9993f};
    HostMat m = RandomHost(6, 7, 47), v = RandomHost(6, 7, 48);
    for (float& e : v.v) e *= e;
    HostMat wm = m, wv = v, wp = y0;
    Cpu().AdamUpdate(s, xv, ViewOf(wm), ViewOf(wv), ViewOf(wp));
    Strided ps(y0);
    RunElementwise(Extent{6, 7, false},
                   AdamBody{s, Dev(xv), Dev(ViewOf(m)), Dev(ViewOf(v)), Dev(ps.view)});
    EXPECT_TRUE(ps.PaddingIntact());
    EXPECT_EQ(ps.Host().v, wp.v);
    EXPECT_EQ(m.v, wm.v);
    EXPECT_EQ(v.v, wv.v);
    EXPECT_NE(wp.v, y0.v);
  }

  HostMat sums = RandomHost(1, 7, 44), got = sums;
  for (int64_t c = 0; c < 7; ++c) ColumnSumBody{Dev(xv), 6, got.v.data(), alpha, beta}(c);
  Cpu().SumRows(alpha, xv, beta, ViewOf(sums));
  EXPECT_EQ(got.v, sums.v);

  HostMat yact = RandomHost(6, 7, 45, 0.5), dy = RandomHost(6, 7, 46), d(6, 7);
  Cpu().TanhBackward(ViewOf(yact), ViewOf(dy), ViewOf(d));
  EXPECT_EQ(Mapped2<TanhGradOp>(yact, dy).v, d.v);
  Cpu().SigmoidBackward(ViewOf(yact), ViewOf(dy), ViewOf(d));
  EXPECT_EQ(Mapped2<SigmoidGradOp>(yact, dy).v, d.v);
}

TEST_F(CudaKernelBodies, RowProductsAndScalingsMatchCpu) {
  const HostMat x = RandomHost(8, 300, 13);
  Strided xs(x);
  HostMat want(1, 8), got(1, 8);
  HostMat xc = x;
  Cpu().RowSumSquares(ViewOf(xc), ViewOf(want));
  double total = 0.0;
  for (int64_t r = 0; r < 8; ++r) {
    double s = 0.0;
    for (int t = 0; t < 256; ++t) s += RowSquaresPartial(xs.view.Row(r), 300, t, 256);
    got.v[r] = static_cast<float>(s);
    total += s;
  }
  EXPECT_LT(NormalizedError(got, want), 1e-6);
  EXPECT_NEAR(total, Cpu().SumSquares(ViewOf(xc)), 1e-9 * total);

  const HostMat scales = RandomHost(1, 8, 14), y0 = RandomHost(8, 300, 15);
  for (float beta : {0.0f, -0.5f}) {
    Strided ys(y0);
    HostMat wy = y0, sc = scales;
    RunElementwise(Extent{8, 300, false},
                   MulRowsAddBody{sc.v.data(), Dev(ConstMatrixView(xs.view)), Dev(ys.view), beta});
    Cpu().MulRowsAdd(ViewOf(sc), ViewOf(xc), beta, ViewOf(wy));
    EXPECT_LT(NormalizedError(ys.Host(), wy), 1e-7);
    EXPECT_TRUE(ys.PaddingIntact());
  }
}

TEST_F(CudaKernelBodies, ReplicaMeanIsTheRankOrderMeanBitForBit) {
  for (int n : {1, 2, 3, 16}) {
    std::vector<HostMat> a, b;
    for (int k = 0; k < n; ++k) a.push_back(RandomHost(5, 6, 100 + k));
    b = a;
    std::vector<Strided> strided;
    for (int k = 0; k < n; ++k) strided.emplace_back(a[k], k % 2 == 0 ? 0 : 2);
    ReplicaMeanBody body{};
    body.n = n;
    body.inv_n = 1.0f / static_cast<float>(n);
    for (int k = 0; k < n; ++k) {
      body.data[k] = strided[k].view.data;
      body.stride[k] = strided[k].view.stride;
    }
    RunElementwise(Extent{5, 6, false}, body);
    std::vector<MatrixView> views;
    for (HostMat& m : b) views.push_back(ViewOf(m));
    Cpu().MeanOfReplicas(views);
    for (int k = 0; k < n; ++k) EXPECT_EQ(strided[k].Host().v, b[0].v) << n << " replicas";
  }
}

// A plain column-major GEMM, as cuBLAS defines it: C(i, j) = sum_p op1(i, p) op2(p, j), with
// element (i, j) of a column-major matrix at i + j * ld.
void ColumnMajorReference(const ColumnMajorGemm& g, float alpha, float beta) {
  auto at = [](const float* m, int64_t ld, bool trans, int64_t i, int64_t j) {
    return trans ? m[j + i * ld] : m[i + j * ld];
  };
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double s = 0.0;
      for (int64_t p = 0; p < g.k; ++p) {
        s += static_cast<double>(at(g.first, g.ld_first, g.trans_first, i, p)) *
             at(g.second, g.ld_second, g.trans_second, p, j);
      }
      float& c = g.c[i + j * g.ldc];
      c = static_cast<float>(alpha * s + (beta != 0.0f ? beta * c : 0.0f));
    }
  }
}

TEST_F(CudaKernelBodies, RowMajorGemmMappingGivesTheCpuProduct) {
  const int64_t m = 5, n = 7, k = 4;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Strided a(RandomHost(ta ? k : m, ta ? m : k, 20)), b(RandomHost(tb ? n : k, tb ? k : n, 21));
      const HostMat c0 = RandomHost(m, n, 22);
      Strided c(c0);
      HostMat ac = a.Host(), bc = b.Host(), want = c0;
      ColumnMajorReference(MapRowMajorGemm(ta, tb, a.view, b.view, c.view), 0.75f, 0.5f);
      Cpu().Gemm(ta, tb, 0.75f, ViewOf(ac), ViewOf(bc), 0.5f, ViewOf(want));
      EXPECT_LT(NormalizedError(c.Host(), want), 1e-6) << "trans " << ta << tb;
      EXPECT_TRUE(c.PaddingIntact());
    }
  }
}

}  // namespace
}  // namespace mavg::cuda
