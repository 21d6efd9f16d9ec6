// When the workers combine: each policy's points written out by hand for small epochs, the
// constant policy against Su & Chen's crossing rule (averaging.h), the run's step carried across
// epochs, and parallel.combine.list's checks.
#include "engine/train/combine_policy.h"

#include <gtest/gtest.h>

#include "engine/config/combine_list.h"
#include "engine/core/error.h"
#include "engine/train/averaging.h"

namespace mavg {
namespace {
namespace combine_policy_test {

using Points = std::vector<int64_t>;

ParallelConfig Policy(CombinePolicyType type, int64_t k) {
  ParallelConfig p;
  p.combine.policy = type;
  p.average_every = k;
  return p;
}

// An epoch of `full` minibatches of 100 frames (plus a partial one).
Points PointsOf(const ParallelConfig& p, int64_t full, int epoch = 1, int64_t steps_before = 0,
                double lr = 0.01) {
  return CreateCombinePolicy(p, 100)
      ->PlanEpoch(EpochCombineInput{epoch, steps_before, lr, 100, full * 100 + 50})
      .points;
}

TEST(CombinePolicy, ConstantIsTheCrossingRule) {
  EXPECT_EQ(PointsOf(Policy(CombinePolicyType::kConstant, 10), 50), (Points{10, 20, 30, 40, 50}));
  // every F frames: Su & Chen's crossing rule (the fork's default, F 10000 of 1024-frame
  // minibatches), the points PlanAveraging gives
  ParallelConfig f = Policy(CombinePolicyType::kConstant, 10);
  f.average_frames = 10000;
  const CombinePlan plan = CreateCombinePolicy(f, 1024)->PlanEpoch({1, 0, 0.1, 1024, 60000});
  EXPECT_EQ(plan.points, (Points{10, 20, 30, 40, 49}));
  const AveragingPlan a = PlanAveraging(60000, 1024, 10000);
  EXPECT_EQ(plan.Combines(), a.reduces);
  EXPECT_EQ(plan.Minibatches(), a.minibatches);
  // (a step counter or lr changes nothing)
  EXPECT_EQ(PointsOf(Policy(CombinePolicyType::kConstant, 3), 10, 4, 777, 1e-9), (Points{3, 6, 9}));
}

TEST(CombinePolicy, PostLocalIsPyTorchsPeriodicAverager) {
  ParallelConfig p = Policy(CombinePolicyType::kPostLocal, 4);
  p.combine.warmup_steps = 5;
  // steps 0-4 (minibatches 1-5) every step; then after step s with (s - 5) % 4 == 0:
  // s = 5, 9, 13, 17 (minibatches 6, 10, 14, 18); the epoch ends at 18, its last point.
  EXPECT_EQ(PointsOf(p, 20), (Points{1, 2, 3, 4, 5, 6, 10, 14, 18}));
  // The run's step continues across epochs: 18 steps before, the warm-up is over and the phase
  // goes on (s = 21 is minibatch 4).
  EXPECT_EQ(PointsOf(p, 20, 2, 18), (Points{4, 8, 12, 16, 20}));
  // A warm-up in epochs: the first epoch every step, then every K from each epoch's start.
  p.combine.warmup_steps = 0;
  p.combine.warmup_epochs = 1;
  EXPECT_EQ(PointsOf(p, 6, 1), (Points{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(PointsOf(p, 10, 2, 6), (Points{4, 8}));
}

TEST(CombinePolicy, QsrGrowsThePeriodAsTheLrDecays) {
  ParallelConfig p = Policy(CombinePolicyType::kQsr, 2);
  p.combine.qsr_gamma = 0.1;
  EXPECT_EQ(PointsOf(p, 9, 1, 0, 0.1), (Points{2, 4, 6, 8}));  // (0.1/0.1)^2 = 1 < K
  EXPECT_EQ(PointsOf(p, 9, 1, 0, 0.05), (Points{4, 8}));       // (0.1/0.05)^2 = 4
  EXPECT_EQ(PointsOf(p, 9, 1, 0, 0.04), (Points{6}));          // floor(6.25) = 6
  EXPECT_EQ(PointsOf(p, 9, 1, 0, 0.01), (Points{9}));          // 100: once, at the epoch's end
}

TEST(CombinePolicy, ListSetsThePeriodFromEachStepOn) {
  ParallelConfig p = Policy(CombinePolicyType::kList, 10);
  p.combine.list = "0:1, 5:3";
  // steps 0-4 every step; from step 5 on, once 3 steps have passed since the last combine
  EXPECT_EQ(PointsOf(p, 15), (Points{1, 2, 3, 4, 5, 8, 11, 14}));
  EXPECT_EQ(PointsOf(p, 7, 2, 100), (Points{3, 6}));
}

TEST(CombinePolicy, PlanPointsAnswerCombineAfter) {
  const CombinePlan plan{{2, 5, 9}};
  EXPECT_EQ(plan.Combines(), 3);
  EXPECT_EQ(plan.Minibatches(), 9);
  for (int64_t m = 1; m <= 10; ++m) EXPECT_EQ(plan.CombineAfter(m), m == 2 || m == 5 || m == 9);
}

// A period longer than the epoch combines once, at its end; a shard without one full minibatch
// is one line naming the epoch.
TEST(CombinePolicy, APeriodBeyondTheEpochCombinesAtItsEndAndNoMinibatchIsOneLine) {
  ParallelConfig p = Policy(CombinePolicyType::kList, 10);
  p.combine.list = "0:50";
  EXPECT_EQ(PointsOf(p, 8, 3, 100), (Points{8}));
  try {
    CreateCombinePolicy(p, 100)->PlanEpoch(EpochCombineInput{3, 100, 0.01, 100, 99});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("epoch 3: the smallest shard has 99 frames, not one "
                                         "full minibatch of 100"),
              std::string::npos)
        << e.what();
  }
}

TEST(CombineList, ParsesAndNamesWhatIsWrong) {
  using List = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(ParseCombineList("0:1, 1000:10,5000:50"), (List{{0, 1}, {1000, 10}, {5000, 50}}));
  for (const auto& [text, why] :
       std::vector<std::pair<std::string, std::string>>{{"", "is empty"},
                                                        {"1:2", "does not start at step 0"},
                                                        {"0:1, 0:2", "do not increase"},
                                                        {"0:0", "a period of 0"},
                                                        {"0:x", "not two integers"},
                                                        {"0:1 5:2", "not two integers"},
                                                        {"0-1", "not STEP:PERIOD"}}) {
    try {
      ParseCombineList(text);
      ADD_FAILURE() << text << ": no error";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("parallel.combine.list: ", 0), 0u) << what;
      EXPECT_NE(what.find(why), std::string::npos) << text << ": " << what;
    }
  }
}

}  // namespace combine_policy_test
}  // namespace
}  // namespace mavg
