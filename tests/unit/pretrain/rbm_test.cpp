// RBM CD-1 against the exact log-likelihood gradient of a binary RBM small enough to enumerate,
// learning on data with structure, Kaldi's explosion guard, and the stack turned into a DNN.
#include "engine/pretrain/rbm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/backend/counter_rng.h"
#include "engine/nn/network.h"
#include "engine/pretrain/dbn.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::HostMat;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;

class RbmTest : public testing::BackendTest {};

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// A binary RBM with every state enumerable: exact log-likelihood and its gradient.
struct ExactRbm {
  int nv, nh;
  HostMat w, b, c;  // [nh x nv], [1 x nv], [1 x nh]

  // log Z by enumerating v and summing h out analytically.
  double LogZ() const {
    double z = 0;
    for (int s = 0; s < (1 << nv); ++s) z += std::exp(FreeEnergyNeg(s));
    return std::log(z);
  }
  // -F(v) = v.b + sum_j log(1 + exp(c_j + W_j v)) for the visible state bits `s`.
  double FreeEnergyNeg(int s) const {
    double e = 0;
    for (int i = 0; i < nv; ++i) e += ((s >> i) & 1) * b(0, i);
    for (int j = 0; j < nh; ++j) e += std::log1p(std::exp(Act(s, j)));
    return e;
  }
  double Act(int s, int j) const {
    double a = c(0, j);
    for (int i = 0; i < nv; ++i) a += ((s >> i) & 1) * w(j, i);
    return a;
  }
  double MeanLogLikelihood(const std::vector<int>& data) const {
    const double lz = LogZ();
    double ll = 0;
    for (int s : data) ll += FreeEnergyNeg(s) - lz;
    return ll / static_cast<double>(data.size());
  }
  // Gradient of the mean log-likelihood w.r.t. (W, b, c), flattened in the Rbm's order.
  std::vector<double> Gradient(const std::vector<int>& data) const {
    std::vector<double> g(static_cast<size_t>(nh * nv + nv + nh), 0.0);
    auto add = [&](int s, double weight) {  // weight * E_{p(h|v)}[sufficient statistics]
      for (int j = 0; j < nh; ++j) {
        const double pj = Sigmoid(Act(s, j));
        for (int i = 0; i < nv; ++i) g[j * nv + i] += weight * pj * ((s >> i) & 1);
        g[nh * nv + nv + j] += weight * pj;
      }
      for (int i = 0; i < nv; ++i) g[nh * nv + i] += weight * ((s >> i) & 1);
    };
    for (int s : data) add(s, 1.0 / static_cast<double>(data.size()));
    const double lz = LogZ();
    for (int s = 0; s < (1 << nv); ++s) add(s, -std::exp(FreeEnergyNeg(s) - lz));
    return g;
  }
};

HostMat Patterns(const std::vector<int>& data, int nv) {
  HostMat v(static_cast<int64_t>(data.size()), nv);
  for (size_t r = 0; r < data.size(); ++r) {
    for (int i = 0; i < nv; ++i)
      v(static_cast<int64_t>(r), i) = static_cast<float>((data[r] >> i) & 1);
  }
  return v;
}

void SetParams(Backend& b, Rbm& rbm, const ExactRbm& e) {
  b.CopyFromHost(e.w.v.data(), rbm.Weights());
  b.CopyFromHost(e.b.v.data(), rbm.VisibleBias());
  b.CopyFromHost(e.c.v.data(), rbm.HiddenBias());
}

ExactRbm GetParams(Backend& b, Rbm& rbm) {
  ExactRbm e{rbm.Visible(), rbm.Hidden(), ToHost(b, rbm.Weights()), ToHost(b, rbm.VisibleBias()),
             ToHost(b, rbm.HiddenBias())};
  return e;
}

TEST_P(RbmTest, Cd1CorrelatesWithTheExactLogLikelihoodGradient) {
  const int nv = 5, nh = 3;
  ExactRbm exact{nv, nh, RandomHost(nh, nv, 1, 0.5), RandomHost(1, nv, 2, 0.5),
                 RandomHost(1, nh, 3, 0.5)};
  const std::vector<int> patterns = {0b11000, 0b11100, 0b00111, 0b00011, 0b10101, 0b11111};
  std::vector<int> data;
  for (int k = 0; k < 4000; ++k) data.insert(data.end(), patterns.begin(), patterns.end());
  Rbm rbm(B(), nv, nh, RbmUnits::kBernoulli);
  SetParams(B(), rbm, exact);
  const HostMat before = ToHost(B(), rbm.Params());
  Matrix v = ToDevice(B(), Patterns(data, nv));
  // lr 1, no momentum, no weight cost: the parameter change is the CD-1 gradient estimate.
  rbm.SetLearningRate(1.0f);
  rbm.Cd1(v, 0.0f, 0.0f, 9, 0);
  const HostMat after = ToHost(B(), rbm.Params());
  const std::vector<double> g = exact.Gradient(patterns);
  double dot = 0, n1 = 0, n2 = 0;
  for (size_t k = 0; k < g.size(); ++k) {
    const double d = static_cast<double>(after.v[k]) - before.v[k];
    dot += d * g[k], n1 += d * d, n2 += g[k] * g[k];
  }
  const double cosine = dot / std::sqrt(n1 * n2);
  std::cout << "cosine(CD-1 update, exact gradient) = " << cosine << "\n";
  EXPECT_GT(cosine, 0.7);
}

// Kaldi's RbmUpdate written out on the host in double precision, the hidden samples drawn from
// the same counter-based stream the backends use.
struct HostRbm {
  int nv, nh;
  bool gaussian;
  std::vector<double> w, b, c, dw, db, dc;  // w [nh x nv]

  static double Sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }
  void Step(const HostMat& v, double lr, double m, double l2, uint64_t seed, uint64_t offset) {
    const int n = static_cast<int>(v.rows);
    std::vector<double> ph(n * nh), s(n * nh), nv_(n * nv), nh_(n * nh);
    for (int r = 0; r < n; ++r) {
      for (int j = 0; j < nh; ++j) {
        double a = c[j];
        for (int i = 0; i < nv; ++i) a += v(r, i) * w[j * nv + i];
        ph[r * nh + j] = Sig(a);
        const float p = static_cast<float>(ph[r * nh + j]);
        s[r * nh + j] = counter_rng::Uniform(seed, offset + r * nh + j) < p ? 1.0 : 0.0;
      }
      for (int i = 0; i < nv; ++i) {
        double a = b[i];
        for (int j = 0; j < nh; ++j) a += s[r * nh + j] * w[j * nv + i];
        nv_[r * nv + i] = gaussian ? a : Sig(a);
      }
      for (int j = 0; j < nh; ++j) {
        double a = c[j];
        for (int i = 0; i < nv; ++i) a += nv_[r * nv + i] * w[j * nv + i];
        nh_[r * nh + j] = Sig(a);
      }
    }
    const double k = lr / n;
    for (int j = 0; j < nh; ++j) {
      for (int i = 0; i < nv; ++i) {
        double g = 0;
        for (int r = 0; r < n; ++r)
          g += ph[r * nh + j] * v(r, i) - nh_[r * nh + j] * nv_[r * nv + i];
        dw[j * nv + i] = m * dw[j * nv + i] + k * g - lr * l2 * w[j * nv + i];
      }
    }
    for (int i = 0; i < nv; ++i) {
      double g = 0;
      for (int r = 0; r < n; ++r) g += v(r, i) - nv_[r * nv + i];
      db[i] = m * db[i] + k * g;
    }
    for (int j = 0; j < nh; ++j) {
      double g = 0;
      for (int r = 0; r < n; ++r) g += ph[r * nh + j] - nh_[r * nh + j];
      dc[j] = m * dc[j] + k * g;
    }
    for (size_t q = 0; q < w.size(); ++q) w[q] += dw[q];
    for (int i = 0; i < nv; ++i) b[i] += db[i];
    for (int j = 0; j < nh; ++j) c[j] += dc[j];
  }
};

TEST_P(RbmTest, Cd1MatchesKaldisUpdateWithMomentumAndWeightCost) {
  for (const bool gaussian : {false, true}) {
    const int nv = 6, nh = 5, n = 8;
    Rbm rbm(B(), nv, nh, gaussian ? RbmUnits::kGaussian : RbmUnits::kBernoulli);
    const HostMat w = RandomHost(nh, nv, 1, 0.3), b = RandomHost(1, nv, 2, 0.3),
                  c = RandomHost(1, nh, 3, 0.3);
    B().CopyFromHost(w.v.data(), rbm.Weights());
    B().CopyFromHost(b.v.data(), rbm.VisibleBias());
    B().CopyFromHost(c.v.data(), rbm.HiddenBias());
    HostRbm ref{nv,
                nh,
                gaussian,
                {w.v.begin(), w.v.end()},
                {b.v.begin(), b.v.end()},
                {c.v.begin(), c.v.end()},
                std::vector<double>(nh * nv, 0.0),
                std::vector<double>(nv, 0.0),
                std::vector<double>(nh, 0.0)};
    for (int step = 0; step < 3; ++step) {  // the momenta carry over between steps
      HostMat v = RandomHost(n, nv, 10 + step, gaussian ? 1.0 : 0.0);
      if (!gaussian) {
        Rng rng(20 + step);
        for (float& x : v.v) x = rng.Uniform() < 0.5 ? 1.0f : 0.0f;
      }
      Matrix dv = ToDevice(B(), v);
      rbm.SetLearningRate(0.2f);
      rbm.Cd1(dv, 0.7f, 0.01f, 77, uint64_t(step) * n * nh);
      ASSERT_EQ(rbm.TakeStats().guards, 0);
      ref.Step(v, 0.2, 0.7, 0.01, 77, uint64_t(step) * n * nh);
    }
    const HostMat got = ToHost(B(), rbm.Params());
    std::vector<double> want = ref.w;
    want.insert(want.end(), ref.b.begin(), ref.b.end());
    want.insert(want.end(), ref.c.begin(), ref.c.end());
    ASSERT_EQ(got.v.size(), want.size());
    for (size_t q = 0; q < want.size(); ++q) {
      ASSERT_NEAR(got.v[q], want[q], 2e-5) << (gaussian ? "gaussian" : "bernoulli") << " @" << q;
    }
  }
}

TEST_P(RbmTest, Cd1TrainingRaisesTheExactLogLikelihood) {
  const int nv = 5, nh = 4;
  const std::vector<int> patterns = {0b11000, 0b11100, 0b00111, 0b00011};
  std::vector<int> data;
  for (int k = 0; k < 25; ++k) data.insert(data.end(), patterns.begin(), patterns.end());
  Rbm rbm(B(), nv, nh, RbmUnits::kBernoulli);
  rbm.InitRandom(0.1f, 4);
  const double ll0 = GetParams(B(), rbm).MeanLogLikelihood(patterns);
  Matrix v = ToDevice(B(), Patterns(data, nv));
  uint64_t offset = 0;
  rbm.SetLearningRate(0.1f);
  for (int step = 0; step < 400; ++step) {
    rbm.Cd1(v, 0.5f, 0.0f, 8, offset);
    offset += 100 * nh;
  }
  const double ll1 = GetParams(B(), rbm).MeanLogLikelihood(patterns);
  std::cout << "mean log-likelihood " << ll0 << " -> " << ll1 << " (uniform: " << -nv * std::log(2)
            << ")\n";
  EXPECT_GT(ll1, ll0 + 1.0);
}

// Gaussian data with binary causes: x = z A + noise, z in {0,1}^5, standardised per dimension.
HostMat StructuredGaussianData(int64_t rows, int dim, uint64_t seed) {
  Rng rng(seed);
  const HostMat a = RandomHost(5, dim, seed + 1, 1.0);
  HostMat x(rows, dim);
  for (int64_t r = 0; r < rows; ++r) {
    int z[5];
    for (int& zi : z) zi = rng.Uniform() < 0.5;
    for (int d = 0; d < dim; ++d) {
      double s = 0.2 * rng.Gaussian();
      for (int k = 0; k < 5; ++k) s += z[k] * a(k, d);
      x(r, d) = static_cast<float>(s);
    }
  }
  for (int d = 0; d < dim; ++d) {  // CMVN
    double m = 0, m2 = 0;
    for (int64_t r = 0; r < rows; ++r) m += x(r, d), m2 += double(x(r, d)) * x(r, d);
    m /= rows;
    const double sd = std::sqrt(m2 / rows - m * m);
    for (int64_t r = 0; r < rows; ++r) x(r, d) = static_cast<float>((x(r, d) - m) / sd);
  }
  return x;
}

TEST_P(RbmTest, ReconstructionErrorDecreases) {
  const int dim = 30, mb = 100, steps = 1500;
  const HostMat x = StructuredGaussianData(mb * 100, dim, 21);
  Matrix dx = ToDevice(B(), x);
  Rbm rbm(B(), dim, 40, RbmUnits::kGaussian);
  rbm.InitRandom(0.1f, 5);
  double first = 0, last = 0;
  for (int step = 0; step < steps; ++step) {
    const ConstMatrixView v = ConstMatrixView(dx).RowRange((step % 100) * mb, mb);
    rbm.SetLearningRate(0.01f * 0.5f);
    rbm.Cd1(v, 0.9f, 0.0002f, 6, uint64_t(step) * mb * 40);
    const double e = rbm.TakeStats().recon_sq_error;
    if (step < steps / 10) first += e;
    if (step >= steps - steps / 10) last += e;
  }
  std::cout << "reconstruction error first tenth " << first << ", last tenth " << last << "\n";
  EXPECT_LT(last, 0.6 * first);
}

TEST_P(RbmTest, ExplosionGuardScalesTheParametersAndSkipsTheUpdate) {
  const int dim = 20, hidden = 50;
  const HostMat x = StructuredGaussianData(100, dim, 31);
  Matrix dx = ToDevice(B(), x);
  Rbm rbm(B(), dim, hidden, RbmUnits::kGaussian);
  rbm.InitRandom(0.05f, 7);
  rbm.SetLearningRate(0.005f);
  rbm.Cd1(dx, 0.9f, 0.0002f, 1, 0);
  EXPECT_EQ(rbm.TakeStats().guards, 0);  // small weights: no trigger

  rbm.InitRandom(2.0f, 7);  // reconstructions ~ sqrt(25 * 4) = 10 x the data's std
  const HostMat before = ToHost(B(), rbm.Params());
  rbm.Cd1(dx, 0.9f, 0.0002f, 2, 0);
  const Cd1Stats r = rbm.TakeStats();
  ASSERT_EQ(r.guards, 1);
  EXPECT_EQ(r.non_finite, 0);
  EXPECT_GT(r.guard_neg_std, 2 * r.guard_pos_std);
  EXPECT_NEAR(r.guard_pos_std, 1.0, 1e-3);  // CMVN data
  const double s = r.guard_pos_std / r.guard_neg_std;
  const HostMat after = ToHost(B(), rbm.Params());
  for (size_t k = 0; k < before.v.size(); ++k) {
    ASSERT_NEAR(after.v[k], s * before.v[k], 1e-6 * (1 + std::abs(before.v[k])));
  }
  EXPECT_FLOAT_EQ(rbm.LearningRate(), 0.9f * 0.005f);  // lowered by 10%
  // The momenta were reset: with learning rate 0 the next step changes nothing.
  rbm.InitRandom(0.05f, 7);
  rbm.SetLearningRate(0.0f);
  const HostMat quiet = ToHost(B(), rbm.Params());
  rbm.Cd1(dx, 0.9f, 0.0002f, 3, 0);
  EXPECT_EQ(ToHost(B(), rbm.Params()).v, quiet.v);
}

TEST_P(RbmTest, StackBecomesADnnWithTheRbmsHiddenProbabilities) {
  const int in = 12, h1 = 9, h2 = 7;
  Rbm r1(B(), in, h1, RbmUnits::kGaussian), r2(B(), h1, h2, RbmUnits::kBernoulli);
  r1.InitRandom(0.3f, 1);
  r2.InitRandom(0.3f, 2);
  B().CopyFromHost(RandomHost(1, h1, 3).v.data(), r1.HiddenBias());
  B().CopyFromHost(RandomHost(1, h2, 4).v.data(), r2.HiddenBias());
  B().CopyFromHost(RandomHost(1, h1, 5).v.data(), r2.VisibleBias());
  Dbn dbn;
  for (Rbm* r : {&r1, &r2}) {
    DbnLayer l{r->Visible(), r->Hidden(), ToHost(B(), r->Weights()).v,
               ToHost(B(), r->HiddenBias()).v};
    dbn.layers.push_back(l);
  }
  // Output layer = identity, so the logits are the top hidden layer's activations.
  NetworkSpec spec{in, h2, {h1, h2}, LayerKind::kSigmoid};
  Network net(B(), spec);
  LoadDbnIntoNetwork(dbn, net);
  HostMat eye(h2, h2);
  for (int i = 0; i < h2; ++i) eye(i, i) = 1.0f;
  B().CopyFromHost(eye.v.data(), net.Affine(2).Weights());
  B().Fill(net.Affine(2).Bias(), 0.0f);

  const HostMat x = RandomHost(16, in, 6);
  Matrix dx = ToDevice(B(), x), p1(B(), 16, h1), p2(B(), 16, h2);
  r1.HiddenProbs(dx, p1);
  r2.HiddenProbs(p1, p2);
  const HostMat want = ToHost(B(), p2);
  const HostMat got = ToHost(B(), net.ForwardLogits(dx));
  for (size_t k = 0; k < want.v.size(); ++k) ASSERT_NEAR(got.v[k], want.v[k], 1e-6);

  // A stack that does not fit the network is refused.
  NetworkSpec other{in, h2, {h1, h1}, LayerKind::kSigmoid};
  Network wrong(B(), other);
  EXPECT_THROW(LoadDbnIntoNetwork(dbn, wrong), Error);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, RbmTest, ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace mavg
