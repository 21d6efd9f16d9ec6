#pragma once
// What makes a run's time not the run's own, checked wherever reports average times: epochs
// that shared their cores with other work (contended: train/contention.h), replicates of one
// configuration whose speeds disagree beyond what replicates on one quiet machine do (a run
// reused from a sweep that ran beside other work, a run on another machine), and replicates
// that ran on different CPUs. Reports say so beside the number, never print it bare.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/report/sweep_data.h"

namespace mavg {

// Replicates whose measured seconds per training frame differ by more than this fraction of
// the fastest are flagged (replicates of the same configuration on one quiet machine agree
// within a few percent; the reproduction's runs within 10 %).
inline constexpr double kReplicateSpeedTolerance = 0.25;

// A completed run's measured seconds per training frame (epoch_s / frames per epoch); nullopt
// without both.
std::optional<double> MeasuredSecondsPerFrame(const ReportRun& run);
// Whether some epoch of the run was contended (epochs.contended; runs made before it was
// recorded: never).
bool ContendedRun(const ReportRun& run);

// The replicates whose times are averaged into one number (a speedup's baseline, a table cell).
struct TimedRuns {
  std::vector<const ReportRun*> kept;  // contended runs left out when uncontended ones exist
  std::vector<std::string> flags;      // one sentence per problem, naming the runs
};
// `what` names the set in the sentences ("the baseline (parallel.workers=1)").
TimedRuns CheckTimedRuns(const std::vector<const ReportRun*>& runs, std::string_view what);

}  // namespace mavg
