#pragma once
// Tables over a sweep's runs: a metric pivoted by two axes (mean ± std over replicates, n per
// cell), and speedup/efficiency per worker count with measured, projected and modelled times
// in separate columns.

#include <string>
#include <utility>
#include <vector>

#include "engine/report/sweep_data.h"

namespace mavg {

struct TableOptions {
  std::string rows, cols;  // axes (cols may be empty)
  std::string value = "test_acc";
  std::string agg = "mean";                                // mean | min | max
  std::string format = "md";                               // md | csv | latex
  std::vector<std::pair<std::string, std::string>> where;  // fixed values of other axes
};

std::string MetricTable(const std::string& sweep, const std::vector<ReportRun>& runs,
                        const TableOptions& options);

struct SpeedupOptions {
  std::string axis = "parallel.workers";  // from --baseline AXIS=VALUE
  std::string baseline = "1";
  std::string interconnect;  // model column: preset name ("" = none)
  std::string staging;       // host staging link for the model ("" = none)
  std::string fit;           // or: a measured all-reduce JSON
  std::string format = "md";
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
