// SGD with momentum and L2 against the Kaldi nnet1 update written out on the host.
#include "engine/optim/sgd.h"

#include <cmath>

#include "engine/backend/scale_histogram.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::HostMat;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;

struct HostAffine {
  HostMat w, b;
};

// Reference: C_W = m C_W + G^T X; c_b = m c_b + colsum(G);
//            W = (1 - lr l2 N) W - lr C_W; b -= lr coef c_b.
void RefStep(HostAffine& p, HostMat& cw, HostMat& cb, const HostMat& x, const HostMat& g, float lr,
             float m, float l2, float coef) {
  const int64_t n = x.rows;
  for (int64_t o = 0; o < p.w.rows; ++o) {
    for (int64_t i = 0; i < p.w.cols; ++i) {
      double s = 0;
      for (int64_t r = 0; r < n; ++r) s += g(r, o) * x(r, i);
      cw(o, i) = static_cast<float>(m * cw(o, i) + s);
      p.w(o, i) = static_cast<float>((1.0 - lr * l2 * n) * p.w(o, i) - lr * cw(o, i));
    }
    double s = 0;
    for (int64_t r = 0; r < n; ++r) s += g(r, o);
    cb(0, o) = static_cast<float>(m * cb(0, o) + s);
    p.b(0, o) = static_cast<float>(p.b(0, o) - lr * coef * cb(0, o));
  }
}

// A layer with random parameters on the backend, bound to them, and its host reference copy.
struct BoundLayer {
  BoundLayer(Backend& backend, int in, int out)
      : layer(in, out),
        host(RandomHost(1, layer.NumParams(), 1)),
        params(ToDevice(backend, host)),
        ref{HostMat(out, in), HostMat(1, out)} {
    layer.Bind(params.View().data);
    std::copy(host.v.begin(), host.v.begin() + out * in, ref.w.v.begin());
    std::copy(host.v.begin() + out * in, host.v.end(), ref.b.v.begin());
  }
  AffineLayer layer;
  HostMat host;   // the parameters' initial values
  Matrix params;  // on the backend; layer's weights and bias point into it
  HostAffine ref;
};

class Sgd : public ::testing::TestWithParam<std::string> {};

TEST_P(Sgd, MatchesKaldiNnet1UpdateOverSeveralSteps) {
  auto backend = testing::MakeBackend(GetParam());
  for (float momentum : {0.0f, 0.9f}) {
    for (float l2 : {0.0f, 1e-3f}) {
      const int in = 5, out = 3, n = 4;
      BoundLayer bound(*backend, in, out);
      AffineLayer& layer = bound.layer;
      HostAffine& ref = bound.ref;
      layer.SetBiasLearnRateCoef(0.1f);
      HostMat cw(out, in), cb(1, out);
      SgdOptimizer sgd(*backend, SgdOptions{momentum, l2});
      for (int step = 0; step < 3; ++step) {
        HostMat x = RandomHost(n, in, 10 + step), g = RandomHost(n, out, 20 + step);
        Matrix dx = ToDevice(*backend, x), dg = ToDevice(*backend, g);
        sgd.UpdateAffine(0, layer, dx, dg, 0.05f);
        RefStep(ref, cw, cb, x, g, 0.05f, momentum, l2, 0.1f);
      }
      EXPECT_LT(testing::NormalizedError(ToHost(*backend, layer.Weights()), ref.w), 1e-5)
          << "momentum " << momentum << " l2 " << l2;
      EXPECT_LT(testing::NormalizedError(ToHost(*backend, layer.Bias()), ref.b), 1e-5);
    }
  }
}

// After Reset the next step is the first step of a fresh optimizer: W - lr G^T X (the reference
// with its corrections zeroed), not the step that momentum would carry. Both outcomes are
// computed on the host, so the test fails whether Reset forgets nothing or breaks the update.
TEST_P(Sgd, ResetForgetsMomentum) {
  auto backend = testing::MakeBackend(GetParam());
  const int in = 4, out = 3, n = 5;
  const float lr = 0.1f, m = 0.5f;
  BoundLayer bound(*backend, in, out);
  AffineLayer& layer = bound.layer;
  HostAffine& ref = bound.ref;
  HostMat cw(out, in), cb(1, out);
  SgdOptimizer sgd(*backend, SgdOptions{m, 0.0f});
  HostMat x1 = RandomHost(n, in, 3), g1 = RandomHost(n, out, 4);
  HostMat x2 = RandomHost(n, in, 5), g2 = RandomHost(n, out, 6);
  Matrix dx1 = ToDevice(*backend, x1), dg1 = ToDevice(*backend, g1);
  Matrix dx2 = ToDevice(*backend, x2), dg2 = ToDevice(*backend, g2);
  sgd.UpdateAffine(0, layer, dx1, dg1, lr);
  RefStep(ref, cw, cb, x1, g1, lr, m, 0.0f, 1.0f);
  sgd.Reset();
  sgd.UpdateAffine(0, layer, dx2, dg2, lr);
  HostAffine carried = ref;  // what the second step would be without the reset
  HostMat cw_carried = cw, cb_carried = cb;
  RefStep(carried, cw_carried, cb_carried, x2, g2, lr, m, 0.0f, 1.0f);
  HostMat zero_w(out, in), zero_b(1, out);  // Reset: the corrections start from zero
  RefStep(ref, zero_w, zero_b, x2, g2, lr, m, 0.0f, 1.0f);
  const HostMat w = ToHost(*backend, layer.Weights()), b = ToHost(*backend, layer.Bias());
  EXPECT_LT(testing::NormalizedError(w, ref.w), 1e-5);
  EXPECT_LT(testing::NormalizedError(b, ref.b), 1e-5);
  // The two references differ by lr m C_W(step 1): far more than the tolerance.
  EXPECT_GT(testing::NormalizedError(w, carried.w), 1e-2);
}

// Max-change on SGD: the step's lr scaled by min(1, limit / (c sum_i |[x_i, 1]| |g_i|)), the
// bound NG-SGD limits, computed here on the host from x and g; c = 1 (the fork's measure) or
// lr (nnet2's). A limit far above the bound changes nothing; a binding one scales the whole
// step (weights and bias) by exactly that factor, and the stats count it.
TEST_P(Sgd, MaxChangeScalesTheStepByTheBound) {
  auto backend = testing::MakeBackend(GetParam());
  const int in = 5, out = 3, n = 4;
  const float lr = 0.05f;
  HostMat x = RandomHost(n, in, 30), g = RandomHost(n, out, 31);
  double norm_bound = 0.0;
  for (int r = 0; r < n; ++r) {
    double xx = 1.0, gg = 0.0;  // 1: the bias input
    for (int i = 0; i < in; ++i) xx += static_cast<double>(x(r, i)) * x(r, i);
    for (int o = 0; o < out; ++o) gg += static_cast<double>(g(r, o)) * g(r, o);
    norm_bound += std::sqrt(xx * gg);
  }
  for (bool with_lr : {false, true}) {
    const double c = with_lr ? lr : 1.0;
    for (double per_sample : {1e3, 0.25 * c * norm_bound / n}) {
      BoundLayer bound(*backend, in, out);
      AffineLayer& layer = bound.layer;
      HostAffine& ref = bound.ref;
      SgdOptions o;
      o.max_change_per_sample = per_sample;
      o.max_change_with_lr = with_lr;
      SgdOptimizer sgd(*backend, o);
      Matrix dx = ToDevice(*backend, x), dg = ToDevice(*backend, g);
      sgd.UpdateAffine(0, layer, dx, dg, lr);
      const bool binding = per_sample < 1.0;
      const double scale = binding ? 0.25 : 1.0;  // limit / (c bound) by construction
      HostMat cw(out, in), cb(1, out);
      RefStep(ref, cw, cb, x, g, static_cast<float>(lr * scale), 0.0f, 0.0f, 1.0f);
      EXPECT_LT(testing::NormalizedError(ToHost(*backend, layer.Weights()), ref.w), 1e-5)
          << "with_lr " << with_lr << " binding " << binding;
      EXPECT_LT(testing::NormalizedError(ToHost(*backend, layer.Bias()), ref.b), 1e-5);
      const Optimizer::UpdateStats stats = sgd.TakeUpdateStats();
      EXPECT_EQ(stats.updates, 1);
      EXPECT_EQ(stats.limited, binding ? 1 : 0);
      // The factor's histogram (median and 10th percentile per epoch): 0.25, or exactly 1.
      ASSERT_EQ(stats.scales.size(), static_cast<size_t>(kScaleBins));
      EXPECT_NEAR(*ScaleQuantile(stats.scales, 0.5), scale, 0.03 * scale);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Sgd, ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace mavg
