#pragma once
// Tables over a sweep's runs: a metric pivoted by two axes (mean ± std over replicates, n per
// cell), and speedup/efficiency per worker count with measured, projected and modelled times
// in separate columns, and the time to the baseline's CV loss.

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

// Keeps the runs matching `where` and checks that no other axis than `free_axes` varies;
// throws naming the varying axis and how to fix it.
std::vector<const ReportRun*> SelectRuns(
    const std::vector<ReportRun>& runs,
    const std::vector<std::pair<std::string, std::string>>& where,
    const std::vector<std::string>& free_axes);

}  // namespace mavg
