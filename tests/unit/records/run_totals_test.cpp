// The run's totals (records/run_totals.h) through a checkpoint's meta.json and into the result:
// a resumed attempt continues every sum where the checkpoint left it, an older checkpoint
// without the time sums gives a result without training time and rates, and the rates are the
// frames over the measured or projected time.
#include "engine/records/run_totals.h"

#include <gtest/gtest.h>

namespace mavg {
namespace {
namespace run_totals {

// A new member must be carried by ToCheckpoint / FromCheckpoint / ToResult and set below: the
// structured binding names every member, so one more stops the build here.
[[maybe_unused]] void EveryMemberIsNamedHere(const RunTotals& t) {
  [[maybe_unused]] const auto& [attempts_before, wall_before_s, io_before_s, compute_s, frames,
                                comm_bytes, comm_bytes_received, train_s, projected_s, steps,
                                times_known] = t;
}

RunTotals EveryTotal() {
  RunTotals t;
  t.attempts_before = 2, t.wall_before_s = 100.5, t.io_before_s = 3.25;
  t.compute_s = 40.0, t.frames = 123456, t.comm_bytes = 4096, t.comm_bytes_received = 12288,
  t.train_s = 60.0, t.projected_s = 30.0;
  t.steps = 777, t.times_known = true;
  return t;
}

TEST(RunTotals, ACheckpointCarriesEveryTotalIntoTheNextAttempt) {
  const RunTotals t = EveryTotal();
  CheckpointMeta meta;
  meta.run_id = "0123456789abcdef", meta.world_size = 2, meta.cv_best = {1, 2, 3};
  t.ToCheckpoint(meta, /*wall_s=*/9.5, /*io_s=*/0.25);
  const RunTotals back =
      RunTotals::FromCheckpoint(CheckpointMetaFromJson(ToJson(meta), "meta.json"));
  RunTotals expected = t;  // the writing attempt is one of the earlier ones now
  expected.attempts_before = 3, expected.wall_before_s = 110.0, expected.io_before_s = 3.5;
  EXPECT_EQ(back, expected);
}

TEST(RunTotals, AnOlderCheckpointWithoutTimesGivesNoRates) {
  CheckpointMeta meta;
  meta.frames_total = 500, meta.compute_total = 2.0;
  const RunTotals t = RunTotals::FromCheckpoint(meta);
  EXPECT_FALSE(t.times_known);
  EXPECT_EQ(t.attempts_before, 1);
  EXPECT_EQ(t.frames, 500);
  EXPECT_EQ(t.steps, 0);
  RunResult r;
  t.ToResult(r, 5.0, 1.0, true);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(r.wall_s, 5.0);
  EXPECT_EQ(r.frames, 500);
  EXPECT_FALSE(r.train_s || r.measured_frames_per_s || r.projected_train_s ||
               r.projected_frames_per_s);
  // ... and a checkpoint it writes still says the times are unknown.
  CheckpointMeta next;
  t.ToCheckpoint(next, 5.0, 1.0);
  EXPECT_FALSE(next.train_total.has_value());
  EXPECT_FALSE(RunTotals::FromCheckpoint(next).times_known);
}

TEST(RunTotals, TheResultsRatesAreFramesOverTheTimes) {
  RunTotals t = EveryTotal();
  t.AddEpoch(1.0, 6544, 1024, 3072, 4.0, 2.0);  // 130000 frames, 64 s measured, 32 s projected
  RunResult measured;
  t.ToResult(measured, 20.0, 0.5, false);
  EXPECT_EQ(measured.attempts, 3);
  EXPECT_EQ(measured.wall_s, 120.5);
  EXPECT_EQ(measured.io_s, 3.75);
  EXPECT_EQ(measured.compute_s, 41.0);
  EXPECT_EQ(measured.frames, 130000);
  EXPECT_EQ(measured.comm_bytes, 5120);
  EXPECT_EQ(measured.comm_bytes_received, 15360);
  EXPECT_EQ(measured.train_s, 64.0);
  EXPECT_EQ(measured.measured_frames_per_s, 130000.0 / 64.0);
  EXPECT_FALSE(measured.projected_train_s.has_value());
  RunResult projected;
  t.ToResult(projected, 20.0, 0.5, true);
  EXPECT_EQ(projected.projected_train_s, 32.0);
  EXPECT_EQ(projected.projected_frames_per_s, 130000.0 / 32.0);
}

}  // namespace run_totals
}  // namespace
}  // namespace mavg
