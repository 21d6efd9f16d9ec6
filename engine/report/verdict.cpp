#include "engine/report/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/core/error.h"

namespace mavg {
namespace {

constexpr double kNoEstimate = std::numeric_limits<double>::quiet_NaN();

std::string Plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string IntervalText(double level, double low, double high) {
  return fmt::format("{:g} % CI [{}, {}]", 100 * level, SignedNumber(low), SignedNumber(high));
}

// |x| as SignedNumber writes it.
std::string Magnitude(double x) {
  const std::string s = SignedNumber(std::fabs(x));
  return s[0] == '+' ? s.substr(1) : s;
}

// Pending or no runs, with why.
EffectVerdict NotTested(EffectVerdict v, const std::string& why, int planned) {
  if (planned == 0) {
    v.verdict = Verdict::kNotRun;
    v.why = "cut from the plan (planned 0): " + why;
    return v;
  }
  v.verdict = v.pending ? Verdict::kPending : Verdict::kNoRuns;
  v.why = why;
  return v;
}

// Pairs with a collapsed run that tells against the effect's claim (see JudgeEffect).
int CollapsesAgainstClaim(const EffectRule& rule, const EffectRuns& runs) {
  int n = 0;
  for (size_t i = 0; i < runs.arms[0].size(); ++i) {
    const bool a = runs.arms[0][i].collapsed, b = runs.arms[1][i].collapsed;
    bool against = false;
    if (runs.arms.size() > 2) {
      against = a || b || runs.arms[2][i].collapsed || runs.arms[3][i].collapsed;
    } else if (rule.kind == EffectKind::kSmall) {
      against = b && !a;
    } else if (rule.kind == EffectKind::kEquivalent) {
      against = a != b;
    } else if (rule.kind == EffectKind::kBeats) {
      against = b && !a;  // the arm claimed better collapsed, the other not
    } else if (rule.kind == EffectKind::kDirection && rule.effect) {
      // The paper's better arm: b where e points toward better (lower, or higher when higher
      // is better), else a.
      const bool b_better = (*rule.effect < 0) != rule.higher_is_better;
      against = b_better ? (b && !a) : (a && !b);
    }
    n += against;
  }
  return n;
}

// Whether runs are still to come: fewer than `planned` ended (less the replicates an arm lost
// for good: a failed run, or one without the metric, is kept by `sweep run`), or without a
// plan, runs of the arms not ended yet.
bool RunsToCome(int ended, int planned, const std::vector<ArmCounts>& counts) {
  if (planned >= 0) {
    int lost = 0;
    for (const ArmCounts& c : counts) lost = std::max(lost, c.unusable + c.stopped);
    return ended + lost < planned;
  }
  return std::any_of(counts.begin(), counts.end(),
                     [](const ArmCounts& c) { return c.waiting > 0; });
}

std::string PendingText(int ended, int planned, const char* what) {
  return planned > 0 ? fmt::format("{} of {} {} ended", ended, planned, what)
                     : fmt::format("{} {} ended, runs still to end", ended, what);
}

EffectVerdict JudgeCollapses(const EffectRule& rule, const EffectRuns& runs, EffectVerdict v) {
  MAVG_CHECK(runs.arms.size() == 2, "a collapses effect compares two arms, not {}",
             runs.arms.size());
  const ArmCounts& a = runs.counts[0];
  const ArmCounts& b = runs.counts[1];
  const int ended = std::min(a.ended, b.ended);
  v.pending = RunsToCome(ended, rule.planned, runs.counts);
  if (!runs.missing.empty()) return NotTested(v, runs.missing, rule.planned);
  if (a.ended == 0 || b.ended == 0) {
    return NotTested(v,
                     fmt::format("{} in arm a, {} in arm b", Plural(a.ended, "run", "runs"),
                                 Plural(b.ended, "run", "runs")) +
                         " ended (each arm needs one)",
                     rule.planned);
  }
  const FisherExact f = FisherExactTest(a.collapsed, a.ended, b.collapsed, b.ended);
  v.p_more = f.p_more;
  v.p_less = f.p_less;
  const bool more = rule.side == CollapseSide::kMore;
  v.p_one_sided = more ? f.p_more : f.p_less;
  const double other = more ? f.p_less : f.p_more;
  const double alpha = OneSidedAlpha(rule.level);
  const std::string counts =
      fmt::format("b collapsed {} of {}, a {} of {}", b.collapsed, b.ended, a.collapsed, a.ended);
  const char* claim = more ? "more" : "fewer";
  const char* against = more ? "fewer" : "more";
  if (v.p_one_sided < alpha) {
    v.verdict = Verdict::kAgrees;
    v.why = fmt::format("{}: Fisher's exact p {:.3g} for {} in b, as the paper (below {:g})",
                        counts, v.p_one_sided, claim, alpha);
  } else if (other < alpha) {
    v.verdict = Verdict::kContradicted;
    v.why = fmt::format("{}: Fisher's exact p {:.3g} for {} in b, where the paper has {}", counts,
                        other, against, claim);
  } else {
    v.verdict = Verdict::kInconclusive;
    v.why = fmt::format("{}: Fisher's exact p {:.3g} for {} in b, not below {:g}", counts,
                        v.p_one_sided, claim, alpha);
  }
  return v;
}

}  // namespace

double OneSidedAlpha(double level) { return std::round((1 - level) / 2 * 1e12) / 1e12; }

bool Tested(Verdict v) {
  return v == Verdict::kAgrees || v == Verdict::kInconclusive || v == Verdict::kContradicted;
}

std::string SignedNumber(double x) {
  if (std::isnan(x)) return "n/a";
  if (x == 0) return "0";
  if (std::isinf(x)) return x > 0 ? "+inf" : "-inf";
  const int decimals = std::clamp(1 - static_cast<int>(std::floor(std::log10(std::fabs(x)))), 2, 6);
  return fmt::format("{:+.{}f}", x, decimals);
}

EffectVerdict JudgeEffect(const EffectRule& rule, const EffectRuns& runs) {
  MAVG_CHECK(rule.level > 0 && rule.level < 1, "the level must lie between 0 and 1, not {}",
             rule.level);
  MAVG_CHECK(runs.arms.size() == 2 || runs.arms.size() == 4,
             "an effect compares two arms (a, b) or four (a, b, a2, b2), not {}", runs.arms.size());
  MAVG_CHECK(runs.counts.size() == runs.arms.size(), "{} arms but counts for {}", runs.arms.size(),
             runs.counts.size());
  for (const Arm& arm : runs.arms) {
    MAVG_CHECK(arm.size() == runs.arms[0].size(), "paired arms differ in size ({} and {} runs)",
               runs.arms[0].size(), arm.size());
  }
  MAVG_CHECK(runs.replicates.empty() || runs.replicates.size() == runs.arms[0].size(),
             "{} replicates for {} pairs", runs.replicates.size(), runs.arms[0].size());
  switch (rule.kind) {
    case EffectKind::kDirection:
      MAVG_CHECK(rule.effect && std::isfinite(*rule.effect) && *rule.effect != 0,
                 "a direction effect needs the paper's effect, non-zero (its sign is the claim)");
      break;
    case EffectKind::kBeats:
      break;
    case EffectKind::kSmall:
    case EffectKind::kEquivalent:
      MAVG_CHECK(rule.margin && std::isfinite(*rule.margin) && *rule.margin > 0,
                 "a {} effect needs a positive margin", ToString(rule.kind));
      break;
    case EffectKind::kCollapses:
      break;
  }

  EffectVerdict v;
  v.pairs = static_cast<int>(runs.arms[0].size());
  for (const Arm& arm : runs.arms) v.arms.push_back(SummarizeArm(arm));
  for (size_t i = 0; i < runs.arms[0].size(); ++i) {
    if (std::any_of(runs.arms.begin(), runs.arms.end(),
                    [i](const Arm& arm) { return arm[i].collapsed; })) {
      ++v.left_out;
    }
  }
  if (rule.kind == EffectKind::kCollapses) return JudgeCollapses(rule, runs, v);

  v.pending = RunsToCome(v.pairs, rule.planned, runs.counts);
  if (!runs.missing.empty()) return NotTested(v, runs.missing, rule.planned);
  const int usable = v.pairs - v.left_out;
  if (usable < 2) {
    std::string why = v.pairs == 0 ? std::string("no complete pair")
                                   : fmt::format("{} without a collapsed run of {} (needs 2)",
                                                 Plural(usable, "pair", "pairs"), v.pairs);
    if (v.pending) why += "; " + PendingText(v.pairs, rule.planned, "pairs");
    int stopped = 0;
    for (const ArmCounts& c : runs.counts) stopped += c.stopped;
    if (stopped > 0) why += fmt::format("; {} stopped early", Plural(stopped, "run", "runs"));
    return NotTested(v, why, rule.planned);
  }

  // The interval at `level` (its ends one-sided tests at alpha) and, from the same pairs at
  // level 1 - alpha, the equivalence tests whose alpha is that one-sided alpha: their interval
  // (1 - 2 alpha) is the same interval, their smallest margins the one-sided ones.
  const double alpha = OneSidedAlpha(rule.level);
  CompareOptions at_level;
  at_level.paired = true;
  at_level.level = rule.level;
  at_level.power = rule.power;
  at_level.higher_is_better = rule.higher_is_better;
  CompareOptions one_sided = at_level;
  one_sided.level = 1 - alpha;
  one_sided.margin = rule.margin ? *rule.margin : 1.0;  // direction: no margin, none read
  // (Only the equivalence tests depend on the level beyond the interval: one comparison, and
  // its difference tested at the one-sided level.)
  const TDifference d =
      runs.arms.size() == 2
          ? Compare(runs.arms[0], runs.arms[1], at_level).diff
          : CompareInteraction(runs.arms[0], runs.arms[1], runs.arms[2], runs.arms[3], at_level)
                .diff;
  const std::optional<Equivalence> eq = Tost(d, one_sided);
  v.estimate = d.estimate;
  v.sd = SeedSd(d);
  const std::string left_out = v.left_out > 0 ? fmt::format("; {} with a collapsed run left out",
                                                            Plural(v.left_out, "pair", "pairs"))
                                              : "";
  if (std::isnan(d.ci_low) || !eq) {  // identical differences: no spread, no interval
    v.verdict = Verdict::kInconclusive;
    v.why = fmt::format("the {} pairs' differences are all {}: no spread, no interval", usable,
                        SignedNumber(d.estimate)) +
            left_out;
    return v;
  }
  const double low = d.ci_low, high = d.ci_high;
  v.ci_low = low;
  v.ci_high = high;
  const std::string ci = IntervalText(rule.level, low, high);
  switch (rule.kind) {
    case EffectKind::kDirection: {
      const double e = *rule.effect;
      const bool up = e > 0;
      // P(T >= t) or P(T <= t): the one-sided test of the interval's end on e's side.
      v.p_one_sided = up ? StudentTCdf(-d.t, d.df) : StudentTCdf(d.t, d.df);
      // The smallest detectable difference at `level`, (t(1 - alpha) + t(power)) se.
      v.smallest_margin = d.mdd;
      if (up ? low > 0 : high < 0) {
        v.verdict = Verdict::kAgrees;
        v.why =
            fmt::format("{} {} 0, as the paper's {}", ci, up ? "above" : "below", SignedNumber(e));
      } else if (up ? high < e : low > e) {
        v.verdict = Verdict::kContradicted;
        v.why = fmt::format("{} {} the paper's {}: its effect ruled out", ci,
                            up ? "below" : "above", SignedNumber(e));
      } else {
        v.verdict = Verdict::kInconclusive;
        v.why = fmt::format("{} holds 0 and the paper's {}", ci, SignedNumber(e));
        if (d.mdd > std::fabs(e)) {
          v.why += fmt::format("; the smallest effect these pairs detect is {}", Magnitude(d.mdd));
        }
      }
      break;
    }
    case EffectKind::kBeats: {
      // b better: b - a below 0, or above it when higher is better.
      const bool up = rule.higher_is_better;
      v.p_one_sided = up ? StudentTCdf(-d.t, d.df) : StudentTCdf(d.t, d.df);
      v.smallest_margin = d.mdd;
      const char* better = up ? "above" : "below";
      const char* worse = up ? "below" : "above";
      if (up ? low > 0 : high < 0) {
        v.verdict = Verdict::kAgrees;
        v.why = fmt::format("{} {} 0: b is better", ci, better);
      } else if (up ? high < 0 : low > 0) {
        v.verdict = Verdict::kContradicted;
        v.why = fmt::format("{} {} 0: b is worse", ci, worse);
      } else {
        v.verdict = Verdict::kInconclusive;
        v.why = fmt::format("{} holds 0; the smallest difference these pairs detect is {}", ci,
                            Magnitude(d.mdd));
      }
      break;
    }
    case EffectKind::kSmall: {
      const double m = *rule.margin;
      // The loss: b - a, or a - b when higher is better; its interval and the paper's.
      const double sign = rule.higher_is_better ? -1 : 1;
      const double loss_low = rule.higher_is_better ? -high : low;
      const double loss_high = rule.higher_is_better ? -low : high;
      const std::optional<double> paper_loss =
          rule.effect ? std::optional<double>(sign * *rule.effect) : std::nullopt;
      v.p_one_sided = rule.higher_is_better ? eq->p_lower : eq->p_upper;
      v.smallest_margin = eq->smallest_margin_upper;
      const std::string margin = fmt::format("the margin {}", SignedNumber(sign * m));
      if (loss_high < m) {
        v.verdict = Verdict::kAgrees;
        v.why = fmt::format("{} {} {}", ci, rule.higher_is_better ? "above" : "below", margin);
      } else if (loss_low > std::max(paper_loss.value_or(m), m)) {
        v.verdict = Verdict::kContradicted;
        v.why = fmt::format("{} {} {}", ci, rule.higher_is_better ? "below" : "above", margin);
        if (paper_loss) v.why += fmt::format(" and the paper's {}", SignedNumber(*rule.effect));
      } else {
        v.verdict = Verdict::kInconclusive;
        if (loss_low > m) {  // a loss beyond the margin, not beyond the paper's own
          v.why = fmt::format("{} {} {} but holds the paper's {}", ci,
                              rule.higher_is_better ? "below" : "above", margin,
                              SignedNumber(*rule.effect));
        } else {
          v.why = fmt::format("{} holds {}", ci, margin);
        }
        if (v.smallest_margin >= m) {
          v.why += fmt::format("; margin out of reach (these pairs can show {} at best)",
                               SignedNumber(sign * v.smallest_margin));
        }
      }
      break;
    }
    case EffectKind::kEquivalent: {
      const double m = *rule.margin;
      v.p_one_sided = eq->p_tost;
      v.smallest_margin = eq->smallest_margin;
      const std::string pm = Magnitude(m);
      if (-m < low && high < m) {
        v.verdict = Verdict::kAgrees;
        v.why = fmt::format("{} within +-{}", ci, pm);
      } else if (low > std::max(m, rule.effect.value_or(m)) ||
                 high < std::min(-m, rule.effect.value_or(-m))) {
        // Outside the margin and beyond the paper's own difference, on the far side of it.
        v.verdict = Verdict::kContradicted;
        v.why = fmt::format("{} {} {}", ci, low > m ? "above" : "below",
                            SignedNumber(low > m ? m : -m));
        if (rule.effect) v.why += fmt::format(" and the paper's {}", SignedNumber(*rule.effect));
      } else {
        v.verdict = Verdict::kInconclusive;
        v.why = low > m || high < -m ? fmt::format("{} outside +-{} but holds the paper's {}", ci,
                                                   pm, SignedNumber(rule.effect.value_or(0)))
                                     : fmt::format("{} crosses +-{}", ci, pm);
        if (v.smallest_margin >= m) {
          v.why += fmt::format("; margin out of reach (these pairs can show +-{} at best)",
                               Magnitude(v.smallest_margin));
        }
      }
      break;
    }
    case EffectKind::kCollapses:
      break;
  }
  v.why += left_out;
  // A collapse is the worst outcome, not a missing value: a pair whose collapse goes against
  // the claim (small: b collapsed, not a; equivalent: one of the two; direction: the arm the
  // paper says is better; an interaction: any) forbids `agrees` on the pairs left (their one
  // p does not stand for the claim then).
  const int against = CollapsesAgainstClaim(rule, runs);
  if (against > 0 && v.verdict == Verdict::kAgrees) {
    v.verdict = Verdict::kInconclusive;
    v.p_one_sided = EffectVerdict::kNotComputed;
    v.why +=
        fmt::format("; not agrees: {} against the claim", Plural(against, "collapse", "collapses"));
  }
  if (runs.builds.size() > 1 || runs.kernels.size() > 1) {
    v.why += fmt::format(
        "; the pairs ran on {} and {}",
        Plural(static_cast<int>(runs.builds.size()), "build", "builds"),
        Plural(static_cast<int>(runs.kernels.size()), "kernel family", "kernel families"));
  }
  return v;
}

std::vector<bool> HolmRejections(const std::vector<double>& p, double alpha) {
  std::vector<size_t> order;
  for (size_t i = 0; i < p.size(); ++i) {
    if (!std::isnan(p[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] < p[y]; });
  std::vector<bool> rejected(p.size(), false);
  const size_t family = order.size();
  for (size_t k = 0; k < family; ++k) {
    if (!(p[order[k]] < alpha / static_cast<double>(family - k))) break;
    rejected[order[k]] = true;
  }
  return rejected;
}

Multiplicity SummarizeMultiplicity(const std::vector<EffectVerdict>& verdicts,
                                   const std::vector<bool>& confirmatory, double alpha) {
  MAVG_CHECK(verdicts.size() == confirmatory.size(), "{} verdicts but {} family labels",
             verdicts.size(), confirmatory.size());
  Multiplicity m;
  m.alpha = alpha;
  std::vector<double> family(verdicts.size(), kNoEstimate);
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const EffectVerdict& v = verdicts[i];
    if (!Tested(v.verdict)) {
      m.untested += v.verdict != Verdict::kNotRun;  // an arm cut from the plan is not to come
      continue;
    }
    if (!confirmatory[i]) {
      ++m.exploratory;
      continue;
    }
    ++m.confirmatory;
    if (v.verdict == Verdict::kAgrees) ++m.agrees;
    family[i] = std::isnan(v.p_one_sided) ? 1.0 : v.p_one_sided;
  }
  const std::vector<bool> rejected = HolmRejections(family, alpha);
  m.holm.assign(verdicts.size(), std::nullopt);
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (std::isnan(family[i])) continue;
    m.holm[i] = rejected[i];
    if (rejected[i]) ++m.holm_agrees;
  }
  return m;
}

}  // namespace mavg
