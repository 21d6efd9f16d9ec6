// SGD with momentum and L2 against the Kaldi nnet1 update written out on the host.
#include "engine/optim/sgd.h"

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

class Sgd : public ::testing::TestWithParam<std::string> {};

TEST_P(Sgd, MatchesKaldiNnet1UpdateOverSeveralSteps) {
  auto backend = testing::MakeBackend(GetParam());
  for (float momentum : {0.0f, 0.9f}) {
    for (float l2 : {0.0f, 1e-3f}) {
      const int in = 5, out = 3, n = 4;
      AffineLayer layer(in, out);
      HostMat params = RandomHost(1, layer.NumParams(), 1);
      Matrix dparams = ToDevice(*backend, params);
      layer.Bind(dparams.View().data);
      layer.SetBiasLearnRateCoef(0.1f);
      HostAffine ref{HostMat(out, in), HostMat(1, out)};
      std::copy(params.v.begin(), params.v.begin() + out * in, ref.w.v.begin());
      std::copy(params.v.begin() + out * in, params.v.end(), ref.b.v.begin());
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

TEST_P(Sgd, ResetForgetsMomentum) {
  auto backend = testing::MakeBackend(GetParam());
  AffineLayer a(2, 2), b(2, 2);
  Matrix pa(*backend, 1, a.NumParams()), pb(*backend, 1, b.NumParams());
  a.Bind(pa.View().data);
  b.Bind(pb.View().data);
  HostMat x = RandomHost(3, 2, 1), g = RandomHost(3, 2, 2);
  Matrix dx = ToDevice(*backend, x), dg = ToDevice(*backend, g);
  SgdOptimizer with_history(*backend, SgdOptions{0.5f, 0.0f});
  with_history.UpdateAffine(0, a, dx, dg, 0.1f);
  with_history.Reset();
  with_history.UpdateAffine(0, a, dx, dg, 0.1f);
  SgdOptimizer fresh(*backend, SgdOptions{0.5f, 0.0f});
  fresh.UpdateAffine(0, b, dx, dg, 0.1f);
  fresh.Reset();
  fresh.UpdateAffine(0, b, dx, dg, 0.1f);
  EXPECT_EQ(ToHost(*backend, pa).v, ToHost(*backend, pb).v);
  // Without the reset the second step would have carried momentum: check it differs.
  AffineLayer c(2, 2);
  Matrix pc(*backend, 1, c.NumParams());
  c.Bind(pc.View().data);
  SgdOptimizer no_reset(*backend, SgdOptions{0.5f, 0.0f});
  no_reset.UpdateAffine(0, c, dx, dg, 0.1f);
  no_reset.UpdateAffine(0, c, dx, dg, 0.1f);
  EXPECT_NE(ToHost(*backend, pc).v, ToHost(*backend, pa).v);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Sgd, ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace mavg
