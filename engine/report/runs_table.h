#pragma once
// `mavg report runs`: one flat row per run of a sweep, for pandas, R or a spreadsheet without
// pivoting. Columns, in order:
//   sweep, run_id, replicate, status, reason
//   every axis of the sweep (its config value, typed)
//   every other config key whose value differs between the runs (e.g. seed, with replicates;
//   keys a run does not use, such as NG-SGD settings of an SGD run, are not compared)
//   every metric of any run: result.json's, extra_metrics.json's and the derived ones of
//   LoadSweepRuns (test_error, epoch_s, projected_epoch_s, final_cv_loss, ...), then its text
//   results (mode, ...); a metric named like a config column is written result.<name>
//   run_dir
// A run without a value has an empty CSV cell and null in JSON.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/store/store.h"

namespace mavg {

struct RunsTable {
  std::vector<std::string> columns;
  // The columns that hold axes, other varying config keys and metrics (subsets of `columns`).
  std::vector<std::string> axes, config_keys, metrics;
  std::vector<std::vector<nlohmann::json>> rows;  // one per run, in plan order
};

RunsTable LoadRunsTable(Store& store, const std::string& sweep);
// RFC 4180 CSV with a header line.
std::string RunsCsv(const RunsTable& table);
// A JSON array with one object per run, keys in column order (pandas.read_json reads it).
std::string RunsJson(const RunsTable& table);

}  // namespace mavg
