// Learning-rate schedules on scripted CV-loss sequences.
#include "engine/train/schedule.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/error.h"

namespace mavg {
namespace {

TEST(Exponential, PaperValues) {
  ScheduleConfig c;
  c.type = ScheduleType::kExponential;
  c.lr = 0.32;
  c.final_ratio = 0.01;
  c.epochs = 15;
  auto s = CreateSchedule(c);
  std::vector<double> lrs;
  for (int k = 1; k <= 15; ++k) {
    lrs.push_back(s->LearningRate());
    const EpochDecision d = s->EndEpoch(10.0 + k);  // loss going up: still accepted
    EXPECT_TRUE(d.accept);
    EXPECT_EQ(d.stop, k == 15);
  }
  // docs/algorithms.md §4a: 0.32, 0.2303, 0.1657, ..., 0.0032.
  EXPECT_DOUBLE_EQ(lrs[0], 0.32);
  EXPECT_NEAR(lrs[1], 0.2303, 1e-4);
  EXPECT_NEAR(lrs[2], 0.1657, 1e-4);
  EXPECT_NEAR(lrs[14], 0.0032, 1e-12);
  for (int k = 1; k <= 15; ++k) {
    EXPECT_NEAR(lrs[k - 1], 0.32 * std::pow(0.01, (k - 1) / 14.0), 1e-12);
  }
}

TEST(Exponential, SingleEpochUsesInitialRate) {
  ScheduleConfig c;
  c.lr = 0.5;
  c.epochs = 1;
  auto s = CreateSchedule(c);
  EXPECT_EQ(s->LearningRate(), 0.5);
  EXPECT_TRUE(s->EndEpoch(1.0).stop);
}

TEST(Constant, KeepsRateAndStopsAfterEpochs) {
  ScheduleConfig c;
  c.type = ScheduleType::kConstant;
  c.lr = 0.1;
  c.epochs = 3;
  auto s = CreateSchedule(c);
  for (int k = 1; k <= 3; ++k) {
    EXPECT_EQ(s->LearningRate(), 0.1);
    EXPECT_EQ(s->EndEpoch(1.0).stop, k == 3);
  }
}

ScheduleConfig Newbob(int max_epochs) {
  ScheduleConfig c;
  c.type = ScheduleType::kNewbob;
  c.lr = 1.0;
  c.epochs = max_epochs;
  return c;  // Kaldi defaults: start 0.01, end 0.001, factor 0.5
}

TEST(Newbob, HalvesAfterSmallGainAndStopsAfterTinyGain) {
  auto s = CreateSchedule(Newbob(20));
  ASSERT_TRUE(s->NeedsInitialCvLoss());
  s->SetInitialCvLoss(2.0);
  // Epoch 1: 2.0 -> 1.5 (25% gain): accept, no halving.
  EXPECT_EQ(s->LearningRate(), 1.0);
  EpochDecision d = s->EndEpoch(1.5);
  EXPECT_TRUE(d.accept);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(s->LearningRate(), 1.0);
  // Epoch 2: 1.5 -> 1.495 (0.33% < 1%): accept, halving starts now.
  d = s->EndEpoch(1.495);
  EXPECT_TRUE(d.accept);
  EXPECT_EQ(s->LearningRate(), 0.5);
  // Epoch 3: 1.495 -> 1.40 (6%): halving continues every epoch once started.
  d = s->EndEpoch(1.40);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(s->LearningRate(), 0.25);
  // Epoch 4: 1.40 -> 1.3995 (0.036% < 0.1%): stop.
  d = s->EndEpoch(1.3995);
  EXPECT_TRUE(d.accept);
  EXPECT_TRUE(d.stop);
}

TEST(Newbob, RejectsAWorseEpochAndThenHalves) {
  auto s = CreateSchedule(Newbob(20));
  s->SetInitialCvLoss(2.0);
  EXPECT_TRUE(s->EndEpoch(1.0).accept);
  // Worse: rejected; relative gain is 0 (< start) so halving starts.
  EpochDecision d = s->EndEpoch(1.2);
  EXPECT_FALSE(d.accept);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(s->LearningRate(), 0.5);
  // Compared against the best accepted loss (1.0), not the rejected 1.2.
  d = s->EndEpoch(1.1);
  EXPECT_FALSE(d.accept);
  EXPECT_TRUE(d.stop);  // halving and gain 0 < end threshold
}

TEST(Newbob, MinEpochsDelaysStoppingAndSkipsThatHalving) {
  ScheduleConfig c = Newbob(20);
  c.newbob.min_epochs = 3;
  auto s = CreateSchedule(c);
  s->SetInitialCvLoss(1.0);
  s->EndEpoch(0.9999);  // tiny gain: halving starts, lr 0.5
  EXPECT_EQ(s->LearningRate(), 0.5);
  EpochDecision d = s->EndEpoch(0.9998);  // would stop, but epoch 2 < min 3: continue
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(s->LearningRate(), 0.5);  // Kaldi's `continue` skips the halving too
  d = s->EndEpoch(0.9997);
  EXPECT_TRUE(d.stop);
}

TEST(Newbob, KeepLrEpochsAcceptEverythingWithoutHalving) {
  ScheduleConfig c = Newbob(20);
  c.newbob.keep_lr_epochs = 2;
  auto s = CreateSchedule(c);
  s->SetInitialCvLoss(1.0);
  EXPECT_TRUE(s->EndEpoch(1.5).accept);  // worse but kept
  EXPECT_TRUE(s->EndEpoch(1.6).accept);
  EXPECT_EQ(s->LearningRate(), 1.0);
  EpochDecision d = s->EndEpoch(1.7);  // now compared with 1.6: rejected, halving begins
  EXPECT_FALSE(d.accept);
  EXPECT_EQ(s->LearningRate(), 0.5);
}

TEST(Newbob, StopsAtMaxEpochs) {
  auto s = CreateSchedule(Newbob(2));
  s->SetInitialCvLoss(10.0);
  EXPECT_FALSE(s->EndEpoch(5.0).stop);
  EXPECT_TRUE(s->EndEpoch(2.0).stop);
}

TEST(Newbob, StateRoundTrip) {
  auto s = CreateSchedule(Newbob(20));
  s->SetInitialCvLoss(2.0);
  s->EndEpoch(1.999);
  auto t = CreateSchedule(Newbob(20));
  t->LoadState(s->SaveState());
  EXPECT_EQ(t->LearningRate(), s->LearningRate());
  EXPECT_EQ(t->EpochsDone(), 1);
  EXPECT_EQ(t->EndEpoch(1.5).accept, s->EndEpoch(1.5).accept);
  EXPECT_EQ(t->LearningRate(), s->LearningRate());
}

TEST(Newbob, RequiresInitialLoss) {
  auto s = CreateSchedule(Newbob(5));
  EXPECT_THROW(s->EndEpoch(1.0), Error);
}

}  // namespace
}  // namespace mavg
