// `mavg run diff`: two run directories of a hand-made sweep side by side, and run ids looked up.
#include "engine/report/run_diff.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/core/error.h"
#include "tests/unit/report/fake_sweep.h"
#include "tests/unit/report/grid_sweep.h"

namespace mavg {
namespace {

using nlohmann::json;
using testing::AddGrid;
using testing::FakeRun;
using testing::FakeSweep;
using testing::Make;

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(RunDiff, ConfigKeysThatDifferAndMetrics) {
  FakeSweep s("g");
  AddGrid(s);
  WriteText(s.Dir(0) + "/config.yaml",
            "data:\n  train: tr\nparallel:\n  workers: 1\n  average_every: 1\nseed: 777\n"
            "device_options:\n  threads: 2\n");
  WriteText(s.Dir(5) + "/config.yaml",
            "data:\n  train: tr\nparallel:\n  workers: 2\n  average_every: 5\nseed: 778\n"
            "device_options:\n  threads: 1\n");
  const std::string md = RunDiff(s.Dir(0), s.Dir(5), {});
  EXPECT_NE(md.find("Config: 4 of 5 keys differ."), std::string::npos) << md;
  EXPECT_NE(md.find("| parallel.workers | 1 | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| device_options.threads (not in the run id) | 2 | 1 |"), std::string::npos)
      << md;
  EXPECT_EQ(md.find("| data.train"), std::string::npos) << md;  // the same in both
  EXPECT_NE(md.find("| test_acc | 0.9000 | 0.8500 | -0.05000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 2.000 | 1.500 |"), std::string::npos) << md;  // CV loss, epoch 1
  RunDiffOptions all;
  all.all = true;
  EXPECT_NE(RunDiff(s.Dir(0), s.Dir(5), all).find("| data.train | tr | tr |"), std::string::npos);
  all.format = report::Format::kJson;
  const json j = json::parse(RunDiff(s.Dir(0), s.Dir(5), all));
  EXPECT_EQ(j["config_differ"], 4);
  EXPECT_EQ(j["a"]["run_id"], "run0000");
  // A run id (or a unique prefix) is looked up in the database.
  EXPECT_EQ(ResolveRunDir("run0005", s.GetStore().Db().Path()), s.Dir(5));
  EXPECT_THROW(ResolveRunDir("nothing-here", s.GetStore().Db().Path()), Error);
  EXPECT_THROW(RunDiff(s.Dir(0), s.Dir(1), {}), Error);  // run 1 has no config.yaml
}

// An earlier build's frames_per_s (a projection under a plain name) is labelled; this build's
// throughputs say measured or projected in their names.
TEST(RunDiff, EarlierBuildsThroughputLabelledAsProjected) {
  FakeSweep s("t");
  FakeRun earlier = Make({{"parallel.workers", "4"}}, 0, 4);
  earlier.results = {{"frames_per_s", 123906.0}};
  s.Add(earlier);
  FakeRun now = Make({{"parallel.workers", "4"}}, 1, 4);
  now.results = {{"measured_frames_per_s", 31000.0}, {"projected_frames_per_s", 123000.0}};
  s.Add(now);
  for (size_t i : {0, 1}) WriteText(s.Dir(i) + "/config.yaml", "parallel:\n  workers: 4\n");
  const std::string md = RunDiff(s.Dir(0), s.Dir(1), {});
  EXPECT_NE(md.find("| frames_per_s (earlier build: projected) | 123906"), std::string::npos) << md;
  EXPECT_EQ(md.find("| frames_per_s |"), std::string::npos) << md;
  EXPECT_NE(md.find("| measured_frames_per_s | – | 31000"), std::string::npos) << md;
  RunDiffOptions json_format;
  json_format.format = report::Format::kJson;
  const json j = json::parse(RunDiff(s.Dir(0), s.Dir(1), json_format));
  std::set<std::string> names;
  for (const json& m : j["metrics"]) names.insert(m["name"].get<std::string>());
  EXPECT_TRUE(names.count("frames_per_s (earlier build: projected)"));
  EXPECT_FALSE(names.count("frames_per_s"));
}

// Counts print as the whole numbers they are: `epochs 2`, not `epochs 2.000`; a mean that is
// not a count keeps its 4 significant digits.
TEST(RunDiff, CountsPrintAsIntegers) {
  FakeSweep s("c");
  for (int workers : {1, 2}) {
    testing::FakeRun f = testing::Make({{"parallel.workers", std::to_string(workers)}}, 0, workers);
    f.results = {{"epochs", 2}, {"test_acc", 0.5}};
    f.frames_dropped = workers == 2 ? 117 : 0;
    f.epochs = {{2.0, 5, workers == 2 ? 3.0 : -1}, {1.5, 5, workers == 2 ? 3.0 : -1}};
    s.Add(f);
  }
  WriteText(s.Dir(0) + "/config.yaml", "parallel:\n  workers: 1\n");
  WriteText(s.Dir(1) + "/config.yaml", "parallel:\n  workers: 2\n");
  const std::string md = RunDiff(s.Dir(0), s.Dir(1), {});
  EXPECT_NE(md.find("| epochs | 2 | 2 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| world_size | 1 | 2 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| frames_dropped_per_epoch | 0 | 117 | 117 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| test_acc | 0.5000 | 0.5000 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| epoch_s | 5.000 | 5.000 | 0 |"), std::string::npos) << md;
}

}  // namespace
}  // namespace mavg
