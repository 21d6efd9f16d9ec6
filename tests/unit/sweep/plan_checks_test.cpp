// What a plan says beyond its runs' states: data that cannot be read (refused, with how many
// runs read each bad path), runs that train the same model, and sweep names that do not exist.
#include "engine/sweep/plan_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/store/store.h"
#include "engine/sweep/spec.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

using testing::ErrorOf;

std::vector<PlannedRun> Plan(const SweepSpec& spec) {
  std::vector<PlannedRun> plan;
  for (SweepPoint& p : ExpandSweep(spec)) {
    PlannedRun r;
    r.point = std::move(p);
    plan.push_back(std::move(r));
  }
  return plan;
}

class PlanChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(F("d/train"));
    std::ofstream(F("d/train/feats.ark")) << "x";
    std::ofstream(F("base.yaml")) << "data: {train: " << F("d/train") << ", dev: " << F("d/train")
                                  << "}\nmodel: {hidden_layers: 1, hidden_dim: 8}\n";
  }
  SweepSpec Spec(const std::string& body) {
    std::ofstream(F("s.yaml")) << "name: s\nbase: " << F("base.yaml") << "\n" << body;
    return LoadSweepSpec(F("s.yaml"));
  }
  std::string F(const std::string& name) const { return dir_.File(name); }
  testing::TempDir dir_;
};

TEST_F(PlanChecks, DataThatCannotBeReadIsNamedWithHowManyRunsReadIt) {
  const SweepSpec good = Spec("grid: {parallel.workers: [1, 2]}\n");
  std::vector<PlannedRun> plan = Plan(good);
  EXPECT_EQ(DataProblems(RunsNeedingData(plan), "the runs"), "");

  const SweepSpec bad = Spec("set: {data.test: " + F("nowhere") +
                             "}\ngrid: {parallel.workers: [1, 2, 4], data.dev: [" + F("d/train") +
                             ", " + F("d") + "]}\n");
  plan = Plan(bad);
  ASSERT_EQ(plan.size(), 6u);
  EXPECT_EQ(DataProblems(RunsNeedingData(plan), "the 6 run(s) not done"),
            "the data of the 6 run(s) not done cannot be read: data.test " + F("nowhere") +
                ": not found (6 of the runs); data.dev " + F("d") +
                ": not a data dir (no feats.scp or feats.ark) (3 of the runs)");
  // One path read under two keys is one problem.
  RunConfig same = plan[0].point.config;
  same.data.train = same.data.dev = F("nowhere");
  same.data.test = "";
  EXPECT_EQ(DataProblems({&same}, "it"), "the data of it cannot be read: data.dev and data.train " +
                                             F("nowhere") + ": not found (1 of the runs)");

  // Runs completed or running read nothing more: a finished sweep plans without its data.
  for (PlannedRun& r : plan) r.state = PlanState::kDone;
  plan[0].state = PlanState::kRunning;
  plan[2].state = PlanState::kStale;
  EXPECT_TRUE(RunsNeedingData(plan).empty());
  plan[1].state = PlanState::kFailed;
  EXPECT_EQ(RunsNeedingData(plan).size(), 1u);
}

TEST_F(PlanChecks, OneWorkerTrainsTheSameModelWhateverItsAveragingSettings) {
  RunConfig a;
  a.parallel.workers = 1;
  RunConfig b = a;
  b.parallel.average_every = 50;
  b.parallel.algorithm = AveragingAlgorithm::kBmuf;
  b.parallel.bmuf.block_momentum = 0.5;
  b.parallel.lr_scaling = LrScaling::kNone;
  b.parallel.average_momentum = true;
  EXPECT_EQ(TrainingKey(a), TrainingKey(b));
  EXPECT_NE(RunId(a), RunId(b));  // the run ids stay apart
  // What a worker does itself still counts.
  RunConfig c = a;
  c.schedule.lr = 0.5;
  EXPECT_NE(TrainingKey(a), TrainingKey(c));
  RunConfig m = a;
  m.parallel.mode = ParallelMode::kMpi;
  EXPECT_NE(TrainingKey(a), TrainingKey(m));
  // Two workers average: the interval matters.
  a.parallel.workers = b.parallel.workers = 2;
  b.parallel.algorithm = AveragingAlgorithm::kAverage;
  b.parallel.bmuf = {};
  b.parallel.lr_scaling = LrScaling::kLinear;
  b.parallel.average_momentum = false;
  EXPECT_NE(TrainingKey(a), TrainingKey(b));
}

TEST_F(PlanChecks, ThePlanNamesTheRunsThatTrainTheSameModel) {
  const std::vector<PlannedRun> plan =
      Plan(Spec("grid: {parallel.workers: [1, 2], parallel.average_every: [1, 10, 50]}\n"));
  const std::string note = FormatSameTraining(plan);
  EXPECT_EQ(note.rfind("same training: 1 group(s) of runs train the same model", 0), 0u) << note;
  ASSERT_EQ(std::count(note.begin(), note.end(), '\n'), 2) << note;
  const std::string group = note.substr(note.find('\n') + 1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(group.find(plan[i].point.run_id), std::string::npos) << group;
    EXPECT_EQ(plan[i].point.axes[0].second, "1");
  }
  EXPECT_NE(group.find("[parallel.workers=1 parallel.average_every=50]"), std::string::npos)
      << group;
  EXPECT_EQ(group.find(plan[3].point.run_id), std::string::npos) << group;  // 2 workers
  EXPECT_EQ(FormatSameTraining(
                Plan(Spec("grid: {parallel.workers: [2, 4], parallel.average_every: [1, 10]}\n"))),
            "");
}

TEST(SweepNames, AMisspeltNameGetsTheClosestStoredOne) {
  Store store(":memory:");
  EXPECT_EQ(ErrorOf([&] { store.RequireSweep("quickstart"); }),
            ":memory:: no sweep named 'quickstart' (it holds no sweep yet)");
  store.PutSweep({"quickstart", "name: quickstart\n", "h1", ""}, false);
  store.PutSweep({"table3", "name: table3\n", "h2", ""}, false);
  EXPECT_NO_THROW(store.RequireSweep("quickstart"));
  EXPECT_EQ(ErrorOf([&] { store.RequireSweep("quickstrat"); }),
            ":memory:: no sweep named 'quickstrat' (did you mean 'quickstart'?)");
}

}  // namespace
}  // namespace mavg
