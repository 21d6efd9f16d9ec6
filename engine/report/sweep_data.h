#pragma once
// What reports read about a sweep: every run with its axes, status, results and per-epoch
// averages, straight from the store.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/store/store.h"

namespace mavg {

struct ReportRun {
  std::string run_id, status, reason;
  int replicate = 0;
  std::vector<std::pair<std::string, std::string>> axes;  // in the sweep's order
  std::map<std::string, double> values;      // results + derived metrics (see MetricNames)
  std::map<std::string, std::string> texts;  // text results, e.g. mode

  const std::string* Axis(const std::string& name) const;
};

// All runs of the sweep in plan order. Derived metrics, when their inputs exist:
//   test_error, cv_error        100 x (1 - accuracy), in percent
//   epoch_s                     mean over epochs of the training time (wall_s - cv_s)
//   projected_epoch_s           mean projected_wall_s (simulated workers)
//   compute_s, comm_s, io_s, wait_s   means over epochs (slowest worker)
//   frames_per_epoch, averagings (per epoch), final_cv_loss
std::vector<ReportRun> LoadSweepRuns(Store& store, const std::string& sweep);
// The metrics a sweep's runs have (for error messages).
std::vector<std::string> MetricNames(const std::vector<ReportRun>& runs);

}  // namespace mavg
