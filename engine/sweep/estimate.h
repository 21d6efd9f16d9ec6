#pragma once
// How long the runs a plan would launch may take, from the runs the store already holds: a
// pending run is timed by the completed runs of the same work per epoch (the same network,
// data, workers, mode, optimizer, minibatch, threads and device: the keys of SimilarWork), as
// their fixed seconds (setup, test, decode) plus their seconds per epoch times its epochs.
// Measured times of other runs on possibly other machines or loads: an estimate with its
// spread (the fastest and slowest such run), never a promise; a run with no such run has
// nothing to go on, and is counted as such.

#include <string>
#include <vector>

#include "engine/store/store.h"
#include "engine/sweep/sweep_state.h"

namespace mavg {

struct PlanEstimate {
  // Per plan entry, in the plan's order: its median estimate in seconds; -1 where the run is
  // not pending (not new or interrupted), -2 where nothing goes on.
  std::vector<double> each;
  int basis = 0;  // completed runs the estimates come from
  // The sums over the known runs of each one's fastest and slowest like run.
  double low = 0.0, high = 0.0;

  int Pending() const;                // runs `sweep run` would launch
  std::vector<double> Known() const;  // their median estimates where something goes on
};

// The key under which runs do the same work per epoch (a JSON text of the keys named above).
std::string SimilarWork(const RunConfig& config);

PlanEstimate EstimatePlan(Store& store, const std::vector<PlannedRun>& plan);

// Each config's median estimate in seconds, or a negative number where nothing goes on.
std::vector<double> EstimateRuns(Store& store, const std::vector<const RunConfig*>& configs);

// The time of `runs` (seconds) on `jobs` workers, each taking the next run as one ends.
double SecondsAtJobs(const std::vector<double>& runs, int jobs);

// One line: "time: N pending runs, about T on 1 job (fastest F, slowest S), about T' at
// --jobs J, from K completed runs; M have nothing to go on", or that nothing goes on.
std::string FormatEstimate(const PlanEstimate& estimate, int jobs);

// One line naming the finished (done or stale) runs of `plan` that other sweeps hold (a run id is a
// config: a sweep reuses the runs it shares with another instead of running them again): how many,
// and which sweeps; "" when none.
std::string FormatReused(Store& store, const std::string& sweep,
                         const std::vector<PlannedRun>& plan);

// Seconds as "45 s", "12 min", "3.4 h".
std::string ShortDuration(double seconds);

}  // namespace mavg
