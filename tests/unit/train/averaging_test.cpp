// When workers average, how, and the closed form of one averaged step.
#include "engine/train/averaging.h"

#include <gtest/gtest.h>

#include "engine/comm/thread_group.h"
#include "engine/nn/init.h"
#include "engine/optim/sgd.h"
#include "engine/train/step.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::HostMat;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;

TEST(AveragingPlan, EveryKMinibatches) {
  // 10 minibatches of 100 per averaging; smallest shard 5050 frames -> 5 averagings.
  AveragingPlan p = PlanAveraging(5050, 100, 1000);
  EXPECT_EQ(p.reduces, 5);
  EXPECT_EQ(p.minibatches, 50);
  for (int m = 1; m <= 50; ++m) EXPECT_EQ(p.AverageAfter(m), m % 10 == 0) << m;
}

TEST(AveragingPlan, FramesPerReduceLikeThePaperTool) {
  // Kaldi fork default: frames_per_reduce 10000, minibatch 1024: averages after minibatches
  // 10, 20, 30, 40, 49 (the cumulative count crosses 10000, 20000, ...).
  AveragingPlan p = PlanAveraging(60000, 1024, 10000);
  std::vector<int> after;
  for (int m = 1; m <= p.minibatches; ++m) {
    if (p.AverageAfter(m)) after.push_back(m);
  }
  EXPECT_EQ(after, (std::vector<int>{10, 20, 30, 40, 49}));
  EXPECT_EQ(p.reduces, 5);
  EXPECT_EQ(p.minibatches, 49);
}

TEST(AveragingPlan, LastAveragingMustFitInFullMinibatches) {
  // 1000 frames, minibatch 300 (3 full minibatches = 900 frames), F = 500: the 2nd crossing
  // would need minibatch 4, which does not exist -> only 1 averaging.
  AveragingPlan p = PlanAveraging(1000, 300, 500);
  EXPECT_EQ(p.reduces, 1);
  EXPECT_EQ(p.minibatches, 2);
  EXPECT_THROW(PlanAveraging(99, 100, 1000), Error);
}

class Averaging : public ::testing::TestWithParam<std::string> {};

TEST_P(Averaging, ReplicasMatchADeterministicAllReduceBitForBit) {
  auto backend = testing::MakeBackend(GetParam());
  const int n = 5, size = 777;
  std::vector<HostMat> host;
  std::vector<Matrix> reps;
  for (int k = 0; k < n; ++k) {
    host.push_back(RandomHost(1, size, 100 + k, std::pow(10.0, k - 2)));  // mixed magnitudes
    reps.push_back(ToDevice(*backend, host.back()));
  }
  Matrix acc(*backend, 1, size);
  std::vector<MatrixView> views(reps.begin(), reps.end());
  backend->MeanOfReplicas(views);
  backend->Copy(views[0], acc);
  // The same through a thread group (rank-order sums) and the same scaling.
  std::vector<std::vector<float>> reduced(n);
  RunThreadGroup(n, [&](Communicator& comm) {
    std::vector<float> x = host[comm.Rank()].v;
    comm.AllReduceSum(std::span<float>(x));
    const float inv_n = 1.0f / n;
    for (float& v : x) v = inv_n * v;
    reduced[comm.Rank()] = x;
  });
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(ToHost(*backend, reps[k]).v, reduced[0]) << "replica " << k;
    EXPECT_EQ(reduced[k], reduced[0]);
  }
  EXPECT_EQ(ToHost(*backend, acc).v, reduced[0]);
}

TEST_P(Averaging, OneAveragedStepEqualsOneStepOnTheUnionWithLrOverN) {
  // K = 1, no lr scaling: (1/N) sum_k (theta - lr g_k) = theta - (lr/N) sum_k g_k, and
  // sum_k g_k is the summed gradient of the union of the workers' minibatches.
  auto backend = testing::MakeBackend(GetParam());
  const int n = 3, b = 4;
  NetworkSpec spec{6, 4, {5}, LayerKind::kTanh};
  Network net(*backend, spec);
  InitializeKaldiNnet1(net, 3);
  HostMat x = RandomHost(n * b, 6, 7);
  std::vector<int32_t> labels(n * b);
  for (int i = 0; i < n * b; ++i) labels[i] = i % 4;
  DeviceBuffer<int32_t> dl(*backend, labels.size());
  dl.CopyFromHost(labels.data(), labels.size());
  Matrix dx = ToDevice(*backend, x);
  DeviceBuffer<double> stats(*backend, 3);
  const double zeros[3] = {0, 0, 0};
  stats.CopyFromHost(zeros, 3);
  const float lr = 0.05f;

  std::vector<Matrix> reps;
  for (int k = 0; k < n; ++k) {
    reps.emplace_back(*backend, 1, net.NumParams());
    backend->Copy(net.Params(), reps.back());
  }
  Network worker(*backend, spec);
  for (int k = 0; k < n; ++k) {
    ParamsBinding bind(worker, reps[k]);
    worker.CopyParamsFrom(net);  // bias lr coefficients too
    SgdOptimizer sgd(*backend, SgdOptions{});
    TrainStep(worker, sgd, ConstMatrixView(dx).RowRange(k * b, b), dl.Data() + k * b, lr,
              stats.Data());
  }
  Matrix avg(*backend, 1, net.NumParams());
  backend->MeanOfReplicas(std::vector<MatrixView>(reps.begin(), reps.end()));
  backend->Copy(reps[0], avg);

  SgdOptimizer sgd(*backend, SgdOptions{});
  TrainStep(net, sgd, dx, dl.Data(), lr / n, stats.Data());
  EXPECT_LT(testing::NormalizedError(ToHost(*backend, avg), ToHost(*backend, net.Params())), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Averaging, ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace mavg
