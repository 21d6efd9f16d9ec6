// Adam / AdamW against torch.optim.AdamW's update written out on the host in double, a closed
// form (the first step moves every parameter by lr against its gradient's sign), reset, and the
// state's round trip through State() / StateLoaded() (a checkpoint, or averaged workers).
#include "engine/optim/adam.h"

#include <cmath>
#include <utility>

#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::HostMat;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;

// The reference, one tensor: torch.optim.AdamW's single-tensor step t on the mean gradient g.
struct RefAdam {
  std::vector<double> m, v;
  void Step(std::vector<double>& p, const std::vector<double>& g, double lr, const AdamOptions& o,
            int t) {
    m.resize(p.size(), 0.0), v.resize(p.size(), 0.0);
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] *= 1.0 - lr * o.weight_decay;
      m[i] = o.beta1 * m[i] + (1.0 - o.beta1) * g[i];
      v[i] = o.beta2 * v[i] + (1.0 - o.beta2) * g[i] * g[i];
      const double mh = m[i] / (1.0 - std::pow(o.beta1, t));
      const double vh = v[i] / (1.0 - std::pow(o.beta2, t));
      p[i] -= lr * mh / (std::sqrt(vh) + o.epsilon);
    }
  }
};

// The layer's mean gradients over the minibatch: dW = G^T X / N, db = colsum(G) / N.
void MeanGradients(const HostMat& x, const HostMat& g, std::vector<double>& gw,
                   std::vector<double>& gb) {
  const int64_t n = x.rows, in = x.cols, out = g.cols;
  gw.assign(static_cast<size_t>(out * in), 0.0);
  gb.assign(static_cast<size_t>(out), 0.0);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t r = 0; r < n; ++r) {
      gb[o] += g(r, o) / static_cast<double>(n);
      for (int64_t i = 0; i < in; ++i) gw[o * in + i] += g(r, o) * x(r, i) / static_cast<double>(n);
    }
  }
}

struct Layer {
  Layer(Backend& backend, int in, int out)
      : layer(in, out), host(RandomHost(1, layer.NumParams(), 1)), params(ToDevice(backend, host)) {
    layer.Bind(params.View().data);
    w.assign(host.v.begin(), host.v.begin() + out * in);
    b.assign(host.v.begin() + out * in, host.v.end());
  }
  AffineLayer layer;
  HostMat host;
  Matrix params;
  std::vector<double> w, b;  // the reference's parameters
};

double MaxRelError(const HostMat& got, const std::vector<double>& want) {
  double worst = 0.0, scale = 1e-6;
  for (double x : want) scale = std::max(scale, std::abs(x));
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got.v[i] - want[i]) / scale);
  }
  return worst;
}

class Adam : public ::testing::TestWithParam<std::string> {};

TEST_P(Adam, MatchesTorchAdamWOverSeveralSteps) {
  auto backend = testing::MakeBackend(GetParam());
  // (an epsilon near the gradients' size makes the step depend on their scale: the mean over
  // the minibatch, not the sum, is what is checked there)
  for (auto [wd, eps] : {std::pair{0.0, 1e-8}, std::pair{0.1, 1e-8}, std::pair{0.0, 0.05}}) {
    const int in = 6, out = 4, n = 5;
    const AdamOptions o{0.9, 0.95, eps, wd, false};
    Layer l(*backend, in, out);
    l.layer.SetBiasLearnRateCoef(0.5f);
    AdamOptimizer adam(*backend, o);
    RefAdam rw, rb;
    for (int t = 1; t <= 6; ++t) {
      HostMat x = RandomHost(n, in, 10 + t), g = RandomHost(n, out, 20 + t);
      Matrix dx = ToDevice(*backend, x), dg = ToDevice(*backend, g);
      const float lr = 0.01f * static_cast<float>(t);  // a schedule: lr changes every step
      adam.UpdateAffine(0, l.layer, dx, dg, lr);
      std::vector<double> gw, gb;
      MeanGradients(x, g, gw, gb);
      rw.Step(l.w, gw, lr, o, t);
      rb.Step(l.b, gb, lr * 0.5, o, t);
    }
    EXPECT_LT(MaxRelError(ToHost(*backend, l.layer.Weights()), l.w), 2e-6)
        << "wd " << wd << " eps " << eps;
    EXPECT_LT(MaxRelError(ToHost(*backend, l.layer.Bias()), l.b), 2e-6)
        << "wd " << wd << " eps " << eps;
  }
}

// From zero moments the bias-corrected moments are g and g^2: the first step is
// -lr g / (|g| + eps), lr against the sign of each gradient, whatever its size.
TEST_P(Adam, FirstStepIsLrAgainstTheGradientsSign) {
  auto backend = testing::MakeBackend(GetParam());
  const int in = 3, out = 2, n = 4;
  Layer l(*backend, in, out);
  const HostMat before = ToHost(*backend, l.layer.Weights());
  HostMat x = RandomHost(n, in, 5), g = RandomHost(n, out, 6);
  for (float& v : g.v) v *= 1e3f;  // the scale does not matter
  Matrix dx = ToDevice(*backend, x), dg = ToDevice(*backend, g);
  AdamOptimizer adam(*backend, AdamOptions{});
  adam.UpdateAffine(0, l.layer, dx, dg, 0.25f);
  std::vector<double> gw, gb;
  MeanGradients(x, g, gw, gb);
  const HostMat after = ToHost(*backend, l.layer.Weights());
  for (size_t i = 0; i < gw.size(); ++i) {
    EXPECT_NEAR(after.v[i] - before.v[i], gw[i] > 0 ? -0.25 : 0.25, 1e-6) << i;
  }
}

// State() holds the moments and the step count: copied into a fresh optimizer (a checkpoint's
// round trip) it continues with the same bits; reset_each_epoch forgets them, the default does
// not (Reset then changes nothing).
TEST_P(Adam, StateRoundTripAndReset) {
  auto backend = testing::MakeBackend(GetParam());
  const int in = 4, out = 3, n = 6;
  Network net(*backend, NetworkSpec{in, out, {}, LayerKind::kSigmoid});
  HostMat x = RandomHost(n, in, 7), g1 = RandomHost(n, out, 8), g2 = RandomHost(n, out, 9);
  Matrix dx = ToDevice(*backend, x), dg1 = ToDevice(*backend, g1), dg2 = ToDevice(*backend, g2);
  auto run = [&](bool reset_each_epoch, int mode) {  // 0: straight on, 1: reloaded, 2: Reset
    Layer l(*backend, in, out);
    AdamOptions o;
    o.reset_each_epoch = reset_each_epoch;
    AdamOptimizer a(*backend, o);
    a.Prepare(net);
    a.UpdateAffine(0, l.layer, dx, dg1, 0.01f);
    a.UpdateAffine(0, l.layer, dx, dg2, 0.01f);
    AdamOptimizer b(*backend, o);
    b.Prepare(net);
    AdamOptimizer* next = &a;
    if (mode == 1) {
      const std::vector<MatrixView> from = a.State(), to = b.State();
      EXPECT_EQ(from.size(), 5u);  // m_W, v_W, m_b, v_b, the step counts
      for (size_t i = 0; i < from.size(); ++i) backend->Copy(from[i], to[i]);
      b.StateLoaded();
      next = &b;
    } else if (mode == 2) {
      a.Reset();
    }
    next->UpdateAffine(0, l.layer, dx, dg1, 0.01f);
    return ToHost(*backend, l.layer.Weights()).v;
  };
  EXPECT_EQ(run(false, 1), run(false, 0));
  EXPECT_EQ(run(false, 2), run(false, 0));
  // Reset with reset_each_epoch: the third step is a first step (lr against the sign), not the
  // step the moments would give.
  EXPECT_NE(run(true, 2), run(true, 0));
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Adam, ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace mavg
