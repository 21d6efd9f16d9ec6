#include "engine/sweep/stop_early.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/core/nearest.h"
#include "engine/core/yaml.h"
#include "engine/report/verdict.h"
#include "engine/sweep/spec.h"

namespace mavg {
namespace {

const std::vector<std::string> kStopEarlyKeys = {"rule",  "rungs",  "metric", "arms",
                                                 "level", "margin", "eta"};

std::string StopAt(const std::string& file, const YAML::Node& n) {
  return fmt::format("{}: line {}: stop_early", file, n.Mark().line + 1);
}

int StopInteger(const YAML::Node& n, const std::string& at, const char* key) {
  const double v = RequireNumber(n, fmt::format("{}.{}", at, key));
  MAVG_CHECK(v == std::floor(v) && v >= 1 && v <= 1e6, "{}.{}: expects a whole number >= 1, not {}",
             at, key, n.Scalar());
  return static_cast<int>(v);
}

// The mean of the runs' values; +-inf (the worst) when a run collapsed or diverged: such an arm
// is never the best, and ranks last.
double ArmMean(const std::vector<const RungRun*>& runs, bool higher_is_better) {
  const double worst = higher_is_better ? -std::numeric_limits<double>::infinity()
                                        : std::numeric_limits<double>::infinity();
  double sum = 0;
  int n = 0;
  for (const RungRun* r : runs) {
    if (r->collapsed) return worst;
    if (!r->value) continue;
    sum += *r->value;
    ++n;
  }
  return n == 0 ? worst : sum / n;
}

}  // namespace

StopEarly ParseStopEarly(const YAML::Node& n, const std::string& file) {
  const std::string at = StopAt(file, n);
  MAVG_CHECK(n.IsMap(),
             "{}: expects a mapping (rule, rungs, ...), e.g. stop_early: {{rule: "
             "paired, rungs: [1, 2]}}",
             at);
  for (const auto& item : n) {
    const std::string k = item.first.as<std::string>();
    MAVG_CHECK(std::find(kStopEarlyKeys.begin(), kStopEarlyKeys.end(), k) != kStopEarlyKeys.end(),
               "{}: line {}: stop_early: unknown key '{}' (did you mean '{}'?)", file,
               item.first.Mark().line + 1, k, Nearest(k, kStopEarlyKeys));
  }
  StopEarly s;
  s.line = n.Mark().line + 1;
  MAVG_CHECK(n["rule"] && n["rule"].IsScalar(), "{}: 'rule' is required: paired or asha", at);
  const std::optional<StopRule> rule = ParseEnum<StopRule>(n["rule"].Scalar());
  MAVG_CHECK(rule.has_value(), "{}.rule: expects {}, not '{}'", at, EnumNames<StopRule>(" | "),
             n["rule"].Scalar());
  s.rule = *rule;
  MAVG_CHECK(n["rungs"] && n["rungs"].IsSequence() && n["rungs"].size() > 0,
             "{}: 'rungs' is required: the epochs after which arms are compared, e.g. [1, 2]", at);
  for (const auto& r : n["rungs"]) s.rungs.push_back(StopInteger(r, at, "rungs"));
  for (size_t i = 1; i < s.rungs.size(); ++i) {
    MAVG_CHECK(s.rungs[i] > s.rungs[i - 1], "{}.rungs: expects ascending epochs, not {} after {}",
               at, s.rungs[i], s.rungs[i - 1]);
  }
  if (n["metric"]) {
    const std::optional<RungMetric> m =
        n["metric"].IsScalar() ? ParseEnum<RungMetric>(n["metric"].Scalar()) : std::nullopt;
    MAVG_CHECK(m.has_value(), "{}.metric: expects {} (an epoch's CV metric), not '{}'", at,
               EnumNames<RungMetric>(" | "), n["metric"].IsScalar() ? n["metric"].Scalar() : "");
    s.metric = *m;
  }
  if (const YAML::Node arms = n["arms"]) {
    MAVG_CHECK(arms.IsSequence() && arms.size() > 0,
               "{}.arms: expects a list of the sweep's axes, e.g. [parallel.algorithm]", at);
    for (const auto& a : arms) {
      MAVG_CHECK(a.IsScalar(), "{}.arms: expects axis names", at);
      s.arms.push_back(a.Scalar());
    }
  }
  if (n["level"]) {
    s.level = RequireNumber(n["level"], at + ".level");
    MAVG_CHECK(s.level > 0 && s.level < 1, "{}.level: expects a number between 0 and 1, not {}", at,
               n["level"].Scalar());
  }
  if (n["margin"]) {
    MAVG_CHECK(s.rule == StopRule::kPaired, "{}.margin: belongs to rule paired (asha ranks)", at);
    s.margin = RequireNumber(n["margin"], at + ".margin");
    MAVG_CHECK(s.margin >= 0, "{}.margin: expects a number >= 0, not {}", at, n["margin"].Scalar());
  }
  if (n["eta"]) {
    MAVG_CHECK(s.rule == StopRule::kAsha, "{}.eta: belongs to rule asha", at);
    s.eta = StopInteger(n["eta"], at, "eta");
    MAVG_CHECK(s.eta >= 2, "{}.eta: expects 2 or more (the fraction 1 / eta goes on), not {}", at,
               s.eta);
  }
  return s;
}

std::string ArmOf(const StopEarly& s, const SweepPoint& p) {
  std::string out;
  for (const auto& [k, v] : p.axes) {
    if (!s.arms.empty() && std::find(s.arms.begin(), s.arms.end(), k) == s.arms.end()) continue;
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", k, v);
  }
  return out;
}

void CheckStopEarly(const StopEarly& s, const std::vector<std::string>& axes, int replicates,
                    const std::vector<SweepPoint>& points, const std::string& file) {
  const std::string at = fmt::format("{}: line {}: stop_early", file, s.line);
  MAVG_CHECK(replicates >= 2,
             "{}: the sweep has {} replicate: an arm's evidence is its runs, paired by replicate "
             "(replicates: 3, say)",
             at, replicates);
  for (const std::string& a : s.arms) {
    MAVG_CHECK(std::find(axes.begin(), axes.end(), a) != axes.end(),
               "{}.arms: '{}' is not an axis of this sweep (its axes: {})", at, a,
               fmt::join(axes, ", "));
  }
  std::set<std::string> arms;
  int64_t last = std::numeric_limits<int64_t>::max();
  std::string shortest;
  for (const SweepPoint& p : points) {
    arms.insert(ArmOf(s, p));
    if (p.config.schedule.epochs < last) {
      last = p.config.schedule.epochs;
      shortest = ArmOf(s, p);
    }
  }
  MAVG_CHECK(arms.size() >= 2,
             "{}: the sweep has {} arm: nothing to compare (arms are the values "
             "of {})",
             at, arms.size(),
             s.arms.empty() ? "its axes" : fmt::format("{}", fmt::join(s.arms, ", ")));
  for (const int r : s.rungs) {
    MAVG_CHECK(r < last,
               "{}.rungs: rung {} is not before the last epoch ({} epochs in arm {}): a rung "
               "compares arms that still have epochs to go",
               at, r, last, shortest);
  }
}

std::vector<ArmFate> DecideRung(const StopEarly& s, int rung, const std::vector<RungRun>& runs) {
  // The arms that reached the rung, in first-seen order, and their runs there.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RungRun*>> by_arm;
  for (const RungRun& r : runs) {
    if (!r.value && !r.collapsed) continue;
    if (by_arm.count(r.arm) == 0) order.push_back(r.arm);
    by_arm[r.arm].push_back(&r);
  }
  std::vector<ArmFate> fates;
  if (order.size() < 2) {
    for (const std::string& a : order) fates.push_back({a, false, ""});
    return fates;
  }
  const bool up = s.HigherIsBetter();
  const auto better = [up](double x, double y) { return up ? x > y : x < y; };
  std::vector<double> mean;
  for (const std::string& a : order) mean.push_back(ArmMean(by_arm[a], up));
  const std::string metric(ToString(s.metric));
  if (s.rule == StopRule::kAsha) {
    std::vector<size_t> rank(order.size());
    for (size_t i = 0; i < rank.size(); ++i) rank[i] = i;
    std::stable_sort(rank.begin(), rank.end(),
                     [&](size_t x, size_t y) { return better(mean[x], mean[y]); });
    const size_t keep = std::max<size_t>(1, order.size() / static_cast<size_t>(s.eta));
    fates.resize(order.size());
    for (size_t k = 0; k < rank.size(); ++k) {
      const size_t i = rank[k];
      fates[i] = {order[i], k >= keep,
                  k >= keep ? fmt::format("stopped at epoch {} (asha): ranked {} of {} arms by "
                                          "mean {} {:.4g}; the best {} go on",
                                          rung, k + 1, order.size(), metric, mean[i], keep)
                            : ""};
    }
    return fates;
  }
  // paired: the best arm against each other, by replicate.
  size_t best = 0;
  for (size_t i = 1; i < order.size(); ++i) {
    if (better(mean[i], mean[best])) best = i;
  }
  std::map<int, const RungRun*> best_runs;
  for (const RungRun* r : by_arm[order[best]]) best_runs[r->replicate] = r;
  EffectRule rule;
  rule.kind = s.margin > 0 ? EffectKind::kSmall : EffectKind::kBeats;
  if (s.margin > 0) rule.margin = s.margin;
  rule.level = s.level;
  rule.higher_is_better = up;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == best) {
      fates.push_back({order[i], false, ""});
      continue;
    }
    // a: the best arm, b: this one. Under beats, "contradicted" is b shown worse; under small
    // (not worse by the margin), b shown worse by more than the margin.
    EffectRuns pairs;
    pairs.arms.resize(2);
    pairs.counts.resize(2);
    for (const RungRun* r : by_arm[order[i]]) {
      const auto b = best_runs.find(r->replicate);
      if (b == best_runs.end()) continue;
      pairs.replicates.push_back(r->replicate);
      pairs.arms[0].push_back({b->second->value.value_or(0), b->second->collapsed});
      pairs.arms[1].push_back({r->value.value_or(0), r->collapsed});
    }
    for (ArmCounts& c : pairs.counts) c.runs = c.ended = static_cast<int>(pairs.replicates.size());
    // The pairs in replicate order (the verdict's interval does not depend on it).
    const EffectVerdict v = JudgeEffect(rule, pairs);
    const bool stop = v.verdict == Verdict::kContradicted;
    fates.push_back({order[i], stop,
                     stop ? fmt::format("stopped at epoch {} (paired): worse than arm {} on {} "
                                        "over {} pairs: {}",
                                        rung, order[best], metric, v.pairs, v.why)
                          : ""});
  }
  return fates;
}

}  // namespace mavg
