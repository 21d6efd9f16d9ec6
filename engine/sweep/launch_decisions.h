#pragma once
// The controller's decisions: which runs of a sweep to launch, in which order, and what each
// launch asks of its launcher, as pure functions of what the readers returned (sweep_state.h)
// and the command's options. Nothing here reads a file, the store, a process or a queue, or
// writes anything: the same snapshot and options always give the same launches
// (tests/unit/sweep/controller_decisions_test.cpp holds the cases).

#include <string>
#include <vector>

#include "engine/config/config.h"
#include "engine/core/run_state.h"
#include "engine/sweep/launcher.h"
#include "engine/sweep/resources.h"
#include "engine/sweep/sweep_state.h"

namespace mavg {

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

// Whether a run of the plan asks to be launched by `sweep run`: it is new or interrupted
// (preempted runs plan as interrupted), its state is one of options.retry_states, it is stale
// and options.rerun_stale is set, or it is running but its process is gone (facts.alive false).
// Done runs, live running runs, and failed, diverged or collapsed runs not being retried are left.
bool WantsLaunch(const PlannedRun& run, const RunFacts& facts, const SweepRunOptions& options);

struct LaunchChoice {
  std::vector<size_t> launch;        // indices into the plan, in launch order
  std::vector<size_t> still_queued;  // wanted, but their job is still queued: in plan order
};

// The runs `sweep run` launches: those WantsLaunch accepts whose latest job is not still in a
// queue (a run waiting to be requeued must not get a second job), replicate by replicate (a
// first seed of every point before any second one, so a sweep cut short still covers its whole
// grid; the plan's order within a replicate), at most options.max_runs (> 0) of them.
LaunchChoice ChooseLaunches(const SweepState& state, const SweepRunOptions& options);

// One launch request; the same rules for `run` and `retry`. `state` is the run's plan state and
// `cores` the machine's. Threads per process: --threads, else the spec's resources.threads, else
// 1 on a cluster, else the cores shared among options.jobs runs of `ranks` processes (at least
// 1); they are written into the config the run trains (not part of its identity). A stale or
// done run is redone (force); any other run with a checkpoint continues from it (resume), except
// a diverged or collapsed one, which would end the same way from there and starts over.
LaunchRequest MakeRequest(const std::string& run_id, const std::string& run_dir,
                          const RunConfig& config, PlanState state, const RunFacts& facts,
                          const SweepRunOptions& options, const SweepResources& resources,
                          int cores);

// The requests of the runs at `launch` (indices into state.plan), in that order.
std::vector<LaunchRequest> LaunchRequests(const SweepState& state,
                                          const std::vector<size_t>& launch,
                                          const SweepRunOptions& options,
                                          const SweepResources& resources);

// The requests of `sweep retry`: the stored sweep's runs whose plan state is one of `states`, in
// the sweep's order, at most options.max_runs (> 0) of them, each from the config recorded in
// the store. Throws one line naming the run when a recorded config does not parse or the spec's
// resources cannot serve it (runs past max_runs are not looked at).
std::vector<LaunchRequest> RetryRequests(const StoredSweep& sweep,
                                         const std::vector<PlanState>& states,
                                         const SweepRunOptions& options);

}  // namespace mavg
