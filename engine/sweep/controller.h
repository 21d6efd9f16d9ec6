#pragma once
// The sweep controller: plans (spec -> runs with their state), runs pending runs through a
// launcher, and is the only process that writes the results database. `sweep run` and `sweep
// retry` go one way: read the sweep once (sweep_state.h), decide purely which runs to launch
// and how (launch_decisions.h), then act here: register, claim, write, launch and collect. The
// controller names no launcher: queues are JobQueues, launches go through the Launcher.

#include <string>
#include <vector>

#include "engine/core/run_state.h"
#include "engine/store/store.h"
#include "engine/sweep/launch_decisions.h"
#include "engine/sweep/launcher.h"
#include "engine/sweep/spec.h"
#include "engine/sweep/sweep_state.h"

namespace mavg {

// The plan as a table plus the totals; with `estimates` (PlanEstimate::each, the plan's order),
// an `estimate` column: each pending run's time, or "?" where nothing goes on.
std::string FormatPlan(const SweepSpec& spec, const std::vector<PlannedRun>& plan,
                       const std::vector<double>* estimates = nullptr);
// The spec's contrasts (`compare:`) with the runs each arm selects, how many have ended and the
// pairs planned; empty without contrasts. (The plan checked them: PlanSweep refuses a contrast
// it cannot answer.)
std::string FormatContrasts(const SweepSpec& spec, const std::vector<PlannedRun>& plan);
// The spec's stop_early rule, its rungs and its arms (with their stopped runs); empty without.
std::string FormatStopEarly(const SweepSpec& spec, const std::vector<PlannedRun>& plan);
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

// Local runs at once when --jobs is not given: as many as the cores hold at the threads each
// run gets (--threads, else the spec's resources.threads); 1 when neither is set, and that run
// gets every core (simulated workers then step on all of them: docs/parallel.md).
int DefaultJobs(int cores, int threads_option, const SweepResources& resources);

// Registers the sweep and its runs, launches the pending ones (ChooseLaunches), collects each as
// it ends, and prints a summary. Each run is claimed in the store (compare-and-set from the
// status it was read with) before anything is written for it, so a run another controller
// launched meanwhile is skipped; and each launch uses the run directory the store holds after
// registering, which another controller may have registered first. Returns the exit code: 0 if
// every launched run completed, 1 if any failed, diverged or collapsed, 130 when interrupted.
int RunSweep(const SweepSpec& spec, Store& store, Launcher& launcher, const SweepPaths& paths,
             const SweepRunOptions& options);

// Relaunches the sweep's runs whose state is one of `states` (failed, diverged, interrupted,
// ...) from the configs recorded in the store; returns the exit code as RunSweep.
int RetrySweep(Store& store, const std::string& sweep, const std::vector<PlanState>& states,
               Launcher& launcher, const SweepRunOptions& options);

// Counts per state and the reason of every failure, from the store.
std::string FormatStatus(Store& store, const std::string& sweep);

}  // namespace mavg
