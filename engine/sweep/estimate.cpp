#include "engine/sweep/estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/config/schema.h"
#include "engine/core/json.h"
#include "engine/core/median.h"

namespace mavg {
namespace {

// A past run's time: fixed seconds and seconds per epoch.
struct Timing {
  double fixed_s = 0.0, epoch_s = 0.0;
  double Of(int64_t epochs) const { return fixed_s + epoch_s * static_cast<double>(epochs); }
};

// The completed runs' timings by SimilarWork.
std::map<std::string, std::vector<Timing>> LikeRuns(Store& store) {
  std::map<std::string, std::vector<Timing>> by_work;
  auto s = store.Db().Prepare(
      "SELECT r.config_json, (SELECT SUM(x.wall_s) FROM epochs x WHERE x.run_id = r.run_id), "
      "(SELECT COUNT(*) FROM epochs x WHERE x.run_id = r.run_id), "
      "(SELECT value FROM results x WHERE x.run_id = r.run_id AND x.key = 'wall_s') "
      "FROM runs r WHERE r.status = 'completed'");
  while (s.Step()) {
    if (s.IsNull(1) || s.IsNull(3) || s.Int(2) <= 0) continue;
    RunConfig config;
    try {
      config = ParseConfigYaml(s.Text(0), "the store's config of a completed run");
    } catch (const Error&) {
      continue;  // written by an older mavg with keys this one no longer reads
    }
    Timing t;
    t.epoch_s = s.Real(1) / static_cast<double>(s.Int(2));
    t.fixed_s = std::max(0.0, s.Real(3) - s.Real(1));
    by_work[SimilarWork(config)].push_back(t);
  }
  return by_work;
}

}  // namespace

double SecondsAtJobs(const std::vector<double>& runs, int jobs) {
  std::vector<double> ends(static_cast<size_t>(std::max(1, jobs)), 0.0);
  for (double s : runs) *std::min_element(ends.begin(), ends.end()) += s;
  return *std::max_element(ends.begin(), ends.end());
}

std::vector<double> EstimateRuns(Store& store, const std::vector<const RunConfig*>& configs) {
  const auto by_work = LikeRuns(store);
  std::vector<double> out;
  for (const RunConfig* c : configs) {
    const auto it = by_work.find(SimilarWork(*c));
    if (it == by_work.end()) {
      out.push_back(-1.0);
      continue;
    }
    std::vector<double> seconds;
    for (const Timing& t : it->second) seconds.push_back(t.Of(c->schedule.epochs));
    out.push_back(Median(seconds));
  }
  return out;
}

std::string SimilarWork(const RunConfig& config) {
  nlohmann::json key = nlohmann::json::object();
  for (const char* path :
       {"model.hidden_layers", "model.hidden_dim", "model.activation", "data.train", "data.dev",
        "parallel.workers", "parallel.mode", "optimizer.type", "optimizer.minibatch",
        "device_options.threads", "device"}) {
    key[path] = KeyJson(config, path);
  }
  return DumpJson(key);
}

int PlanEstimate::Pending() const {
  return static_cast<int>(
      std::count_if(each.begin(), each.end(), [](double s) { return s != -1; }));
}

std::vector<double> PlanEstimate::Known() const {
  std::vector<double> out;
  for (const double s : each) {
    if (s >= 0) out.push_back(s);
  }
  return out;
}

PlanEstimate EstimatePlan(Store& store, const std::vector<PlannedRun>& plan) {
  PlanEstimate e;
  const auto by_work = LikeRuns(store);
  std::map<std::string, bool> used;
  for (const PlannedRun& r : plan) {
    e.each.push_back(-1);
    if (r.state != PlanState::kNew && r.state != PlanState::kInterrupted) continue;
    e.each.back() = -2;
    const auto it = by_work.find(SimilarWork(r.point.config));
    if (it == by_work.end()) continue;
    if (!used[it->first]) e.basis += static_cast<int>(it->second.size());
    used[it->first] = true;
    std::vector<double> seconds;
    for (const Timing& t : it->second) seconds.push_back(t.Of(r.point.config.schedule.epochs));
    e.each.back() = Median(seconds);
    e.low += *std::min_element(seconds.begin(), seconds.end());
    e.high += *std::max_element(seconds.begin(), seconds.end());
  }
  return e;
}

std::string FormatReused(Store& store, const std::string& sweep,
                         const std::vector<PlannedRun>& plan) {
  std::map<std::string, int> by_sweep;  // other sweep -> runs of this plan it holds
  int reused = 0;
  auto s = store.Db().Prepare("SELECT sweep FROM sweep_runs WHERE run_id = ? AND sweep != ?");
  for (const PlannedRun& r : plan) {
    if (r.state != PlanState::kDone && r.state != PlanState::kStale) continue;
    s.Reset();
    s.Bind(1, r.point.run_id);
    s.Bind(2, sweep);
    bool other = false;
    while (s.Step()) {
      ++by_sweep[s.Text(0)];
      other = true;
    }
    reused += other ? 1 : 0;
  }
  if (reused == 0) return "";
  std::string from;
  for (const auto& [name, n] : by_sweep) {
    from += fmt::format("{}{} ({})", from.empty() ? "" : ", ", name, n);
  }
  return fmt::format(
      "reused: {} finished run(s) are other sweeps' runs too (a run id is its config), not run "
      "again: {}\n",
      reused, from);
}

std::string ShortDuration(double seconds) {
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 90 * 60) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

std::string FormatEstimate(const PlanEstimate& e, int jobs) {
  const int pending = e.Pending();
  const std::vector<double> known = e.Known();
  if (pending == 0) return "";
  if (known.empty()) {
    return fmt::format(
        "time: {} pending run(s), nothing to go on (no completed run in the store does the same "
        "work per epoch: network, data, workers, optimizer, minibatch, threads)\n",
        pending);
  }
  double seconds = 0;
  for (const double s : known) seconds += s;
  std::string out = fmt::format("time: {} of {} pending run(s) about {} one after another",
                                known.size(), pending, ShortDuration(seconds));
  if (ShortDuration(e.high) != ShortDuration(e.low)) {
    out += fmt::format(" ({} to {} as the fastest or slowest of the like runs)",
                       ShortDuration(e.low), ShortDuration(e.high));
  }
  if (jobs > 1)
    out += fmt::format(", about {} at --jobs {}", ShortDuration(SecondsAtJobs(known, jobs)), jobs);
  out += fmt::format("; from {} completed run(s) of the same work per epoch", e.basis);
  if (static_cast<int>(known.size()) < pending) {
    out += fmt::format("; {} with nothing to go on", pending - static_cast<int>(known.size()));
  }
  return out + "\n";
}

}  // namespace mavg
