// The controller's decisions about runs whose jobs wait in a queue (reconcile, cancel), taken
// through the JobQueue interface with a fake queue: no launcher is named by the controller.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/core/files.h"
#include "engine/store/store.h"
#include "engine/sweep/controller.h"
#include "engine/sweep/launcher.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

// A queue whose jobs are what the test says; cancelling takes them out of it.
class FakeQueue : public JobQueue {
 public:
  std::string Name() const override { return "fake"; }
  std::string Title() const override { return "FAKE"; }
  std::map<std::string, std::string> Queued(
      const std::vector<std::string>& job_ids) const override {
    std::map<std::string, std::string> out;
    for (const std::string& id : job_ids) {
      if (jobs.count(id)) out[id] = jobs.at(id);
    }
    ++queries;
    return out;
  }
  bool IsRunning(const std::string& state) const override { return state == "R"; }
  std::string Cancel(const std::vector<std::string>& job_ids) const override {
    for (const std::string& id : job_ids) {
      cancelled.insert(id);
      jobs.erase(id);
    }
    return "";
  }
  mutable std::map<std::string, std::string> jobs;
  mutable std::set<std::string> cancelled;
  mutable int queries = 0;
};

class JobQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_unique<Store>(tmp_.File("mavg.db"));
    store_->PutSweep({"s", "name: s\n", "hash", ""}, false);
    queues_ = {{queue_.Name(), &queue_}};
  }
  // A run of sweep "s" whose latest attempt was launched by `launcher` as job `job`, with the
  // given status in the database and the given state.json/result.json in its directory.
  std::string AddRun(const std::string& id, const std::string& launcher, const std::string& job,
                     RunState status, const std::string& state_json = "",
                     const std::string& result_json = "") {
    const std::string dir = tmp_.File("runs/" + id);
    MakeDirs(dir);
    if (!state_json.empty()) WriteFileAtomic(dir + "/state.json", state_json);
    if (!result_json.empty()) WriteFileAtomic(dir + "/result.json", result_json);
    store_->RegisterRuns("s", {{id, "{}", dir, RunState::kNew, "", ""}},
                         {{id, "[]", 0, static_cast<int>(members_++)}});
    store_->StartAttempt(id, 1, launcher, job, "host");
    store_->SetRunStatus(id, status, "");
    return dir;
  }
  RunRecord Run(const std::string& id) { return store_->RunsOfSweep("s").at(id); }

  testing::TempDir tmp_;
  std::unique_ptr<Store> store_;
  FakeQueue queue_;
  JobQueues queues_;
  size_t members_ = 0;
};

TEST_F(JobQueueTest, ReconcileKeepsQueuedJobsCollectsEndedOnesAndNamesLostOnes) {
  const std::string old_beat =
      R"({"status": "running", "attempt": 1, "heartbeat": "2001-01-01T00:00:00Z"})";
  AddRun("running", "fake", "1", RunState::kRunning, old_beat);
  AddRun("pending", "fake", "2", RunState::kRunning);
  AddRun("ended", "fake", "3", RunState::kRunning, R"({"status": "failed", "attempt": 1})",
         R"({"status": "failed", "error": "boom"})");
  AddRun("lost", "fake", "4", RunState::kRunning);
  AddRun("local", "local", "pid 9", RunState::kRunning);  // no queue: not this function's
  AddRun("done", "fake", "6", RunState::kCompleted);      // ended: not looked at
  queue_.jobs = {{"1", "R"}, {"2", "PD"}};

  const std::string report = ReconcileJobs(*store_, "s", 60, queues_);
  EXPECT_NE(report.find("fake: 4 run(s) were on the cluster: collected 1 hung 1 lost 1 "
                        "pending 1 running 1\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("  hung running (job 1): no heartbeat for "), std::string::npos);
  EXPECT_NE(report.find("  lost lost (job 4)\n"), std::string::npos);
  EXPECT_EQ(Run("running").status, RunState::kRunning);
  EXPECT_EQ(Run("pending").status, RunState::kRunning);
  EXPECT_EQ(Run("ended").status, RunState::kFailed);
  EXPECT_EQ(Run("ended").reason, "boom");
  EXPECT_EQ(Run("lost").status, RunState::kFailed);
  EXPECT_EQ(Run("lost").reason,
            "lost: FAKE job 4 is gone and the run left no result (its job log is in the "
            "sweep's fake/logs/)");
  EXPECT_EQ(Run("local").status, RunState::kRunning);
  EXPECT_EQ(Run("done").status, RunState::kCompleted);

  // Without queues (or with none of the attempts' launchers) there is nothing to reconcile.
  EXPECT_EQ(ReconcileJobs(*store_, "s", 60, JobQueues{}), "");
}

TEST_F(JobQueueTest, CancelCancelsQueuedJobsOnlyAndCollectsTheRest) {
  AddRun("queued", "fake", "1", RunState::kRunning);
  AddRun("preempted", "fake", "2", RunState::kPreempted);
  AddRun("finished", "fake", "3", RunState::kRunning, R"({"status": "completed", "attempt": 1})",
         R"({"status": "completed"})");
  AddRun("local", "local", "pid 9", RunState::kRunning);
  queue_.jobs = {{"1", "R"}, {"2", "PD"}};

  EXPECT_EQ(CancelSweep(*store_, "s", queues_), 2);
  EXPECT_EQ(queue_.cancelled, (std::set<std::string>{"1", "2"}));
  EXPECT_EQ(Run("queued").status, RunState::kInterrupted);
  EXPECT_EQ(Run("queued").reason,
            "cancelled by mavg sweep cancel (FAKE job 1); sweep run resumes it");
  EXPECT_EQ(Run("preempted").status, RunState::kInterrupted);
  EXPECT_EQ(Run("finished").status, RunState::kCompleted);
  EXPECT_EQ(Run("local").status, RunState::kRunning);
  // Nothing left in the queue: a second cancel cancels nothing and asks the queue nothing more
  // than which jobs are there.
  queue_.cancelled.clear();
  EXPECT_EQ(CancelSweep(*store_, "s", queues_), 0);
  EXPECT_TRUE(queue_.cancelled.empty());
}

TEST(JobQueues, TheBuildKnowsSlurmsQueueByItsLauncherName) {
  const JobQueues& known = KnownJobQueues();
  ASSERT_EQ(known.count("slurm"), 1u);
  EXPECT_EQ(known.at("slurm")->Title(), "SLURM");
  EXPECT_TRUE(known.at("slurm")->IsRunning("RUNNING"));
  EXPECT_FALSE(known.at("slurm")->IsRunning("PENDING"));
  EXPECT_EQ(known.at("slurm")->Cancel({}), "");  // nothing to cancel: scancel is not run
  EXPECT_TRUE(known.at("slurm")->Queued({}).empty());
}

}  // namespace
}  // namespace mavg
