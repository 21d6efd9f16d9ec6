#pragma once
// Stopping losing arms early (opt-in, `stop_early:` in a sweep spec):
//   stop_early:
//     rule: paired          # paired | asha
//     rungs: [1, 2]         # epochs after which the arms are compared (each before the last)
//     metric: cv_loss       # the epoch's CV metric compared: cv_loss (default) or cv_acc
//     arms: [parallel.algorithm]   # the axes whose values make an arm (default: every axis)
//     level: 0.95           # paired: the interval of the paired difference
//     margin: 0             # paired: stop an arm worse than the best by more than this
//     eta: 3                # asha: keep the best floor(arms / eta) (at least 1) at each rung
// An arm is the runs whose `arms` axes have one set of values; its replicates are its runs, and
// replicate r of two arms is a pair (one seed). `sweep run` runs the sweep rung by rung: every
// live run trains to the rung's epoch and pauses there (`mavg train --until-epoch`, a
// checkpoint), the arms are compared on the metric of the model each run holds after that epoch
// (its last accepted epoch's), and the runs of the arms the rule stops become `stopped`: they keep
// their epochs in the store and their checkpoint, are reported as stopped (never as completed,
// never paired), and `sweep retry NAME --state stopped` resumes them to the end. The others go
// on to the next rung and then to the end.
//   paired  the best arm (best mean over its runs that reached the rung; an arm with a collapsed
//           or diverged run is never the best) against each other arm,
//           paired by replicate, with the verdict rules of report/verdict.h: an arm is stopped
//           when its runs are shown worse than the best's (the `level` interval of the paired
//           difference wholly beyond `margin`: b - a > margin, b the arm). Fewer than 2 pairs
//           stop nothing.
//   asha    successive halving's rank rule at each rung: the arms that reached it ranked by
//           their mean (an arm with a collapsed or diverged run last; ties: plan order), the
//           best max(1, floor(n / eta)) go on, the rest stop.
// Both are deterministic given the runs' results: the rung waits for every live run.

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/core/enum_text.h"

namespace mavg {

struct SweepPoint;

enum class StopRule { kPaired, kAsha };
inline constexpr EnumText<StopRule> kStopRuleTexts[] = {{StopRule::kPaired, "paired"},
                                                        {StopRule::kAsha, "asha"}};
MAVG_ENUM_TEXTS(StopRule, kStopRuleTexts)

enum class RungMetric { kCvLoss, kCvAcc };
inline constexpr EnumText<RungMetric> kRungMetricTexts[] = {{RungMetric::kCvLoss, "cv_loss"},
                                                            {RungMetric::kCvAcc, "cv_acc"}};
MAVG_ENUM_TEXTS(RungMetric, kRungMetricTexts)

struct StopEarly {
  StopRule rule = StopRule::kPaired;
  std::vector<int> rungs;  // ascending
  RungMetric metric = RungMetric::kCvLoss;
  std::vector<std::string> arms;  // axes; empty: every axis of the sweep
  double level = 0.95;
  double margin = 0;
  int eta = 3;
  int line = 0;
  bool HigherIsBetter() const { return metric == RungMetric::kCvAcc; }
};

// The `stop_early:` mapping; throws one line naming `file`, the line and the key.
StopEarly ParseStopEarly(const YAML::Node& node, const std::string& file);

// The plan-time checks: the sweep has replicates (2 or more: an arm's evidence is its runs),
// every `arms` entry is an axis, there are 2 or more arms, and every rung lies before the last
// epoch of every point. Throws "FILE: line N: stop_early: ...".
void CheckStopEarly(const StopEarly& s, const std::vector<std::string>& axes, int replicates,
                    const std::vector<SweepPoint>& points, const std::string& file);

// A point's arm: the values of the `arms` axes (every axis when empty), "k=v, k=v".
std::string ArmOf(const StopEarly& s, const SweepPoint& p);

// One run at a rung, as the store has it.
struct RungRun {
  std::string run_id;
  std::string arm;
  int replicate = 0;
  std::optional<double> value;  // the metric after the rung's epoch (nullopt: not reached)
  bool collapsed = false;       // collapsed or diverged before or at the rung
};

// What the rule decides of one arm at a rung.
struct ArmFate {
  std::string arm;
  bool stop = false;
  std::string why;  // one line, for stopped arms
};

// The arms that reached the rung (a run with a value, or a collapsed one), in first-seen order,
// with whether each is stopped. Pure: the same runs give the same fates.
std::vector<ArmFate> DecideRung(const StopEarly& s, int rung, const std::vector<RungRun>& runs);

}  // namespace mavg
