#include "engine/train/contention.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>

namespace mavg {
namespace {

TEST(Contention, CpuUseIsCpuOverWallTimesThreads) {
  EXPECT_DOUBLE_EQ(*EpochCpuUse(3.0, 2.0, 2), 0.75);
  EXPECT_DOUBLE_EQ(*EpochCpuUse(0.0, 2.0, 1), 0.0);
  EXPECT_FALSE(EpochCpuUse(1.0, 0.0, 1));  // no wall time
  EXPECT_FALSE(EpochCpuUse(1.0, 1.0, 0));  // no threads
  EXPECT_FALSE(EpochCpuUse(-1.0, 1.0, 1));
  EXPECT_FALSE(EpochCpuUse(std::numeric_limits<double>::quiet_NaN(), 1.0, 1));
}

TEST(Contention, TheRunQueueWaitDecidesWhereKnownElseTheCpuUse) {
  struct Case {
    double use;
    std::optional<double> wait;
    bool contended;
  };
  const Case cases[] = {
      {1.0, 0.0, false},
      {0.5, 0.01, false},  // low use from too little work for the threads, no waiting: quiet
      {1.0, kContendedWait, false},
      {1.0, kContendedWait + 1e-6, true},
      {0.99, 0.7, true},
      {0.9, std::nullopt, false},
      {kContendedCpuUse, std::nullopt, false},
      {kContendedCpuUse - 1e-6, std::nullopt, true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Contended(c.use, c.wait), c.contended)
        << "use " << c.use << " wait " << (c.wait ? *c.wait : -1.0);
  }
}

}  // namespace
}  // namespace mavg
