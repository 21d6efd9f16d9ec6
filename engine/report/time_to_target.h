#pragma once
// Time to the baseline's CV loss: how long a run trains until its CV loss first reaches the
// final CV loss of the baseline runs (e.g. parallel.workers=1). docs/performance-model.md
// ("Time to target") states the definition.

#include <optional>
#include <string>
#include <vector>

#include "engine/report/sweep_data.h"

namespace mavg {

// The metric's name in `mavg report table --value`.
inline constexpr const char* kTimeToTarget = "time_to_target";
// What its clock counts, for table captions.
inline constexpr const char* kTimeToTargetClock =
    "Clock: each epoch's training time as in the projected column (simulated workers: their "
    "projection, projected_wall_s; real processes: the measured wall_s - cv_s), CV passes "
    "excluded, summed over the epochs up to that one.";

// Whether a run's epochs count for time to target: completed runs, and diverged ones (which
// may have reached the target before diverging, and otherwise count as not reaching it).
bool CountsForTimeToTarget(const ReportRun& run);

// Cumulative EpochTrainSeconds to the end of the first accepted epoch whose CV loss is at most
// `target` (with a relative tolerance of 1e-9 for rounding); nullopt if none is.
std::optional<double> TimeToTarget(const ReportRun& run, double target);

// The baseline runs (axis = value, completed) of each run: those that agree with it on every
// axis on which the baseline runs themselves vary, so that e.g. an optimizer.type axis gets
// one baseline per optimizer while axes the baselines share (parallel.algorithm fixed for one
// worker) match every run.
class Baselines {
 public:
  // Keeps pointers into `runs`, which must outlive this object.
  Baselines(const std::vector<ReportRun>& runs, const std::string& axis, const std::string& value);

  std::vector<const ReportRun*> For(const ReportRun& run) const;
  // Mean over For(run) of each run's last accepted CV loss (final_cv_loss); nullopt if none.
  std::optional<double> Target(const ReportRun& run) const;
  // Whether any completed run has axis = value.
  bool Empty() const { return base_.empty(); }
  // Every baseline run.
  const std::vector<const ReportRun*>& All() const { return base_; }
  // The axes the baseline runs vary on, in the sweep's order.
  const std::vector<std::string>& Varying() const { return varying_; }

 private:
  std::vector<const ReportRun*> base_;  // [not owned], completed runs with axis = value
  std::vector<std::string> varying_;
};

// Time to target over the runs of one table cell (runs that share their baselines): the target,
// the times of the runs that reached it, and how many runs counted (CountsForTimeToTarget).
struct CellTimesToTarget {
  std::optional<double> target;
  std::vector<double> reached;
  int counted = 0;
};
CellTimesToTarget TimesToTarget(const std::vector<const ReportRun*>& cell,
                                const Baselines& baselines);

}  // namespace mavg
