// The collapse check: its input-free loss against closed forms, and each threshold on both sides.
#include "engine/train/health.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/core/error.h"

namespace mavg {
namespace {

TEST(Health, InputFreeLossIsTheSmoothedPriorCrossEntropy) {
  // Train labels 0,0,0,1 over 3 classes (counts 3, 1, 0): add-one frequencies 4/7, 2/7, 1/7.
  const std::vector<double> train = {3, 1, 0};
  const std::vector<int32_t> cv = {0, 1};
  const double expected = -(std::log(4.0 / 7) + std::log(2.0 / 7)) / 2;
  EXPECT_NEAR(InputFreeLoss(train, cv), expected, 1e-12);
  EXPECT_LT(expected, std::log(3.0));
  // CV labels the training data never saw: capped at the uniform model's ln(K).
  const std::vector<int32_t> unseen = {2, 2, 2};
  EXPECT_DOUBLE_EQ(InputFreeLoss(train, unseen), std::log(3.0));
  // Balanced labels: exactly ln(K).
  const std::vector<double> balanced_counts = {1, 1, 1, 1};
  const std::vector<int32_t> balanced = {0, 1, 2, 3};
  EXPECT_NEAR(InputFreeLoss(balanced_counts, balanced), std::log(4.0), 1e-12);
  const std::vector<int32_t> bad = {5};
  EXPECT_THROW(InputFreeLoss(std::vector<double>{}, cv), Error);  // no outputs
  EXPECT_THROW(InputFreeLoss(train, bad), Error);
}

TEST(Health, ChanceLevelRunsCollapse) {
  const double chance = std::log(63.0);
  CollapseConfig t;  // chance_fraction 0.99, growth 2
  EXPECT_EQ(t.chance_fraction, 0.99);
  // Stuck at or above chance in every epoch.
  CollapseVerdict v = CheckCollapse({4.3, chance, 4.2}, 4.2, chance, t);
  EXPECT_TRUE(v.collapsed);
  EXPECT_EQ(v.detail["check"], "chance");
  EXPECT_NE(v.reason.find("no better than chance"), std::string::npos) << v.reason;
  // The digits task's plain SGD at 16 x lr (measured): the label priors' loss and no better.
  EXPECT_TRUE(CheckCollapse({11.245, 5.6337, 4.2508, 4.0068}, 4.0068, 4.0061, t).collapsed);
  // ... and a prior-only model landing a little below the input-free loss.
  EXPECT_TRUE(CheckCollapse({4.1, 3.99}, 3.99, 4.0061, t).collapsed);
  // More than 1 % below is learning, however little.
  v = CheckCollapse({4.3, 0.985 * chance, 4.2}, 4.2, chance, t);
  EXPECT_FALSE(v.collapsed) << v.reason;
  t.chance_fraction = 1.0;
  EXPECT_FALSE(CheckCollapse({4.1, 3.99}, 3.99, 4.0061, t).collapsed);
  // A non-finite CV loss counts as above the threshold.
  v = CheckCollapse({std::numeric_limits<double>::quiet_NaN()}, 1.0, chance, t);
  EXPECT_TRUE(v.collapsed);
  // Off.
  t.chance_fraction = 0;
  EXPECT_FALSE(CheckCollapse({4.3, 4.3}, 4.3, chance, t).collapsed);
}

TEST(Health, RunsThrownBackFarAboveTheirFirstEpochCollapse) {
  const double chance = std::log(10.0);  // 2.30
  CollapseConfig t;
  // Learned (1.0), then blown back to 2.1: >= 2 x 1.0 and >= chance / 2.
  CollapseVerdict v = CheckCollapse({1.0, 0.8, 2.1}, 2.1, chance, t);
  EXPECT_TRUE(v.collapsed);
  EXPECT_EQ(v.detail["check"], "regressed");
  EXPECT_DOUBLE_EQ(v.detail["first_cv_loss"].get<double>(), 1.0);
  // Just under twice the first epoch: not a collapse.
  EXPECT_FALSE(CheckCollapse({1.0, 0.8, 1.99}, 1.99, chance, t).collapsed);
  // Overfitting an easy task (0.01 -> 0.05 is 5x, but far below chance / 2): healthy.
  EXPECT_FALSE(CheckCollapse({0.01, 0.02, 0.05}, 0.05, chance, t).collapsed);
  // The final model decides: newbob kept the accepted 0.8, whatever the rejected epoch did.
  EXPECT_FALSE(CheckCollapse({1.0, 0.8, 5.0}, 0.8, chance, t).collapsed);
  // One epoch has nothing to compare with.
  EXPECT_FALSE(CheckCollapse({1.0}, 1.0, chance, t).collapsed);
  t.growth = 0;
  EXPECT_FALSE(CheckCollapse({1.0, 0.8, 2.1}, 2.1, chance, t).collapsed);
  // No epochs: nothing to judge.
  EXPECT_FALSE(CheckCollapse({}, 0.0, chance, CollapseConfig{}).collapsed);
}

}  // namespace
}  // namespace mavg
