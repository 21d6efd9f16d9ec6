#include "engine/train/metrics.h"

#include <algorithm>
#include <cmath>

#include "engine/backend/scale_histogram.h"

namespace mavg {
namespace {

double PerFrame(double x, double frames) { return frames > 0 ? x / frames : 0.0; }

}  // namespace

StatsSummary Summarize(const std::vector<WorkerStats>& all) {
  StatsSummary s;
  s.workers = static_cast<int>(all.size());
  for (const WorkerStats& w : all) {
    s.sum.loss_sum += w.loss_sum, s.sum.correct += w.correct, s.sum.frames += w.frames;
    s.sum.compute_s += w.compute_s, s.sum.io_s += w.io_s, s.sum.comm_s += w.comm_s;
    s.sum.wait_s += w.wait_s, s.sum.interval_s += w.interval_s;
    s.sum.updates += w.updates, s.sum.limited += w.limited;
    s.max.compute_s = std::max(s.max.compute_s, w.compute_s);
    s.max.io_s = std::max(s.max.io_s, w.io_s);
    s.max.comm_s = std::max(s.max.comm_s, w.comm_s);
    s.max.wait_s = std::max(s.max.wait_s, w.wait_s);
  }
  return s;
}

EpochRow MetricsRow(const EpochMetrics& m) {
  const WorkerStats& sum = m.stats.sum;
  const WorkerStats& max = m.stats.max;
  const double workers = m.stats.workers;
  EpochRow r;
  r.epoch = m.epoch;
  r.lr = m.lr;
  r.accepted = m.accepted;
  r.train_loss = PerFrame(sum.loss_sum, sum.frames);
  r.train_acc = PerFrame(sum.correct, sum.frames);
  r.cv_loss = m.cv.Loss();
  r.cv_acc = m.cv.Accuracy();
  r.frames = static_cast<int64_t>(sum.frames);
  r.frames_dropped = m.frames_dropped;
  r.minibatches = m.minibatches;
  r.averagings = m.averagings;
  r.comm_bytes = m.comm_bytes;
  r.comm_bytes_received = m.comm_bytes_received;
  r.world_size = m.world_size;
  r.wall_s = m.wall_s;
  r.compute_s = max.compute_s, r.compute_s_mean = sum.compute_s / workers;
  r.io_s = max.io_s, r.io_s_mean = sum.io_s / workers;
  r.comm_s = max.comm_s, r.comm_s_mean = sum.comm_s / workers;
  r.wait_s = max.wait_s, r.wait_s_mean = sum.wait_s / workers;
  r.cv_s = m.cv_s;
  r.projected_wall_s = m.projected_wall_s;
  r.cpu_util = m.cpu_util;
  r.cpu_wait = m.cpu_wait;
  r.contended = m.contended;
  if (sum.updates > 0) {
    r.max_change_limited = sum.limited / sum.updates;
    r.max_change_scale_p50 = ScaleQuantile(m.max_change_scales, 0.5);
    r.max_change_scale_p10 = ScaleQuantile(m.max_change_scales, 0.1);
  }
  return r;
}

}  // namespace mavg
