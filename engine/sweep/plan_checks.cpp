#include "engine/sweep/plan_checks.h"

#include <fmt/core.h>

#include <map>
#include <set>
#include <utility>

#include "engine/config/data_paths.h"
#include "engine/config/schema.h"

namespace mavg {

std::string DataProblems(const std::vector<const RunConfig*>& configs, const std::string& which) {
  std::map<std::pair<std::string, std::string>, std::string> looked;  // (key, path) -> problem
  struct Bad {
    std::set<std::string> keys;  // the keys that name it
    std::set<size_t> runs;       // indices into configs
    std::string why;
  };
  std::vector<std::pair<std::string, Bad>> bad;  // by path, in order of appearance
  for (size_t i = 0; i < configs.size(); ++i) {
    for (const DataPath& p : DataPathsOf(*configs[i])) {
      auto [it, fresh] = looked.try_emplace({p.key, p.path});
      if (fresh) it->second = DataPathProblem(p);
      if (it->second.empty()) continue;
      auto b = bad.begin();
      while (b != bad.end() && (b->first != p.path || b->second.why != it->second)) ++b;
      if (b == bad.end()) b = bad.insert(bad.end(), {p.path, Bad{{}, {}, it->second}});
      b->second.keys.insert(p.key);
      b->second.runs.insert(i);
    }
  }
  if (bad.empty()) return "";
  std::string list;
  for (const auto& [path, b] : bad) {
    std::string keys;
    for (const std::string& k : b.keys) keys += (keys.empty() ? "" : " and ") + k;
    list += fmt::format("{}{} {}: {} ({} of the runs)", list.empty() ? "" : "; ", keys, path, b.why,
                        b.runs.size());
  }
  return fmt::format("the data of {} cannot be read: {}", which, list);
}

std::vector<const RunConfig*> RunsNeedingData(const std::vector<PlannedRun>& plan) {
  std::vector<const RunConfig*> out;
  for (const PlannedRun& r : plan) {
    if (r.state != PlanState::kDone && r.state != PlanState::kStale &&
        r.state != PlanState::kRunning) {
      out.push_back(&r.point.config);
    }
  }
  return out;
}

std::string FormatSameTraining(const std::vector<PlannedRun>& runs) {
  std::map<std::string, std::vector<const PlannedRun*>> by_key;
  std::vector<std::string> order;  // keys in order of first appearance
  for (const PlannedRun& r : runs) {
    const std::string key = TrainingKey(r.point.config);
    auto& group = by_key[key];
    if (group.empty()) order.push_back(key);
    bool seen = false;
    for (const PlannedRun* g : group) seen = seen || g->point.run_id == r.point.run_id;
    if (!seen) group.push_back(&r);
  }
  std::string lines;
  int groups = 0;
  for (const std::string& key : order) {
    const auto& group = by_key[key];
    if (group.size() < 2) continue;
    ++groups;
    std::string line;
    for (const PlannedRun* r : group) {
      std::string axes;
      for (const auto& [k, v] : r->point.axes)
        axes += fmt::format("{}{}={}", axes.empty() ? "" : " ", k, v);
      if (r->point.replicate > 0)
        axes += fmt::format("{}replicate={}", axes.empty() ? "" : " ", r->point.replicate);
      line += fmt::format("{}{} [{}]", line.empty() ? "  " : ", ", r->point.run_id, axes);
    }
    lines += line + "\n";
  }
  if (groups == 0) return "";
  return fmt::format(
      "same training: {} group(s) of runs train the same model (with one worker nothing is "
      "averaged: parallel.average_every and the other averaging settings change nothing); each "
      "run still runs under its own id:\n{}",
      groups, lines);
}

}  // namespace mavg
