#include "engine/report/time_to_target.h"

#include <cmath>
#include <set>

namespace mavg {

namespace {

// The training time of one epoch as the speedup report counts it: the simulated workers'
// projection (projected_wall_s) when the epoch has one, else the measured wall_s - cv_s.
double EpochTrainSeconds(const EpochRecord& e) {
  return e.projected_wall_s ? *e.projected_wall_s : e.train_s;
}

}  // namespace

bool CountsForTimeToTarget(const ReportRun& r) {
  return r.status == RunState::kCompleted || IsUnhealthy(r.status);
}

std::optional<double> TimeToTarget(const ReportRun& r, double target) {
  const double bound = target + 1e-9 * std::fabs(target);
  double t = 0.0;
  for (const EpochRecord& e : r.epochs) {
    t += EpochTrainSeconds(e);
    // A rejected epoch's model is discarded (newbob), so only accepted epochs can reach it.
    if (e.accepted && e.cv_loss && std::isfinite(*e.cv_loss) && *e.cv_loss <= bound) return t;
  }
  return std::nullopt;
}

Baselines::Baselines(const std::vector<ReportRun>& runs, const std::string& axis,
                     const std::string& value) {
  for (const ReportRun& r : runs) {
    const std::string* v = r.Axis(axis);
    if (v && *v == value && r.status == RunState::kCompleted) base_.push_back(&r);
  }
  if (base_.empty()) return;
  for (const auto& [name, first] : base_[0]->axes) {
    if (name == axis) continue;
    std::set<std::string> values;
    for (const ReportRun* b : base_) values.insert(*b->Axis(name));
    if (values.size() > 1) varying_.push_back(name);
  }
}

std::vector<const ReportRun*> Baselines::For(const ReportRun& r) const {
  std::vector<const ReportRun*> out;
  for (const ReportRun* b : base_) {
    bool same = true;
    for (const std::string& a : varying_) {
      const std::string* v = r.Axis(a);
      same = same && v && *v == *b->Axis(a);
    }
    if (same) out.push_back(b);
  }
  return out;
}

std::optional<double> Baselines::Target(const ReportRun& r) const {
  double sum = 0.0;
  int n = 0;
  for (const ReportRun* b : For(r)) {
    const auto it = b->values.find("final_cv_loss");
    if (it == b->values.end() || !std::isfinite(it->second)) continue;
    sum += it->second;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

CellTimesToTarget TimesToTarget(const std::vector<const ReportRun*>& cell,
                                const Baselines& baselines) {
  CellTimesToTarget out;
  if (cell.empty()) return out;
  out.target = baselines.Target(*cell[0]);
  for (const ReportRun* r : cell) {
    if (!CountsForTimeToTarget(*r)) continue;
    ++out.counted;
    if (!out.target) continue;
    if (const std::optional<double> t = TimeToTarget(*r, *out.target)) out.reached.push_back(*t);
  }
  return out;
}

}  // namespace mavg
