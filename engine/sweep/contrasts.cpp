#include "engine/sweep/contrasts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/core/nearest.h"
#include "engine/core/words.h"
#include "engine/core/yaml.h"
#include "engine/sweep/spec.h"

namespace mavg {
namespace {

const std::vector<std::string> kContrastKeys = {
    "a", "b", "where", "metric", "claim", "margin", "higher_is_better", "level"};

// "FILE: line N: compare.NAME: "
std::string ContrastAt(const std::string& file, const YAML::Node& n, const std::string& name) {
  return fmt::format("{}: line {}: compare.{}", file, n.Mark().line + 1, name);
}

Contrast::Values ParseContrastValues(const YAML::Node& map, const std::string& file,
                                     const std::string& name, const char* what) {
  MAVG_CHECK(map.IsMap() && map.size() > 0,
             "{}.{}: expects a mapping of config keys to single values, e.g. "
             "{{parallel.algorithm: bmuf}}",
             ContrastAt(file, map, name), what);
  Contrast::Values out;
  for (const auto& item : map) {
    const std::string key = item.first.as<std::string>();
    const std::string where = fmt::format("compare.{}.{} value of '{}'", name, what, key);
    const std::string value = SpecScalarText(item.second, key, where, file);
    CheckSpecValue(file, item.second.Mark().line + 1, key, value);
    out.emplace_back(key, value);
  }
  return out;
}

Contrast ParseContrast(const YAML::Node& key, const YAML::Node& n, const std::string& file) {
  const std::string name = key.as<std::string>();
  const std::string at = ContrastAt(file, key, name);
  MAVG_CHECK(n.IsMap(), "{}: expects a mapping (a, b, claim, ...)", at);
  for (const auto& item : n) {
    const std::string k = item.first.as<std::string>();
    MAVG_CHECK(std::find(kContrastKeys.begin(), kContrastKeys.end(), k) != kContrastKeys.end(),
               "{}: line {}: compare.{}: unknown key '{}' (did you mean '{}'?)", file,
               item.first.Mark().line + 1, name, k, Nearest(k, kContrastKeys));
  }
  Contrast c;
  c.name = name;
  c.line = key.Mark().line + 1;
  for (const char* arm : {"a", "b"}) {
    MAVG_CHECK(n[arm],
               "{}: '{}' (arm {}'s values, e.g. {{parallel.algorithm: average}}) is required", at,
               arm, arm);
    (std::string(arm) == "a" ? c.a : c.b) = ParseContrastValues(n[arm], file, name, arm);
  }
  if (n["where"]) c.where = ParseContrastValues(n["where"], file, name, "where");
  for (const auto& kv : c.where) {
    for (const Contrast::Values* arm : {&c.a, &c.b}) {
      MAVG_CHECK(std::none_of(arm->begin(), arm->end(),
                              [&](const auto& x) { return x.first == kv.first; }),
                 "{}: '{}' is in 'where' and in arm {}: give it once", at, kv.first,
                 arm == &c.a ? "a" : "b");
    }
  }
  if (c.a == c.b) MAVG_FAIL("{}: arms a and b have the same values: they select the same runs", at);
  if (n["metric"]) {
    MAVG_CHECK(n["metric"].IsScalar() && !n["metric"].Scalar().empty(),
               "{}.metric: expects a metric's name (wer, test_error, final_cv_loss, ...)", at);
    c.metric = n["metric"].Scalar();
  }
  c.higher_is_better = HigherIsBetterByDefault(c.metric);
  if (const YAML::Node h = n["higher_is_better"]) {
    const std::string v = h.IsScalar() ? h.Scalar() : "";
    MAVG_CHECK(v == "true" || v == "false", "{}.higher_is_better: expects true or false, not '{}'",
               at, v);
    c.higher_is_better = v == "true";
  }
  MAVG_CHECK(n["claim"], "{}: 'claim' is required: beats, not_worse or equivalent (b against a)",
             at);
  MAVG_CHECK(n["claim"].IsScalar(), "{}.claim: expects beats, not_worse or equivalent", at);
  const std::optional<ContrastClaim> claim = ParseEnum<ContrastClaim>(n["claim"].Scalar());
  MAVG_CHECK(claim.has_value(), "{}.claim: expects {}, not '{}'", at,
             EnumNames<ContrastClaim>(" | "), n["claim"].Scalar());
  c.claim = *claim;
  if (n["margin"]) {
    MAVG_CHECK(c.claim != ContrastClaim::kBeats,
               "{}.margin: 'beats' claims no size (b better than a); a margin belongs to "
               "not_worse or equivalent",
               at);
    const double m = RequireNumber(n["margin"], at + ".margin");
    MAVG_CHECK(m > 0, "{}.margin: expects a positive number (in the metric's units), not {}", at,
               n["margin"].Scalar());
    c.margin = m;
  } else {
    MAVG_CHECK(c.claim == ContrastClaim::kBeats,
               "{}: claim {} needs a margin (in the metric's units), fixed before the runs", at,
               ToString(c.claim));
  }
  if (n["level"]) {
    c.level = RequireNumber(n["level"], at + ".level");
    MAVG_CHECK(c.level > 0 && c.level < 1, "{}.level: expects a number between 0 and 1, not {}", at,
               n["level"].Scalar());
  }
  return c;
}

// The point's values of `keys` as the config prints them, for comparing with CheckSpecValue's.
std::vector<std::string> ContrastPointValues(
    const SweepPoint& p, const std::vector<std::pair<std::string, std::string>>& keys) {
  std::vector<std::string> out;
  for (const auto& kv : keys) out.push_back(DumpJson(KeyJson(p.config, kv.first)));
  return out;
}

// A value as the config prints it, shown as a spec would give it (a string without quotes).
std::string ShownValue(const std::string& json_text) {
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  return j.is_string() ? j.get<std::string>() : json_text;
}

// The runs each arm selects into `plan`, or why the points cannot answer `c`.
std::string PlanArms(const Contrast& c, const std::vector<const SweepPoint*>& points,
                     int replicates, ContrastPlan& plan) {
  if (replicates < 2) {
    return fmt::format(
        "the sweep has {} replicate: a contrast pairs runs by replicate and needs 2 or more "
        "(replicates: 3, say)",
        replicates);
  }
  std::vector<std::set<int>> reps(2);
  for (int arm = 0; arm < 2; ++arm) {
    const char* name = arm == 0 ? "a" : "b";
    const Contrast::Values values = arm == 0 ? c.ArmA() : c.ArmB();
    std::vector<std::pair<std::string, std::string>> wanted;  // key, the config's text
    for (const auto& [key, value] : values) {
      wanted.emplace_back(key, CheckSpecValue("", 0, key, value));
    }
    std::map<int, std::vector<const SweepPoint*>> by_replicate;
    std::vector<std::set<std::string>> have(wanted.size());  // each key's values in the plan
    for (const SweepPoint* p : points) {
      const std::vector<std::string> got = ContrastPointValues(*p, wanted);
      bool match = true;
      for (size_t k = 0; k < wanted.size(); ++k) {
        have[k].insert(got[k]);
        match = match && got[k] == wanted[k].second;
      }
      if (match) by_replicate[p->replicate].push_back(p);
    }
    if (by_replicate.empty()) {
      // The first value no point has, with the values the points have.
      for (size_t k = 0; k < wanted.size(); ++k) {
        if (have[k].count(wanted[k].second) == 0) {
          std::string list;
          for (const std::string& v : have[k]) list += (list.empty() ? "" : ", ") + ShownValue(v);
          return fmt::format("arm {} selects no run: no point has {}={} (its values: {})", name,
                             values[k].first, values[k].second, list);
        }
      }
      return fmt::format("arm {} selects no run: no point has {} together", name,
                         SelectionText(values));
    }
    for (const auto& [replicate, ps] : by_replicate) {
      if (ps.size() < 2) {
        (arm == 0 ? plan.a : plan.b).push_back(ps[0]->run_id);
        reps[arm].insert(replicate);
        continue;
      }
      // The axis the selection leaves free.
      for (const auto& [axis, first] : ps[0]->axes) {
        std::set<std::string> vs;
        for (const SweepPoint* p : ps) {
          for (const auto& [k, v] : p->axes) {
            if (k == axis) vs.insert(v);
          }
        }
        if (vs.size() > 1) {
          std::string list;
          for (const std::string& v : vs) list += (list.empty() ? "" : ", ") + v;
          return fmt::format(
              "arm {} holds {} runs of replicate {} ({} varies: {}): give its value in a, b or "
              "where",
              name, ps.size(), replicate, axis, list);
        }
      }
      return fmt::format("arm {} holds {} runs of replicate {}", name, ps.size(), replicate);
    }
  }
  for (const std::string& id : plan.a) {
    if (std::find(plan.b.begin(), plan.b.end(), id) != plan.b.end()) {
      return fmt::format("arms a and b both select run {}: their values do not tell them apart",
                         id);
    }
  }
  for (int r : reps[0]) plan.pairs += static_cast<int>(reps[1].count(r));
  if (plan.pairs == 0) return "arms a and b have no replicate in common: no pair";
  return "";
}

}  // namespace

Contrast::Values Contrast::ArmA() const {
  Values out = where;
  out.insert(out.end(), a.begin(), a.end());
  return out;
}

Contrast::Values Contrast::ArmB() const {
  Values out = where;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

std::string SelectionText(const Contrast::Values& values) {
  std::string out;
  for (const auto& [k, v] : values) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", k, v);
  return out;
}

// "b beats a on wer (lower is better)", "b is not worse than a by 0.5 or more on wer ...".
std::string ClaimText(const Contrast& c) {
  const std::string on =
      fmt::format("on {} ({} is better)", c.metric, c.higher_is_better ? "higher" : "lower");
  switch (c.claim) {
    case ContrastClaim::kBeats:
      return "b beats a " + on;
    case ContrastClaim::kNotWorse:
      return fmt::format("b is not worse than a by {:g} or more {}", *c.margin, on);
    case ContrastClaim::kEquivalent:
      return fmt::format("b and a are within +-{:g} {}", *c.margin, on);
  }
  return "";
}

bool HigherIsBetterByDefault(const std::string& metric) {
  return metric.find("acc") != std::string::npos;
}

std::vector<Contrast> ParseContrasts(const YAML::Node& compare, const std::string& file) {
  MAVG_CHECK(compare.IsMap() && compare.size() > 0,
             "{}: line {}: 'compare' maps each contrast's name to its arms and claim, e.g. "
             "compare: {{bmuf_vs_average: {{a: {{parallel.algorithm: average}}, b: "
             "{{parallel.algorithm: bmuf}}, claim: beats}}}}",
             file, compare.Mark().line + 1);
  std::vector<Contrast> out;
  for (const auto& item : compare) {
    const std::string name = item.first.as<std::string>();
    CheckName(fmt::format("{}: line {}: contrast", file, item.first.Mark().line + 1), name);
    out.push_back(ParseContrast(item.first, item.second, file));
    // One family, one alpha: Holm's correction over the spec's contrasts needs a common level.
    MAVG_CHECK(out.back().level == out.front().level,
               "{}: line {}: compare.{}.level: {:g}, but compare.{} has {:g}: a spec's contrasts "
               "are one family, tested at one level",
               file, out.back().line, out.back().name, out.back().level, out.front().name,
               out.front().level);
  }
  return out;
}

StoredContrasts ParseStoredContrasts(const std::string& spec_yaml, const std::string& source) {
  return ReadingYaml(source, [&] {
    StoredContrasts out;
    const YAML::Node root = LoadYamlStrict(spec_yaml, source);
    if (!root.IsMap()) return out;
    if (const YAML::Node r = root["replicates"]; r && r.IsScalar()) out.replicates = r.as<int>();
    if (const YAML::Node compare = root["compare"]) out.contrasts = ParseContrasts(compare, source);
    return out;
  });
}

ContrastPlan PlanContrast(const Contrast& c, const std::vector<const SweepPoint*>& points,
                          int replicates) {
  ContrastPlan plan;
  plan.problem = PlanArms(c, points, replicates, plan);
  if (!plan.problem.empty()) plan = ContrastPlan{{}, {}, 0, plan.problem};
  return plan;
}

std::string ContrastProblem(const Contrast& c, const std::vector<SweepPoint>& points,
                            int replicates) {
  std::vector<const SweepPoint*> ps;
  for (const SweepPoint& p : points) ps.push_back(&p);
  return PlanContrast(c, ps, replicates).problem;
}

void CheckContrasts(const std::vector<Contrast>& contrasts, const std::vector<SweepPoint>& points,
                    int replicates, const std::string& file) {
  std::vector<const SweepPoint*> ps;
  for (const SweepPoint& p : points) ps.push_back(&p);
  for (const Contrast& c : contrasts) {
    const std::string problem = PlanContrast(c, ps, replicates).problem;
    MAVG_CHECK(problem.empty(), "{}: line {}: compare.{}: {}", file, c.line, c.name, problem);
  }
}

}  // namespace mavg
