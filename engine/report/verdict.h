#pragma once
// A reproduction's verdicts: one effect's runs, paired by replicate, judged against the paper's
// claim by rules fixed before the runs (docs/algorithms.md §9). Pure functions, no I/O:
// `mavg report verdicts` reads the criteria (criteria.h) and the runs (paired_arms.h) and
// prints these; the reproduction page lays them out.
//
// d = b - a per pair (an interaction: (b2 - a2) - (b - a)); e = the paper's b - a scaled to our
// baseline; m = the margin scaled alike. [L, U] is the two-sided `level` t interval of the mean
// paired difference; each end is a one-sided test at alpha = (1 - level) / 2, and so are the
// smallest margins. A collapsed or diverged run is an outcome: the t part leaves its pair out
// and says how many; `collapses` counts them.
//   direction   (e != 0) agrees: the interval excludes 0 on e's side; contradicted: it excludes
//               e on the far side; else inconclusive (it holds 0 and e).
//   beats       (b better than a, no size claimed: a sweep's `compare:` contrast) agrees: the
//               interval excludes 0 on the better side (below, or above when higher is better);
//               contradicted: it excludes 0 on the worse side; else inconclusive.
//   small       (d < m, "loses little"; the loss is -d when higher is better) agrees: U < m;
//               contradicted: L > max(e, m); else inconclusive ("margin out of reach" when the
//               smallest upper margin these pairs can show is >= m).
//   equivalent  (|d| < m, TOST) agrees: -m < L and U < m; contradicted: L > m or U < -m; else
//               inconclusive (out of reach likewise, both sides).
//   collapses   one-sided Fisher's exact test on (collapsed or diverged / ended) per arm, the
//               pairing unused: agrees when p < alpha on the paper's side, contradicted when p
//               < alpha on the other, else inconclusive.
// Fewer than 2 complete pairs without a collapsed run (collapses: an arm without an ended run):
// `pending` while runs are to come, `not run` for an arm cut from the plan (planned 0), else
// `no runs`. A cut arm whose runs were made anyway is judged like any other, never pending.

#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/core/enum_text.h"
#include "engine/report/stats.h"

namespace mavg {

enum class EffectKind { kDirection, kBeats, kSmall, kEquivalent, kCollapses };
inline constexpr EnumText<EffectKind> kEffectKindTexts[] = {{EffectKind::kDirection, "direction"},
                                                            {EffectKind::kBeats, "beats"},
                                                            {EffectKind::kSmall, "small"},
                                                            {EffectKind::kEquivalent, "equivalent"},
                                                            {EffectKind::kCollapses, "collapses"}};
MAVG_ENUM_TEXTS(EffectKind, kEffectKindTexts)

enum class Verdict { kAgrees, kInconclusive, kContradicted, kPending, kNoRuns, kNotRun };
inline constexpr EnumText<Verdict> kVerdictTexts[] = {{Verdict::kAgrees, "agrees"},
                                                      {Verdict::kInconclusive, "inconclusive"},
                                                      {Verdict::kContradicted, "contradicted"},
                                                      {Verdict::kPending, "pending"},
                                                      {Verdict::kNoRuns, "no runs"},
                                                      {Verdict::kNotRun, "not run"}};
MAVG_ENUM_TEXTS(Verdict, kVerdictTexts)

// The one-sided alpha of each end of the two-sided `level` interval, (1 - level) / 2, without
// the rounding error of the subtraction (0.025, not 0.025000000000000022, for 0.95).
double OneSidedAlpha(double level);

// Whether a verdict came from a test (agrees, inconclusive, contradicted).
bool Tested(Verdict v);

// collapses: the paper says arm b collapses more often than arm a, or less.
enum class CollapseSide { kMore, kLess };
inline constexpr EnumText<CollapseSide> kCollapseSideTexts[] = {{CollapseSide::kMore, "more"},
                                                                {CollapseSide::kLess, "less"}};
MAVG_ENUM_TEXTS(CollapseSide, kCollapseSideTexts)

// What the criteria fix for one effect, already scaled to our baseline.
struct EffectRule {
  EffectKind kind = EffectKind::kDirection;
  double level = 0.95;            // of the two-sided interval: alpha = (1 - level) / 2
  double power = 0.8;             // of the smallest margins (and detectable effect)
  bool higher_is_better = false;  // small: the loss is b - a, or a - b when higher is better
  std::optional<double> effect;   // e; direction needs it, non-zero
  std::optional<double> margin;   // m > 0; small and equivalent need it
  CollapseSide side = CollapseSide::kMore;  // collapses
  int planned = -1;  // pairs planned; -1: not said; 0: cut from the plan (not run by design)
};

// One arm's runs as the store has them, before pairing.
struct ArmCounts {
  int runs = 0;       // of the arm
  int ended = 0;      // completed with the metric, collapsed or diverged
  int collapsed = 0;  // collapsed or diverged
  int waiting = 0;    // still to end: new, running, preempted, interrupted
  int unusable = 0;   // failed, or completed without the metric
  int stopped = 0;    // stopped early by the sweep's stop_early rule: partial, never paired
};

// An effect's runs, paired by replicate.
struct EffectRuns {
  // arms[k][i]: arm k's run of replicates[i], the replicates every arm has ended, ascending.
  // Two arms (a, b) or four (a, b, a2, b2: an interaction).
  std::vector<Arm> arms;
  std::vector<int> replicates;
  std::vector<ArmCounts> counts;  // [arm], every run of it, paired or not
  // The paired runs' builds (code versions) and GEMM kernel families, where recorded: more
  // than one of either and a difference may be the build's.
  std::set<std::string> builds, kernels;
  // Why an arm has no run at all (e.g. "no run of sweep t1 has parallel.workers=7"); empty
  // otherwise. The verdict is then `no runs` (or `pending`) with this as its why.
  std::string missing;
};

struct EffectVerdict {
  Verdict verdict = Verdict::kNoRuns;
  bool pending = false;  // fewer than `planned` pairs (collapses: runs of an arm) have ended;
                         // without `planned`, runs of the arms are still to end
  std::string why;       // one line
  int pairs = 0;         // complete pairs
  int left_out = 0;      // of them, with a collapsed run: out of the t part
  std::vector<ArmSummary> arms;  // [arm] over the complete pairs
  // The t part (not collapses; NaN where not computed): d's mean, its `level` interval, the
  // standard deviation of the per-pair d, and the smallest margin these pairs could show (power
  // `power`, true difference 0, one-sided alpha): small, the upper side; equivalent, both
  // sides; direction, the smallest effect they detect, (t(1 - alpha) + t(power)) se.
  double estimate = kNotComputed, ci_low = kNotComputed, ci_high = kNotComputed;
  double sd = kNotComputed, smallest_margin = kNotComputed;
  // collapses: Fisher's exact test (NaN otherwise).
  double p_more = kNotComputed, p_less = kNotComputed;
  // The claim's one-sided p (NaN when untested): direction, H0 "d is 0 or on the far side of
  // e's sign"; small, H0 "loss >= m"; equivalent, the larger of TOST's two; collapses, Fisher's
  // on the paper's side. p < alpha is `agrees`.
  double p_one_sided = kNotComputed;

  static constexpr double kNotComputed = std::numeric_limits<double>::quiet_NaN();
};

// Throws on a rule the kind cannot use (direction without a non-zero e, small or equivalent
// without a positive m, collapses with four arms) or arms of different lengths.
EffectVerdict JudgeEffect(const EffectRule& rule, const EffectRuns& runs);

// Holm's step-down at `alpha` over one family's p values: sorted ascending, the i-th (from 0) is
// rejected while every one before it was and p(i) < alpha / (family - i). NaN is not in the
// family (untested) and never rejected. Returns, per input, whether it was rejected.
std::vector<bool> HolmRejections(const std::vector<double>& p, double alpha);

// What the output says about multiplicity: the effects tested in each family, each at alpha
// one-sided without correction, and how many confirmatory ones agree after Holm.
struct Multiplicity {
  int confirmatory = 0, exploratory = 0;  // tested (agrees, inconclusive, contradicted)
  int untested = 0;                       // pending or no runs (not: not run, cut from the plan)
  double alpha = 0.025;
  int agrees = 0;       // confirmatory effects that agree, uncorrected
  int holm_agrees = 0;  // of them, those Holm rejects over the confirmatory family
  std::vector<std::optional<bool>> holm;  // [effect]: Holm's decision, or none (exploratory or
                                          // untested)
};
// A tested effect whose p could not be computed (no spread) is in the family with p = 1.
Multiplicity SummarizeMultiplicity(const std::vector<EffectVerdict>& verdicts,
                                   const std::vector<bool>& confirmatory, double alpha);

// "+0.12", "-0.034": signed, 2 decimals, more below 0.1 (the numbers in `why`).
std::string SignedNumber(double x);

}  // namespace mavg
