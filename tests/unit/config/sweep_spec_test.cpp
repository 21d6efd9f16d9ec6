// Sweep expansion: replicate seeds, and replicate_pretraining giving each replicate its own
// pretrained stack.
#include <gtest/gtest.h>

#include <set>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/sweep/spec.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

std::vector<SweepPoint> Expand(testing::TempDir& dir, const std::string& extra) {
  WriteFileAtomic(dir.File("base.yaml"),
                  "data: {train: d/train, dev: d/dev}\nseed: 5\n"
                  "model: {init: rbm}\npretrain: {rbm: {seed: 9}}\n");
  WriteFileAtomic(dir.File("s.yaml"), "name: s\nbase: " + dir.File("base.yaml") +
                                          "\ngrid: {parallel.workers: [1, 2]}\nreplicates: 3\n" +
                                          extra);
  return ExpandSweep(LoadSweepSpec(dir.File("s.yaml")));
}

TEST(SweepSpec, ReplicatesShareOnePretrainedStackByDefault) {
  testing::TempDir dir;
  const std::vector<SweepPoint> points = Expand(dir, "");
  ASSERT_EQ(points.size(), 6u);
  std::set<int64_t> seeds;
  for (const SweepPoint& p : points) {
    EXPECT_EQ(p.config.pretrain.rbm.seed, 9);
    EXPECT_EQ(p.config.seed, ReplicateSeed(5, p.replicate));
    seeds.insert(p.config.seed);
  }
  EXPECT_EQ(seeds.size(), 3u);
}

TEST(SweepSpec, ReplicatePretrainingDerivesTheRbmSeedPerReplicate) {
  testing::TempDir dir;
  const std::vector<SweepPoint> points = Expand(dir, "replicate_pretraining: true\n");
  ASSERT_EQ(points.size(), 6u);
  std::set<int64_t> rbm_seeds;
  for (const SweepPoint& p : points) {
    // Replicate 0 keeps the base stack (the same run as without the option); the points of one
    // replicate share theirs.
    EXPECT_EQ(p.config.pretrain.rbm.seed, ReplicateSeed(9, p.replicate));
    EXPECT_EQ(p.config.seed, ReplicateSeed(5, p.replicate));
    rbm_seeds.insert(p.config.pretrain.rbm.seed);
  }
  EXPECT_EQ(rbm_seeds.size(), 3u);
  EXPECT_EQ(points[0].config.pretrain.rbm.seed, 9);
  EXPECT_EQ(points[0].run_id, Expand(dir, "")[0].run_id);
}

TEST(SweepSpec, ReplicatePretrainingMustBeABoolean) {
  testing::TempDir dir;
  try {
    Expand(dir, "replicate_pretraining: 3\n");
    FAIL() << "accepted replicate_pretraining: 3";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("replicate_pretraining must be true or false"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mavg
