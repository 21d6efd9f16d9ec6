#pragma once
// What a run's counts and times add up to over its epochs and its attempts (a run resumed from
// a checkpoint continues the sums): the trainer keeps one RunTotals, a checkpoint carries it
// (CheckpointMeta's *_total fields and attempts), the result reports it (RunResult's
// attempts, wall_s, train_s, compute_s, io_s, frames and rates). The three mappings sit here
// side by side, so a new total is added in one file (and tests/unit/records/run_totals_test.cpp
// round-trips every field).

#include <cstdint>

#include "engine/records/checkpoint_meta.h"
#include "engine/records/run_result.h"

namespace mavg {

struct RunTotals {
  // The earlier attempts (from the checkpoint resumed): how many, their wall time and their
  // time reading the data.
  int64_t attempts_before = 0;
  double wall_before_s = 0.0, io_before_s = 0.0;
  // Over the epochs done.
  double compute_s = 0.0;           // the slowest worker's compute
  int64_t frames = 0;               // trained by all workers
  int64_t comm_bytes = 0;           // what a worker's combines sent (EpochRow::comm_bytes)
  int64_t comm_bytes_received = 0;  // ... and what they brought it
  double train_s = 0.0;             // measured training time (wall - CV)
  double projected_s = 0.0;         // projected_wall_s (simulated workers)
  // Over the accepted epochs: minibatches per worker (the combine policy's step).
  int64_t steps = 0;
  // False when resumed from a checkpoint of an older mavg without the time sums: the result
  // then reports no training time and no rates.
  bool times_known = true;

  // One epoch's sums.
  void AddEpoch(double epoch_compute_s, int64_t epoch_frames, int64_t epoch_comm_bytes,
                int64_t epoch_comm_bytes_received, double epoch_train_s, double epoch_projected_s);

  // Into a checkpoint written now, this attempt having run `wall_s` and read data for `io_s`.
  void ToCheckpoint(CheckpointMeta& meta, double wall_s, double io_s) const;
  // From a checkpoint (older ones lack some sums: zero, and times_known false without the
  // time sums).
  static RunTotals FromCheckpoint(const CheckpointMeta& meta);
  // Into the result; `projects`: the run's wall time is projected (simulated workers).
  void ToResult(RunResult& result, double wall_s, double io_s, bool projects) const;

  // The whole run so far, with this attempt's `wall_s` / `io_s`.
  double WallSeconds(double wall_s) const { return wall_before_s + wall_s; }
  double IoSeconds(double io_s) const { return io_before_s + io_s; }

  bool operator==(const RunTotals&) const = default;
};

}  // namespace mavg
