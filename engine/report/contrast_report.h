#pragma once
// `mavg report compare SWEEP` without arms: the questions the sweep's spec declares (`compare:`,
// sweep/contrasts.h), each answered on the store's runs paired by replicate with the verdict
// rules of verdict.h (beats, not_worse as "small", equivalent), and the multiplicity over them
// (every contrast is one of the sweep's questions: one family, Holm's correction beside). As
// JSON (the sweep page's first section; keys in README.md's report section) or text.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/report/paired_arms.h"
#include "engine/report/verdicts_report.h"
#include "engine/sweep/contrasts.h"

namespace mavg {

struct ContrastResult {
  Contrast contrast;
  EffectReport effect;  // effect.criteria is null
};

struct ContrastsReport {
  std::string sweep;
  int replicates = 1;  // planned per arm
  std::vector<ContrastResult> results;
  Multiplicity multiplicity;
};

// The kind of verdict.h that judges a claim.
EffectKind KindOfClaim(ContrastClaim claim);

// Answers `stored`'s contrasts (only those named in `only`, when not empty) on sweep `sweep`'s
// runs. Throws one line naming the contrast: a name `only` gives that the spec lacks, a key no
// run has, two runs of one replicate in an arm, a metric no run has (while runs have others).
ContrastsReport ComputeContrasts(const std::string& sweep, const StoredContrasts& stored,
                                 const std::vector<std::string>& only, SweepRunsCache& cache);

nlohmann::json ContrastsJson(const ContrastsReport& report);
std::string ContrastsText(const ContrastsReport& report);

}  // namespace mavg
