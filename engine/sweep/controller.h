#pragma once
// The sweep controller: plans (spec -> runs with their state), runs pending runs through a
// launcher, and is the only process that writes the results database.

#include <string>
#include <vector>

#include "engine/core/run_state.h"
#include "engine/store/store.h"
#include "engine/sweep/launcher.h"
#include "engine/sweep/spec.h"

namespace mavg {

struct SweepPaths {
  std::string results = "results";  // runs go to <results>/runs/<sweep>/<run-id>/
  std::string db;                   // default <results>/mavg.db
  std::string Db() const { return db.empty() ? results + "/mavg.db" : db; }
  std::string Cache() const { return results + "/cache"; }  // shared pretrained stacks
};

// A run of the plan with its state (PlanState: new, done, stale, running, interrupted, failed,
// diverged).
struct PlannedRun {
  SweepPoint point;
  std::string run_dir;
  PlanState state = PlanState::kNew;
  std::string reason;
};

// Reads the store (does not write it).
std::vector<PlannedRun> PlanSweep(const SweepSpec& spec, Store& store, const SweepPaths& paths);
// The plan as a table plus the totals.
std::string FormatPlan(const SweepSpec& spec, const std::vector<PlannedRun>& plan);
// Brings the database in line with the job queues (launcher.h: JobQueue; SLURM's) for the
// sweep's runs that a queued launch left "running" or "preempted". A job still queued keeps its
// run running (pending or running in the report); a job that is gone is collected from its run
// dir, and a run that left no result becomes "failed" with the reason "lost". A running job
// whose heartbeat (state.json) is older than `hung_after_s` is reported as hung. Returns the
// report lines, a block per queue (empty when no run is in a queue).
std::string ReconcileJobs(Store& store, const std::string& sweep, double hung_after_s,
                          const JobQueues& queues = KnownJobQueues());
// Cancels the sweep's queued jobs and marks their runs "interrupted" (resumable by `sweep
// run`); runs whose jobs already ended are collected instead. Returns the number of runs
// cancelled.
int CancelSweep(Store& store, const std::string& sweep, const JobQueues& queues = KnownJobQueues());

// The shared pretraining steps of the plan (model.init rbm): one line per pretrained stack with
// the runs that share it and whether it is already in the cache; empty when no run pretrains.
std::string FormatPretraining(const std::vector<PlannedRun>& plan, const SweepPaths& paths);

struct SweepRunOptions {
  bool dry_run = false;
  int max_runs = 0;    // 0: all pending
  bool force = false;  // replace a sweep of the same name with a different spec
  bool rerun_stale = false;
  std::vector<PlanState> retry_states;  // also relaunch runs in these states (retry)
  double timeout_s = 0;                 // per run; 0: the spec's resources.time
  std::string cache_dir;                // shared pretrained stacks (SweepPaths::Cache())
  bool cluster = false;  // a cluster launcher: threads default to the spec's or 1, not cores / jobs
  int threads = 0;       // per process; 0: spec's resources.threads, else cores / jobs
  int jobs = 1;          // local runs at once (DefaultJobs when --jobs is not given)
  // A spec made on the command line (cli_spec.h) is written here once the store has taken it.
  std::string write_spec_to;
};

// The resources of a stored sweep's spec, read as the spec was.
SweepResources StoredResources(Store& store, const std::string& sweep);
// Local runs at once when --jobs is not given: as many as the cores hold at the threads each
// run gets (--threads, else the spec's resources.threads); 1 when neither is set, and that run
// gets every core (simulated workers then step on all of them: docs/parallel.md).
int DefaultJobs(int cores, int threads_option, const SweepResources& resources);

// Registers the sweep and its runs, launches the pending ones, collects each as it ends, and
// prints a summary. Returns the exit code: 0 if every launched run completed, 1 if any failed,
// diverged or collapsed, 130 when interrupted.
int RunSweep(const SweepSpec& spec, Store& store, Launcher& launcher, const SweepPaths& paths,
             const SweepRunOptions& options);

// Relaunches the sweep's runs whose state is one of `states` (failed, diverged, interrupted,
// ...) from the configs recorded in the store; returns the exit code as RunSweep.
int RetrySweep(Store& store, const std::string& sweep, const std::vector<PlanState>& states,
               Launcher& launcher, const SweepRunOptions& options);

// Counts per state and the reason of every failure, from the store.
std::string FormatStatus(Store& store, const std::string& sweep);

}  // namespace mavg
