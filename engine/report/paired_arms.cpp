#include "engine/report/paired_arms.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "engine/core/error.h"
#include "engine/records/run_result.h"
#include "engine/report/render.h"

namespace mavg {
namespace {

// A value as a number, when the whole text is one.
std::optional<double> AsNumber(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno != 0 || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool SameValue(const std::string& have, const std::string& want) {
  if (have == want) return true;
  const std::optional<double> x = AsNumber(have), y = AsNumber(want);
  return x && y && *x == *y;
}

// The run's value of `key`: its axis, else its config's value at the dotted path, as text.
std::optional<std::string> RunValue(const ReportRun& r, const std::string& key) {
  if (const std::string* axis = r.Axis(key)) return *axis;
  const nlohmann::json* node = &r.config;
  size_t start = 0;
  while (true) {
    const size_t dot = std::min(key.find('.', start), key.size());
    const std::string part = key.substr(start, dot - start);
    if (!node->is_object() || !node->contains(part)) return std::nullopt;
    node = &(*node)[part];
    if (dot == key.size()) break;
    start = dot + 1;
  }
  if (node->is_string()) return node->get<std::string>();
  if (node->is_object() || node->is_array()) return std::nullopt;  // not one value
  return node->dump();
}

// An axis whose values differ between these runs, with its values; empty when none does.
std::pair<std::string, std::set<std::string>> VaryingAxis(
    const std::vector<const ReportRun*>& runs) {
  for (const auto& [axis, first] : runs[0]->axes) {
    std::set<std::string> values;
    for (const ReportRun* r : runs) {
      const std::string* v = r->Axis(axis);
      values.insert(v ? *v : "(none)");
    }
    if (values.size() > 1) return {axis, values};
  }
  return {};
}

}  // namespace

std::vector<const ReportRun*> MatchRuns(const std::string& sweep,
                                        const std::vector<ReportRun>& runs, const Selection& values,
                                        std::string* missing) {
  if (missing) missing->clear();
  if (runs.empty()) {
    if (missing) *missing = fmt::format("sweep {} has no runs yet", sweep);
    return {};
  }
  for (const auto& kv : values) {
    const std::string& key = kv.first;  // not a structured binding: clang 14 cannot capture one
    const bool known = std::any_of(
        runs.begin(), runs.end(), [&](const ReportRun& r) { return RunValue(r, key).has_value(); });
    if (known) continue;
    std::set<std::string> axes;
    for (const ReportRun& r : runs) {
      for (const auto& [axis, v] : r.axes) axes.insert(axis);
    }
    MAVG_FAIL("no run of sweep {} has the key '{}' (its axes: {})", sweep, key,
              axes.empty() ? std::string("none") : report::Join({axes.begin(), axes.end()}));
  }
  std::vector<const ReportRun*> out;
  for (const ReportRun& r : runs) {
    const bool keep = std::all_of(values.begin(), values.end(), [&](const auto& kv) {
      const std::optional<std::string> have = RunValue(r, kv.first);
      return have && SameValue(*have, kv.second);
    });
    if (keep) out.push_back(&r);
  }
  if (out.empty() && missing) {
    // The first value no run has, with the values the sweep has; else the combination.
    for (const auto& [key, value] : values) {
      std::set<std::string> have;
      bool found = false;
      for (const ReportRun& r : runs) {
        const std::optional<std::string> v = RunValue(r, key);
        if (!v) continue;
        have.insert(*v);
        found = found || SameValue(*v, value);
      }
      if (!found) {
        *missing = fmt::format("no run of sweep {} has {}={} (its values: {})", sweep, key, value,
                               report::Join({have.begin(), have.end()}));
        return out;
      }
    }
    *missing = fmt::format("no run of sweep {} has {}", sweep, SelectionText(values));
  }
  return out;
}

ArmOutcomes OutcomesByReplicate(const std::vector<const ReportRun*>& runs,
                                const std::string& metric, const std::string& what) {
  ArmOutcomes out;
  std::map<int, std::vector<const ReportRun*>> by_replicate;
  for (const ReportRun* r : runs) by_replicate[r->replicate].push_back(r);
  for (const auto& [replicate, rs] : by_replicate) {
    if (rs.size() < 2) continue;
    const auto [axis, values] = VaryingAxis(rs);
    MAVG_CHECK(axis.empty(), "{}: {} runs of replicate {} ({} varies: {}): give its value too",
               what, rs.size(), replicate, axis, report::Join({values.begin(), values.end()}));
    MAVG_FAIL("{}: {} runs of replicate {} ({} and {})", what, rs.size(), replicate, rs[0]->run_id,
              rs[1]->run_id);
  }
  for (const ReportRun* r : runs) {
    ++out.counts.runs;
    switch (r->status) {
      case RunState::kCompleted: {
        const auto it = r->values.find(metric);
        if (it == r->values.end() || !std::isfinite(it->second)) {
          ++out.counts.unusable;
        } else {
          ++out.counts.ended;
          out.ended[r->replicate] = {it->second, false};
          out.runs[r->replicate] = r;
        }
        break;
      }
      case RunState::kCollapsed:
      case RunState::kDiverged:
        ++out.counts.ended;
        ++out.counts.collapsed;
        out.ended[r->replicate] = {0, true};
        out.runs[r->replicate] = r;
        break;
      case RunState::kFailed:
        ++out.counts.unusable;
        break;
      case RunState::kStopped:  // partial epochs: never paired with a run that ended
        ++out.counts.stopped;
        break;
      case RunState::kNew:
      case RunState::kRunning:
      case RunState::kPreempted:
      case RunState::kInterrupted:
        ++out.counts.waiting;
        break;
    }
  }
  return out;
}

EffectRuns PairByReplicate(const std::vector<ArmOutcomes>& arms) {
  EffectRuns out;
  out.arms.resize(arms.size());
  for (const ArmOutcomes& arm : arms) out.counts.push_back(arm.counts);
  if (arms.empty()) return out;
  for (const auto& [replicate, value] : arms[0].ended) {
    const bool complete = std::all_of(arms.begin(), arms.end(), [r = replicate](const auto& arm) {
      return arm.ended.count(r) > 0;
    });
    if (!complete) continue;
    out.replicates.push_back(replicate);
    const ReportRun* first = nullptr;
    for (size_t k = 0; k < arms.size(); ++k) {
      out.arms[k].push_back(arms[k].ended.at(replicate));
      const auto run = arms[k].runs.find(replicate);
      if (run == arms[k].runs.end() || run->second == nullptr) continue;
      const ReportRun& r = *run->second;
      const auto text = [&r](const std::string& key) {
        const auto t = r.texts.find(key);
        return t == r.texts.end() ? std::string() : t->second;
      };
      if (const std::string b = text(BuildKey(&BuildInfo::code_version)); !b.empty()) {
        out.builds.insert(b);
      }
      if (const std::string k2 = text(ResultKey(&RunResult::blas_kernels)); !k2.empty()) {
        out.kernels.insert(k2);
      }
      if (first == nullptr) {
        first = &r;
      } else {
        const nlohmann::json& s0 = first->config.contains("seed") ? first->config["seed"] : nullptr;
        const nlohmann::json& s1 = r.config.contains("seed") ? r.config["seed"] : nullptr;
        MAVG_CHECK(s0 == s1,
                   "replicate {}: runs {} (seed {}) and {} (seed {}) do not share a seed: arms "
                   "are paired by replicate, and a pair must be trained from one seed",
                   replicate, first->run_id, s0.dump(), r.run_id, s1.dump());
      }
    }
  }
  return out;
}

const std::vector<ReportRun>* SweepRunsCache::Find(const std::string& sweep) {
  auto it = runs_.find(sweep);
  if (it == runs_.end()) {
    std::optional<std::vector<ReportRun>> runs;
    if (store_.GetSweep(sweep)) runs = LoadSweepRuns(store_, sweep);
    it = runs_.emplace(sweep, std::move(runs)).first;
  }
  return it->second ? &*it->second : nullptr;
}

void SweepRunsCache::Add(const std::string& sweep, std::vector<ReportRun> runs) {
  runs_[sweep] = std::move(runs);
}

EffectRuns LoadPairedArms(SweepRunsCache& cache, const std::vector<ArmSelection>& arms,
                          const std::vector<std::string>& names, const std::string& metric) {
  MAVG_CHECK(names.size() == arms.size(), "{} arms but {} names", arms.size(), names.size());
  // Every arm's keys are checked before any arm's replicates: a typo is the first thing said.
  std::vector<std::vector<const ReportRun*>> matched(arms.size());
  std::string missing;
  for (size_t k = 0; k < arms.size(); ++k) {
    const ArmSelection& arm = arms[k];
    const std::vector<ReportRun>* runs = cache.Find(arm.sweep);
    std::string why;
    if (runs == nullptr) {
      why = fmt::format("sweep {} is not in the store yet", arm.sweep);
    } else {
      try {
        matched[k] = MatchRuns(arm.sweep, *runs, arm.values, &why);
      } catch (const Error& e) {
        throw Error(fmt::format("arm {}: {}", names[k], e.what()), e.Location());
      }
    }
    if (!why.empty() && missing.empty()) missing = fmt::format("arm {}: {}", names[k], why);
  }
  std::vector<ArmOutcomes> outcomes;
  for (size_t k = 0; k < arms.size(); ++k) {
    outcomes.push_back(OutcomesByReplicate(matched[k], metric, "arm " + names[k]));
  }
  EffectRuns out = PairByReplicate(outcomes);
  out.missing = missing;
  return out;
}

}  // namespace mavg
