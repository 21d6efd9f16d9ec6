#include "engine/train/metrics.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace mavg {
namespace {

using Value = std::optional<nlohmann::json>;  // nullopt: the field does not apply

struct Field {
  const char* name;
  std::function<Value(const EpochMetrics&)> value;
};

double PerFrame(double x, double frames) { return frames > 0 ? x / frames : 0.0; }

const std::vector<Field>& Fields() {
  using M = const EpochMetrics&;
  static const std::vector<Field> kFields = {
      {"epoch", [](M m) -> Value { return m.epoch; }},
      {"lr", [](M m) -> Value { return m.lr; }},
      {"accepted", [](M m) -> Value { return m.accepted; }},
      {"train_loss",
       [](M m) -> Value { return Num(PerFrame(m.stats.sum.loss_sum, m.stats.sum.frames)); }},
      {"train_acc", [](M m) -> Value { return PerFrame(m.stats.sum.correct, m.stats.sum.frames); }},
      {"cv_loss", [](M m) -> Value { return Num(m.cv.Loss()); }},
      {"cv_acc", [](M m) -> Value { return m.cv.Accuracy(); }},
      {"frames", [](M m) -> Value { return static_cast<int64_t>(m.stats.sum.frames); }},
      {"frames_dropped", [](M m) -> Value { return m.frames_dropped; }},
      {"minibatches", [](M m) -> Value { return m.minibatches; }},
      {"averagings", [](M m) -> Value { return m.averagings; }},
      {"world_size", [](M m) -> Value { return m.world_size; }},
      {"wall_s", [](M m) -> Value { return m.wall_s; }},
      {"compute_s", [](M m) -> Value { return m.stats.max.compute_s; }},
      {"compute_s_mean", [](M m) -> Value { return m.stats.sum.compute_s / m.stats.workers; }},
      {"io_s", [](M m) -> Value { return m.stats.max.io_s; }},
      {"io_s_mean", [](M m) -> Value { return m.stats.sum.io_s / m.stats.workers; }},
      {"comm_s", [](M m) -> Value { return m.stats.max.comm_s; }},
      {"comm_s_mean", [](M m) -> Value { return m.stats.sum.comm_s / m.stats.workers; }},
      {"wait_s", [](M m) -> Value { return m.stats.max.wait_s; }},
      {"wait_s_mean", [](M m) -> Value { return m.stats.sum.wait_s / m.stats.workers; }},
      {"cv_s", [](M m) -> Value { return m.cv_s; }},
      {"projected_wall_s",
       [](M m) -> Value {
         if (!m.projected_wall_s) return std::nullopt;
         return *m.projected_wall_s;
       }},
      {"max_change_limited",
       [](M m) -> Value {
         if (m.stats.sum.updates <= 0) return std::nullopt;
         return m.stats.sum.limited / m.stats.sum.updates;
       }},
  };
  return kFields;
}

}  // namespace

nlohmann::json Num(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

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

nlohmann::json MetricsRow(const EpochMetrics& m) {
  nlohmann::json row = nlohmann::json::object();
  for (const Field& f : Fields()) {
    if (Value v = f.value(m)) row[f.name] = std::move(*v);
  }
  return row;
}

std::vector<std::string> MetricsFields() {
  std::vector<std::string> names;
  for (const Field& f : Fields()) names.emplace_back(f.name);
  return names;
}

}  // namespace mavg
