#pragma once
// A sweep's questions, declared in its spec and answered by `mavg report compare SWEEP`:
//   compare:
//     bmuf_vs_average:                      # the contrast's name (the name rule, core/words.h)
//       a: {parallel.algorithm: average}    # required: arm a's values (config keys, as axes)
//       b: {parallel.algorithm: bmuf}       # required: arm b's
//       where: {parallel.workers: 8}        # values both arms share (optional)
//       metric: wer                         # the store's metric compared (default wer)
//       claim: beats                        # required: beats | not_worse | equivalent
//       margin: 0.5                         # not_worse and equivalent: in the metric's units
//       higher_is_better: false             # default: true for an accuracy, else false
//       level: 0.95                         # the two-sided interval (default 0.95)
// The claim is about b against a, judged on the runs paired by replicate with the rules of
// report/verdict.h: beats (b better, no size claimed), not_worse (b - a below the margin, or
// a - b when higher is better: "small"), equivalent (|b - a| below the margin, TOST).
// Checked twice: when the spec loads (keys, values against the config schema, the claim's
// needs: one line naming the file, the line and the contrast), and when the spec's points are
// known (CheckContrasts: each arm selects runs of the plan, one per replicate, the arms pair).

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/enum_text.h"

namespace mavg {

struct SweepPoint;

enum class ContrastClaim { kBeats, kNotWorse, kEquivalent };
inline constexpr EnumText<ContrastClaim> kContrastClaimTexts[] = {
    {ContrastClaim::kBeats, "beats"},
    {ContrastClaim::kNotWorse, "not_worse"},
    {ContrastClaim::kEquivalent, "equivalent"}};
MAVG_ENUM_TEXTS(ContrastClaim, kContrastClaimTexts)

struct Contrast {
  using Values = std::vector<std::pair<std::string, std::string>>;  // key, value as written
  std::string name;
  Values a, b, where;
  std::string metric = "wer";
  ContrastClaim claim = ContrastClaim::kBeats;
  std::optional<double> margin;
  bool higher_is_better = false;
  double level = 0.95;
  int line = 0;  // of the contrast in the spec

  Values ArmA() const;  // where, then a
  Values ArmB() const;  // where, then b
};

// Values that select runs as one line: "parallel.workers=8, parallel.algorithm=bmuf" (a
// contrast's arms here, report/paired_arms.h's selections).
std::string SelectionText(const Contrast::Values& values);

// "b beats a on wer (lower is better)", "b is not worse than a by 0.5 or more on wer (...)".
std::string ClaimText(const Contrast& c);

// The metric's default direction: higher is better for an accuracy (a name holding "acc").
bool HigherIsBetterByDefault(const std::string& metric);

// The `compare:` mapping of a spec (`file` names it in messages); throws one line.
std::vector<Contrast> ParseContrasts(const YAML::Node& compare, const std::string& file);

// The contrasts and the replicates of a spec as the store keeps it (sweeps.spec_yaml), read
// without the rest (its base config may not be where the spec was planned).
struct StoredContrasts {
  std::vector<Contrast> contrasts;
  int replicates = 1;
};
StoredContrasts ParseStoredContrasts(const std::string& spec_yaml, const std::string& source);

// The runs of a plan each arm of `c` selects (one per replicate, in plan order), the pairs they
// make, or why `c` cannot be answered by these points (then no runs).
struct ContrastPlan {
  std::vector<std::string> a, b;  // run ids
  int pairs = 0;
  std::string problem;
};
ContrastPlan PlanContrast(const Contrast& c, const std::vector<const SweepPoint*>& points,
                          int replicates);

// Why `c` cannot be answered by these points ("arm b selects no run: no point has
// parallel.algorithm=bmf (its values: average, bmuf)"); empty when it can.
std::string ContrastProblem(const Contrast& c, const std::vector<SweepPoint>& points,
                            int replicates);
// Throws "FILE: compare.NAME: PROBLEM" for the first contrast the points cannot answer.
void CheckContrasts(const std::vector<Contrast>& contrasts, const std::vector<SweepPoint>& points,
                    int replicates, const std::string& file);

}  // namespace mavg
