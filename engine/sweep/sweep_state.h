#pragma once
// A sweep as the controller finds it, read once: the plan (the spec's points with the store's
// records of them) and, for each run that may be launched, the facts the controller's decisions
// need (launch_decisions.h). The readers here read the store, the runs' state files and
// checkpoints, this host's processes and the job queues; they write nothing and decide nothing
// beyond which runs are worth asking about. Everything after them is decided from what they
// return, and the controller acts on that decision (controller.h).

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/run_state.h"
#include "engine/store/store.h"
#include "engine/sweep/launcher.h"
#include "engine/sweep/resources.h"
#include "engine/sweep/spec.h"

namespace mavg {

struct SweepPaths {
  std::string results = "results";  // runs go to <results>/runs/<sweep>/<run-id>/
  std::string db;                   // default <results>/mavg.db
  std::string Db() const { return db.empty() ? results + "/mavg.db" : db; }
  std::string Cache() const { return results + "/cache"; }  // shared pretrained stacks
};

// A run of the plan with its state (PlanState: new, done, stale, running, interrupted, failed,
// diverged, collapsed).
struct PlannedRun {
  SweepPoint point;
  std::string run_dir;
  PlanState state = PlanState::kNew;
  std::string reason;
};

// The spec's points, in its order, with the store's view of each. Reads the store (does not
// write it); reads no run directory.
std::vector<PlannedRun> PlanSweep(const SweepSpec& spec, Store& store, const SweepPaths& paths);

// A job of a run that is still in its queue.
struct QueuedJob {
  std::string queue;   // how messages name the queue (JobQueue::Title: "SLURM")
  std::string job_id;  // as the attempt recorded it
  std::string state;   // the queue's word for the job ("PENDING", "RUNNING", ...)
};

// What decisions need to know of one run beyond its plan state. Every field has the value a
// run without files, process or job has; a reader leaves a field at that value where it did
// not look (see each reader).
struct RunFacts {
  RunState db_status = RunState::kNew;  // runs.status as read; new when the store has none
  // Only for a run whose status is running: its process, or, before it wrote state.json, the
  // controller that claimed it, may still be alive (false: it is gone and the run resumable).
  bool alive = true;
  int next_attempt = 1;             // the attempt number its next launch will have
  bool has_checkpoint = false;      // <run_dir>/checkpoint/meta.json: a launch may resume
  std::optional<QueuedJob> queued;  // its latest attempt's job, while that is in a queue
};

// A spec's sweep, read once for `sweep run`.
struct SweepState {
  std::vector<PlannedRun> plan;  // PlanSweep's, in the spec's order
  std::vector<RunFacts> facts;   // [plan.size()]: facts[i] is plan[i]'s
  int cores = 1;                 // this machine's logical cores (threads default from them)
};

// Whether a run is worth reading further, from its plan and the facts read so far (db_status,
// and alive for a running run): launch_decisions.h's WantsLaunch under the run's options.
using MayLaunch = std::function<bool(const PlannedRun&, const RunFacts&)>;

// Plans the spec and reads every fact the decisions need: db_status of every run and alive of
// every running one; for the runs `may_launch` accepts, next_attempt and has_checkpoint from
// their directories, and, when the sweep is in the store, queued from the queues their latest
// attempts name. A queue is asked only about those runs' jobs, and not at all when none of them
// has one, so a sweep without queued launches never runs a queue's command.
SweepState ReadSweepState(const SweepSpec& spec, Store& store, const SweepPaths& paths,
                          const MayLaunch& may_launch, const JobQueues& queues);

// A stored sweep, read once for `sweep retry`.
struct StoredSweep {
  std::string name;
  std::string db_path;                    // for messages
  std::vector<SweepMember> members;       // in the sweep's order
  std::map<std::string, RunRecord> runs;  // by run id: every member's record
  // By run id, for the runs whose plan state is one of the states read for (others absent);
  // queued is never read (a retry asks no queue).
  std::map<std::string, RunFacts> facts;
  SweepResources resources;  // the stored spec's, read as the spec was
  int cores = 1;             // as SweepState::cores
};

// Reads the stored sweep (a one-line error when there is none, or its spec's resources do not
// parse) and the facts of its runs in `states`.
StoredSweep ReadStoredSweep(Store& store, const std::string& sweep,
                            const std::vector<PlanState>& states);

// The resources of a stored sweep's spec, read as the spec was.
SweepResources StoredResources(Store& store, const std::string& sweep);

// How a plan sees a stored run: new when there is no record; a completed run made by an unknown
// code version counts as current (done).
PlanState PlanStateOf(const RunRecord* record);

// The reason a claimed run carries until it starts (Store::ClaimRun): which controller, on
// which host, holds it. ReadSweepState reads it back to tell whether that controller is alive.
std::string ClaimerText();

// The queue of an attempt's job, when its launcher has one and the attempt has a job id.
const JobQueue* QueueOfAttempt(const AttemptRecord& attempt, const JobQueues& queues);

}  // namespace mavg
