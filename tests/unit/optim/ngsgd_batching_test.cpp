// NG-SGD's layer updates deferred to the end of the backward pass, every layer's small steps of
// a phase run as one batch (NgsgdBatching::kAlways, what a GPU does), against updates at once
// (kNever, what the CPU does): the same bits, on the CPU backend and on a backend whose work
// runs late as a GPU's does (testing::QueuedBackend: the device path of the algorithm, with the
// batches' tasks run in reverse order).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/nn/network.h"
#include "engine/optim/ngsgd.h"
#include "tests/testing/queued_backend.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

struct Trained {
  std::vector<float> params;
  std::vector<std::vector<float>> state;  // the optimizer's State() tensors
  int64_t updates = 0, limited = 0;
};

NgsgdOptions Options(NgsgdBatching batching) {
  NgsgdOptions o;
  o.in.rank = 4;
  o.out.rank = 5;
  o.in.update_period = o.out.update_period = 3;  // skipped updates after the first 10
  o.batching = batching;
  return o;
}

// `steps` minibatches of a sigmoid network with two hidden layers, as TrainStep takes them.
Trained Train(Backend& b, NgsgdBatching batching, int steps, float lr,
              testing::QueuedBackend* queued = nullptr) {
  const int n = 32, input = 12, outputs = 7;
  Network net(b, NetworkSpec{input, outputs, {16, 9}, LayerKind::kSigmoid});
  b.RandomGaussian(5, 0, 0.3f, net.Params());
  NgsgdOptimizer opt(b, Options(batching));
  opt.Prepare(net);
  Matrix x(b, n, input);
  DeviceBuffer<int32_t> labels(b, n);
  DeviceBuffer<double> stats(b, 3);
  std::vector<int32_t> l(n);
  for (int s = 0; s < steps; ++s) {
    b.RandomGaussian(100 + s, 0, 1.0f, x);
    for (int i = 0; i < n; ++i) l[i] = (i * 5 + s) % outputs;
    labels.CopyFromHost(l.data(), n);
    net.ForwardLogits(x);
    MatrixView logits = net.LogitsBuffer();
    b.SoftmaxCrossEntropy(logits, labels.Data(), logits, stats.Data());
    opt.BeginStep();
    net.Backward([&](int k, AffineLayer& layer, ConstMatrixView in, MatrixView out_grad) {
      opt.UpdateAffine(k, layer, in, out_grad, lr);
    });
    opt.FinishStep();
    if (queued != nullptr && s == 0) {
      // One batch per phase for all six preconditioners: the initialisation's three passes and
      // the minibatch's own, each a subspace and a reorthogonalisation step, then the steps.
      EXPECT_EQ(queued->Batches(), batching == NgsgdBatching::kAlways ? 9 : 0);
    }
  }
  Trained t;
  t.params = testing::ToHost(b, net.Params()).v;
  for (MatrixView v : opt.State()) t.state.push_back(testing::ToHost(b, v).v);
  const Optimizer::UpdateStats u = opt.TakeUpdateStats();
  t.updates = u.updates, t.limited = u.limited;
  return t;
}

// Bit patterns: the state's scalars are doubles stored in float tensors (some read as NaNs).
std::vector<uint32_t> Bits(const std::vector<float>& v) {
  std::vector<uint32_t> bits(v.size());
  if (!v.empty()) std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
  return bits;
}

void ExpectSameBits(const Trained& a, const Trained& b) {
  EXPECT_EQ(Bits(a.params), Bits(b.params));
  ASSERT_EQ(a.state.size(), b.state.size());
  for (size_t i = 0; i < a.state.size(); ++i) {
    EXPECT_EQ(Bits(a.state[i]), Bits(b.state[i])) << "state " << i;
  }
  EXPECT_EQ(a.updates, b.updates);
  EXPECT_EQ(a.limited, b.limited);
}

TEST(NgsgdBatching, DeferredBatchedUpdatesAreTheImmediateOnesBitForBitOnTheCpu) {
  auto b = testing::MakeBackend("cpu");
  for (float lr : {0.05f, 2.0f}) {  // max-change binding at the larger
    const Trained now = Train(*b, NgsgdBatching::kNever, 16, lr);
    const Trained batched = Train(*b, NgsgdBatching::kAlways, 16, lr);
    ExpectSameBits(now, batched);
    EXPECT_EQ(now.updates, 16 * 3);
    // The CPU updates at once by default.
    ExpectSameBits(now, Train(*b, NgsgdBatching::kAuto, 16, lr));
    if (lr > 1.0f) {
      EXPECT_GT(now.limited, 0);
    }
  }
}

TEST(NgsgdBatching, DeferredBatchedUpdatesAreTheImmediateOnesBitForBitOnALaggingDevice) {
  for (float lr : {0.05f, 2.0f}) {
    testing::QueuedBackend now_backend, batched_backend, auto_backend;
    const Trained now = Train(now_backend, NgsgdBatching::kNever, 16, lr, &now_backend);
    const Trained batched =
        Train(batched_backend, NgsgdBatching::kAlways, 16, lr, &batched_backend);
    ExpectSameBits(now, batched);
    // A device that runs asynchronously defers by default.
    Train(auto_backend, NgsgdBatching::kAuto, 1, lr);
    EXPECT_EQ(auto_backend.Batches(), 9);
  }
}

TEST(NgsgdBatching, UpdatesOutsideAStepsBracketAreAtOnce) {
  testing::QueuedBackend b;
  AffineLayer layer(6, 5);
  Matrix params(b, 1, layer.NumParams());
  layer.Bind(params.View().data);
  NgsgdOptimizer opt(b, Options(NgsgdBatching::kAlways));
  Matrix x(b, 8, 6), g(b, 8, 5);
  b.RandomGaussian(1, 0, 1.0f, x);
  b.RandomGaussian(2, 0, 1.0f, g);
  opt.UpdateAffine(0, layer, x, g, 0.1f);
  EXPECT_EQ(b.Batches(), 0);
  EXPECT_GT(b.SumSquares(params), 0.0);  // the weights moved from zero
  // Inside a bracket the update waits for FinishStep; reading the optimizer's state or
  // counts applies it first.
  b.RandomGaussian(3, 0, 1.0f, g);
  const double before = b.SumSquares(params);
  opt.BeginStep();
  opt.UpdateAffine(0, layer, x, g, 0.1f);
  EXPECT_EQ(b.SumSquares(params), before);
  EXPECT_EQ(opt.TakeUpdateStats().updates, 2);
  EXPECT_NE(b.SumSquares(params), before);
  opt.FinishStep();
}

}  // namespace
}  // namespace mavg
