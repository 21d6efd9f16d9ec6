// The statistics of `mavg report compare|bootstrap`: t quantiles against printed tables and
// closed forms, t intervals checked by hand, exact rank tests against enumeration, equivalence
// on both sides of the margin, collapsed runs, the interaction, the paired bootstrap.
#include "engine/report/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>

#include "engine/core/error.h"
#include "engine/core/rng.h"
#include "engine/report/stats_report.h"

namespace mavg {
namespace {

constexpr double kPi = std::numbers::pi;

Arm Values(std::initializer_list<double> v) {
  Arm arm;
  for (double x : v) arm.push_back({x, false});
  return arm;
}

ArmValue Collapsed() { return {0, true}; }

// The t(2) distribution in closed form: F(t) = 1/2 + t / (2 sqrt(2 + t^2)).
double Cdf2(double t) { return 0.5 + t / (2 * std::sqrt(2 + t * t)); }
double Quantile2(double p) { return (2 * p - 1) / std::sqrt(2 * p * (1 - p)); }

TEST(Stats, IncompleteBetaClosedForms) {
  for (double x : {0.0, 0.1, 0.37, 0.5, 0.9, 1.0}) {
    EXPECT_NEAR(RegularizedIncompleteBeta(1, 1, x), x, 1e-13);
    EXPECT_NEAR(RegularizedIncompleteBeta(3, 1, x), x * x * x, 1e-13);
    EXPECT_NEAR(RegularizedIncompleteBeta(1, 2.5, x), 1 - std::pow(1 - x, 2.5), 1e-13);
  }
  EXPECT_NEAR(RegularizedIncompleteBeta(7.5, 7.5, 0.5), 0.5, 1e-13);
  EXPECT_THROW(RegularizedIncompleteBeta(0, 1, 0.5), Error);
}

// Printed tables (two-sided 5 % and one-sided 5 %, 1 %, 10 %), to their 4 decimals.
TEST(Stats, TQuantilesMatchPrintedTables) {
  struct Row {
    double p, df, t;
  };
  for (const Row& r : {Row{0.975, 2, 4.3027}, Row{0.975, 4, 2.7764}, Row{0.95, 10, 1.8125},
                       Row{0.975, 30, 2.0423}, Row{0.975, 1, 12.7062}, Row{0.995, 5, 4.0321},
                       Row{0.9, 20, 1.3253}, Row{0.975, 120, 1.9799}, Row{0.95, 3, 2.3534}}) {
    EXPECT_NEAR(StudentTQuantile(r.p, r.df), r.t, 5e-5) << "p " << r.p << " df " << r.df;
    EXPECT_NEAR(StudentTQuantile(1 - r.p, r.df), -r.t, 5e-5) << "p " << r.p << " df " << r.df;
  }
}

TEST(Stats, TQuantilesMatchClosedForms) {
  for (double p : {0.001, 0.05, 0.2, 0.5, 0.6, 0.8, 0.975, 0.9999}) {
    const double cauchy = std::tan(kPi * (p - 0.5));  // df = 1
    EXPECT_NEAR(StudentTQuantile(p, 1), cauchy, 1e-9 * std::max(1.0, std::fabs(cauchy))) << p;
    EXPECT_NEAR(StudentTQuantile(p, 2), Quantile2(p), 1e-9 * std::max(1.0, std::fabs(Quantile2(p))))
        << p;
  }
  for (double t : {-30.0, -2.0, -0.3, 0.0, 0.01, 1.0, 4.0, 100.0}) {
    EXPECT_NEAR(StudentTCdf(t, 1), 0.5 + std::atan(t) / kPi, 1e-12) << t;
    EXPECT_NEAR(StudentTCdf(t, 2), Cdf2(t), 1e-12) << t;
  }
  // Many degrees of freedom: the normal's 1.95996.
  EXPECT_NEAR(StudentTQuantile(0.975, 1e7), 1.959964, 1e-5);
}

// The t density integrated (Simpson) checks the CDF where no closed form exists: Welch's
// fractional df.
TEST(Stats, TCdfMatchesTheIntegratedDensity) {
  for (double df : {2.5, 5.15789, 13.7}) {
    const double c =
        std::exp(std::lgamma((df + 1) / 2) - std::lgamma(df / 2)) / std::sqrt(df * kPi);
    auto pdf = [&](double x) { return c * std::pow(1 + x * x / df, -(df + 1) / 2); };
    for (double t : {0.5, 1.7, 3.9}) {
      const int n = 2000;
      const double h = t / n;
      double sum = pdf(0) + pdf(t);
      for (int i = 1; i < n; ++i) sum += (i % 2 == 1 ? 4 : 2) * pdf(i * h);
      EXPECT_NEAR(StudentTCdf(t, df), 0.5 + sum * h / 3, 1e-9) << "df " << df << " t " << t;
    }
  }
}

TEST(Stats, TCdfSymmetricMonotoneAndInvertedByTheQuantile) {
  for (double df : {1.0, 2.0, 3.3, 7.0, 40.0}) {
    EXPECT_DOUBLE_EQ(StudentTCdf(0, df), 0.5);
    double last = 0;
    for (double t = -20; t <= 20; t += 0.25) {
      const double f = StudentTCdf(t, df);
      EXPECT_NEAR(f + StudentTCdf(-t, df), 1.0, 1e-14) << "df " << df << " t " << t;
      if (std::fabs(t) < 5) {
        EXPECT_GT(f, last) << "df " << df << " t " << t;
      } else {
        EXPECT_GE(f, last) << "df " << df << " t " << t;  // 1 - f may be below a double's step
      }
      last = f;
      if (std::min(f, 1 - f) > 1e-6) {
        EXPECT_NEAR(StudentTQuantile(f, df), t, 1e-8 * std::max(1.0, std::fabs(t)));
      }
    }
  }
  // Fewer degrees of freedom, heavier tails.
  EXPECT_GT(StudentTQuantile(0.975, 2.5), StudentTQuantile(0.975, 3));
  EXPECT_LT(StudentTQuantile(0.975, 2.5), StudentTQuantile(0.975, 2));
  EXPECT_THROW(StudentTQuantile(1.0, 3), Error);
  EXPECT_THROW(StudentTCdf(1.0, 0), Error);
}

// a = 7.0, 6.9, 7.2 and b = 7.5, 7.4, 7.6 by seed: d = 0.5, 0.5, 0.4, mean 7/15, sd sqrt(1/300),
// se 1/30, t = 14 on 2 df.
TEST(Stats, PairedDifferenceByHand) {
  CompareOptions o;
  o.paired = true;
  const Comparison c = Compare(Values({7.0, 6.9, 7.2}), Values({7.5, 7.4, 7.6}), o);
  const double se = 1.0 / 30, t = 14;
  EXPECT_NEAR(c.diff.estimate, 7.0 / 15, 1e-12);
  EXPECT_NEAR(c.diff.se, se, 1e-12);
  EXPECT_EQ(c.diff.df, 2);
  EXPECT_NEAR(c.diff.t, t, 1e-9);
  EXPECT_NEAR(c.diff.p, 1 - t / std::sqrt(2 + t * t), 1e-12);  // 2 (1 - F2(14))
  EXPECT_NEAR(c.diff.ci_low, 7.0 / 15 - Quantile2(0.975) * se, 1e-10);
  EXPECT_NEAR(c.diff.ci_high, 7.0 / 15 + Quantile2(0.975) * se, 1e-10);
  EXPECT_NEAR(c.diff.mdd, (Quantile2(0.975) + Quantile2(0.8)) * se, 1e-10);
  EXPECT_EQ(c.diff.n, 3);
  EXPECT_EQ(c.diff.left_out, 0);
  EXPECT_NEAR(c.a.mean, (7.0 + 6.9 + 7.2) / 3, 1e-12);
  EXPECT_NEAR(c.b.sd, 0.1, 1e-12);
  // Unpaired, the same numbers carry the seeds' spread: a wider interval.
  o.paired = false;
  const Comparison u = Compare(Values({7.0, 6.9, 7.2}), Values({7.5, 7.4, 7.6}), o);
  EXPECT_NEAR(u.diff.estimate, c.diff.estimate, 1e-12);
  EXPECT_GT(u.diff.ci_high - u.diff.ci_low, c.diff.ci_high - c.diff.ci_low);
  // A narrower level, a narrower interval; a larger power, a larger detectable difference.
  o.paired = true;
  o.level = 0.9;
  o.power = 0.9;
  const Comparison n = Compare(Values({7.0, 6.9, 7.2}), Values({7.5, 7.4, 7.6}), o);
  EXPECT_NEAR(n.diff.ci_high, 7.0 / 15 + Quantile2(0.95) * se, 1e-10);
  EXPECT_NEAR(n.diff.mdd, (Quantile2(0.95) + Quantile2(0.9)) * se, 1e-10);
}

// a = 1, 2, 3 (var 1) and b = 4, 6, 8, 10, 12 (var 10): se^2 = 1/3 + 2, Welch df =
// (7/3)^2 / ((1/3)^2 / 2 + 2^2 / 4) = 98/19.
TEST(Stats, WelchDifferenceByHand) {
  const Comparison c = Compare(Values({1, 2, 3}), Values({4, 6, 8, 10, 12}), {});
  const double se = std::sqrt(7.0 / 3), df = 98.0 / 19;
  EXPECT_NEAR(c.diff.estimate, 6, 1e-12);
  EXPECT_NEAR(c.diff.se, se, 1e-12);
  EXPECT_NEAR(c.diff.df, df, 1e-12);
  EXPECT_NEAR(c.diff.t, 6 / se, 1e-12);
  EXPECT_NEAR(c.diff.p, 2 * (1 - StudentTCdf(6 / se, df)), 1e-12);
  EXPECT_NEAR(c.diff.ci_high - c.diff.estimate, StudentTQuantile(0.975, df) * se, 1e-10);
  EXPECT_GT(c.diff.p, 0.005);  // t = 3.93 on 5.2 df: p about 0.01
  EXPECT_LT(c.diff.p, 0.02);
  EXPECT_EQ(c.diff.n, 8);
  // Swapping the arms negates the difference and keeps everything else.
  const Comparison s = Compare(Values({4, 6, 8, 10, 12}), Values({1, 2, 3}), {});
  EXPECT_NEAR(s.diff.estimate, -6, 1e-12);
  EXPECT_NEAR(s.diff.p, c.diff.p, 1e-15);
  EXPECT_NEAR(s.diff.ci_low, -c.diff.ci_high, 1e-12);
}

TEST(Stats, TooFewValuesGiveNaNNotAnAnswer) {
  const Comparison c = Compare(Values({1}), Values({2, 3}), {});
  EXPECT_NEAR(c.diff.estimate, 1.5, 1e-12);
  EXPECT_TRUE(std::isnan(c.diff.se));
  EXPECT_TRUE(std::isnan(c.diff.p));
  EXPECT_FALSE(c.equivalence.has_value());
  // Identical replicates (no spread): no t-based answer either, and no equivalence; the rank
  // test still answers.
  CompareOptions o;
  o.paired = true;
  o.margin = 1;
  const Comparison z = Compare(Values({1, 2}), Values({1.5, 2.5}), o);
  EXPECT_EQ(z.diff.estimate, 0.5);
  EXPECT_EQ(z.diff.se, 0);
  EXPECT_EQ(z.diff.df, 1);
  EXPECT_TRUE(std::isnan(z.diff.p));
  EXPECT_TRUE(std::isnan(z.diff.ci_low));
  EXPECT_TRUE(std::isnan(z.diff.mdd));
  EXPECT_FALSE(z.equivalence.has_value());
  EXPECT_NEAR(z.rank.p, 0.5, 1e-15);
  // Differences equal on paper but not in binary (7.52 - 7.41 and 6.11 - 6.00: 0.11 either
  // way, apart in the last bits) are no spread either, not an se of 1e-16 that would make
  // the difference "significant"; in the 2x2 interaction too.
  const Comparison r = Compare(Values({7.41, 6.00}), Values({7.52, 6.11}), o);
  ASSERT_NE(7.52 - 7.41, 6.11 - 6.00);
  EXPECT_EQ(r.diff.se, 0);
  EXPECT_TRUE(std::isnan(r.diff.ci_low));
  EXPECT_TRUE(std::isnan(r.diff.mdd));
  const Interaction i = CompareInteraction(Values({7.41, 6.00}), Values({7.52, 6.11}),
                                           Values({1, 2}), Values({1.5, 2.5}), o);
  EXPECT_EQ(i.diff.se, 0);
  EXPECT_TRUE(std::isnan(i.diff.p));
  o.paired = true;
  EXPECT_THROW(Compare(Values({1, 2}), Values({1, 2, 3}), o), Error);
  EXPECT_THROW(Compare({}, Values({1}), {}), Error);
  o.level = 1;
  EXPECT_THROW(Compare(Values({1, 2}), Values({1, 2}), o), Error);
}

// The paired example (estimate 7/15, se 1/30, 2 df): the 90 % interval is 7/15 +- 2.92/30 =
// [0.369, 0.564], inside +-0.7 but not inside +-0.5.
TEST(Stats, EquivalenceOnBothSidesOfTheMargin) {
  CompareOptions o;
  o.paired = true;
  const Arm a = Values({7.0, 6.9, 7.2}), b = Values({7.5, 7.4, 7.6});
  o.margin = 0.7;
  const Comparison in = Compare(a, b, o);
  ASSERT_TRUE(in.equivalence.has_value());
  const Equivalence& e = *in.equivalence;
  EXPECT_TRUE(e.equivalent);
  EXPECT_NEAR(e.p_upper, 1 - Cdf2(7), 1e-12);   // t = (0.7 - 7/15) / (1/30) = 7
  EXPECT_NEAR(e.p_lower, 1 - Cdf2(35), 1e-12);  // t = (0.7 + 7/15) / (1/30) = 35
  EXPECT_DOUBLE_EQ(e.p_tost, e.p_upper);
  EXPECT_NEAR(e.ci_level, 0.9, 1e-12);
  EXPECT_NEAR(e.ci_high, 7.0 / 15 + Quantile2(0.95) / 30, 1e-10);
  EXPECT_LT(e.ci_high, 0.7);
  o.margin = 0.5;
  const Equivalence out = *Compare(a, b, o).equivalence;
  EXPECT_FALSE(out.equivalent);
  EXPECT_GT(out.p_tost, 0.05);
  EXPECT_GT(out.ci_high, 0.5);
  // The mirror image: b below a by the same amount.
  o.margin = 0.7;
  const Equivalence mirror = *Compare(b, a, o).equivalence;
  EXPECT_TRUE(mirror.equivalent);
  EXPECT_NEAR(mirror.p_lower, e.p_upper, 1e-15);
  o.margin = 0.5;
  EXPECT_FALSE(Compare(b, a, o).equivalence->equivalent);
  // Equivalent exactly when the 1 - 2 alpha interval lies inside the margin.
  for (double m = 0.3; m < 1.0; m += 0.01) {
    o.margin = m;
    const Equivalence q = *Compare(a, b, o).equivalence;
    EXPECT_EQ(q.equivalent, q.ci_low > -m && q.ci_high < m) << m;
  }
  o.margin = -1;
  EXPECT_THROW(Compare(a, b, o), Error);
}

// The seeds a design needs: for a paired effect of one standard deviation (alpha 0.05, power
// 0.8) the t-based formula gives 10 seeds, as the usual sample-size tables for a one-sample t
// test with effect size 1; half a standard deviation needs 34. The count is the fewest that
// reach the target. The smallest margin, with t(2) in closed form.
TEST(Stats, SeedsNeededAndSmallestMargin) {
  CompareOptions o;
  o.paired = true;
  const Arm a = Values({0, 0, 0}), b = Values({0, 1, 2});  // differences: mean 1, sd 1
  const auto reach = [&](int n, double q2) {
    return (StudentTQuantile(0.975, n - 1) + StudentTQuantile(q2, n - 1)) / std::sqrt(n);
  };
  EXPECT_EQ(Compare(a, b, o).diff.seeds_needed, 0);  // nothing to detect
  o.detect = 1;
  EXPECT_EQ(Compare(a, b, o).diff.seeds_needed, 10);
  EXPECT_LE(reach(10, 0.8), 1);
  EXPECT_GT(reach(9, 0.8), 1);
  o.detect = -0.5;  // either sign
  EXPECT_EQ(Compare(a, b, o).diff.seeds_needed, 34);
  o.detect = 0.01;
  EXPECT_EQ(Compare(a, b, o).diff.seeds_needed, kMoreSeeds);
  o.detect = 1;
  EXPECT_EQ(Compare(a, Values({1, 1, 1}), o).diff.seeds_needed, 0);  // no spread to plan from
  o.paired = false;
  EXPECT_THROW(Compare(a, b, o), Error);  // planned for paired designs only
  o.paired = true;
  o.margin = 0.5;
  const Equivalence e = *Compare(a, b, o).equivalence;
  const double se = 1 / std::sqrt(3.0);
  EXPECT_NEAR(e.smallest_margin, (Quantile2(0.95) + Quantile2(0.9)) * se, 1e-10);
  EXPECT_NEAR(e.smallest_margin_upper, (Quantile2(0.95) + Quantile2(0.8)) * se, 1e-10);
  EXPECT_GT(e.smallest_margin, e.smallest_margin_upper);
  const auto margin_reach = [](int n, double q2) {
    return (StudentTQuantile(0.95, n - 1) + StudentTQuantile(q2, n - 1)) / std::sqrt(n);
  };
  EXPECT_LE(margin_reach(e.seeds_needed, 0.9), 0.5);
  EXPECT_GT(margin_reach(e.seeds_needed - 1, 0.9), 0.5);
  EXPECT_LE(margin_reach(e.seeds_needed_upper, 0.8), 0.5);
  EXPECT_GT(margin_reach(e.seeds_needed_upper - 1, 0.8), 0.5);
  EXPECT_LT(e.seeds_needed_upper, e.seeds_needed);
  o.detect = std::numeric_limits<double>::infinity();
  EXPECT_THROW(Compare(a, b, o), Error);
  o.detect = 0;
  EXPECT_THROW(Compare(a, b, o), Error);
  o.detect.reset();
  o.power = 0.3;  // below 1/2 a "smallest detectable difference" can be negative
  EXPECT_THROW(Compare(a, b, o), Error);
}

// Brute force: every sign pattern (Wilcoxon) or every split (Mann-Whitney) of the pooled values,
// mid-ranks computed directly, p = P(|S - E| >= |s - E|).
double MidRank(const std::vector<double>& x, size_t i) {
  double less = 0, same = 0;
  for (double y : x) {
    less += y < x[i];
    same += y == x[i];
  }
  return less + (same + 1) / 2;
}

double BruteRankSumP(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  const size_t n = all.size();
  std::vector<double> rank(n);
  for (size_t i = 0; i < n; ++i) rank[i] = MidRank(all, i);
  double observed = 0;
  for (size_t i = a.size(); i < n; ++i) observed += rank[i];
  const double mean = b.size() * (n + 1) / 2.0;
  int hits = 0, total = 0;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (static_cast<size_t>(__builtin_popcount(mask)) != b.size()) continue;
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += (mask >> i & 1) ? rank[i] : 0;
    ++total;
    hits += std::fabs(s - mean) >= std::fabs(observed - mean) - 1e-9;
  }
  return static_cast<double>(hits) / total;
}

double BruteSignedRankP(const std::vector<double>& d) {
  std::vector<double> mag;
  std::vector<bool> pos;
  for (double x : d) {
    if (x != 0) {
      mag.push_back(std::fabs(x));
      pos.push_back(x > 0);
    }
  }
  const size_t n = mag.size();
  std::vector<double> rank(n);
  double total = 0, observed = 0;
  for (size_t i = 0; i < n; ++i) {
    rank[i] = MidRank(mag, i);
    total += rank[i];
    observed += pos[i] ? rank[i] : 0;
  }
  int hits = 0;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += (mask >> i & 1) ? rank[i] : 0;
    hits += std::fabs(s - total / 2) >= std::fabs(observed - total / 2) - 1e-9;
  }
  return static_cast<double>(hits) / (1u << n);
}

TEST(Stats, RankTestsSmallCasesByHand) {
  // 3 against 3, b above every a: 2 of the C(6,3) = 20 splits are as extreme.
  const RankTest mw = RankSumTest(Values({1, 2, 3}), Values({4, 5, 6}), false);
  EXPECT_EQ(mw.method, RankMethod::kMannWhitneyU);
  EXPECT_NEAR(mw.p, 0.1, 1e-15);
  EXPECT_NEAR(mw.min_p, 0.1, 1e-15);  // no split of 3 against 3 goes below it
  EXPECT_EQ(mw.statistic, 9);         // every (a, b) pair has b > a
  EXPECT_EQ(RankSumTest(Values({4, 5, 6}), Values({1, 2, 3}), false).statistic, 0);
  // Interleaved 1 4 | 2 3: R_b = 5 = E, p = 1.
  EXPECT_NEAR(RankSumTest(Values({1, 4}), Values({2, 3}), false).p, 1.0, 1e-15);
  // 5 seeds, b above a in every one: 2 of the 2^5 sign patterns are as extreme.
  CompareOptions o;
  o.paired = true;
  const RankTest w = SignedRankTest(Values({1, 2, 3, 4, 5}), Values({1.5, 2.7, 3.1, 5, 9}), false);
  EXPECT_EQ(w.method, RankMethod::kWilcoxonSignedRank);
  EXPECT_NEAR(w.p, 0.0625, 1e-15);
  EXPECT_NEAR(w.min_p, 0.0625, 1e-15);  // 5 seeds cannot reach p < 0.05
  EXPECT_EQ(w.statistic, 15);
  EXPECT_EQ(w.n, 5);
  // 6 seeds can: 2 / 2^6; a seed the other way raises p, not the floor.
  const RankTest six =
      SignedRankTest(Values({1, 2, 3, 4, 5, 6}), Values({0.9, 2.7, 3.5, 5, 9, 8}), false);
  EXPECT_NEAR(six.min_p, 2.0 / 64, 1e-15);
  EXPECT_GT(six.p, six.min_p);
  // One seed the other way, the smallest |d|: W+ = 14, |14 - 7.5| >= 6.5 in 4 of 32 patterns.
  EXPECT_NEAR(SignedRankTest(Values({1, 2, 3, 4, 5}), Values({0.9, 2.7, 3.5, 5, 9}), false).p,
              0.125, 1e-15);
  // A seed with b == a is left out.
  const RankTest z = SignedRankTest(Values({1, 2, 3}), Values({1, 3, 4}), false);
  EXPECT_EQ(z.zeros, 1);
  EXPECT_EQ(z.n, 2);
  EXPECT_NEAR(z.p, 0.5, 1e-15);
  EXPECT_NEAR(z.min_p, 0.5, 1e-15);
}

// A collapsed run ranks beyond every finite difference, not tied with the largest: b - a =
// +1, +2, -3, +inf take ranks 1, 2, 3, 4, so W+ = 7 and, of the 16 sign patterns, 10 lie at
// least 2 from the mean 5 (W+ <= 3 or >= 7): p = 0.625.
TEST(Stats, SignedRankPutsACollapseBeyondEveryValue) {
  Arm b = Values({11, 12, 7});
  b.push_back(Collapsed());
  const RankTest r = SignedRankTest(Values({10, 10, 10, 10}), b, false);
  EXPECT_EQ(r.n, 4);
  EXPECT_EQ(r.statistic, 7);
  EXPECT_NEAR(r.p, 0.625, 1e-15);
  // Two collapses tie with each other (ranks 3.5 and 3.5 of 1, 2, 3.5, 3.5), still beyond 2.
  Arm c = Values({11, 12});
  c.push_back(Collapsed());
  c.push_back(Collapsed());
  const RankTest t = SignedRankTest(Values({10, 10, 10, 10}), c, false);
  EXPECT_EQ(t.statistic, 10);
}

TEST(Stats, RankTestsMatchBruteForceWithTies) {
  Rng rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t na = 1 + rng.Below(6), nb = 1 + rng.Below(6);
    std::vector<double> a, b;
    Arm arm_a, arm_b;
    for (size_t i = 0; i < na; ++i) a.push_back(static_cast<double>(rng.Below(5)));  // ties
    for (size_t i = 0; i < nb; ++i) b.push_back(static_cast<double>(rng.Below(5)));
    for (double x : a) arm_a.push_back({x, false});
    for (double x : b) arm_b.push_back({x, false});
    const RankTest mw = RankSumTest(arm_a, arm_b, false);
    EXPECT_NEAR(mw.p, BruteRankSumP(a, b), 1e-12) << trial;
    // The floor: the same values with every b above every a, or every b below.
    std::vector<double> pooled = a;
    pooled.insert(pooled.end(), b.begin(), b.end());
    std::sort(pooled.begin(), pooled.end());
    const std::vector<double> low(pooled.begin(), pooled.begin() + na),
        high(pooled.begin() + na, pooled.end()), low_b(pooled.begin(), pooled.begin() + nb),
        high_a(pooled.begin() + nb, pooled.end());
    EXPECT_NEAR(mw.min_p, std::min(BruteRankSumP(low, high), BruteRankSumP(high_a, low_b)), 1e-12)
        << trial;
    EXPECT_LE(mw.min_p, mw.p + 1e-15) << trial;
    const size_t n = std::min(na, nb);
    std::vector<double> d;
    for (size_t i = 0; i < n; ++i) d.push_back(b[i] - a[i]);
    arm_a.resize(n);
    arm_b.resize(n);
    const RankTest w = SignedRankTest(arm_a, arm_b, false);
    EXPECT_NEAR(w.p, BruteSignedRankP(d), 1e-12) << trial;
    std::vector<double> same_side;  // every seed's |d| with b above a
    for (double x : d) same_side.push_back(std::fabs(x));
    EXPECT_NEAR(w.min_p, BruteSignedRankP(same_side), 1e-12) << trial;
  }
}

// Table 2 at 32 workers as the issue describes it: random init 11.4 / 31.5 / collapsed (92 %),
// RBM 9.2 / 9.3 / 9.4. Dropping the collapse from a mean hides a complete separation; the rank
// test keeps it.
TEST(Stats, CollapsedRunsCountAsTheWorstOutcome) {
  Arm random = Values({11.4, 31.5});
  random.push_back(Collapsed());
  const Arm rbm = Values({9.2, 9.3, 9.4});
  const Comparison c = Compare(rbm, random, {});
  EXPECT_NEAR(c.rank.p, 0.1, 1e-15);  // as 3 against 3 completely separated
  EXPECT_EQ(c.rank.statistic, 9);
  EXPECT_EQ(c.b.n, 2);
  EXPECT_EQ(c.b.collapsed, 1);
  EXPECT_EQ(c.diff.left_out, 1);
  EXPECT_EQ(c.diff.n, 5);
  EXPECT_NEAR(c.diff.estimate, (11.4 + 31.5) / 2 - 9.3, 1e-12);
  // The collapse ranks above every value, even one larger than the others: b = {2, x} against
  // a = {1, 100} gives R_b = 2 + 4 as if b were {2, 101}.
  Arm b = Values({2});
  b.push_back(Collapsed());
  EXPECT_NEAR(RankSumTest(Values({1, 100}), b, false).p,
              RankSumTest(Values({1, 100}), Values({2, 101}), false).p, 1e-15);
  // Higher is better (accuracy): a collapse is the lowest.
  Arm acc = Values({90, 91});
  acc.push_back(Collapsed());
  EXPECT_NEAR(RankSumTest(Values({92, 93, 94}), acc, true).p, 0.1, 1e-15);
  EXPECT_EQ(RankSumTest(Values({92, 93, 94}), acc, true).statistic, 0);
  // As an error rate x ranks on top: b's ranks 1, 2, 6, a sum of 9 against E = 10.5; 14 of the
  // 20 splits lie as far from E.
  EXPECT_NEAR(RankSumTest(Values({92, 93, 94}), acc, false).p, 0.7, 1e-15);

  // Paired: a seed with a collapsed member leaves the t part and stays in the rank test.
  CompareOptions o;
  o.paired = true;
  Arm pb = Values({7.5, 7.6});
  pb.push_back(Collapsed());
  pb.push_back({7.9, false});
  pb.push_back({8.0, false});
  const Comparison p = Compare(Values({7.0, 7.1, 7.2, 7.3, 7.4}), pb, o);
  EXPECT_EQ(p.diff.n, 4);
  EXPECT_EQ(p.diff.left_out, 1);
  EXPECT_NEAR(p.diff.estimate, (0.5 + 0.5 + 0.6 + 0.6) / 4, 1e-12);
  EXPECT_NEAR(p.rank.p, 0.0625, 1e-15);  // all five seeds b worse
  EXPECT_EQ(p.rank.n, 5);
  // Both collapsed: a tie, left out of the rank test as a zero difference.
  Arm pa = Values({7.0, 7.1});
  pa.push_back(Collapsed());
  pa.push_back({7.3, false});
  pa.push_back({7.4, false});
  const Comparison both = Compare(pa, pb, o);
  EXPECT_EQ(both.rank.zeros, 1);
  EXPECT_EQ(both.rank.n, 4);
  EXPECT_NEAR(both.rank.p, 0.125, 1e-15);
}

// Paired: double differences ((b2 - a2) - (b1 - a1)) per seed 1.0, 1.2, 0.8: mean 1, sd 0.2,
// se 0.2 / sqrt(3), 2 df.
TEST(Stats, InteractionPairedByHand) {
  CompareOptions o;
  o.paired = true;
  const Arm a1 = Values({10, 11, 12}), b1 = Values({10.5, 11.4, 12.6});
  const Arm a2 = Values({10, 11, 12}), b2 = Values({11.5, 12.6, 13.4});
  const Interaction r = CompareInteraction(a1, b1, a2, b2, o);
  const double se = 0.2 / std::sqrt(3.0), t = 1 / se;
  EXPECT_NEAR(r.diff.estimate, 1, 1e-12);
  EXPECT_NEAR(r.diff.se, se, 1e-12);
  EXPECT_EQ(r.diff.df, 2);
  EXPECT_NEAR(r.diff.p, 1 - t / std::sqrt(2 + t * t), 1e-12);
  EXPECT_NEAR(r.diff.ci_low, 1 - Quantile2(0.975) * se, 1e-10);
  EXPECT_NEAR(r.first.diff.estimate, 0.5, 1e-12);
  EXPECT_NEAR(r.second.diff.estimate, 1.5, 1e-12);
  // A seed with a collapsed member in any arm is left out.
  Arm c2 = b2;
  c2.push_back(Collapsed());
  Arm x1 = a1, y1 = b1, x2 = a2;
  x1.push_back({13, false});
  y1.push_back({13.1, false});
  x2.push_back({13, false});
  const Interaction l = CompareInteraction(x1, y1, x2, c2, o);
  EXPECT_EQ(l.diff.n, 3);
  EXPECT_EQ(l.diff.left_out, 1);
  EXPECT_NEAR(l.diff.estimate, 1, 1e-12);
  // ... but the rank test keeps it: its double difference is +inf (b2 collapsed), the largest
  // rank, and all four seeds point up: W+ = 10, p = 2 / 2^4.
  EXPECT_EQ(l.rank.n, 4);
  EXPECT_EQ(l.rank.statistic, 10);
  EXPECT_NEAR(l.rank.p, 0.125, 1e-15);
  EXPECT_THROW(CompareInteraction(a1, b1, a2, Values({1, 2}), o), Error);
}

// Table 2 at 32 workers as the issue describes it: random init 11.4 / 31.5 / collapsed, RBM
// 9.2 / 9.3 / 9.4, against 1 worker where RBM wins by 0.9. Every seed's interaction points the
// same way (RBM helps more at 32), the collapsed seed most: the t part sees 2 seeds, the rank
// test 3, with W+ = 0 and p at its floor 2 / 2^3.
TEST(Stats, InteractionRankTestCountsCollapses) {
  CompareOptions o;
  o.paired = true;
  const Arm a1 = Values({15.6, 15.7, 15.5}), b1 = Values({14.7, 14.8, 14.6});
  Arm a2 = Values({11.4, 31.5});
  a2.push_back(Collapsed());
  const Arm b2 = Values({9.2, 9.3, 9.4});
  const Interaction r = CompareInteraction(a1, b1, a2, b2, o);
  EXPECT_EQ(r.diff.n, 2);
  EXPECT_EQ(r.rank.method, RankMethod::kWilcoxonSignedRank);
  EXPECT_EQ(r.rank.n, 3);
  EXPECT_EQ(r.rank.statistic, 0);
  EXPECT_NEAR(r.rank.p, 0.25, 1e-15);
  EXPECT_NEAR(r.rank.min_p, 0.25, 1e-15);
  // The same seeds as a paired comparison of the double differences by hand: -1.3, -21.3 and a
  // collapse on a's side.
  Arm zero = Values({0, 0});
  zero.push_back(Collapsed());
  const RankTest by_hand = SignedRankTest(zero, Values({-1.3, -21.3, 0}), false);
  EXPECT_EQ(r.rank.statistic, by_hand.statistic);
  EXPECT_NEAR(r.rank.p, by_hand.p, 1e-15);
  // Both arms collapsed at a setting: b - a = 0 there. b collapsed at both settings: +inf - +inf
  // is no interaction (a zero, left out). a1 collapsed and b2 collapsed: +inf, the top rank.
  Arm c1 = b1, c2 = b2;
  c1[0] = Collapsed();
  c2[0] = Collapsed();
  const Interaction both = CompareInteraction(a1, c1, Values({1, 2, 3}), c2, o);
  EXPECT_EQ(both.rank.zeros, 1);
  EXPECT_EQ(both.rank.n, 2);
  Arm d1 = a1;
  d1[0] = Collapsed();
  const Interaction up = CompareInteraction(d1, b1, Values({1, 2, 3}), c2, o);
  EXPECT_EQ(up.rank.n, 3);
  EXPECT_EQ(up.rank.statistic, 6);  // every seed up
  // The +inf seed up, the others down (-9.8, -9.7): it holds rank 3 alone, not a tie with the
  // largest finite one, so W+ = 3 exactly.
  const Interaction mixed = CompareInteraction(d1, b1, Values({20, 20, 20}), c2, o);
  EXPECT_EQ(mixed.rank.n, 3);
  EXPECT_EQ(mixed.rank.statistic, 3);
  // A double difference zero on paper, (6.11 - 6.00) - (7.52 - 7.41), is 8.9e-16 in binary: a
  // zero (left out), not a seed of rank 1 with an arbitrary sign.
  const Interaction flat =
      CompareInteraction(Values({7.41, 7.0, 7.0}), Values({7.52, 7.5, 7.5}),
                         Values({6.00, 6.0, 6.0}), Values({6.11, 7.0, 7.5}), o);
  EXPECT_EQ(flat.rank.zeros, 1);
  EXPECT_EQ(flat.rank.n, 2);
  EXPECT_NEAR(flat.rank.min_p, 0.5, 1e-15);
  // Higher is better (accuracy): the mirror image, negated values, gives the same p and the
  // complementary W+.
  CompareOptions h = o;
  h.higher_is_better = true;
  const auto neg = [](Arm arm) {
    for (ArmValue& v : arm) v.value = -v.value;
    return arm;
  };
  const Interaction m = CompareInteraction(neg(a1), neg(b1), neg(a2), neg(b2), h);
  EXPECT_NEAR(m.rank.p, r.rank.p, 1e-15);
  EXPECT_EQ(m.rank.statistic, 6 - r.rank.statistic);
  // Unpaired: no rank test.
  EXPECT_EQ(CompareInteraction(a1, b1, a2, b2, {}).rank.n, 0);
}

// Unpaired: means 2, 4, 3, 6 give (6 - 3) - (4 - 2) = 1; variances 1, 4, 4, 1 over 3 each:
// se^2 = 10/3, df = (10/3)^2 / ((1 + 16 + 16 + 1) / 18) = 100/17.
TEST(Stats, InteractionWelchByHand) {
  const Interaction r = CompareInteraction(Values({1, 2, 3}), Values({2, 4, 6}), Values({1, 3, 5}),
                                           Values({5, 6, 7}), {});
  EXPECT_NEAR(r.diff.estimate, 1, 1e-12);
  EXPECT_NEAR(r.diff.se, std::sqrt(10.0 / 3), 1e-12);
  EXPECT_NEAR(r.diff.df, 100.0 / 17, 1e-12);
  EXPECT_NEAR(r.diff.p, 2 * (1 - StudentTCdf(1 / std::sqrt(10.0 / 3), 100.0 / 17)), 1e-12);
  EXPECT_EQ(r.diff.n, 12);
}

std::vector<UtteranceErrors> Utterances(int n, int words, const std::vector<int>& errors) {
  std::vector<UtteranceErrors> u;
  for (int i = 0; i < n; ++i) u.push_back({"utt" + std::to_string(i), errors[i], words});
  return u;
}

TEST(Stats, BootstrapIsDeterministicAndMatchesById) {
  std::vector<int> ea(100), eb(100);
  for (int i = 0; i < 100; ++i) {
    ea[i] = i % 3 == 0;
    eb[i] = i % 4 == 0;
  }
  const auto a = Utterances(100, 10, ea), b = Utterances(100, 10, eb);
  BootstrapOptions o;
  o.samples = 2000;
  o.seed = 5;
  const BootstrapResult r = PairedBootstrap(a, b, o);
  EXPECT_EQ(r.utterances, 100);
  EXPECT_EQ(r.ref_words, 1000);
  EXPECT_NEAR(r.wer_a, 3.4, 1e-12);  // 34 errors
  EXPECT_NEAR(r.wer_b, 2.5, 1e-12);  // 25 errors
  EXPECT_NEAR(r.diff, -0.9, 1e-12);
  const BootstrapResult again = PairedBootstrap(a, b, o);
  EXPECT_EQ(again.ci_low, r.ci_low);
  EXPECT_EQ(again.ci_high, r.ci_high);
  EXPECT_EQ(again.fraction_b_better, r.fraction_b_better);
  // Matched by id, not by position.
  auto shuffled = b;
  std::reverse(shuffled.begin(), shuffled.end());
  EXPECT_EQ(PairedBootstrap(a, shuffled, o).ci_low, r.ci_low);
  o.seed = 6;  // another draw (the interval's ends are multiples of 0.1 and may coincide)
  EXPECT_NE(PairedBootstrap(a, b, o).fraction_b_better, r.fraction_b_better);
  EXPECT_LT(r.ci_low, r.diff);
  EXPECT_GT(r.ci_high, r.diff);
}

TEST(Stats, BootstrapIntervalExcludesOrIncludesZero) {
  BootstrapOptions o;
  o.samples = 1000;
  // b makes one error in every utterance, a none: every resample has b worse.
  const auto clean = Utterances(200, 10, std::vector<int>(200, 0));
  const auto worse = Utterances(200, 10, std::vector<int>(200, 1));
  const BootstrapResult r = PairedBootstrap(clean, worse, o);
  EXPECT_NEAR(r.diff, 10, 1e-12);
  EXPECT_GT(r.ci_low, 0);
  EXPECT_EQ(r.fraction_b_better, 0);
  // The same number of errors on different utterances: no difference to find.
  std::vector<int> ea(200), eb(200);
  for (int i = 0; i < 200; ++i) {
    ea[i] = i < 20;
    eb[i] = i >= 180;
  }
  const BootstrapResult s = PairedBootstrap(Utterances(200, 10, ea), Utterances(200, 10, eb), o);
  EXPECT_EQ(s.diff, 0);
  EXPECT_LT(s.ci_low, 0);
  EXPECT_GT(s.ci_high, 0);
  EXPECT_GT(s.fraction_b_better, 0.3);
  EXPECT_LT(s.fraction_b_better, 0.7);
}

TEST(Stats, BootstrapRefusesDifferentTestSets) {
  auto a = Utterances(3, 5, {0, 1, 2}), b = Utterances(3, 5, {0, 1, 2});
  b[1].id = "other";
  BootstrapOptions o;
  o.name_a = "runA";
  o.name_b = "runB";
  try {
    PairedBootstrap(a, b, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "utterance 'utt1' of runA is not in runB");
  }
  b = Utterances(4, 5, {0, 1, 2, 3});
  try {
    PairedBootstrap(a, b, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "utterance 'utt3' of runB is not in runA");
  }
  b = Utterances(3, 6, {0, 1, 2});
  EXPECT_THROW(PairedBootstrap(a, b, o), Error);  // other references
  b = Utterances(3, 5, {0, 1, 2});
  b.push_back(b[0]);
  EXPECT_THROW(PairedBootstrap(a, b, o), Error);  // an id twice
  EXPECT_THROW(PairedBootstrap({}, {}, o), Error);
  o.samples = 0;
  EXPECT_THROW(PairedBootstrap(a, a, o), Error);
}

TEST(StatsReport, ParseArm) {
  const Arm arm = ParseArm("7.0, 6.9 ,x,collapsed,-1e-2", "--a");
  ASSERT_EQ(arm.size(), 5u);
  EXPECT_EQ(arm[0].value, 7.0);
  EXPECT_EQ(arm[1].value, 6.9);
  EXPECT_TRUE(arm[2].collapsed);
  EXPECT_TRUE(arm[3].collapsed);
  EXPECT_EQ(arm[4].value, -0.01);
  auto error = [](const std::string& text) {
    try {
      ParseArm(text, "--b2");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(""), "--b2: no values (give them as 7.0,6.9,x)");
  EXPECT_EQ(error("1,,2"), "--b2: value 2 is empty");
  EXPECT_EQ(error("1,2,"), "--b2: value 3 is empty");
  EXPECT_EQ(error("1,abc"),
            "--b2: value 2 'abc' is not a number (x or collapsed marks a collapsed run)");
  EXPECT_NE(error("nan").find("is not a number"), std::string::npos);
  EXPECT_NE(error("inf").find("is not a number"), std::string::npos);
  EXPECT_NE(error("1e999").find("is not a number"), std::string::npos);
}

TEST(StatsReport, JsonKeys) {
  CompareOptions o;
  o.paired = true;
  o.margin = 0.7;
  Arm b = Values({7.5, 7.3});
  b.push_back(Collapsed());
  const nlohmann::json j = ComparisonJson(Compare(Values({7.0, 6.9, 7.2}), b, o), o);
  EXPECT_EQ(j["kind"], "compare");
  EXPECT_EQ(j["paired"], true);
  EXPECT_EQ(j["margin"], 0.7);
  EXPECT_EQ(j["b"]["collapsed"], 1);
  EXPECT_EQ(j["difference"]["n"], 2);
  EXPECT_EQ(j["difference"]["left_out"], 1);
  for (const char* key : {"estimate", "se", "df", "t", "p", "ci_low", "ci_high", "mdd"}) {
    EXPECT_TRUE(j["difference"][key].is_number()) << key;
  }
  EXPECT_NEAR(j["equivalence"]["ci_level"].get<double>(), 0.9, 1e-12);
  EXPECT_TRUE(j["equivalence"]["equivalent"].is_boolean());
  EXPECT_EQ(j["rank_test"]["method"], "wilcoxon_signed_rank");
  EXPECT_TRUE(j["rank_test"]["min_p"].is_number());
  EXPECT_TRUE(j["difference"]["seeds_needed"].is_null());  // no --detect
  for (const char* key : {"smallest_margin", "smallest_margin_upper", "seeds_needed"}) {
    EXPECT_TRUE(j["equivalence"][key].is_number()) << key;
  }
  // What cannot be computed is null, not a made-up number.
  const nlohmann::json n = ComparisonJson(Compare(Values({1}), Values({2}), {}), {});
  EXPECT_TRUE(n["difference"]["se"].is_null());
  EXPECT_TRUE(n["a"]["sd"].is_null());
  EXPECT_TRUE(n["equivalence"].is_null());
  EXPECT_EQ(n["difference"]["estimate"], 1.0);
  const nlohmann::json i =
      InteractionJson(CompareInteraction(Values({1, 2, 3}), Values({2, 4, 6}), Values({1, 3, 5}),
                                         Values({5, 6, 7}), {}),
                      {});
  EXPECT_EQ(i["kind"], "interaction");
  EXPECT_EQ(i["first"]["rank_test"]["method"], "mann_whitney_u");
  EXPECT_NEAR(i["interaction"]["estimate"].get<double>(), 1, 1e-12);
  EXPECT_NEAR(i["second"]["difference"]["estimate"].get<double>(), 3, 1e-12);
}

}  // namespace
}  // namespace mavg
