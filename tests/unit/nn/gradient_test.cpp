// Finite-difference checks of every layer's backward pass, the fused softmax + cross-entropy
// loss, and whole-network parameter gradients.
#include <cmath>
#include <functional>
#include <string>

#include "engine/nn/activation.h"
#include "engine/nn/init.h"
#include "engine/nn/network.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::HostMat;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;

class Gradients : public testing::BackendTest {};

// Central difference of f with respect to host value *x (which f reads through the device).
double CentralDiff(float* x, const std::function<void()>& upload, const std::function<double()>& f,
                   float eps) {
  const float saved = *x;
  *x = saved + eps;
  upload();
  const double plus = f();
  *x = saved - eps;
  upload();
  const double minus = f();
  *x = saved;
  upload();
  return (plus - minus) / (2.0 * eps);
}

// Analytic against central-difference gradients over a whole vector: the relative error
// ||analytic - numeric|| / ||numeric|| must be small. (An absolute per-element tolerance would
// pass any gradient whose entries are all small, however wrong.)
class GradCheck {
 public:
  explicit GradCheck(std::string what) : what_(std::move(what)) {}
  void Add(double analytic, double numeric) {
    diff2_ += (analytic - numeric) * (analytic - numeric);
    norm2_ += numeric * numeric;
  }
  ~GradCheck() {
    EXPECT_GT(norm2_, 1e-8) << what_ << ": the numeric gradient is zero, nothing was checked";
    const double rel = std::sqrt(diff2_ / std::max(norm2_, 1e-300));
    EXPECT_LT(rel, kTolerance) << what_ << ": relative error " << rel;
    ::testing::Test::RecordProperty(what_, std::to_string(rel));
  }

  static constexpr double kTolerance = 2e-3;

 private:
  std::string what_;
  double diff2_ = 0.0, norm2_ = 0.0;
};

// L(out) = sum(out .* R): out_grad = R.
double Weighted(Backend& b, ConstMatrixView out, const HostMat& r) {
  HostMat o = ToHost(b, out);
  double s = 0;
  for (size_t i = 0; i < o.v.size(); ++i) s += static_cast<double>(o.v[i]) * r.v[i];
  return s;
}

TEST_P(Gradients, ActivationLayersInputGradient) {
  for (LayerKind kind : {LayerKind::kSigmoid, LayerKind::kTanh, LayerKind::kRelu}) {
    ActivationLayer layer(kind, 6);
    HostMat x = RandomHost(4, 6, 1, 2.0), r = RandomHost(4, 6, 2);
    if (kind == LayerKind::kRelu) {
      for (float& v : x.v) {
        if (std::fabs(v) < 0.05f) v = 0.3f;  // keep away from the kink
      }
    }
    Matrix dx = ToDevice(B(), x), dout(B(), 4, 6), dr = ToDevice(B(), r), dgrad(B(), 4, 6);
    layer.Forward(B(), dx, dout);
    layer.Backward(B(), dx, dout, dr, dgrad);
    HostMat grad = ToHost(B(), dgrad);
    auto upload = [&] { B().CopyFromHost(x.v.data(), dx); };
    auto loss = [&] {
      layer.Forward(B(), dx, dout);
      return Weighted(B(), dout, r);
    };
    GradCheck check(std::string(LayerKindName(kind)) + " input gradient");
    for (size_t i = 0; i < x.v.size(); ++i) {
      check.Add(grad.v[i], CentralDiff(&x.v[i], upload, loss, 1e-2f));
    }
  }
}

TEST_P(Gradients, AffineInputAndParameterGradients) {
  const int in = 5, out = 4, n = 3;
  AffineLayer layer(in, out);
  HostMat params = RandomHost(1, layer.NumParams(), 3);
  Matrix dparams = ToDevice(B(), params);
  layer.Bind(dparams.View().data);
  HostMat x = RandomHost(n, in, 4), r = RandomHost(n, out, 5);
  Matrix dx = ToDevice(B(), x), dy(B(), n, out), dr = ToDevice(B(), r);
  Matrix dxgrad(B(), n, in), dw(B(), out, in), db(B(), 1, out);
  layer.Forward(B(), dx, dy);
  layer.Backward(B(), dx, dy, dr, dxgrad);
  layer.ParamGradient(B(), dx, dr, 1.0f, 0.0f, dw, db);
  auto loss = [&] {
    layer.Forward(B(), dx, dy);
    return Weighted(B(), dy, r);
  };
  HostMat gx = ToHost(B(), dxgrad);
  auto upload_x = [&] { B().CopyFromHost(x.v.data(), dx); };
  {
    GradCheck check("affine input gradient");
    for (size_t i = 0; i < x.v.size(); ++i) {
      check.Add(gx.v[i], CentralDiff(&x.v[i], upload_x, loss, 1e-2f));
    }
  }
  HostMat gw = ToHost(B(), dw), gb = ToHost(B(), db);
  auto upload_p = [&] { B().CopyFromHost(params.v.data(), dparams); };
  GradCheck weights("affine weight gradient"), bias("affine bias gradient");
  for (int64_t i = 0; i < layer.NumParams(); ++i) {
    const double numeric = CentralDiff(&params.v[i], upload_p, loss, 1e-2f);
    if (i < out * in) {
      weights.Add(gw.v[i], numeric);
    } else {
      bias.Add(gb.v[i - out * in], numeric);
    }
  }
}

TEST_P(Gradients, SoftmaxCrossEntropyGradientOfSummedLoss) {
  const int n = 5, k = 6;
  HostMat x = RandomHost(n, k, 6, 2.0);
  std::vector<int32_t> labels = {0, 5, 2, 2, 3};
  DeviceBuffer<int32_t> dl(B(), n);
  dl.CopyFromHost(labels.data(), n);
  Matrix dx = ToDevice(B(), x), grad(B(), n, k);
  DeviceBuffer<double> stats(B(), 3);
  auto loss = [&] {
    const double z[3] = {0, 0, 0};
    stats.CopyFromHost(z, 3);
    B().SoftmaxCrossEntropy(dx, dl.Data(), MatrixView(), stats.Data());
    return stats.ToHost()[0];
  };
  const double zero[3] = {0, 0, 0};
  stats.CopyFromHost(zero, 3);
  B().SoftmaxCrossEntropy(dx, dl.Data(), grad, stats.Data());
  HostMat g = ToHost(B(), grad);
  auto upload = [&] { B().CopyFromHost(x.v.data(), dx); };
  GradCheck check("softmax cross-entropy logit gradient");
  for (size_t i = 0; i < x.v.size(); ++i) {
    check.Add(g.v[i], CentralDiff(&x.v[i], upload, loss, 1e-2f));
  }
}

TEST_P(Gradients, NetworkParameterGradientsMatchFiniteDifferences) {
  for (LayerKind act : {LayerKind::kSigmoid, LayerKind::kTanh, LayerKind::kRelu}) {
    NetworkSpec spec{6, 5, {7, 4}, act};
    Network net(B(), spec);
    InitializeKaldiNnet1(net, 9);
    // Kaldi's init has small weights; enlarge them so every layer matters.
    B().Axpby(4.0f, net.Params(), 0.0f, net.Params());
    const int n = 8;
    HostMat x = RandomHost(n, 6, 10);
    std::vector<int32_t> labels = {0, 1, 2, 3, 4, 0, 1, 2};
    Matrix dx = ToDevice(B(), x);
    DeviceBuffer<int32_t> dl(B(), n);
    dl.CopyFromHost(labels.data(), n);
    DeviceBuffer<double> stats(B(), 3);
    auto loss = [&] {
      const double z[3] = {0, 0, 0};
      stats.CopyFromHost(z, 3);
      net.ForwardLogits(dx);
      B().SoftmaxCrossEntropy(net.LogitsBuffer(), dl.Data(), MatrixView(), stats.Data());
      return stats.ToHost()[0];
    };
    // Analytic gradient of every parameter, gathered in the flat layout.
    Matrix grad(B(), 1, net.NumParams());
    const float* base = net.Params().data;
    loss();
    B().SoftmaxCrossEntropy(net.LogitsBuffer(), dl.Data(), net.LogitsBuffer(), stats.Data());
    net.Backward(
        [&](int, AffineLayer& layer, ConstMatrixView in, ConstMatrixView out_grad) {
          const int64_t off = layer.Weights().data - base;
          MatrixView dw(grad.View().data + off, layer.OutputDim(), layer.InputDim());
          MatrixView db(dw.data + dw.Size(), 1, layer.OutputDim());
          layer.ParamGradient(B(), in, out_grad, 1.0f, 0.0f, dw, db);
        },
        /*need_input_grad=*/true);
    HostMat g = ToHost(B(), grad);
    HostMat gin = ToHost(B(), net.InputGrad());
    HostMat params = ToHost(B(), net.Params());
    auto upload = [&] { B().CopyFromHost(params.v.data(), net.Params()); };
    {
      GradCheck check(std::string(LayerKindName(act)) + " network parameter gradient");
      Rng pick(11);
      for (int t = 0; t < 60; ++t) {
        const auto i = static_cast<size_t>(pick.Below(params.v.size()));
        check.Add(g.v[i], CentralDiff(&params.v[i], upload, loss, 5e-3f));
      }
    }
    // A small step: with the enlarged weights the network is strongly curved in its inputs (tanh:
    // relative error 2.7e-3 at 2e-3, 6.7e-4 at 1e-3, measured).
    GradCheck check(std::string(LayerKindName(act)) + " network input gradient");
    auto upload_x = [&] { B().CopyFromHost(x.v.data(), dx); };
    for (size_t i = 0; i < x.v.size(); i += 5) {
      check.Add(gin.v[i], CentralDiff(&x.v[i], upload_x, loss, 1e-3f));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Gradients, ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace mavg
