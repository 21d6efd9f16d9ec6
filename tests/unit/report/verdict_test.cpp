// The verdict rules of `mavg report verdicts` over a table of cases: each kind x each verdict,
// the interval's ends on either side of 0, the margin and the paper's effect, collapsed pairs,
// pending and no runs, interactions; Fisher's exact test against hypergeometric closed forms;
// Holm's step-down; the multiplicity summary.
#include "engine/report/verdict.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace mavg {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kCollapsedPair = std::numeric_limits<double>::infinity();  // b collapsed

// t(0.975, 2 df) in closed form: (2p - 1) / sqrt(2 p (1 - p)).
const double kT975df2 = 0.95 / std::sqrt(2 * 0.975 * 0.025);

// Pairs a = 10, b = 10 + d (kCollapsedPair: b collapsed); every run ended.
EffectRuns Pairs(const std::vector<double>& d) {
  EffectRuns r;
  r.arms.resize(2);
  r.counts.resize(2);
  for (size_t i = 0; i < d.size(); ++i) {
    r.replicates.push_back(static_cast<int>(i));
    r.arms[0].push_back({10.0, false});
    const bool collapsed = std::isinf(d[i]);
    r.arms[1].push_back({collapsed ? 0.0 : 10.0 + d[i], collapsed});
    for (ArmCounts& c : r.counts) ++c.runs, ++c.ended;
    if (collapsed) ++r.counts[1].collapsed;
  }
  return r;
}

// Three pairs with mean `mean` and sd 0.1: d = mean - 0.1, mean, mean + 0.1; the 95 % interval
// is mean -+ kT975df2 0.1 / sqrt(3) = mean -+ 0.2484.
std::vector<double> Three(double mean) { return {mean - 0.1, mean, mean + 0.1}; }
const double kHalf = kT975df2 * 0.1 / std::sqrt(3.0);
std::vector<double> D(std::initializer_list<double> d) { return d; }

struct Case {
  const char* name;
  EffectKind kind;
  std::optional<double> effect, margin;
  std::vector<double> d;
  Verdict expect;
  const char* why;  // a part of the why
  bool higher_is_better = false;
  int planned = -1;  // not said
  bool pending = false;
};

// A replicate an arm lost for good (a failed run, kept by `sweep run`) is not waited for.
TEST(Verdict, PendingLeavesOutReplicatesLostForGood) {
  EffectRule rule;
  rule.kind = EffectKind::kDirection;
  rule.effect = 0.1;
  rule.planned = 4;
  EffectRuns runs = Pairs(Three(0.3));
  EXPECT_TRUE(JudgeEffect(rule, runs).pending);
  ++runs.counts[1].unusable;
  EXPECT_FALSE(JudgeEffect(rule, runs).pending);
}

TEST(Verdict, TableOfCases) {
  const std::optional<double> kNo;  // no paper effect, or no margin
  using K = EffectKind;
  using V = Verdict;
  const std::vector<Case> cases = {
      // direction, e > 0: the interval above 0; holding 0 and e; wholly below e.
      {"direction agrees", K::kDirection, 0.1, kNo, Three(0.3), V::kAgrees,
       "above 0, as the paper's +0.10"},
      {"direction inconclusive", K::kDirection, 0.1, kNo, Three(0.0), V::kInconclusive,
       "holds 0 and the paper's +0.10"},
      {"direction contradicted", K::kDirection, 0.1, kNo, Three(-0.2), V::kContradicted,
       "below the paper's +0.10"},
      // The lower end just above 0 and just below it.
      {"direction L = +0.001", K::kDirection, 0.1, kNo, Three(kHalf + 0.001), V::kAgrees,
       "above 0"},
      {"direction L = -0.001", K::kDirection, 0.1, kNo, Three(kHalf - 0.001), V::kInconclusive,
       "holds 0"},
      // The upper end just below e (contradicted) and just above it.
      {"direction U = e - 0.001", K::kDirection, 0.1, kNo, Three(0.1 - kHalf - 0.001),
       V::kContradicted, "ruled out"},
      {"direction U = e + 0.001", K::kDirection, 0.1, kNo, Three(0.1 - kHalf + 0.001),
       V::kInconclusive, "holds 0"},
      // e < 0: the mirror image.
      {"direction e<0 agrees", K::kDirection, -0.22, kNo, Three(-0.3), V::kAgrees,
       "below 0, as the paper's -0.22"},
      {"direction e<0 inconclusive", K::kDirection, -0.22, kNo, Three(0.0), V::kInconclusive,
       "holds 0 and the paper's -0.22"},
      {"direction e<0 contradicted", K::kDirection, -0.22, kNo, Three(0.1), V::kContradicted,
       "above the paper's -0.22"},
      // A large paper effect: the interval excludes 0 on the far side, so it excludes e too.
      {"direction wrong sign", K::kDirection, 0.1, kNo, Three(-0.5), V::kContradicted, "ruled out"},
      // beats (a sweep's contrast: b better, no size): lower is better, so agrees below 0,
      // contradicted above it; the ends just either side of 0; the mirror when higher is better.
      {"beats agrees", K::kBeats, kNo, kNo, Three(-0.3), V::kAgrees, "below 0: b is better"},
      {"beats inconclusive", K::kBeats, kNo, kNo, Three(0.0), V::kInconclusive,
       "holds 0; the smallest difference these pairs detect is"},
      {"beats contradicted", K::kBeats, kNo, kNo, Three(0.3), V::kContradicted,
       "above 0: b is worse"},
      {"beats U = -0.001", K::kBeats, kNo, kNo, Three(-kHalf - 0.001), V::kAgrees, "below 0"},
      {"beats U = +0.001", K::kBeats, kNo, kNo, Three(-kHalf + 0.001), V::kInconclusive, "holds 0"},
      {"beats L = +0.001", K::kBeats, kNo, kNo, Three(kHalf + 0.001), V::kContradicted, "worse"},
      {"beats L = -0.001", K::kBeats, kNo, kNo, Three(kHalf - 0.001), V::kInconclusive, "holds 0"},
      {"beats higher-better agrees", K::kBeats, kNo, kNo, Three(0.3), V::kAgrees,
       "above 0: b is better", true},
      {"beats higher-better contradicted", K::kBeats, kNo, kNo, Three(-0.3), V::kContradicted,
       "below 0: b is worse", true},
      {"beats: b collapsed", K::kBeats, kNo, kNo, D({-0.3, -0.4, -0.2, kCollapsedPair}),
       V::kInconclusive, "not agrees: 1 collapse against the claim"},
      // small, m = 0.3 (paper's loss 0.1): U below m; L above max(e, m); in between.
      {"small agrees", K::kSmall, 0.1, 0.3, Three(0.0), V::kAgrees, "below the margin +0.30"},
      {"small agrees on a gain", K::kSmall, 0.1, 0.3, Three(-0.5), V::kAgrees, "below the margin"},
      {"small inconclusive, out of reach", K::kSmall, 0.1, 0.3, Three(0.1), V::kInconclusive,
       "margin out of reach"},
      {"small contradicted", K::kSmall, 0.1, 0.3, Three(0.6), V::kContradicted,
       "above the margin +0.30 and the paper's +0.10"},
      // L above m but below the paper's loss: not contradicted.
      {"small L between m and e", K::kSmall, 0.4, 0.3, Three(0.35 + kHalf), V::kInconclusive,
       "above the margin +0.30 but holds the paper's +0.40"},
      {"small without the paper's", K::kSmall, kNo, 0.3, Three(0.6), V::kContradicted,
       "above the margin +0.30"},
      // U just below and just above m.
      {"small U = m - 0.001", K::kSmall, 0.1, 0.3, Three(0.3 - kHalf - 0.001), V::kAgrees, "below"},
      {"small U = m + 0.001", K::kSmall, 0.1, 0.3, Three(0.3 - kHalf + 0.001), V::kInconclusive,
       "holds"},
      // Higher is better: the loss is a - b.
      {"small higher-better agrees", K::kSmall, -0.1, 0.3, Three(0.0), V::kAgrees,
       "above the margin -0.30", true},
      {"small higher-better contradicted", K::kSmall, -0.1, 0.3, Three(-0.6), V::kContradicted,
       "below the margin -0.30", true},
      {"small higher-better gain", K::kSmall, -0.1, 0.3, Three(0.6), V::kAgrees, "above the margin",
       true},
      // equivalent, m = 0.3.
      {"equivalent agrees", K::kEquivalent, kNo, 0.3, Three(0.0), V::kAgrees, "within +-0.3"},
      {"equivalent inconclusive", K::kEquivalent, kNo, 0.3, Three(0.1), V::kInconclusive,
       "crosses +-0.30; margin out of reach"},
      {"equivalent contradicted above", K::kEquivalent, kNo, 0.3, Three(0.6), V::kContradicted,
       "above +0.30"},
      {"equivalent contradicted below", K::kEquivalent, kNo, 0.3, Three(-0.6), V::kContradicted,
       "below -0.30"},
      {"equivalent L = -m + 0.001", K::kEquivalent, kNo, 0.3, Three(-0.3 + kHalf + 0.001),
       V::kAgrees, "within"},
      {"equivalent L = -m - 0.001", K::kEquivalent, kNo, 0.3, Three(-0.3 + kHalf - 0.001),
       V::kInconclusive, "crosses"},
      // A collapsed pair: out of the t part, said in the why; the rest decide.
      {"collapsed pair left out", K::kDirection, 0.1, kNo, D({0.2, 0.3, kCollapsedPair, 0.4}),
       V::kAgrees, "; 1 pair with a collapsed run left out"},
      {"too few pairs without a collapse", K::kDirection, 0.1, kNo,
       D({0.2, kCollapsedPair, kCollapsedPair}), V::kNoRuns,
       "1 pair without a collapsed run of 3 (needs 2)"},
      // No spread: no interval.
      {"identical differences", K::kDirection, 0.1, kNo, D({0.2, 0.2, 0.2}), V::kInconclusive,
       "no spread"},
      // Pending: a verdict on what has ended, flagged; too few: `pending` itself.
      {"pending with a verdict", K::kDirection, 0.1, kNo, Three(0.3), V::kAgrees, "above 0", false,
       10, true},
      {"pending", K::kDirection, 0.1, kNo, D({0.3}), V::kPending, "1 of 10 pairs ended", false, 10,
       true},
      {"no runs", K::kDirection, 0.1, kNo, D({}), V::kNoRuns, "no complete pair"},
      {"all planned ended", K::kDirection, 0.1, kNo, Three(0.3), V::kAgrees, "above 0", false, 3,
       false},
      // A collapse against the claim forbids `agrees` (the pairs left would agree).
      {"small: b collapsed", K::kSmall, kNo, 0.3, D({0.0, 0.01, -0.01, kCollapsedPair}),
       V::kInconclusive, "not agrees: 1 collapse against the claim"},
      {"equivalent: one arm collapsed", K::kEquivalent, kNo, 0.3,
       D({0.0, 0.01, -0.01, kCollapsedPair}), V::kInconclusive, "against the claim"},
      {"direction: the better arm collapsed", K::kDirection, -0.1, kNo,
       D({-0.3, -0.4, -0.2, kCollapsedPair}), V::kInconclusive, "against the claim"},
      // Equivalent: contradicted only beyond the margin and the paper's own difference.
      {"equivalent: beyond the margin, short of the paper's", K::kEquivalent, 0.5, 0.3,
       Three(0.3 + kHalf + 0.05), V::kInconclusive, "outside +-0.30 but holds the paper's +0.50"},
      {"equivalent: beyond the paper's too", K::kEquivalent, 0.5, 0.3, Three(0.5 + kHalf + 0.01),
       V::kContradicted, "and the paper's +0.50"},
      // An arm cut from the plan (planned 0): `not run`, never pending; run anyway, judged.
      {"cut from the plan", K::kDirection, 0.1, kNo, D({}), V::kNotRun, "cut from the plan", false,
       0, false},
      {"cut but run anyway", K::kDirection, 0.1, kNo, Three(0.3), V::kAgrees, "above 0", false, 0,
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EffectRule rule;
    rule.kind = c.kind;
    rule.effect = c.effect;
    rule.margin = c.margin;
    rule.higher_is_better = c.higher_is_better;
    rule.planned = c.planned;
    const EffectVerdict v = JudgeEffect(rule, Pairs(c.d));
    EXPECT_EQ(v.verdict, c.expect) << v.why;
    EXPECT_EQ(v.pending, c.pending);
    EXPECT_NE(v.why.find(c.why), std::string::npos) << "why: " << v.why;
    EXPECT_EQ(v.why.find('\n'), std::string::npos);
    // The claim's one-sided p says `agrees` exactly when it is below alpha.
    if (Tested(v.verdict) && !std::isnan(v.p_one_sided)) {
      EXPECT_EQ(v.p_one_sided < 0.025, v.verdict == Verdict::kAgrees) << v.p_one_sided;
    }
  }
}

TEST(Verdict, IntervalIsTheHandComputedOne) {
  EffectRule rule;
  rule.effect = 0.1;
  const EffectVerdict v = JudgeEffect(rule, Pairs(Three(0.3)));
  EXPECT_EQ(v.pairs, 3);
  EXPECT_NEAR(v.estimate, 0.3, 1e-12);
  EXPECT_NEAR(v.sd, 0.1, 1e-12);
  EXPECT_NEAR(v.ci_low, 0.3 - kHalf, 1e-9);
  EXPECT_NEAR(v.ci_high, 0.3 + kHalf, 1e-9);
  // One-sided p = P(T_2 >= t), t = 0.3 / (0.1 / sqrt 3); t(2) CDF: 1/2 + t / (2 sqrt(2 + t^2)).
  const double t = 0.3 / (0.1 / std::sqrt(3.0));
  EXPECT_NEAR(v.p_one_sided, 0.5 - t / (2 * std::sqrt(2 + t * t)), 1e-12);
  ASSERT_EQ(v.arms.size(), 2u);
  EXPECT_NEAR(v.arms[1].mean, 10.3, 1e-12);
}

TEST(Verdict, SmallestMarginsAreOneSided) {
  // small: (t(0.975, 2) + t(0.8, 2)) se; equivalent: (t(0.975, 2) + t(0.9, 2)) se.
  const auto q2 = [](double p) { return (2 * p - 1) / std::sqrt(2 * p * (1 - p)); };
  const double se = 0.1 / std::sqrt(3.0);
  EffectRule rule;
  rule.kind = EffectKind::kSmall;
  rule.margin = 0.3;
  EXPECT_NEAR(JudgeEffect(rule, Pairs(Three(0.1))).smallest_margin, (kT975df2 + q2(0.8)) * se,
              1e-9);
  rule.kind = EffectKind::kEquivalent;
  EXPECT_NEAR(JudgeEffect(rule, Pairs(Three(0.1))).smallest_margin, (kT975df2 + q2(0.9)) * se,
              1e-9);
  // A margin within reach: no "out of reach" in the why.
  rule.margin = 0.5;
  EXPECT_EQ(JudgeEffect(rule, Pairs(Three(0.3))).why.find("out of reach"), std::string::npos);
}

TEST(Verdict, PendingWithoutAPlanMeansRunsStillToEnd) {
  EffectRule rule;
  rule.effect = 0.1;
  EffectRuns runs = Pairs({0.3});
  EXPECT_EQ(JudgeEffect(rule, runs).verdict, Verdict::kNoRuns);
  runs.counts[1].waiting = 2;
  const EffectVerdict v = JudgeEffect(rule, runs);
  EXPECT_EQ(v.verdict, Verdict::kPending);
  EXPECT_TRUE(v.pending);
}

TEST(Verdict, MissingRunsGiveTheirReason) {
  EffectRule rule;
  rule.effect = 0.1;
  EffectRuns runs = Pairs({});
  runs.missing = "arm b: no run of sweep t1 has parallel.workers=7 (its values: 1, 16)";
  const EffectVerdict v = JudgeEffect(rule, runs);
  EXPECT_EQ(v.verdict, Verdict::kNoRuns);
  EXPECT_EQ(v.why, runs.missing);
}

TEST(Verdict, RulesTheKindCannotUseThrow) {
  EffectRule rule;                                            // direction
  EXPECT_THROW(JudgeEffect(rule, Pairs(Three(0.3))), Error);  // no e
  rule.effect = 0.0;
  EXPECT_THROW(JudgeEffect(rule, Pairs(Three(0.3))), Error);  // e = 0: no direction
  rule.effect = kNaN;
  EXPECT_THROW(JudgeEffect(rule, Pairs(Three(0.3))), Error);
  rule.kind = EffectKind::kSmall;
  rule.effect = 0.1;
  EXPECT_THROW(JudgeEffect(rule, Pairs(Three(0.3))), Error);  // no margin
  rule.margin = 0.0;
  EXPECT_THROW(JudgeEffect(rule, Pairs(Three(0.3))), Error);
  rule.kind = EffectKind::kEquivalent;
  rule.margin = -1.0;
  EXPECT_THROW(JudgeEffect(rule, Pairs(Three(0.3))), Error);
  // Arms of different lengths.
  rule.margin = 0.3;
  EffectRuns runs = Pairs(Three(0.3));
  runs.arms[1].pop_back();
  EXPECT_THROW(JudgeEffect(rule, runs), Error);
}

// Four arms: the interaction (b2 - a2) - (b - a), judged by the same rules.
TEST(Verdict, Interactions) {
  EffectRuns runs;
  runs.arms.resize(4);
  runs.counts.resize(4);
  const std::vector<double> d = Three(0.3);
  for (size_t i = 0; i < d.size(); ++i) {
    runs.replicates.push_back(static_cast<int>(i));
    runs.arms[0].push_back({10.0, false});
    runs.arms[1].push_back({10.5 + 0.01 * i, false});  // b - a varies
    runs.arms[2].push_back({11.0, false});
    runs.arms[3].push_back({11.5 + 0.01 * i + d[i], false});
    for (ArmCounts& c : runs.counts) ++c.runs, ++c.ended;
  }
  EffectRule rule;
  rule.effect = 0.1;
  EffectVerdict v = JudgeEffect(rule, runs);
  EXPECT_EQ(v.verdict, Verdict::kAgrees) << v.why;
  EXPECT_NEAR(v.estimate, 0.3, 1e-9);
  EXPECT_NEAR(v.ci_low, 0.3 - kHalf, 1e-9);
  EXPECT_EQ(v.arms.size(), 4u);
  rule.effect = -0.1;
  EXPECT_EQ(JudgeEffect(rule, runs).verdict, Verdict::kContradicted);
  // A collapsed member leaves its replicate out of the t part.
  runs.arms[2][0].collapsed = true;
  v = JudgeEffect(rule, runs);
  EXPECT_EQ(v.left_out, 1);
  EXPECT_EQ(v.verdict, Verdict::kInconclusive) << v.why;  // 2 pairs: a wide interval
  // collapses counts two arms only.
  rule.kind = EffectKind::kCollapses;
  EXPECT_THROW(JudgeEffect(rule, runs), Error);
}

// collapses: counts, not pairs.
EffectRuns Counts(int collapsed_a, int ended_a, int collapsed_b, int ended_b, int waiting = 0) {
  EffectRuns r;
  r.arms.resize(2);
  r.counts.resize(2);
  r.counts[0] = {ended_a + waiting, ended_a, collapsed_a, waiting, 0};
  r.counts[1] = {ended_b, ended_b, collapsed_b, 0, 0};
  for (int i = 0; i < std::min(ended_a, ended_b); ++i) {
    r.replicates.push_back(i);
    r.arms[0].push_back({0, i < collapsed_a});
    r.arms[1].push_back({0, i < collapsed_b});
  }
  return r;
}

TEST(Verdict, CollapsesCases) {
  struct CountCase {
    int xa, na, xb, nb;
    CollapseSide side;
    Verdict expect;
    double p;  // the claim's one-sided p
    const char* why;
  };
  const double kNever = 1.0;
  for (const CountCase& c : {
           CountCase{0, 5, 5, 5, CollapseSide::kMore, Verdict::kAgrees, 1.0 / 252, "as the paper"},
           CountCase{
               0, 3, 3, 3, CollapseSide::kMore, Verdict::kInconclusive, 1.0 / 20,
               "b collapsed 3 of 3, a 0 of 3: Fisher's exact p 0.05 for more in b, not below"},
           CountCase{5, 5, 0, 5, CollapseSide::kMore, Verdict::kContradicted, kNever,
                     "for fewer in b, where the paper has more"},
           CountCase{5, 5, 0, 5, CollapseSide::kLess, Verdict::kAgrees, 1.0 / 252, "as the paper"},
           CountCase{0, 5, 0, 5, CollapseSide::kMore, Verdict::kInconclusive, kNever, "not below"},
       }) {
    SCOPED_TRACE(::testing::Message() << c.xb << "/" << c.nb << " vs " << c.xa << "/" << c.na);
    EffectRule rule;
    rule.kind = EffectKind::kCollapses;
    rule.side = c.side;
    const EffectVerdict v = JudgeEffect(rule, Counts(c.xa, c.na, c.xb, c.nb));
    EXPECT_EQ(v.verdict, c.expect) << v.why;
    EXPECT_NEAR(v.p_one_sided, c.p, 1e-12);
    EXPECT_NE(v.why.find(c.why), std::string::npos) << v.why;
    EXPECT_TRUE(std::isnan(v.ci_low));
  }
  // An arm without an ended run: no runs; pending while runs are to come.
  EffectRule rule;
  rule.kind = EffectKind::kCollapses;
  EXPECT_EQ(JudgeEffect(rule, Counts(0, 0, 3, 3)).verdict, Verdict::kNoRuns);
  EXPECT_EQ(JudgeEffect(rule, Counts(0, 0, 3, 3, 2)).verdict, Verdict::kPending);
  rule.planned = 5;
  const EffectVerdict v = JudgeEffect(rule, Counts(0, 3, 3, 3));
  EXPECT_EQ(v.verdict, Verdict::kInconclusive);
  EXPECT_TRUE(v.pending);  // 3 of 5 ended
  // The counts are every ended run of each arm, paired or not: 5 of 5 against 0 of 4.
  EXPECT_NEAR(JudgeEffect(rule, Counts(0, 4, 5, 5)).p_one_sided, 1.0 / 126, 1e-12);
}

// P(X_b = k) = C(K, k) C(N - K, n_b - k) / C(N, n_b), summed by hand.
TEST(Fisher, ClosedForms) {
  FisherExact f = FisherExactTest(0, 5, 5, 5);
  EXPECT_NEAR(f.p_more, 1.0 / 252, 1e-15);
  EXPECT_NEAR(f.p_less, 1.0, 1e-14);
  f = FisherExactTest(0, 3, 3, 3);
  EXPECT_NEAR(f.p_more, 1.0 / 20, 1e-15);
  f = FisherExactTest(1, 4, 3, 4);  // K = 4 of N = 8, n_b = 4
  EXPECT_NEAR(f.p_more, (4.0 * 4 + 1) / 70, 1e-14);
  EXPECT_NEAR(f.p_less, 69.0 / 70, 1e-14);
  f = FisherExactTest(2, 6, 4, 5);  // K = 6 of N = 11, n_b = 5
  EXPECT_NEAR(f.p_more, (15.0 * 5 + 6) / 462, 1e-14);
  EXPECT_NEAR(f.p_less, 456.0 / 462, 1e-14);
  f = FisherExactTest(3, 10, 0, 10);  // K = 3 of 20: P(X_b <= 0) = C(10, 3) / C(20, 3)
  EXPECT_NEAR(f.p_less, 120.0 / 1140, 1e-14);
  EXPECT_NEAR(f.p_more, 1.0, 1e-14);
  // An empty arm: b's count is fixed by the margins.
  f = FisherExactTest(0, 0, 2, 3);
  EXPECT_NEAR(f.p_more, 1.0, 1e-14);
  EXPECT_NEAR(f.p_less, 1.0, 1e-14);
  EXPECT_THROW(FisherExactTest(4, 3, 0, 3), Error);
  EXPECT_THROW(FisherExactTest(0, 3, -1, 3), Error);
}

TEST(Fisher, Invariants) {
  for (int na = 0; na <= 7; ++na) {
    for (int nb = 0; nb <= 7; ++nb) {
      for (int xa = 0; xa <= na; ++xa) {
        for (int xb = 0; xb <= nb; ++xb) {
          const FisherExact f = FisherExactTest(xa, na, xb, nb);
          const FisherExact g = FisherExactTest(xb, nb, xa, na);  // arms swapped
          EXPECT_NEAR(f.p_more, g.p_less, 1e-12);
          EXPECT_NEAR(f.p_less, g.p_more, 1e-12);
          // p_more + p_less = 1 + P(X_b = xb) >= 1; each in (0, 1].
          EXPECT_GE(f.p_more + f.p_less, 1 - 1e-12);
          EXPECT_GT(f.p_more, 0);
          EXPECT_LE(f.p_more, 1);
          // One more event in b is never less extreme.
          if (xb < nb) {
            EXPECT_LE(FisherExactTest(xa, na, xb + 1, nb).p_more, f.p_more + 1e-12);
          }
        }
      }
    }
  }
}

TEST(Holm, StepDown) {
  // Sorted 0.005 < 0.05/4, 0.01 < 0.05/3, 0.03 >= 0.05/2: stop.
  EXPECT_EQ(HolmRejections({0.01, 0.04, 0.03, 0.005}, 0.05),
            (std::vector<bool>{true, false, false, true}));
  // Untested (NaN) is not in the family: one test at the full alpha.
  EXPECT_EQ(HolmRejections({0.02, kNaN}, 0.025), (std::vector<bool>{true, false}));
  EXPECT_EQ(HolmRejections({0.02, 0.5}, 0.025), (std::vector<bool>{false, false}));
  // Step-down stops at the first it keeps, even if a later one would pass its own bound.
  EXPECT_EQ(HolmRejections({0.03, 0.03}, 0.05), (std::vector<bool>{false, false}));
  EXPECT_EQ(HolmRejections({}, 0.05), std::vector<bool>{});
}

TEST(Multiplicity, CountsAndHolm) {
  std::vector<EffectVerdict> v(5);
  v[0].verdict = Verdict::kAgrees;
  v[0].p_one_sided = 0.001;
  v[1].verdict = Verdict::kAgrees;
  v[1].p_one_sided = 0.02;  // agrees alone, not after Holm (0.02 >= 0.025 / 2)
  v[2].verdict = Verdict::kInconclusive;
  v[2].p_one_sided = kNaN;  // tested, no spread: p = 1 in the family
  v[3].verdict = Verdict::kPending;
  v[4].verdict = Verdict::kAgrees;
  v[4].p_one_sided = 0.001;
  const Multiplicity m = SummarizeMultiplicity(v, {true, true, true, true, false}, 0.025);
  EXPECT_EQ(m.confirmatory, 3);
  EXPECT_EQ(m.exploratory, 1);
  EXPECT_EQ(m.untested, 1);
  EXPECT_EQ(m.agrees, 2);
  EXPECT_EQ(m.holm_agrees, 1);  // 0.001 < 0.025/3; 0.02 >= 0.025/2
  ASSERT_EQ(m.holm.size(), 5u);
  EXPECT_EQ(m.holm[0], std::optional<bool>(true));
  EXPECT_EQ(m.holm[1], std::optional<bool>(false));
  EXPECT_EQ(m.holm[2], std::optional<bool>(false));
  EXPECT_FALSE(m.holm[3].has_value());
  EXPECT_FALSE(m.holm[4].has_value());  // exploratory
}

TEST(Verdict, SignedNumbers) {
  EXPECT_EQ(SignedNumber(0.12), "+0.12");
  EXPECT_EQ(SignedNumber(-0.034), "-0.034");
  EXPECT_EQ(SignedNumber(1.96), "+1.96");
  EXPECT_EQ(SignedNumber(0.0), "0");
  EXPECT_EQ(SignedNumber(kNaN), "n/a");
}

}  // namespace
}  // namespace mavg
