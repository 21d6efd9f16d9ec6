#pragma once
// Statistics for comparing arms of a sweep from a few replicates: Student t intervals (paired
// by seed or Welch), two one-sided tests for equivalence, the smallest detectable difference,
// exact rank tests that count collapsed runs as outcomes, the 2x2 interaction, and a paired
// bootstrap over test utterances. Pure functions, no I/O: `mavg report compare|bootstrap` print
// them, the reproduction page lays them out.
//
// Conventions: a difference is always b - a. A collapsed run (diverged, stuck at the priors) is
// an outcome worse than every other run of the comparison, tied with the other collapsed runs;
// "worse" is higher unless `higher_is_better`. The t-based parts cannot use it, so they leave it
// out and say how many they left out; the rank test keeps it. A value that cannot be computed
// is NaN (the JSON prints null): the t part when fewer than two values remain to estimate a
// spread from, or when they have none at all (identical replicates, se = 0), and the
// equivalence test with it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/enum_text.h"

namespace mavg {

// I_x(a, b), the regularized incomplete beta function (a, b > 0, 0 <= x <= 1), by its continued
// fraction (Lentz), to about 1e-14.
double RegularizedIncompleteBeta(double a, double b, double x);
// P(T <= t) for Student's t with `df` > 0 degrees of freedom (df need not be whole: Welch).
double StudentTCdf(double t, double df);
// The t with StudentTCdf(t, df) = p, 0 < p < 1.
double StudentTQuantile(double p, double df);

// One replicate's value of a metric, or a collapsed run.
struct ArmValue {
  double value = 0;
  bool collapsed = false;
};
using Arm = std::vector<ArmValue>;  // [replicate]; paired arms: the same index is the same seed

// An arm's non-collapsed values.
struct ArmSummary {
  int n = 0;          // values used (not collapsed)
  int collapsed = 0;  // collapsed runs left out of n, mean and sd
  double mean = 0;    // NaN when n = 0
  double sd = 0;      // sample standard deviation (n - 1); NaN when n < 2
};
ArmSummary SummarizeArm(const Arm& arm);

// A difference estimated from means with a t-based interval.
struct TDifference {
  double estimate = 0;  // b - a (an interaction: (b2 - a2) - (b1 - a1))
  double se = 0;        // its standard error
  double df = 0;        // paired: n - 1; otherwise Welch-Satterthwaite
  double t = 0;         // estimate / se
  double p = 0;         // two-sided
  double ci_low = 0;    // the `level` interval
  double ci_high = 0;
  double mdd = 0;    // the smallest difference detectable at alpha = 1 - level (two-sided)
                     // with the given power: (t_{1-alpha/2,df} + t_{power,df}) se
  int n = 0;         // paired: seeds used; otherwise the values used over all arms
  int left_out = 0;  // paired: seeds with a collapsed member; otherwise collapsed values
  // Paired, with CompareOptions::detect: the fewest seeds whose mdd, at the spread these seeds
  // show (sd = se sqrt(n)), is at most |detect|; kMoreSeeds when 100 are not enough, 0 when it
  // cannot be computed (not paired, no detect, no spread). A planning figure: the spread of a
  // few seeds is itself uncertain.
  int seeds_needed = 0;
};
inline constexpr int kMoreSeeds = 101;

// Two one-sided tests against a margin fixed in advance: H0 |b - a| >= margin, rejected at
// alpha = 1 - level when both one-sided p < alpha, i.e. when the 1 - 2 alpha interval (90 % for
// level 0.95) lies inside (-margin, +margin).
struct Equivalence {
  double margin = 0;
  double alpha = 0;
  double p_lower = 0;  // H0: b - a <= -margin
  double p_upper = 0;  // H0: b - a >= +margin
  double p_tost = 0;   // max of the two
  double ci_level = 0;
  double ci_low = 0, ci_high = 0;
  bool equivalent = false;
  // The smallest margin these runs could show with the given power when the true difference is
  // 0: both sides (TOST), (t_{1-alpha,df} + t_{(1+power)/2,df}) se; the upper side alone
  // (non-inferiority: b - a < +margin), (t_{1-alpha,df} + t_{power,df}) se. A margin below
  // them is out of these runs' reach, so a "not shown" there is no evidence of a difference.
  double smallest_margin = 0, smallest_margin_upper = 0;
  // Paired: the fewest seeds for which those reach `margin` at this spread (as seeds_needed).
  int seeds_needed = 0, seeds_needed_upper = 0;
};

// Exact rank tests over every value, collapsed runs included as the worst outcomes (ties by
// mid-ranks). Two-sided p = P(|S - E S| >= |s - E S|) under the exact permutation distribution
// of S given the observed ranks (ties included), enumerated by counting subset sums.
enum class RankMethod { kWilcoxonSignedRank, kMannWhitneyU };
inline constexpr EnumText<RankMethod> kRankMethodTexts[] = {
    {RankMethod::kWilcoxonSignedRank, "wilcoxon_signed_rank"},
    {RankMethod::kMannWhitneyU, "mann_whitney_u"}};
MAVG_ENUM_TEXTS(RankMethod, kRankMethodTexts)

struct RankTest {
  RankMethod method = RankMethod::kMannWhitneyU;
  // Wilcoxon: W+, the sum of the ranks of |b - a| over the seeds where b > a; Mann-Whitney: U of
  // b, the pairs (a, b) with b > a plus half the ties. Orders by value: collapsed is +inf, or
  // -inf when higher is better.
  double statistic = 0;
  double p = 1;
  // The smallest p these ranks allow (every seed, or every value, on one arm's side): the exact
  // test cannot reject below it. Signed rank: 2 / 2^n for n seeds that differ, ties or not (0.25
  // at 3, 0.0625 at 5), so a rank test on fewer than 6 pairs never reaches p < 0.05; rank sum:
  // the rarer of its two extremes, which ties can make unequal.
  double min_p = 1;
  int n = 0;      // Wilcoxon: seeds with b != a; Mann-Whitney: all values of both arms
  int zeros = 0;  // Wilcoxon: seeds with b == a (both collapsed counts as equal), left out
};
// Paired: a[i] and b[i] share seed i (same sizes).
RankTest SignedRankTest(const Arm& a, const Arm& b, bool higher_is_better);
RankTest RankSumTest(const Arm& a, const Arm& b, bool higher_is_better);

struct CompareOptions {
  bool paired = false;            // a[i] and b[i] share a seed
  double level = 0.95;            // of the interval; the tests' alpha is 1 - level
  double power = 0.8;             // of the smallest detectable difference
  std::optional<double> margin;   // equivalence margin (> 0), fixed before the runs
  std::optional<double> detect;   // a difference the design should detect (e.g. the paper's)
  bool higher_is_better = false;  // which side a collapsed run lies on (WER: lower is better)
};

// The standard deviation of the per-seed differences behind a paired difference, se sqrt(n).
double SeedSd(const TDifference& d);
// Two one-sided tests of `d` against options.margin at alpha = 1 - options.level (nullopt
// without a margin or a t part): what Compare puts in Comparison::equivalence.
std::optional<Equivalence> Tost(const TDifference& d, const CompareOptions& options);

struct Comparison {
  ArmSummary a, b;
  TDifference diff;                        // NaN parts when too few values remain
  std::optional<Equivalence> equivalence;  // with a margin and a finite se
  RankTest rank;
};
// Throws when paired arms differ in size, an arm is empty, or an option is out of range.
Comparison Compare(const Arm& a, const Arm& b, const CompareOptions& options);

// The 2x2 interaction: arms a1, b1 at the first setting (e.g. 1 worker) and a2, b2 at the
// second (e.g. 32 workers); the estimate (b2 - a2) - (b1 - a1). Paired: the four arms share
// seeds (equal sizes), the per-seed double difference has n - 1 df and a seed with any collapsed
// member is left out; otherwise four independent means with a Welch-Satterthwaite df.
// Paired, the rank test keeps every seed: a seed's double difference with collapsed runs takes
// b - a = +inf where only b collapsed, -inf where only a did, 0 where both did, and the signed
// rank test runs on those (an infinite one ranks beyond every finite one; +inf - +inf counts as
// no interaction). Unpaired: none (n = 0, p = 1; the JSON leaves it out).
struct Interaction {
  Comparison first, second;  // b1 vs a1 and b2 vs a2
  TDifference diff;
  std::optional<Equivalence> equivalence;
  RankTest rank;
};
Interaction CompareInteraction(const Arm& a1, const Arm& b1, const Arm& a2, const Arm& b2,
                               const CompareOptions& options);

// Fisher's exact test on a 2x2 table of counts, one-sided both ways: `events_a` of `n_a` runs
// of arm a (collapsed ones, say) against `events_b` of `n_b` of arm b. Given the margins, the
// events of b are hypergeometric: p_more = P(X_b >= events_b) (b has more events than chance
// would give it), p_less = P(X_b <= events_b). 5 of 5 against 0 of 5: p_more = 1 / C(10, 5) =
// 1/252; 3 of 3 against 0 of 3: 1/20. Throws on a count outside 0 <= events <= n.
struct FisherExact {
  double p_more = 1, p_less = 1;
};
FisherExact FisherExactTest(int events_a, int n_a, int events_b, int n_b);

// One test utterance's score under a system.
struct UtteranceErrors {
  std::string id;
  int64_t errors = 0;     // substitutions + deletions + insertions
  int64_t ref_words = 0;  // reference words
};

struct BootstrapOptions {
  int samples = 10000;  // resamples (> 0)
  uint64_t seed = 1;
  double level = 0.95;  // of the percentile interval
  // How the two lists are named in errors (e.g. their files).
  std::string name_a = "a", name_b = "b";
};

struct BootstrapResult {
  int64_t utterances = 0;
  int64_t ref_words = 0;
  double wer_a = 0, wer_b = 0;     // percent, over the whole test set
  double diff = 0;                 // wer_b - wer_a
  double ci_low = 0, ci_high = 0;  // percentiles of the resampled differences (linear between)
  double fraction_b_better = 0;    // resamples where wer_b < wer_a (strictly)
};
// The paired bootstrap over utterances (Bisani & Ney 2004): resamples of the test utterances
// with replacement, the same draw for both systems, from Rng(seed), so the same inputs give the
// same numbers. The two lists are matched by id (any order); sets that differ throw naming the
// first id missing from the other, and a repeated id throws. WER is 100 errors / max(1, ref
// words), as engine/decode/score.h's.
BootstrapResult PairedBootstrap(const std::vector<UtteranceErrors>& a,
                                const std::vector<UtteranceErrors>& b,
                                const BootstrapOptions& options);

}  // namespace mavg
