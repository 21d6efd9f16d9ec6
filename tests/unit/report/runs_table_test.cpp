// `report runs`: one flat row per run, over hand-made run directories ingested by the store
// (fake_sweep.h).
#include "engine/report/runs_table.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "tests/unit/report/fake_sweep.h"
#include "tests/unit/report/grid_sweep.h"

namespace mavg {
namespace {

using nlohmann::json;
using testing::AddGrid;
using testing::FakeRun;
using testing::FakeSweep;
using testing::Make;
using Axes = std::vector<std::pair<std::string, std::string>>;

size_t Column(const RunsTable& t, const std::string& name) {
  const auto it = std::find(t.columns.begin(), t.columns.end(), name);
  EXPECT_NE(it, t.columns.end()) << name;
  return static_cast<size_t>(it - t.columns.begin());
}

TEST(RunsTable, OneFlatRowPerRun) {
  FakeSweep s("g");
  AddGrid(s);
  const RunsTable t = LoadRunsTable(s.GetStore(), "g");
  ASSERT_EQ(t.rows.size(), 8u);
  EXPECT_EQ(t.axes, (std::vector<std::string>{"parallel.workers", "parallel.average_every"}));
  // seed varies; schedule.lr does not; the NG-SGD key is only present, never different.
  EXPECT_EQ(t.config_keys, (std::vector<std::string>{"seed"}));
  EXPECT_EQ(std::vector<std::string>(t.columns.begin(), t.columns.begin() + 8),
            (std::vector<std::string>{"sweep", "run_id", "replicate", "status", "reason",
                                      "parallel.workers", "parallel.average_every", "seed"}));
  EXPECT_EQ(t.columns.back(), "run_dir");
  // Axes typed from the config.
  EXPECT_EQ(t.rows[2][Column(t, "parallel.average_every")], json(5));
  EXPECT_EQ(t.rows[2][Column(t, "parallel.workers")], json(1));
  EXPECT_EQ(t.rows[3][Column(t, "seed")], json(778));
  // Metrics: results, derived ones (test_error, final_cv_loss, epoch_s), texts (mode).
  EXPECT_NEAR(t.rows[3][Column(t, "test_acc")].get<double>(), 0.87, 1e-12);
  EXPECT_NEAR(t.rows[3][Column(t, "test_error")].get<double>(), 13.0, 1e-9);
  EXPECT_NEAR(t.rows[3][Column(t, "final_cv_loss")].get<double>(), 1.7, 1e-9);
  EXPECT_EQ(t.rows[5][Column(t, "mode")], json("simulated"));
  EXPECT_TRUE(t.rows[1][Column(t, "projected_epoch_s")].is_null());
  EXPECT_DOUBLE_EQ(t.rows[5][Column(t, "projected_epoch_s")].get<double>(), 3.0);
  EXPECT_EQ(t.rows[7][Column(t, "status")], json("failed"));
  EXPECT_TRUE(t.rows[7][Column(t, "test_acc")].is_null());
  EXPECT_EQ(t.rows[7][Column(t, "run_dir")], json(s.Dir(7)));

  // CSV: a header and 8 lines of as many cells (empty where no value), the same numbers.
  const std::string csv = RunsCsv(t);
  std::vector<std::string> lines;
  for (size_t a = 0, b; a < csv.size(); a = b + 1) {
    b = csv.find('\n', a);
    lines.push_back(csv.substr(a, b - a));
  }
  ASSERT_EQ(lines.size(), 9u);
  const auto commas = std::count(lines[0].begin(), lines[0].end(), ',');
  for (const std::string& l : lines) EXPECT_EQ(std::count(l.begin(), l.end(), ','), commas) << l;
  EXPECT_NE(lines[4].find(",5,778,"), std::string::npos) << lines[4];  // average_every, seed
  // JSON: one object per run, keys in column order, null where no value.
  const auto j = nlohmann::ordered_json::parse(RunsJson(t));
  ASSERT_EQ(j.size(), 8u);
  EXPECT_TRUE(j[7]["test_acc"].is_null());
  EXPECT_EQ(j[3]["seed"], 778);
  EXPECT_EQ(j[0].begin().key(), "sweep");
}

// A run's times say whether they were measured or projected: the attempts and both throughputs
// of this build have columns of their own, and an earlier build's frames_per_s (frames over the
// slowest worker's compute: a projection) is labelled so, not shown as a measurement.
TEST(RunsTable, ThroughputsSayMeasuredOrProjected) {
  FakeSweep s("t");
  FakeRun now = Make({{"parallel.workers", "4"}}, 0, 4);
  now.results = {{"attempts", 2},
                 {"wall_s", 30.0},
                 {"measured_frames_per_s", 31000.0},
                 {"projected_frames_per_s", 123906.0}};
  s.Add(now);
  FakeRun earlier = Make({{"parallel.workers", "4"}}, 1, 4);
  earlier.results = {{"frames_per_s", 123906.0}, {"wall_s", 14.2}};
  s.Add(earlier);
  const RunsTable t = LoadRunsTable(s.GetStore(), "t");
  EXPECT_EQ(t.rows[0][Column(t, "attempts")], json(2));
  EXPECT_EQ(t.rows[0][Column(t, "measured_frames_per_s")], json(31000.0));
  EXPECT_EQ(t.rows[0][Column(t, "projected_frames_per_s")], json(123906.0));
  EXPECT_TRUE(t.rows[1][Column(t, "attempts")].is_null()) << "earlier builds did not count them";
  EXPECT_EQ(t.rows[1][Column(t, "frames_per_s (earlier build: projected)")], json(123906.0));
  EXPECT_EQ(std::find(t.columns.begin(), t.columns.end(), "frames_per_s"), t.columns.end());
  // attempts follows wall_s among the leading columns.
  EXPECT_EQ(Column(t, "attempts"), Column(t, "wall_s") + 1);
  EXPECT_NE(RunsCsv(t).find(",frames_per_s (earlier build: projected),"), std::string::npos);
}

TEST(RunsTable, CsvQuotesWhatNeedsIt) {
  FakeSweep s("q");
  FakeRun f = Make({{"data.train", "a,b \"c\""}});
  f.config = {{"data", {{"train", "a,b \"c\""}}}};
  s.Add(f);
  const std::string csv = RunsCsv(LoadRunsTable(s.GetStore(), "q"));
  EXPECT_NE(csv.find(",\"a,b \"\"c\"\"\","), std::string::npos) << csv;
}

}  // namespace
}  // namespace mavg
