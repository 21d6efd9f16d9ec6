// A worker's steps as the trainer takes them on a GPU (each minibatch read ahead into staging
// while the step before runs, NG-SGD's layer updates deferred to the end of the backward pass
// and batched, the steps timed by events), on a backend whose work runs late as a GPU's does:
// the model, the loss statistics and the optimizer's counts are those of steps that read their
// minibatch when they start and update every layer at once, bit for bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/core/rng.h"
#include "engine/optim/ngsgd.h"
#include "engine/train/step.h"
#include "engine/train/step_lanes.h"
#include "tests/testing/queued_backend.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

constexpr int kInput = 10, kOutputs = 6;
constexpr int64_t kRows = 16;

struct Result {
  std::vector<uint32_t> params;  // bit patterns
  std::vector<double> stats;     // loss sum, correct, frames
  int64_t updates = 0, limited = 0;
  size_t timed = 0;  // steps the clock gave times for
};

Result TrainSteps(testing::QueuedBackend& b, InputBuffering buffering, NgsgdBatching batching,
                  int steps) {
  Network net(b, NetworkSpec{kInput, kOutputs, {12, 8}, LayerKind::kSigmoid});
  b.RandomGaussian(3, 0, 0.3f, net.Params());
  NgsgdOptions o;
  o.in.rank = 3;
  o.out.rank = 4;
  o.batching = batching;
  NgsgdOptimizer opt(b, o);
  opt.Prepare(net);
  StepLanes lanes(b, net, 1, kRows, buffering);
  StepLane& lane = lanes.Lane(0);
  int64_t next = 0;
  const MinibatchSource source = [&next](std::vector<float>& x, std::vector<int32_t>& labels) {
    Rng rng(1000 + static_cast<uint64_t>(next));
    x.resize(static_cast<size_t>(kRows * kInput));
    labels.resize(static_cast<size_t>(kRows));
    for (float& v : x) v = static_cast<float>(rng.Gaussian());
    for (int64_t r = 0; r < kRows; ++r) labels[r] = static_cast<int32_t>((next * 3 + r) % kOutputs);
    ++next;
    return kRows;
  };
  DeviceBuffer<double> stats(b, 3);
  const double zeros[3] = {0, 0, 0};
  stats.CopyFromHost(zeros, 3);
  Result result;
  const auto count = [&result](const StepClock::Times&) { ++result.timed; };
  for (int j = 0; j < steps; ++j) {
    const int64_t n = lane.Take(&next, j, source);
    EXPECT_EQ(n, kRows);  // the step's clock started
    TrainStep(net, opt, lane.x.View().RowRange(0, n), lane.labels.Data(), 0.1f, stats.Data());
    lane.clock.Stop(0, lane.io_s, lane.prefetched);
    if (j + 1 < steps) lane.Prefetch(&next, j + 1, source);
    lane.clock.Collect(2, count);
  }
  lane.clock.Collect(0, count);
  const std::vector<float> p = testing::ToHost(b, net.Params()).v;
  result.params.resize(p.size());
  std::memcpy(result.params.data(), p.data(), p.size() * sizeof(float));
  result.stats = stats.ToHost();
  const Optimizer::UpdateStats u = opt.TakeUpdateStats();
  result.updates = u.updates, result.limited = u.limited;
  return result;
}

TEST(AsyncStep, ReadAheadAndBatchedUpdatesGiveTheModelOfStepsOneAtATime) {
  const int steps = 15;
  testing::QueuedBackend plain;
  const Result a = TrainSteps(plain, InputBuffering::kSingle, NgsgdBatching::kNever, steps);
  EXPECT_EQ(plain.Batches(), 0);
  EXPECT_EQ(a.stats[2], static_cast<double>(steps * kRows));
  EXPECT_EQ(a.timed, static_cast<size_t>(steps));
  // The read-ahead copies run on a queue of their own: whichever queue runs first, each step
  // reads its own minibatch, and no copy overwrites one a queued step has still to read.
  for (const auto order :
       {testing::QueuedBackend::Order::kCopiesFirst, testing::QueuedBackend::Order::kWorkFirst}) {
    SCOPED_TRACE(order == testing::QueuedBackend::Order::kCopiesFirst ? "copies first"
                                                                      : "work first");
    testing::QueuedBackend pipelined(order);
    const Result b = TrainSteps(pipelined, InputBuffering::kAuto, NgsgdBatching::kAuto, steps);
    EXPECT_GT(pipelined.Batches(), steps);  // batched: GPU-shaped by default
    EXPECT_EQ(a.params, b.params);
    EXPECT_EQ(a.stats, b.stats);
    EXPECT_EQ(a.updates, b.updates);
    EXPECT_EQ(a.limited, b.limited);
    EXPECT_EQ(b.timed, static_cast<size_t>(steps));
  }
}

}  // namespace
}  // namespace mavg
