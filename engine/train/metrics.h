#pragma once
// The per-epoch metrics (one line of metrics.jsonl, the record records/epoch_row.h) and the
// aggregation of the workers' statistics behind it.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/records/epoch_row.h"
#include "engine/train/step.h"
#include "engine/train/worker.h"

namespace mavg {

// Over all N workers: sums, and the maxima of the timings (the slowest worker sets the pace).
struct StatsSummary {
  WorkerStats sum, max;
  int workers = 0;
};
StatsSummary Summarize(const std::vector<WorkerStats>& all);

struct EpochMetrics {
  int epoch = 0;
  double lr = 0.0;  // per-worker learning rate
  bool accepted = true;
  StatsSummary stats;  // training loss statistics and timings of every worker
  EvalSums cv;
  int64_t frames_dropped = 0;       // training frames not used (partial minibatch, beyond the plan)
  int64_t minibatches = 0;          // per worker
  int64_t averagings = 0;           // combine points
  int64_t comm_bytes = 0;           // what every worker put into the combines (Averager::Bytes)
  int64_t comm_bytes_received = 0;  // what they brought it (Averager::BytesReceived)
  int world_size = 1;
  double wall_s = 0.0;                     // this epoch, measured, over the attempts that ran it
  double cv_s = 0.0;                       // of which evaluating the dev set
  std::optional<double> projected_wall_s;  // simulated workers: projected onto N devices
  std::vector<double> max_change_scales;   // [kScaleBins] every worker's scale factors, or empty
  std::optional<double> cpu_util;          // CPU runs: the lowest CPU use of the processes
  std::optional<double> cpu_wait;          // CPU runs: the highest run-queue share
  std::optional<bool> contended;           // train/contention.h
};

// The epoch's record: every field that applies (projected_wall_s for simulated workers,
// max_change_limited where updates were made, the scale factor's quantiles where they were
// counted).
EpochRow MetricsRow(const EpochMetrics& m);

}  // namespace mavg
