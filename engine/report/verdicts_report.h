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
std::string VerdictsText(const VerdictsReport& report);
std::string VerdictsMarkdown(const VerdictsReport& report);

}  // namespace mavg
