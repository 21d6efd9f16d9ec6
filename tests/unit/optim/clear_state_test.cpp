// ClearState (parallel.optimizer_state reset, at a combine): whatever the optimizer keeps across
// epochs, the step after it is a fresh optimizer's first step from the same parameters, bit for
// bit; without it the step differs (the state mattered), so the check can fail.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/optim/factory.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {
// Named: the unit tests of a folder share one translation unit in a unity build.
namespace clear_state {

using testing::HostMat;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;

struct Case {
  std::string name;
  OptimizerConfig config;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  OptimizerConfig sgd;
  sgd.momentum = 0.9;
  cases.push_back({"sgd-momentum", sgd});  // forgets its momentum at every epoch's start
  OptimizerConfig adam;
  adam.type = OptimizerType::kAdam;  // keeps its moments across epochs (Reset keeps them)
  cases.push_back({"adam", adam});
  OptimizerConfig ngsgd;
  ngsgd.type = OptimizerType::kNgsgd;
  ngsgd.ngsgd.rank_in = 2, ngsgd.ngsgd.rank_out = 2, ngsgd.ngsgd.update_period = 1;
  ngsgd.ngsgd.reset_each_epoch = false;  // keeps its statistics across epochs
  cases.push_back({"ngsgd-kept", ngsgd});
  return cases;
}

class ClearState : public ::testing::TestWithParam<std::string> {};

TEST_P(ClearState, NextStepIsAFreshOptimizersFirst) {
  auto backend = testing::MakeBackend(GetParam());
  const int in = 6, out = 5, n = 8;
  Network net(*backend, NetworkSpec{in, out, {}, LayerKind::kSigmoid});
  std::vector<Matrix> x, g;
  for (int s = 0; s < 4; ++s) {
    x.push_back(ToDevice(*backend, RandomHost(n, in, 10 + s)));
    g.push_back(ToDevice(*backend, RandomHost(n, out, 20 + s)));
  }
  const float lr = 0.01f;
  // The layer's parameters after `steps` steps, optionally with Reset (an epoch's start) and
  // ClearState before the last.
  auto run = [&](const OptimizerConfig& config, bool reset, bool clear) {
    AffineLayer layer(in, out);
    Matrix params = ToDevice(*backend, RandomHost(1, layer.NumParams(), 3));
    layer.Bind(params.View().data);
    std::unique_ptr<Optimizer> opt = CreateOptimizer(*backend, config);
    opt->Prepare(net);
    for (int s = 0; s < 3; ++s) {
      Matrix gs = ToDevice(*backend, ToHost(*backend, g[s]));  // out_grad is overwritten
      opt->UpdateAffine(0, layer, x[s], gs, lr);
    }
    if (reset) opt->Reset();
    if (clear) opt->ClearState();
    const std::vector<float> before = ToHost(*backend, params).v;
    Matrix g3 = ToDevice(*backend, ToHost(*backend, g[3]));
    opt->UpdateAffine(0, layer, x[3], g3, lr);
    // A fresh optimizer's first step from the same parameters.
    AffineLayer fresh_layer(in, out);
    HostMat start(1, layer.NumParams());
    start.v = before;
    Matrix fresh_params = ToDevice(*backend, start);
    fresh_layer.Bind(fresh_params.View().data);
    std::unique_ptr<Optimizer> fresh = CreateOptimizer(*backend, config);
    fresh->Prepare(net);
    Matrix g3f = ToDevice(*backend, ToHost(*backend, g[3]));
    fresh->UpdateAffine(0, fresh_layer, x[3], g3f, lr);
    return std::pair(ToHost(*backend, params).v, ToHost(*backend, fresh_params).v);
  };
  for (const Case& c : Cases()) {
    const auto [cleared, fresh] = run(c.config, false, true);
    EXPECT_EQ(cleared, fresh) << c.name;
    const auto [kept, fresh_k] = run(c.config, false, false);
    EXPECT_NE(kept, fresh_k) << c.name << ": the state should change the step";
    // Reset (an epoch's start) clears only what does not carry over from epoch to epoch.
    const bool keeps = CreateOptimizer(*backend, c.config)->KeepsStateAcrossEpochs();
    const auto [reset, fresh_r] = run(c.config, true, false);
    EXPECT_EQ(reset == fresh_r, !keeps) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, ClearState, ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& p) { return p.param; });

}  // namespace clear_state
}  // namespace
}  // namespace mavg
