// `mavg sweep status` (FormatStatus): counts per plan state, and each run that ended badly with
// its axes as the plan names them (key=value) and its reason.
#include <gtest/gtest.h>

#include <string>

#include "engine/store/store.h"
#include "engine/sweep/controller.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

TEST(SweepStatus, FailedRunsWithTheirAxesAsKeyValue) {
  testing::TempDir dir;
  Store store(dir.File("mavg.db"));
  store.PutSweep({"s", "name: s", "hash-s", "2024-01-01"}, false);
  std::vector<RunRecord> runs(2);
  runs[0].run_id = "aaaa", runs[0].config_json = "{}", runs[0].run_dir = dir.File("aaaa");
  runs[1].run_id = "bbbb", runs[1].config_json = "{}", runs[1].run_dir = dir.File("bbbb");
  store.RegisterRuns("s", runs,
                     {{"aaaa", R"([["parallel.workers", "1"], ["schedule.lr", "0.004"]])", 0, 0},
                      {"bbbb", R"([["parallel.workers", "2"], ["schedule.lr", "5"]])", 0, 1}});
  store.SetRunStatus("aaaa", RunState::kCompleted);
  store.SetRunStatus("bbbb", RunState::kDiverged, "non-finite loss in epoch 1");
  const std::string out = FormatStatus(store, "s");
  EXPECT_NE(out.find("sweep s: 2 runs:"), std::string::npos) << out;
  EXPECT_NE(
      out.find("  diverged bbbb parallel.workers=2 schedule.lr=5: non-finite loss in epoch 1"),
      std::string::npos)
      << out;
  EXPECT_EQ(out.find("[["), std::string::npos) << out;
  EXPECT_EQ(out.find("aaaa"), std::string::npos) << out;  // completed: only counted
}

}  // namespace
}  // namespace mavg
