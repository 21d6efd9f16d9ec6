#include "engine/report/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "engine/core/error.h"
#include "engine/core/rng.h"

namespace mavg {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The continued fraction of I_x(a, b) (Numerical Recipes' betacf, modified Lentz); converges
// fast for x < (a + 1) / (a + b + 2).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-16;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 100000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) break;
  }
  return h;
}

// I_x(a, b) with y = 1 - x given separately, so that x near 1 keeps its precision in y (the t
// CDF near t = 0).
double IncompleteBeta(double a, double b, double x, double y) {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log(y);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * BetaContinuedFraction(a, b, x) / a;
  return 1 - std::exp(log_front) * BetaContinuedFraction(b, a, y) / b;
}

// P(T >= t) for t >= 0.
double UpperTail(double t, double df) {
  if (std::isinf(t)) return 0;
  if (t > 1e150) return 0;  // t * t would overflow; the tail is below 1e-150 here
  const double t2 = t * t;
  return 0.5 * IncompleteBeta(df / 2, 0.5, df / (df + t2), t2 / (df + t2));
}

void CheckLevel(double level, const char* what) {
  MAVG_CHECK(level > 0 && level < 1, "{} must lie between 0 and 1, not {}", what, level);
}

// The t part from an estimate, its standard error and df.
TDifference FromMoments(double estimate, double se, double df, int n, int left_out,
                        const CompareOptions& o) {
  TDifference d;
  d.estimate = estimate;
  d.se = se;
  d.df = df;
  d.n = n;
  d.left_out = left_out;
  // Fewer than two values, or no spread at all (identical replicates): the t distribution says
  // nothing; the rank test still does.
  if (!std::isfinite(se) || !(se > 0) || !(df > 0) || !std::isfinite(estimate)) {
    d.se = se == 0 ? 0 : kNaN;
    d.df = df > 0 ? df : kNaN;
    d.t = d.p = d.ci_low = d.ci_high = d.mdd = kNaN;
    if (!std::isfinite(estimate)) d.estimate = kNaN;
    return d;
  }
  const double alpha = 1 - o.level;
  d.t = estimate / se;
  d.p = std::min(1.0, 2 * UpperTail(std::fabs(d.t), df));
  const double half = StudentTQuantile(1 - alpha / 2, df) * se;
  d.ci_low = estimate - half;
  d.ci_high = estimate + half;
  d.mdd = (StudentTQuantile(1 - alpha / 2, df) + StudentTQuantile(o.power, df)) * se;
  return d;
}

// The fewest seeds n (2 to 100) with (t_{q1,n-1} + t_{q2,n-1}) sd / sqrt(n) <= target;
// kMoreSeeds when 100 are not enough, 0 without a spread or a target to reach.
int FewestSeeds(double sd, double target, double q1, double q2) {
  if (!std::isfinite(sd) || !(sd > 0) || !std::isfinite(target) || !(target > 0)) return 0;
  for (int n = 2; n < kMoreSeeds; ++n) {
    const double reach = (StudentTQuantile(q1, n - 1) + StudentTQuantile(q2, n - 1)) * sd;
    if (reach / std::sqrt(n) <= target) return n;
  }
  return kMoreSeeds;
}

// The spread of the per-seed values behind a paired difference.
}  // namespace

double SeedSd(const TDifference& d) { return d.se * std::sqrt(static_cast<double>(d.n)); }

// P(T >= x / se) with T ~ t(df), se > 0.
double AtLeast(double x, double se, double df) {
  const double t = x / se;
  return t >= 0 ? UpperTail(t, df) : 1 - UpperTail(-t, df);
}

std::optional<Equivalence> Tost(const TDifference& d, const CompareOptions& o) {
  if (!o.margin || std::isnan(d.p)) return std::nullopt;  // no t part
  Equivalence e;
  e.margin = *o.margin;
  e.alpha = 1 - o.level;
  e.p_lower = AtLeast(e.margin + d.estimate, d.se, d.df);  // evidence that b - a > -margin
  e.p_upper = AtLeast(e.margin - d.estimate, d.se, d.df);  // evidence that b - a < +margin
  e.p_tost = std::max(e.p_lower, e.p_upper);
  e.ci_level = 1 - 2 * e.alpha;
  const double half = StudentTQuantile(1 - e.alpha, d.df) * d.se;
  e.ci_low = d.estimate - half;
  e.ci_high = d.estimate + half;
  e.equivalent = e.p_tost < e.alpha;
  const double q_one = StudentTQuantile(1 - e.alpha, d.df);
  e.smallest_margin = (q_one + StudentTQuantile((1 + o.power) / 2, d.df)) * d.se;
  e.smallest_margin_upper = (q_one + StudentTQuantile(o.power, d.df)) * d.se;
  if (o.paired) {
    e.seeds_needed = FewestSeeds(SeedSd(d), e.margin, 1 - e.alpha, (1 + o.power) / 2);
    e.seeds_needed_upper = FewestSeeds(SeedSd(d), e.margin, 1 - e.alpha, o.power);
  }
  return e;
}

namespace {

// Decimals equal on paper differ in binary in their last bits (7.52 - 7.41 against 6.11 -
// 6.00): a difference below 1e-9 of the values' size is rounding, not a difference.
bool Negligible(double x, double size) { return std::fabs(x) <= 1e-9 * size; }

// The key a value sorts by: collapsed runs beyond every number, on the worse side.
double RankKey(const ArmValue& v, bool higher_is_better) {
  if (!v.collapsed) return v.value;
  return higher_is_better ? -kInf : kInf;
}

// Twice the mid-ranks (whole numbers) of `x` (ranks from 1), ties by `same`.
template <typename Same>
std::vector<int64_t> DoubledMidRanks(const std::vector<double>& x, Same same) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return x[i] < x[j]; });
  std::vector<int64_t> rank(x.size());
  for (size_t lo = 0; lo < order.size();) {
    size_t hi = lo + 1;
    while (hi < order.size() && same(x[order[hi - 1]], x[order[hi]])) ++hi;
    // Positions lo + 1 .. hi share the rank (lo + 1 + hi) / 2.
    for (size_t k = lo; k < hi; ++k) rank[order[k]] = static_cast<int64_t>(lo + 1 + hi);
    lo = hi;
  }
  return rank;
}

// Two-sided p from a null distribution over whole-number sums: P(|S - mean| >= |s - mean|),
// with 2 mean = `twice_mean` so that every comparison is in whole numbers.
double TwoSidedP(const std::vector<double>& prob, int64_t observed, int64_t twice_mean) {
  const int64_t dev = std::llabs(2 * observed - twice_mean);
  double p = 0;
  for (size_t s = 0; s < prob.size(); ++s) {
    if (std::llabs(2 * static_cast<int64_t>(s) - twice_mean) >= dev) p += prob[s];
  }
  return std::min(1.0, p);
}

void CheckArm(const Arm& arm, const char* name) {
  MAVG_CHECK(!arm.empty(), "arm {} has no values", name);
  for (const ArmValue& v : arm) {
    MAVG_CHECK(v.collapsed || std::isfinite(v.value), "arm {}: {} is not a finite number", name,
               v.value);
  }
}

void CheckCompareOptions(const CompareOptions& o) {
  CheckLevel(o.level, "the level");
  // Below 1/2 the power quantile is negative and a "smallest detectable difference" can be
  // negative too: no design question asks for a power under a coin toss.
  MAVG_CHECK(o.power >= 0.5 && o.power < 1, "the power must lie in [0.5, 1), not {}", o.power);
  MAVG_CHECK(!o.margin || (std::isfinite(*o.margin) && *o.margin > 0),
             "the equivalence margin must be a positive number, not {}", o.margin.value_or(0));
  MAVG_CHECK(!o.detect || (std::isfinite(*o.detect) && *o.detect != 0),
             "the difference to detect must be a non-zero number, not {}", o.detect.value_or(0));
  MAVG_CHECK(!o.detect || o.paired,
             "the seeds a difference needs are a paired design's figure: detect needs paired arms");
}

// Paired: the seeds the difference to detect needs at this spread (TDifference::seeds_needed).
void PlanSeeds(TDifference& d, const CompareOptions& o) {
  if (!o.paired || !o.detect) return;
  d.seeds_needed = FewestSeeds(SeedSd(d), std::fabs(*o.detect), 1 - (1 - o.level) / 2, o.power);
}

// Welch-Satterthwaite over independent means combined with signs +-1.
TDifference Welch(const std::vector<const Arm*>& arms, const std::vector<int>& signs,
                  const CompareOptions& o) {
  double estimate = 0, var = 0, df_den = 0, pooled_df = 0;
  int n = 0, left_out = 0;
  bool enough = true;
  for (size_t k = 0; k < arms.size(); ++k) {
    const ArmSummary s = SummarizeArm(*arms[k]);
    n += s.n;
    left_out += s.collapsed;
    if (s.n < 2) {
      enough = false;
      estimate += s.n == 0 ? kNaN : signs[k] * s.mean;
      continue;
    }
    estimate += signs[k] * s.mean;
    const double v = s.sd * s.sd / s.n;
    var += v;
    df_den += v * v / (s.n - 1);
    pooled_df += s.n - 1;
  }
  if (!enough) return FromMoments(estimate, kNaN, kNaN, n, left_out, o);
  const double df = var > 0 ? var * var / df_den : pooled_df;
  return FromMoments(estimate, std::sqrt(var), df, n, left_out, o);
}

// One-sample t on per-seed values (a paired difference or double difference).
TDifference OneSample(const std::vector<double>& d, int left_out, const CompareOptions& o) {
  const int n = static_cast<int>(d.size());
  if (n == 0) return FromMoments(kNaN, kNaN, kNaN, 0, left_out, o);
  Arm arm;
  for (double x : d) arm.push_back({x, false});
  const ArmSummary s = SummarizeArm(arm);
  if (n < 2) return FromMoments(s.mean, kNaN, kNaN, n, left_out, o);
  return FromMoments(s.mean, s.sd / std::sqrt(n), n - 1, n, left_out, o);
}

}  // namespace

double RegularizedIncompleteBeta(double a, double b, double x) {
  MAVG_CHECK(a > 0 && b > 0 && x >= 0 && x <= 1, "incomplete beta: a, b > 0 and 0 <= x <= 1");
  return IncompleteBeta(a, b, x, 1 - x);
}

double StudentTCdf(double t, double df) {
  MAVG_CHECK(df > 0, "t distribution: df must be positive, not {}", df);
  if (std::isnan(t)) return kNaN;
  return t >= 0 ? 1 - UpperTail(t, df) : UpperTail(-t, df);
}

double StudentTQuantile(double p, double df) {
  MAVG_CHECK(df > 0, "t distribution: df must be positive, not {}", df);
  MAVG_CHECK(p > 0 && p < 1, "t quantile: p must lie between 0 and 1, not {}", p);
  if (p == 0.5) return 0;
  // Bisection on the smaller tail q: UpperTail falls from 1/2 at 0, so t solves UpperTail = q.
  const double q = p < 0.5 ? p : 1 - p;
  double lo = 0, hi = 1;
  while (UpperTail(hi, df) > q && hi < 1e300) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 2000; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;  // adjacent doubles
    (UpperTail(mid, df) > q ? lo : hi) = mid;
  }
  const double t = 0.5 * (lo + hi);
  return p < 0.5 ? -t : t;
}

ArmSummary SummarizeArm(const Arm& arm) {
  ArmSummary s;
  double sum = 0;
  for (const ArmValue& v : arm) {
    if (v.collapsed) {
      ++s.collapsed;
    } else {
      ++s.n;
      sum += v.value;
    }
  }
  s.mean = s.n > 0 ? sum / s.n : kNaN;
  if (s.n < 2) {
    s.sd = kNaN;
    return s;
  }
  double ss = 0, size = 1.0;
  for (const ArmValue& v : arm) {
    if (v.collapsed) continue;
    ss += (v.value - s.mean) * (v.value - s.mean);
    size = std::max(size, std::fabs(v.value));
  }
  // Values equal on paper but not in binary (7.52 - 7.41 and 6.11 - 6.00, as paired differences
  // are) differ in the last bits: a spread below 1e-9 of their size is none, as for identical
  // values, not a standard error of 1e-16 that would make any difference "significant".
  s.sd = std::sqrt(ss / (s.n - 1));
  if (Negligible(s.sd, size)) s.sd = 0.0;
  return s;
}

RankTest SignedRankTest(const Arm& a, const Arm& b, bool higher_is_better) {
  MAVG_CHECK(a.size() == b.size(), "paired arms differ in size ({} and {} values)", a.size(),
             b.size());
  RankTest r;
  r.method = RankMethod::kWilcoxonSignedRank;
  std::vector<double> mag;  // |b - a| of the seeds where they differ
  std::vector<bool> positive;
  for (size_t i = 0; i < a.size(); ++i) {
    const double ka = RankKey(a[i], higher_is_better), kb = RankKey(b[i], higher_is_better);
    if (ka == kb) {  // equal values, or both collapsed
      ++r.zeros;
      continue;
    }
    const double d = kb - ka;
    mag.push_back(std::fabs(d));
    positive.push_back(d > 0);
  }
  r.n = static_cast<int>(mag.size());
  if (r.n == 0) return r;  // p = 1: no seed tells the arms apart
  // Differences of decimals that print alike (7.3 - 7.2, 7.5 - 7.4) tie despite rounding; an
  // infinite one (toward a collapsed run) ties only with another, beyond every finite one.
  const auto same = [](double x, double y) {
    return x == y || (std::isfinite(x) && std::isfinite(y) &&
                      Negligible(x - y, std::max(std::fabs(x), std::fabs(y))));
  };
  const std::vector<int64_t> rank = DoubledMidRanks(mag, same);
  int64_t total = 0, observed = 0;
  for (size_t i = 0; i < rank.size(); ++i) {
    total += rank[i];
    if (positive[i]) observed += rank[i];
  }
  // Under H0 each seed's sign is + or - with probability 1/2: the distribution of the sum of the
  // positive ranks, by subset sums.
  std::vector<double> prob(static_cast<size_t>(total) + 1, 0.0);
  prob[0] = 1;
  int64_t reach = 0;
  for (int64_t rk : rank) {
    for (int64_t s = reach; s >= 0; --s) {
      prob[s + rk] += 0.5 * prob[s];
      prob[s] *= 0.5;
    }
    reach += rk;
  }
  r.statistic = observed / 2.0;
  r.p = TwoSidedP(prob, observed, total);
  r.min_p = TwoSidedP(prob, total, total);  // every seed with b > a (or, alike, b < a)
  return r;
}

RankTest RankSumTest(const Arm& a, const Arm& b, bool higher_is_better) {
  RankTest r;
  r.method = RankMethod::kMannWhitneyU;
  std::vector<double> keys;
  for (const ArmValue& v : a) keys.push_back(RankKey(v, higher_is_better));
  for (const ArmValue& v : b) keys.push_back(RankKey(v, higher_is_better));
  const size_t n = keys.size(), nb = b.size();
  r.n = static_cast<int>(n);
  if (a.empty() || b.empty()) return r;
  const std::vector<int64_t> rank =
      DoubledMidRanks(keys, [](double x, double y) { return x == y; });
  int64_t total = 0, observed = 0;
  for (size_t i = 0; i < n; ++i) {
    total += rank[i];
    if (i >= a.size()) observed += rank[i];
  }
  // ways[k][s]: the subsets of k values whose doubled ranks sum to s (every subset of nb values
  // is equally likely under H0).
  std::vector<std::vector<double>> ways(nb + 1, std::vector<double>(total + 1, 0.0));
  ways[0][0] = 1;
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = std::min(i + 1, nb); k >= 1; --k) {
      for (int64_t s = total - rank[i]; s >= 0; --s) ways[k][s + rank[i]] += ways[k - 1][s];
    }
  }
  const double subsets = std::accumulate(ways[nb].begin(), ways[nb].end(), 0.0);
  std::vector<double> prob(ways[nb].size());
  for (size_t s = 0; s < prob.size(); ++s) prob[s] = ways[nb][s] / subsets;
  // The doubled ranks always sum to n (n + 1), ties or not: E[sum] = nb (n + 1).
  const int64_t twice_mean = 2 * static_cast<int64_t>(nb * (n + 1));
  r.p = TwoSidedP(prob, observed, twice_mean);
  // Every b above every a, or below: with ties the two need not be equally extreme.
  std::vector<int64_t> sorted = rank;
  std::sort(sorted.begin(), sorted.end());
  const int64_t low = std::accumulate(sorted.begin(), sorted.begin() + nb, int64_t{0});
  const int64_t high = std::accumulate(sorted.end() - nb, sorted.end(), int64_t{0});
  r.min_p = std::min(TwoSidedP(prob, low, twice_mean), TwoSidedP(prob, high, twice_mean));
  r.statistic = observed / 2.0 - static_cast<double>(nb * (nb + 1)) / 2;
  return r;
}

Comparison Compare(const Arm& a, const Arm& b, const CompareOptions& options) {
  CheckCompareOptions(options);
  CheckArm(a, "a");
  CheckArm(b, "b");
  Comparison c;
  c.a = SummarizeArm(a);
  c.b = SummarizeArm(b);
  if (options.paired) {
    MAVG_CHECK(a.size() == b.size(), "paired arms differ in size ({} and {} values)", a.size(),
               b.size());
    std::vector<double> d;
    int left_out = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].collapsed || b[i].collapsed) {
        ++left_out;
      } else {
        d.push_back(b[i].value - a[i].value);
      }
    }
    c.diff = OneSample(d, left_out, options);
    PlanSeeds(c.diff, options);
    c.rank = SignedRankTest(a, b, options.higher_is_better);
  } else {
    c.diff = Welch({&a, &b}, {-1, 1}, options);
    c.rank = RankSumTest(a, b, options.higher_is_better);
  }
  c.equivalence = Tost(c.diff, options);
  return c;
}

namespace {

// b - a of one seed with collapsed runs as the worst outcome: +-inf where one collapsed (inf
// toward the collapsed side: worse is higher unless higher_is_better), 0 where both did.
double SeedDifference(const ArmValue& a, const ArmValue& b, bool higher_is_better) {
  if (a.collapsed && b.collapsed) return 0;
  if (a.collapsed || b.collapsed) return (b.collapsed ? 1 : -1) * (higher_is_better ? -kInf : kInf);
  return b.value - a.value;
}

RankTest InteractionRankTest(const Arm& a1, const Arm& b1, const Arm& a2, const Arm& b2,
                             bool higher_is_better) {
  // The per-seed double differences as a paired comparison against 0: an infinite one becomes a
  // collapsed member on the side it points to, which SignedRankTest ranks beyond every number.
  Arm zero, value;
  for (size_t i = 0; i < a1.size(); ++i) {
    const double d1 = SeedDifference(a1[i], b1[i], higher_is_better);
    const double d2 = SeedDifference(a2[i], b2[i], higher_is_better);
    double x = std::isinf(d1) && std::isinf(d2) && (d1 > 0) == (d2 > 0) ? 0 : d2 - d1;
    // A double difference of zero on paper ((7.52 - 7.41) - (6.11 - 6.00)) is a few ulps off
    // in binary: below 1e-9 of the values' size it is a zero (left out), not a seed of rank 1
    // with an arbitrary sign, as SummarizeArm treats the t part's spread.
    double size = 1.0;
    for (const ArmValue* v : {&a1[i], &b1[i], &a2[i], &b2[i]}) {
      if (!v->collapsed) size = std::max(size, std::fabs(v->value));
    }
    if (std::isfinite(x) && Negligible(x, size)) x = 0;
    // RankKey puts a collapsed value at +inf (or -inf when higher is better): x = +inf is b's
    // side collapsed unless higher is better, and so on.
    const bool up = x > 0;
    if (std::isinf(x)) {
      const bool b_side = up != higher_is_better;
      zero.push_back(b_side ? ArmValue{0, false} : ArmValue{0, true});
      value.push_back(b_side ? ArmValue{0, true} : ArmValue{0, false});
    } else {
      zero.push_back({0, false});
      value.push_back({x, false});
    }
  }
  return SignedRankTest(zero, value, higher_is_better);
}

}  // namespace

Interaction CompareInteraction(const Arm& a1, const Arm& b1, const Arm& a2, const Arm& b2,
                               const CompareOptions& options) {
  Interaction r;
  r.first = Compare(a1, b1, options);
  r.second = Compare(a2, b2, options);
  if (options.paired) {
    MAVG_CHECK(a1.size() == a2.size() && a1.size() == b2.size(),
               "paired interaction: the four arms differ in size ({}, {}, {} and {} values)",
               a1.size(), b1.size(), a2.size(), b2.size());
    std::vector<double> d;
    int left_out = 0;
    for (size_t i = 0; i < a1.size(); ++i) {
      if (a1[i].collapsed || b1[i].collapsed || a2[i].collapsed || b2[i].collapsed) {
        ++left_out;
      } else {
        d.push_back((b2[i].value - a2[i].value) - (b1[i].value - a1[i].value));
      }
    }
    r.diff = OneSample(d, left_out, options);
    PlanSeeds(r.diff, options);
    r.rank = InteractionRankTest(a1, b1, a2, b2, options.higher_is_better);
  } else {
    r.diff = Welch({&a1, &b1, &a2, &b2}, {1, -1, -1, 1}, options);
  }
  r.equivalence = Tost(r.diff, options);
  return r;
}

FisherExact FisherExactTest(int events_a, int n_a, int events_b, int n_b) {
  MAVG_CHECK(
      n_a >= 0 && n_b >= 0 && events_a >= 0 && events_b >= 0 && events_a <= n_a && events_b <= n_b,
      "Fisher's exact test: counts {} of {} and {} of {} are not a 2x2 table", events_a, n_a,
      events_b, n_b);
  // X_b ~ Hypergeometric(N = n_a + n_b runs, K events, n_b drawn): P(X_b = k) = C(K, k)
  // C(N - K, n_b - k) / C(N, n_b), from log-gammas (exact to about 1e-14 at these sizes).
  const int events = events_a + events_b;
  const auto log_choose = [](int n, int k) {
    return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
  };
  const double log_all = log_choose(n_a + n_b, n_b);
  const int k_lo = std::max(0, events - n_a), hi = std::min(events, n_b);
  FisherExact r;
  r.p_more = r.p_less = 0;
  for (int k = k_lo; k <= hi; ++k) {
    const double p =
        std::exp(log_choose(events, k) + log_choose(n_a + n_b - events, n_b - k) - log_all);
    if (k >= events_b) r.p_more += p;
    if (k <= events_b) r.p_less += p;
  }
  r.p_more = std::min(1.0, r.p_more);
  r.p_less = std::min(1.0, r.p_less);
  return r;
}

BootstrapResult PairedBootstrap(const std::vector<UtteranceErrors>& a,
                                const std::vector<UtteranceErrors>& b,
                                const BootstrapOptions& options) {
  MAVG_CHECK(options.samples > 0, "bootstrap: samples must be positive, not {}", options.samples);
  CheckLevel(options.level, "the level");
  auto index = [](const std::vector<UtteranceErrors>& list, const std::string& name) {
    std::unordered_map<std::string, size_t> at;
    for (size_t i = 0; i < list.size(); ++i) {
      MAVG_CHECK(at.emplace(list[i].id, i).second, "{}: utterance '{}' appears twice", name,
                 list[i].id);
    }
    return at;
  };
  const auto at_a = index(a, options.name_a), at_b = index(b, options.name_b);
  for (const UtteranceErrors& u : a) {
    MAVG_CHECK(at_b.count(u.id) > 0, "utterance '{}' of {} is not in {}", u.id, options.name_a,
               options.name_b);
  }
  for (const UtteranceErrors& u : b) {
    MAVG_CHECK(at_a.count(u.id) > 0, "utterance '{}' of {} is not in {}", u.id, options.name_b,
               options.name_a);
  }
  MAVG_CHECK(!a.empty(), "{} and {} have no utterances", options.name_a, options.name_b);
  // In a's order: per utterance [errors of a, errors of b, reference words].
  const size_t n = a.size();
  std::vector<int64_t> ea(n), eb(n), words(n);
  for (size_t i = 0; i < n; ++i) {
    const UtteranceErrors& ub = b[at_b.at(a[i].id)];
    MAVG_CHECK(a[i].ref_words == ub.ref_words,
               "utterance '{}' has {} reference words in {} but {} in {}: not the same test set",
               a[i].id, a[i].ref_words, options.name_a, ub.ref_words, options.name_b);
    ea[i] = a[i].errors;
    eb[i] = ub.errors;
    words[i] = a[i].ref_words;
  }
  auto wer = [](int64_t errors, int64_t ref_words) {
    return 100.0 * static_cast<double>(errors) /
           static_cast<double>(std::max<int64_t>(1, ref_words));
  };
  BootstrapResult r;
  r.utterances = static_cast<int64_t>(n);
  r.ref_words = std::accumulate(words.begin(), words.end(), int64_t{0});
  r.wer_a = wer(std::accumulate(ea.begin(), ea.end(), int64_t{0}), r.ref_words);
  r.wer_b = wer(std::accumulate(eb.begin(), eb.end(), int64_t{0}), r.ref_words);
  r.diff = r.wer_b - r.wer_a;
  Rng rng(options.seed);
  std::vector<double> diffs(static_cast<size_t>(options.samples));
  int64_t better = 0;
  for (double& d : diffs) {
    int64_t sa = 0, sb = 0, sw = 0;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = static_cast<size_t>(rng.Below(n));
      sa += ea[i];
      sb += eb[i];
      sw += words[i];
    }
    d = wer(sb, sw) - wer(sa, sw);
    if (sb < sa) ++better;
  }
  std::sort(diffs.begin(), diffs.end());
  auto percentile = [&](double q) {  // linear between order statistics (R's type 7)
    const double h = q * static_cast<double>(diffs.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(h));
    const size_t hi = std::min(lo + 1, diffs.size() - 1);
    return diffs[lo] + (h - static_cast<double>(lo)) * (diffs[hi] - diffs[lo]);
  };
  r.ci_low = percentile((1 - options.level) / 2);
  r.ci_high = percentile((1 + options.level) / 2);
  r.fraction_b_better = static_cast<double>(better) / options.samples;
  return r;
}

}  // namespace mavg
