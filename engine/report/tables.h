#pragma once
// Tables over a sweep's runs: a metric pivoted by two axes (mean ± std over replicates, n per
// cell), and speedup/efficiency per worker count with measured, projected and modelled times
// in separate columns, and the time to the baseline's CV loss.

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/report/render.h"
#include "engine/report/sweep_data.h"

namespace mavg {

struct TableOptions {
  std::string rows, cols;  // axes (cols may be empty)
  std::string value = "test_acc";
  report::Aggregate agg = report::Aggregate::kMean;
  report::Format format = report::Format::kMd;
  std::vector<std::pair<std::string, std::string>> where;  // fixed values of other axes
  // value time_to_target only: the runs whose final CV loss is the target (--baseline)
  std::string baseline_axis = "parallel.workers";
  std::string baseline = "1";
};

// Across an axis that changes the frames a run trains per epoch (workers, averaging interval or
// frames, minibatch), each cell's frames per epoch beside its metric and a warning naming the
// cells that trained more than 3 % fewer than the most.
std::string MetricTable(const std::string& sweep, const std::vector<ReportRun>& runs,
                        const TableOptions& options);

// Rows per value of `axis` and per combination of the other axes that vary (e.g. 1 worker,
// then 16 workers x each parallel.algorithm); each row is compared with the baseline runs
// that share its values of the axes the baseline runs vary on (see Baselines).
// The last column notes an efficiency whose distance from 1 is within the spread of the
// baseline's replicates (noise, not a superlinear speedup).
struct SpeedupOptions {
  std::string axis = "parallel.workers";  // from --baseline AXIS=VALUE
  std::string baseline = "1";
  // Model column. One link for every combine (--interconnect or --fit), or two: --inter for
  // flat and global combines, --intra for the group combines of two-level runs.
  std::string interconnect;  // preset name ("" = none)
  std::string intra, inter;  // preset names ("" = none)
  std::string staging;       // host staging link for the model ("" = none)
  std::string fit;           // or: a measured all-reduce JSON (the inter link)
  report::Format format = report::Format::kMd;
  std::vector<std::pair<std::string, std::string>> where;
};

std::string SpeedupTable(const std::string& sweep, const std::vector<ReportRun>& runs,
                         const SpeedupOptions& options);

// The speedups of one row of runs against its baseline runs, as every report, figure and page
// computes them (one definition per kind; the caption of SpeedupTable states them):
//   measured   real processes only: the baseline's measured seconds per training frame over
//              the row's, each set without its contended runs where it has others
//   projected  within each run: N x the mean worker's compute + data seconds over the run's
//              projected epoch (1 worker: 1), averaged over the row's runs
//   modelled   the same over the modelled epoch (`modelled`, nullable, gives it per run)
// with the flags that must be printed beside them (timing_checks.h and the ratio checks).
struct KindSpeedup {
  double epoch_s = std::numeric_limits<double>::quiet_NaN();
  double speedup = std::numeric_limits<double>::quiet_NaN();
  double efficiency = std::numeric_limits<double>::quiet_NaN();  // speedup x base workers / workers
};
struct RowSpeedups {
  int workers = 1, base_workers = 1;
  double frames = std::numeric_limits<double>::quiet_NaN();   // per epoch, mean over the runs
  double dropped = std::numeric_limits<double>::quiet_NaN();  // frames dropped per epoch
  bool simulated = false;  // no real process in the row: no measured speedup
  KindSpeedup measured, projected, modelled;
  std::vector<std::string> flags;  // sentences to print beside the numbers
  std::vector<std::string> noisy;  // kinds whose efficiency is within the baseline's noise
};
RowSpeedups SpeedupsOf(
    const std::vector<const ReportRun*>& row, const std::vector<const ReportRun*>& baseline,
    bool baseline_row,
    const std::function<std::optional<double>(const ReportRun&)>& modelled = nullptr);

// Keeps the runs matching `where` and checks that no other axis than `free_axes` varies;
// throws naming the varying axis and how to fix it.
std::vector<const ReportRun*> SelectRuns(
    const std::vector<ReportRun>& runs,
    const std::vector<std::pair<std::string, std::string>>& where,
    const std::vector<std::string>& free_axes);

}  // namespace mavg
