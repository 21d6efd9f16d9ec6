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

#include "engine/report/sweep_data.h"
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

// The same two formats for any flat table (`report epochs`).
std::string RowsCsv(const std::vector<std::string>& columns,
                    const std::vector<std::vector<nlohmann::json>>& rows);
std::string RowsJson(const std::vector<std::string>& columns,
                     const std::vector<std::vector<nlohmann::json>>& rows);

// `mavg report epochs`: one flat row per epoch of each run of a sweep, the records the runs
// wrote (metrics.jsonl, as the store keeps them), for per-epoch figures (CV loss curves) and
// for pandas. Columns, in order:
//   sweep, run_id, replicate, status
//   every axis of the sweep, as the plan writes it (text, as `report table` shows it)
//   epoch, then every other field of the epoch records that any row has, in the order of
//   records/epoch_row.h (lr, accepted, train_loss, ..., cv_loss, ..., projected_wall_s, ...)
//   train_s: the epoch's training time as every report counts it (wall_s - cv_s)
// Runs in plan order, epochs in order; a run without epochs has no row. A field an epoch does
// not have is an empty CSV cell and null in JSON.

struct EpochsTable {
  std::vector<std::string> columns;
  std::vector<std::string> axes;                  // the columns that hold axes
  std::vector<std::vector<nlohmann::json>> rows;  // one per epoch of a run
};

EpochsTable MakeEpochsTable(const std::string& sweep, const std::vector<ReportRun>& runs);

}  // namespace mavg
