#pragma once
// What reports read about a sweep: every run with its axes, status, results, per-epoch records
// and per-epoch averages, straight from the store.

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/run_state.h"
#include "engine/records/epoch_row.h"
#include "engine/store/store.h"

namespace mavg {

// One row of table `epochs`, the fields reports use.
struct EpochRecord {
  int epoch = 0;
  bool accepted = true;  // newbob rejects epochs (a missing value counts as accepted)
  std::optional<double> cv_loss;
  double train_s = 0.0;                    // wall_s - cv_s: the epoch's measured training time
  std::optional<double> projected_wall_s;  // simulated workers' projection of train_s
  EpochRow row;                            // every field of the record (`report epochs`)
};

struct ReportRun {
  std::string run_id, reason;
  RunState status = RunState::kNew;
  int replicate = 0;
  std::vector<std::pair<std::string, std::string>> axes;  // in the sweep's order
  std::map<std::string, double> values;      // results + derived metrics (see MetricNames)
  std::map<std::string, std::string> texts;  // text results, e.g. mode, blas_kernels, build.cpu
  std::vector<std::string> other_sweeps;     // the other sweeps it belongs to (reused runs)
  std::vector<EpochRecord> epochs;           // in epoch order
  nlohmann::json parallel = nlohmann::json::object();  // the run config's `parallel` section
  nlohmann::json config = nlohmann::json::object();    // the whole run config (config_json)

  const std::string* Axis(const std::string& name) const;
};

// All runs of the sweep in plan order. Derived metrics, when their inputs exist:
//   test_error, cv_error        100 x (1 - accuracy), in percent
//   epoch_s                     mean over epochs of the training time (wall_s - cv_s)
//   projected_epoch_s           mean projected_wall_s (simulated workers)
//   projected_compute_s         mean of metrics.jsonl's projected_compute_s, when written
//   compute_s, comm_s, io_s, wait_s   means over epochs (slowest worker)
//   frames_per_epoch, averagings (per epoch), global_averagings (per epoch, when written)
//   final_cv_loss               CV loss of the last accepted epoch
std::vector<ReportRun> LoadSweepRuns(Store& store, const std::string& sweep);
// The GEMM kernels a run's timings came from: result.json's blas_kernels ("OpenBLAS Zen",
// "cuBLAS FP32"); for runs recorded before that key, read off the device its build recorded
// (LoadSweepRuns puts it in texts["blas_kernels"]). Empty when unknown.
std::string KernelsFromDevice(const std::string& device);
// One sentence for a table of timings when its completed runs ran on more than one kernel
// family, naming them with their counts; empty when they all ran on one (or none is known).
std::string MixedKernelsWarning(const std::vector<const ReportRun*>& runs);
// The metrics a sweep's runs have (for error messages).
std::vector<std::string> MetricNames(const std::vector<ReportRun>& runs);

}  // namespace mavg
