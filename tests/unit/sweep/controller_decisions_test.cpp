// The controller's decisions (launch_decisions.h) over tables of snapshots built by hand: which
// runs `sweep run` and `sweep retry` launch, in which order, and what each launch asks for. Then
// the reader (sweep_state.h) on real files, the store and a listed queue: the facts it gathers,
// and that it asks a queue about nothing a decision would not launch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/sysinfo.h"
#include "engine/store/store.h"
#include "engine/sweep/launch_decisions.h"
#include "engine/sweep/spec.h"
#include "engine/sweep/sweep_state.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

// Beyond any pid_max: never a live process.
constexpr int kNoSuchPid = 2147483000;

PlannedRun Planned(const std::string& id, PlanState state, int replicate = 0) {
  PlannedRun r;
  r.point.run_id = id;
  r.point.replicate = replicate;
  r.run_dir = "results/runs/s/" + id;
  r.state = state;
  return r;
}

SweepState Snapshot(const std::vector<std::pair<PlannedRun, RunFacts>>& runs, int cores = 8) {
  SweepState s;
  for (const auto& run : runs) {
    s.plan.push_back(run.first);
    s.facts.push_back(run.second);
  }
  s.cores = cores;
  return s;
}

std::vector<std::string> IdsAt(const SweepState& s, const std::vector<size_t>& at) {
  std::vector<std::string> ids;
  for (size_t i : at) ids.push_back(s.plan[i].point.run_id);
  return ids;
}

RunFacts Facts(bool alive = true) {
  RunFacts f;
  f.alive = alive;
  return f;
}

TEST(LaunchDecisions, WhichStatesAskForALaunch) {
  struct Case {
    PlanState state;
    bool alive;
    bool rerun_stale;
    std::vector<PlanState> retry;
    bool launched;
  };
  const std::vector<Case> cases = {
      {PlanState::kNew, true, false, {}, true},
      {PlanState::kInterrupted, true, false, {}, true},  // preempted plans as interrupted
      {PlanState::kDone, true, false, {}, false},
      {PlanState::kDone, true, true, {}, false},
      {PlanState::kStale, true, false, {}, false},
      {PlanState::kStale, true, true, {}, true},
      {PlanState::kRunning, true, false, {}, false},  // its process lives: left alone
      {PlanState::kRunning, false, false, {}, true},  // its process is gone: resumed
      {PlanState::kFailed, true, false, {}, false},
      {PlanState::kFailed, true, false, {PlanState::kFailed}, true},
      {PlanState::kDiverged, true, false, {PlanState::kFailed}, false},
      {PlanState::kDiverged, true, false, {PlanState::kDiverged}, true},
      {PlanState::kCollapsed, true, false, {}, false},
      {PlanState::kCollapsed, true, false, {PlanState::kCollapsed}, true},
      {PlanState::kRunning, true, false, {PlanState::kRunning}, true},
      {PlanState::kDone, true, false, {PlanState::kDone}, true},
  };
  for (const Case& c : cases) {
    SweepRunOptions o;
    o.rerun_stale = c.rerun_stale;
    o.retry_states = c.retry;
    EXPECT_EQ(WantsLaunch(Planned("r", c.state), Facts(c.alive), o), c.launched)
        << ToString(c.state) << " alive " << c.alive << " rerun_stale " << c.rerun_stale
        << " retrying " << c.retry.size() << " state(s)";
  }
}

TEST(LaunchDecisions, ReplicateByReplicateInPlanOrder) {
  const SweepState s = Snapshot({
      {Planned("a0", PlanState::kNew, 0), Facts()},
      {Planned("a1", PlanState::kNew, 1), Facts()},
      {Planned("a2", PlanState::kNew, 2), Facts()},
      {Planned("b0", PlanState::kDone, 0), Facts()},
      {Planned("b1", PlanState::kInterrupted, 1), Facts()},
      {Planned("c0", PlanState::kRunning, 0), Facts(false)},
      {Planned("c1", PlanState::kRunning, 1), Facts(true)},
      {Planned("d0", PlanState::kFailed, 0), Facts()},
      {Planned("d1", PlanState::kNew, 1), Facts()},
  });
  const LaunchChoice choice = ChooseLaunches(s, SweepRunOptions{});
  EXPECT_EQ(IdsAt(s, choice.launch),
            (std::vector<std::string>{"a0", "c0", "a1", "b1", "d1", "a2"}));
  EXPECT_TRUE(choice.still_queued.empty());
}

TEST(LaunchDecisions, QueuedJobsAreNotLaunchedAgainAndMaxRunsCountsWhatIsLaunched) {
  RunFacts queued;
  queued.queued = QueuedJob{"FAKE", "7_1", "PENDING"};
  RunFacts queued_done = queued;
  const SweepState s = Snapshot({
      {Planned("a0", PlanState::kInterrupted, 0), queued},
      {Planned("b0", PlanState::kNew, 0), Facts()},
      {Planned("c0", PlanState::kDone, 0), queued_done},  // not wanted: not reported either
      {Planned("a1", PlanState::kNew, 1), Facts()},
      {Planned("b1", PlanState::kRunning, 1),
       [&] {
         RunFacts f = queued;
         f.alive = false;
         return f;
       }()},
      {Planned("c1", PlanState::kNew, 1), Facts()},
  });
  SweepRunOptions o;
  LaunchChoice choice = ChooseLaunches(s, o);
  EXPECT_EQ(IdsAt(s, choice.launch), (std::vector<std::string>{"b0", "a1", "c1"}));
  EXPECT_EQ(IdsAt(s, choice.still_queued), (std::vector<std::string>{"a0", "b1"}));

  o.max_runs = 2;  // after the order: the first replicate's runs come first
  choice = ChooseLaunches(s, o);
  EXPECT_EQ(IdsAt(s, choice.launch), (std::vector<std::string>{"b0", "a1"}));
  EXPECT_EQ(IdsAt(s, choice.still_queued), (std::vector<std::string>{"a0", "b1"}));
  o.max_runs = 10;
  EXPECT_EQ(ChooseLaunches(s, o).launch.size(), 3u);
}

TEST(LaunchDecisions, ResumeForceOrStartOver) {
  struct Case {
    PlanState state;
    bool has_checkpoint;
    bool force, resume;
  };
  const std::vector<Case> cases = {
      {PlanState::kNew, false, false, false},       {PlanState::kNew, true, false, true},
      {PlanState::kInterrupted, true, false, true}, {PlanState::kInterrupted, false, false, false},
      {PlanState::kRunning, true, false, true},     // a dead run continues from its checkpoint
      {PlanState::kFailed, true, false, true},      // a time limit or a crash: continued
      {PlanState::kDiverged, true, false, false},   // would diverge again: starts over
      {PlanState::kCollapsed, true, false, false},  // would collapse again: starts over
      {PlanState::kStale, true, true, false},       // redone by this code
      {PlanState::kDone, true, true, false},        {PlanState::kDone, false, true, false},
  };
  for (const Case& c : cases) {
    RunFacts f;
    f.has_checkpoint = c.has_checkpoint;
    const LaunchRequest q =
        MakeRequest("r", "dir/r", RunConfig{}, c.state, f, SweepRunOptions{}, {}, 4);
    EXPECT_EQ(q.force, c.force) << ToString(c.state) << " checkpoint " << c.has_checkpoint;
    EXPECT_EQ(q.resume, c.resume) << ToString(c.state) << " checkpoint " << c.has_checkpoint;
    EXPECT_EQ(q.planned_state, c.state);
  }
}

TEST(LaunchDecisions, ThreadsFromOptionsResourcesClusterOrCores) {
  struct Case {
    int option_threads, resource_threads;
    bool cluster;
    int jobs;
    bool mpi;
    int workers, cores;
    int threads, ranks;
  };
  const std::vector<Case> cases = {
      {3, 2, false, 1, false, 4, 8, 3, 1},  // --threads first
      {3, 2, true, 1, false, 4, 8, 3, 1},
      {0, 2, false, 1, false, 4, 8, 2, 1},  // then the spec's resources.threads
      {0, 2, true, 1, true, 4, 8, 2, 4},
      {0, 0, true, 1, false, 4, 8, 1, 1},   // a cluster: 1, never this machine's cores
      {0, 0, false, 1, false, 4, 8, 8, 1},  // simulated workers share one process's cores
      {0, 0, false, 2, false, 4, 8, 4, 1},
      {0, 0, false, 3, false, 4, 8, 2, 1},  // rounded down
      {0, 0, false, 1, true, 4, 8, 2, 4},   // MPI: the cores shared among the ranks
      {0, 0, false, 4, true, 4, 8, 1, 4},   // never below 1
      {0, 0, false, 1, false, 1, 1, 1, 1},
  };
  for (const Case& c : cases) {
    SweepRunOptions o;
    o.threads = c.option_threads;
    o.cluster = c.cluster;
    o.jobs = c.jobs;
    SweepResources res;
    res.threads = c.resource_threads;
    RunConfig config;
    config.parallel.mode = c.mpi ? ParallelMode::kMpi : ParallelMode::kSimulated;
    config.parallel.workers = c.workers;
    const LaunchRequest q =
        MakeRequest("r", "dir/r", config, PlanState::kNew, RunFacts{}, o, res, c.cores);
    const std::string where = fmt::format(
        "--threads {} resources.threads {} cluster {} jobs {} mpi {} workers {} cores {}",
        c.option_threads, c.resource_threads, c.cluster, c.jobs, c.mpi, c.workers, c.cores);
    EXPECT_EQ(q.threads, c.threads) << where;
    EXPECT_EQ(q.config.device_options.threads, c.threads) << where;  // what the run trains with
    EXPECT_EQ(q.ranks, c.ranks) << where;
    EXPECT_EQ(q.mpi, c.mpi) << where;
  }
}

TEST(LaunchDecisions, RequestCarriesAttemptStatusTimeoutAndPaths) {
  RunFacts f;
  f.next_attempt = 3;
  f.db_status = RunState::kPreempted;
  SweepRunOptions o;
  o.cache_dir = "results/cache";
  SweepResources res;
  res.time = "01:30:00";
  RunConfig config;
  config.seed = 5;
  LaunchRequest q = MakeRequest("r1", "runs/r1", config, PlanState::kInterrupted, f, o, res, 2);
  EXPECT_EQ(q.run_id, "r1");
  EXPECT_EQ(q.run_dir, "runs/r1");
  EXPECT_EQ(q.config_path, "runs/r1/sweep-config.yaml");
  EXPECT_EQ(q.cache_dir, "results/cache");
  EXPECT_EQ(q.config.seed, 5);
  EXPECT_EQ(q.attempt, 3);
  EXPECT_EQ(q.db_status, RunState::kPreempted);  // the claim starts from the status read
  EXPECT_EQ(q.timeout_s, 5400);                  // the spec's resources.time
  EXPECT_EQ(q.resources.time, "01:30:00");
  o.timeout_s = 60;  // --timeout wins
  EXPECT_EQ(MakeRequest("r1", "runs/r1", config, PlanState::kNew, f, o, res, 2).timeout_s, 60);
  EXPECT_EQ(MakeRequest("r1", "runs/r1", config, PlanState::kNew, RunFacts{}, SweepRunOptions{},
                        SweepResources{}, 2)
                .timeout_s,
            0);  // none
  EXPECT_EQ(MakeRequest("r1", "runs/r1", config, PlanState::kNew, RunFacts{}, SweepRunOptions{},
                        SweepResources{}, 2)
                .attempt,
            1);
}

TEST(LaunchDecisions, LaunchRequestsFollowTheChoiceWithEachRunsFacts) {
  RunFacts second;
  second.next_attempt = 2;
  second.has_checkpoint = true;
  SweepState s = Snapshot({{Planned("a", PlanState::kNew), RunFacts{}},
                           {Planned("b", PlanState::kInterrupted), second}},
                          6);
  SweepRunOptions o;
  o.jobs = 2;
  const std::vector<LaunchRequest> q = LaunchRequests(s, {1, 0}, o, SweepResources{});
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].run_id, "b");
  EXPECT_EQ(q[0].run_dir, "results/runs/s/b");
  EXPECT_EQ(q[0].attempt, 2);
  EXPECT_TRUE(q[0].resume);
  EXPECT_EQ(q[0].threads, 3);  // the snapshot's cores over --jobs
  EXPECT_EQ(q[1].run_id, "a");
  EXPECT_EQ(q[1].attempt, 1);
  EXPECT_FALSE(q[1].resume);
}

// A stored sweep of runs in these statuses, each config with its own seed.
StoredSweep Stored(const std::vector<std::pair<std::string, RunRecord>>& runs) {
  StoredSweep s;
  s.name = "s";
  s.db_path = "mavg.db";
  int position = 0;
  for (const auto& run : runs) {
    s.members.push_back({run.first, "[]", 0, position++});
    RunRecord r = run.second;
    r.run_id = run.first;
    r.run_dir = "runs/" + run.first;
    if (r.config_json.empty()) {
      RunConfig config;
      config.seed = position;
      r.config_json = CanonicalJson(config);
    }
    s.runs[run.first] = r;
    RunFacts f;
    f.db_status = r.status;
    f.next_attempt = position + 1;
    f.has_checkpoint = true;
    s.facts[run.first] = f;
  }
  s.cores = 4;
  return s;
}

RunRecord WithStatus(RunState status, const std::string& config_json = "",
                     const std::string& code_version = "") {
  RunRecord r;
  r.status = status;
  r.config_json = config_json;
  r.code_version = code_version;
  return r;
}

TEST(LaunchDecisions, RetryTakesTheStatesAskedForInTheSweepsOrder) {
  const StoredSweep s = Stored({
      {"f1", WithStatus(RunState::kFailed)},
      {"ok", WithStatus(RunState::kCompleted)},
      {"dv", WithStatus(RunState::kDiverged)},
      {"old", WithStatus(RunState::kCompleted, "", "an older build")},  // stale
      {"f2", WithStatus(RunState::kFailed)},
      {"bad", WithStatus(RunState::kCollapsed, "{not json")},  // not retried: not read
  });
  SweepRunOptions o;
  std::vector<LaunchRequest> q = RetryRequests(s, {PlanState::kFailed, PlanState::kDiverged}, o);
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[0].run_id, "f1");
  EXPECT_EQ(q[0].config.seed, 1);  // the config recorded in the store
  EXPECT_EQ(q[0].attempt, 2);
  EXPECT_EQ(q[0].db_status, RunState::kFailed);
  EXPECT_TRUE(q[0].resume);
  EXPECT_EQ(q[1].run_id, "dv");
  EXPECT_FALSE(q[1].resume);  // diverged: starts over
  EXPECT_EQ(q[1].planned_state, PlanState::kDiverged);
  EXPECT_EQ(q[2].run_id, "f2");

  q = RetryRequests(s, {PlanState::kStale}, o);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].run_id, "old");
  EXPECT_TRUE(q[0].force);

  o.max_runs = 2;  // runs past the limit are not looked at, not even the bad one
  q = RetryRequests(s, {PlanState::kFailed, PlanState::kDiverged, PlanState::kCollapsed}, o);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[1].run_id, "dv");
  o.max_runs = 0;
  EXPECT_ANY_THROW(RetryRequests(s, {PlanState::kCollapsed}, o));
}

TEST(LaunchDecisions, RetryRefusesResourcesThatCannotServeARun) {
  StoredSweep s = Stored({{"f1", WithStatus(RunState::kFailed)}});
  s.resources.gpus_per_worker = 1;  // the run trains on the CPU
  try {
    RetryRequests(s, {PlanState::kFailed}, SweepRunOptions{});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mavg.db: the spec of sweep 's' run f1"),
              std::string::npos)
        << e.what();
  }
}

// The reader, on a store, run directories and a queue that lists what the test says.
class ListedQueue : public JobQueue {
 public:
  std::string Name() const override { return "listed"; }
  std::string Title() const override { return "LISTED"; }
  std::map<std::string, std::string> Queued(
      const std::vector<std::string>& job_ids) const override {
    asked.push_back(job_ids);
    std::map<std::string, std::string> out;
    for (const std::string& id : job_ids) {
      if (jobs.count(id)) out[id] = jobs.at(id);
    }
    return out;
  }
  bool IsRunning(const std::string& state) const override { return state == "R"; }
  std::string Cancel(const std::vector<std::string>&) const override { return "refused"; }
  std::map<std::string, std::string> jobs;
  mutable std::vector<std::vector<std::string>> asked;
};

class SweepStateRead : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(tmp_.File("base.yaml"))
        << "data: {train: tr, dev: dv}\nmodel: {hidden_layers: 1, hidden_dim: 8}\n";
    spec_ = ParseSweepSpec(
        "name: s\nbase: base.yaml\ngrid: {parallel.average_every: [1, 2, 3, 4, 5, 6, 7, 8, 9, "
        "10, 11, 12]}\n",
        "s.yaml", tmp_.Path());
    paths_.results = tmp_.File("results");
    store_ = std::make_unique<Store>(tmp_.File("mavg.db"));
    for (const SweepPoint& p : ExpandSweep(spec_)) ids_.push_back(p.run_id);
    queues_ = {{queue_.Name(), &queue_}};
  }
  // Registers the sweep's runs (the store's default run directories).
  void Register() {
    store_->PutSweep({"s", spec_.yaml, "hash", ""}, false);
    std::vector<RunRecord> runs;
    std::vector<SweepMember> members;
    for (size_t i = 0; i < ids_.size(); ++i) {
      runs.push_back({ids_[i], "{}", Dir(i), RunState::kNew, "", ""});
      members.push_back({ids_[i], "[]", 0, static_cast<int>(i)});
    }
    store_->RegisterRuns("s", runs, members);
  }
  std::string Dir(size_t i) const { return paths_.results + "/runs/s/" + ids_[i]; }
  // Run i with this status (and reason) in the store and this state.json (none when empty).
  void Set(size_t i, RunState status, const std::string& state_json = "",
           const std::string& reason = "", bool make_dir = true) {
    store_->SetRunStatus(ids_[i], status, reason);
    if (make_dir) MakeDirs(Dir(i));
    if (!state_json.empty()) WriteFileAtomic(Dir(i) + "/state.json", state_json);
  }
  static std::string Running(const std::string& host, int pid, int attempt = 1) {
    return fmt::format(R"({{"status": "running", "host": "{}", "pid": {}, "attempt": {}}})", host,
                       pid, attempt);
  }
  SweepState Read(const MayLaunch& may_launch) {
    return ReadSweepState(spec_, *store_, paths_, may_launch, queues_);
  }
  static bool Everything(const PlannedRun&, const RunFacts&) { return true; }

  testing::TempDir tmp_;
  SweepSpec spec_;
  SweepPaths paths_;
  std::unique_ptr<Store> store_;
  std::vector<std::string> ids_;
  ListedQueue queue_;
  JobQueues queues_;
};

TEST_F(SweepStateRead, ANewSweepIsItsPlanWithNothingToAskAbout) {
  const SweepState s = Read(Everything);
  ASSERT_EQ(s.plan.size(), 12u);
  ASSERT_EQ(s.facts.size(), 12u);
  EXPECT_GE(s.cores, 1);
  for (size_t i = 0; i < s.plan.size(); ++i) {
    EXPECT_EQ(s.plan[i].point.run_id, ids_[i]);
    EXPECT_EQ(s.plan[i].state, PlanState::kNew);
    EXPECT_EQ(s.plan[i].run_dir, Dir(i));
    EXPECT_EQ(s.facts[i].db_status, RunState::kNew);
    EXPECT_EQ(s.facts[i].next_attempt, 1);
    EXPECT_FALSE(s.facts[i].has_checkpoint);
    EXPECT_FALSE(s.facts[i].queued);
  }
  EXPECT_TRUE(queue_.asked.empty());  // not in the store: no attempts to ask about
}

TEST_F(SweepStateRead, WhetherARunningRunsProcessIsAlive) {
  Register();
  const std::string host = HostName();
  const std::string dead_claim = fmt::format("claimed by {}:{}", host, kNoSuchPid);
  Set(0, RunState::kRunning, "", "", false);                        // no run dir: lost
  Set(1, RunState::kRunning, Running(host, getpid(), 2));           // trains here, alive
  Set(2, RunState::kRunning, Running(host, kNoSuchPid, 2));         // its process is gone
  Set(3, RunState::kRunning, Running("another-host", kNoSuchPid));  // cannot tell: alive
  Set(4, RunState::kRunning, "", ClaimerText());                    // claimed by us, starting
  Set(5, RunState::kRunning, "", dead_claim);                       // its claimer died
  Set(6, RunState::kRunning, "", "claimed by another-host:1");      // another host's claim
  Set(7, RunState::kRunning, "{not json", "");                      // unreadable: dead
  Set(8, RunState::kRunning, R"({"status": "completed", "attempt": 1})", dead_claim);  // collect
  Set(9, RunState::kRunning, R"({"status": "preempted", "attempt": 3})", dead_claim);
  Set(10, RunState::kRunning, R"({"status": "preempted", "attempt": 3})", ClaimerText());
  const std::vector<bool> alive = {false, true,  false, true,  true, false,
                                   true,  false, true,  false, true};
  const SweepState s = Read(Everything);
  for (size_t i = 0; i < alive.size(); ++i) {
    EXPECT_EQ(s.plan[i].state, PlanState::kRunning) << i;
    EXPECT_EQ(s.facts[i].db_status, RunState::kRunning) << i;
    EXPECT_EQ(s.facts[i].alive, alive[i]) << "run " << i;
  }
  EXPECT_EQ(s.facts[1].next_attempt, 3);
  EXPECT_EQ(s.facts[7].next_attempt, 1);  // an unreadable state counts no attempts
  EXPECT_EQ(s.facts[9].next_attempt, 4);
}

TEST_F(SweepStateRead, AttemptsCheckpointsAndQueuedJobsOfTheRunsThatMayLaunch) {
  Register();
  Set(0, RunState::kInterrupted, R"({"status": "interrupted", "attempt": 2})");
  MakeDirs(Dir(0) + "/checkpoint");
  WriteFileAtomic(Dir(0) + "/checkpoint/meta.json", "{}");
  Set(1, RunState::kPreempted);  // its job waits in the queue to be requeued
  store_->StartAttempt(ids_[1], 1, "listed", "41", "h");
  Set(2, RunState::kFailed);  // its job left the queue
  store_->StartAttempt(ids_[2], 1, "listed", "42", "h");
  Set(3, RunState::kCompleted, R"({"status": "completed", "attempt": 1})");
  store_->StartAttempt(ids_[3], 1, "listed", "43", "h");
  Set(4, RunState::kInterrupted);
  store_->StartAttempt(ids_[4], 1, "local", "pid 9", "h");  // no queue
  queue_.jobs = {{"41", "PD"}, {"43", "R"}};

  // What `sweep run` would launch: new and interrupted runs (not failed, not done).
  const MayLaunch run = [](const PlannedRun& r, const RunFacts& f) {
    return WantsLaunch(r, f, SweepRunOptions{});
  };
  SweepState s = Read(run);
  EXPECT_EQ(s.facts[0].db_status, RunState::kInterrupted);
  EXPECT_EQ(s.facts[0].next_attempt, 3);
  EXPECT_TRUE(s.facts[0].has_checkpoint);
  ASSERT_TRUE(s.facts[1].queued);
  EXPECT_EQ(s.facts[1].queued->queue, "LISTED");
  EXPECT_EQ(s.facts[1].queued->job_id, "41");
  EXPECT_EQ(s.facts[1].queued->state, "PD");
  EXPECT_FALSE(s.facts[4].queued);
  // Neither the failed run nor the done one is looked at: their files are not read and their
  // jobs are not asked about (43 is still queued, but nothing would launch its run).
  EXPECT_EQ(s.facts[2].db_status, RunState::kFailed);
  EXPECT_EQ(s.facts[3].db_status, RunState::kCompleted);
  EXPECT_EQ(s.facts[3].next_attempt, 1);
  EXPECT_FALSE(s.facts[3].queued);
  ASSERT_EQ(queue_.asked.size(), 1u);
  EXPECT_EQ(queue_.asked[0], (std::vector<std::string>{"41"}));

  // Retrying failed runs too: the failed run's job is asked about, and has left the queue.
  queue_.asked.clear();
  SweepRunOptions retry;
  retry.retry_states = {PlanState::kFailed};
  s = Read([&retry](const PlannedRun& r, const RunFacts& f) { return WantsLaunch(r, f, retry); });
  EXPECT_FALSE(s.facts[2].queued);
  ASSERT_EQ(queue_.asked.size(), 1u);
  EXPECT_EQ(queue_.asked[0], (std::vector<std::string>{"41", "42"}));
  EXPECT_EQ(IdsAt(s, ChooseLaunches(s, retry).launch),
            (std::vector<std::string>{ids_[0], ids_[2], ids_[4], ids_[5], ids_[6], ids_[7], ids_[8],
                                      ids_[9], ids_[10], ids_[11]}));

  // Nothing that may launch has a queued attempt: the queue is not asked at all.
  queue_.asked.clear();
  s = Read([](const PlannedRun& r, const RunFacts&) { return r.state == PlanState::kNew; });
  EXPECT_TRUE(queue_.asked.empty());
}

TEST_F(SweepStateRead, AStoredSweepForRetry) {
  Register();
  Set(0, RunState::kFailed, R"({"status": "failed", "attempt": 2})");
  Set(1, RunState::kCompleted, R"({"status": "completed", "attempt": 1})");
  const StoredSweep s = ReadStoredSweep(*store_, "s", {PlanState::kFailed});
  EXPECT_EQ(s.name, "s");
  ASSERT_EQ(s.members.size(), 12u);
  EXPECT_EQ(s.members[0].run_id, ids_[0]);
  EXPECT_EQ(s.runs.size(), 12u);
  ASSERT_EQ(s.facts.size(), 1u);  // only the runs in the states asked for
  EXPECT_EQ(s.facts.at(ids_[0]).next_attempt, 3);
  EXPECT_EQ(s.facts.at(ids_[0]).db_status, RunState::kFailed);
  EXPECT_TRUE(queue_.asked.empty());
  EXPECT_THROW(ReadStoredSweep(*store_, "nope", {}), Error);
}

}  // namespace
}  // namespace mavg
