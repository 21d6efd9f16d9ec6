#pragma once
// `mavg report verdicts CRITERIA`: every effect of a criteria file (criteria.h) judged on the
// store's runs (paired_arms.h, verdict.h), with the baseline that scales the paper's numbers and
// the multiplicity, as JSON (what the reproduction page lays out; keys in README.md's report
// section), text for a terminal, or a Markdown table.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/report/criteria.h"
#include "engine/report/paired_arms.h"
#include "engine/report/verdict.h"

namespace mavg {

struct EffectReport {
  const EffectCriteria* criteria = nullptr;  // not owned: the Criteria it was computed from
  EffectRule rule;                           // scaled
  EffectRuns runs;
  EffectVerdict verdict;
  std::optional<bool> holm;  // confirmatory and tested: whether Holm's correction keeps it
};

struct VerdictsReport {
  const Criteria* criteria = nullptr;  // not owned
  // Our baseline: the mean metric of its completed runs (none: no baseline in the criteria, or
  // no completed run yet) and the scale baseline / paper_baseline (1 without a baseline).
  std::optional<double> baseline;
  int baseline_runs = 0;
  std::optional<double> scale;
  std::vector<EffectReport> effects;  // in the file's order
  Multiplicity multiplicity;
};

// Throws naming the criteria file and the effect on a key no run of its sweep has, or on two
// runs of one replicate in an arm.
VerdictsReport ComputeVerdicts(const Criteria& criteria, SweepRunsCache& cache);

nlohmann::json VerdictsJson(const VerdictsReport& report);

// One effect's outcome, for any report that judges effects (criteria files, a sweep's
// contrasts): its pairs, arms, counts, difference (or Fisher's test), p, Holm, verdict and why,
// the arms named `names` (a, b ...). `criteria` is not read.
nlohmann::json EffectOutcomeJson(const EffectReport& e, const std::vector<std::string>& names);
// "+0.12 [+0.03, +0.21]" (b - a and its interval), or a collapses effect's counts; "-" untested.
std::string EffectDeltaText(const EffectReport& e);
// "agrees", "inconclusive (pending)" ...
std::string EffectVerdictText(const EffectReport& e);
// "3 pairs of 10 planned, 1 with a collapsed run".
std::string EffectPairsText(const EffectReport& e);
std::string VerdictsText(const VerdictsReport& report);
std::string VerdictsMarkdown(const VerdictsReport& report);

}  // namespace mavg
