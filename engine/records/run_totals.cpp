#include "engine/records/run_totals.h"

namespace mavg {

void RunTotals::AddEpoch(double epoch_compute_s, int64_t epoch_frames, int64_t epoch_comm_bytes,
                         int64_t epoch_comm_bytes_received, double epoch_train_s,
                         double epoch_projected_s) {
  compute_s += epoch_compute_s;
  frames += epoch_frames;
  comm_bytes += epoch_comm_bytes;
  comm_bytes_received += epoch_comm_bytes_received;
  train_s += epoch_train_s;
  projected_s += epoch_projected_s;
}

void RunTotals::ToCheckpoint(CheckpointMeta& meta, double wall_s, double io_s) const {
  meta.attempts = attempts_before + 1;
  meta.wall_total = WallSeconds(wall_s);
  meta.io_total = IoSeconds(io_s);
  meta.compute_total = compute_s;
  meta.frames_total = frames;
  meta.comm_bytes_total = comm_bytes;
  meta.comm_bytes_received_total = comm_bytes_received;
  meta.steps_total = steps;
  if (times_known) {
    meta.train_total = train_s;
    meta.projected_total = projected_s;
  }
}

RunTotals RunTotals::FromCheckpoint(const CheckpointMeta& meta) {
  RunTotals t;
  t.attempts_before = meta.attempts.value_or(1);
  t.wall_before_s = meta.wall_total.value_or(0.0);
  t.io_before_s = meta.io_total.value_or(0.0);
  t.compute_s = meta.compute_total.value_or(0.0);
  t.frames = meta.frames_total.value_or(0);
  t.comm_bytes = meta.comm_bytes_total.value_or(0);  // (older checkpoints: not counted)
  t.comm_bytes_received = meta.comm_bytes_received_total.value_or(0);
  t.steps = meta.steps_total.value_or(0);  // (older checkpoints: only constant periods)
  t.train_s = meta.train_total.value_or(0.0);
  t.projected_s = meta.projected_total.value_or(0.0);
  t.times_known = meta.train_total.has_value();
  return t;
}

void RunTotals::ToResult(RunResult& result, double wall_s, double io_s, bool projects) const {
  result.attempts = attempts_before + 1;
  result.wall_s = WallSeconds(wall_s);
  result.io_s = IoSeconds(io_s);
  result.compute_s = compute_s;
  result.frames = frames;
  result.comm_bytes = comm_bytes;
  result.comm_bytes_received = comm_bytes_received;
  if (!times_known) return;
  const auto rate = [&](double seconds) {
    return seconds > 0 ? static_cast<double>(frames) / seconds : 0.0;
  };
  result.train_s = train_s;
  result.measured_frames_per_s = rate(train_s);
  if (projects) {
    result.projected_train_s = projected_s;
    result.projected_frames_per_s = rate(projected_s);
  }
}

}  // namespace mavg
