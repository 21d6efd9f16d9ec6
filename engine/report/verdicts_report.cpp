#include "engine/report/verdicts_report.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/core/error.h"
#include "engine/report/stats_report.h"

namespace mavg {
namespace {

using nlohmann::json;

json OptionalOrNull(const std::optional<double>& x) {
  return x && std::isfinite(*x) ? json(*x) : json(nullptr);
}

// A JSON scalar as text: strings without quotes.
std::string ScalarText(const json& j) {
  if (j.is_null()) return "";
  return j.is_string() ? j.get<std::string>() : j.dump();
}

// The paper's numbers as given: "SWB +0.40 / CH +0.20", "b 3/3, a 0/3", or "-".
std::string PaperText(const EffectCriteria& e, const char* between) {
  if (!e.paper.is_object()) return "-";
  const auto number = [&](const char* key) {
    const auto it = e.paper.find(key);
    if (it == e.paper.end() || it->is_null()) return std::string("-");
    return it->is_number() ? SignedNumber(it->get<double>()) : ScalarText(*it);
  };
  if (e.kind == EffectKind::kCollapses) {
    std::string out;
    for (const char* arm : {"b", "a"}) {
      if (e.paper.contains(arm)) {
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", arm, ScalarText(e.paper[arm]));
      }
    }
    return out.empty() ? fmt::format("{} in b", ToString(e.side)) : out;
  }
  return fmt::format("SWB {}{}CH {}", number("swb"), between, number("ch"));
}

bool Scaled(const VerdictsReport& r) { return r.scale.has_value(); }

std::string ScaledText(const VerdictsReport& r, const EffectReport& e) {
  if (e.rule.kind == EffectKind::kCollapses) return "-";
  if (!Scaled(r)) return "n/a (no baseline yet)";
  std::string out = e.rule.effect ? SignedNumber(*e.rule.effect) : "-";
  if (e.rule.margin && e.rule.kind != EffectKind::kDirection) {
    out += " (margin " + SignedNumber(*e.rule.margin).substr(1) + ")";
  }
  return out;
}

std::string BaselineLine(const VerdictsReport& r) {
  const Criteria& c = *r.criteria;
  if (!c.baseline) return "no baseline: the paper's effects and margins are used as they are";
  const std::string where = SelectionText(c.baseline->where);
  const std::string runs = fmt::format("{} of sweep {}{}", c.metric, c.baseline->sweep,
                                       where.empty() ? "" : ", " + where);
  if (!r.baseline) {
    return fmt::format(
        "baseline ({}): no completed run yet, so nothing is scaled or judged but "
        "collapses",
        runs);
  }
  return fmt::format(
      "baseline {:.4g} (mean {}, {} runs) against the paper's {:g}: its effects and margins "
      "scaled by {:.4g}",
      *r.baseline, runs, r.baseline_runs, *c.paper_baseline, *r.scale);
}

std::string MultiplicityLine(const VerdictsReport& r) {
  const Multiplicity& m = r.multiplicity;
  std::string out = fmt::format(
      "{} confirmatory and {} exploratory effects tested{}, each at {:g} % one-sided without "
      "correction; confirmatory effects that agree: {}, after Holm's correction over them {}",
      m.confirmatory, m.exploratory,
      m.untested > 0 ? fmt::format(" ({} not yet)", m.untested) : std::string(), 100 * m.alpha,
      m.agrees, m.holm_agrees);
  return out;
}

std::string HeaderLine(const VerdictsReport& r) {
  const Criteria& c = *r.criteria;
  const std::string round = ScalarText(c.round);
  return fmt::format(
      "criteria {} fixed {}{}: {} ({} is better), b - a, {:g} % intervals (each end a one-sided "
      "test at {:g} %)",
      c.path, c.fixed, round.empty() ? "" : ", round " + round, c.metric,
      c.higher_is_better ? "higher" : "lower", 100 * c.level, 100 * OneSidedAlpha(c.level));
}

json CountsJson(const ArmCounts& c) {
  return {{"runs", c.runs},       {"ended", c.ended},       {"collapsed", c.collapsed},
          {"waiting", c.waiting}, {"unusable", c.unusable}, {"stopped", c.stopped}};
}

json EffectJson(const VerdictsReport& r, const EffectReport& er) {
  const EffectCriteria& e = *er.criteria;
  json j = {{"id", e.id},
            {"table", e.table},
            {"claim", e.claim},
            {"kind", std::string(ToString(e.kind))},
            {"confirmatory", e.confirmatory},
            {"interaction", e.interaction},
            {"sweep", e.sweep},
            {"sweep_b", e.sweep_b.empty() ? json(nullptr) : json(e.sweep_b)},
            {"paper", e.paper},
            {"scaled_effect", Scaled(r) ? OptionalOrNull(er.rule.effect) : json(nullptr)},
            {"scaled_margin", Scaled(r) ? OptionalOrNull(er.rule.margin) : json(nullptr)},
            {"planned", e.planned >= 0 ? json(e.planned) : json(nullptr)}};
  j.update(EffectOutcomeJson(er, e.ArmNames()));
  return j;
}

std::string MarkdownCell(std::string s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += '\\';
    out += ch == '\n' ? ' ' : ch;
  }
  return out;
}

}  // namespace

// "+0.12 [+0.03, +0.21]"; collapses: the counts.
std::string EffectDeltaText(const EffectReport& e) {
  const EffectVerdict& v = e.verdict;
  if (e.rule.kind == EffectKind::kCollapses) {
    if (e.runs.counts.size() < 2) return "-";
    const ArmCounts &a = e.runs.counts[0], &b = e.runs.counts[1];
    return fmt::format("b {}/{}, a {}/{} collapsed", b.collapsed, b.ended, a.collapsed, a.ended);
  }
  if (std::isnan(v.estimate)) return "-";
  std::string out = SignedNumber(v.estimate);
  if (!std::isnan(v.ci_low)) {
    out += fmt::format(" [{}, {}]", SignedNumber(v.ci_low), SignedNumber(v.ci_high));
  }
  return out;
}

std::string EffectVerdictText(const EffectReport& e) {
  std::string out(ToString(e.verdict.verdict));
  if (e.verdict.pending && e.verdict.verdict != Verdict::kPending) out += " (pending)";
  return out;
}

std::string EffectPairsText(const EffectReport& e) {
  std::string out = fmt::format("{} pair{}", e.verdict.pairs, e.verdict.pairs == 1 ? "" : "s");
  if (e.rule.planned > 0) out += fmt::format(" of {} planned", e.rule.planned);
  if (e.verdict.left_out > 0) out += fmt::format(", {} with a collapsed run", e.verdict.left_out);
  return out;
}

json EffectOutcomeJson(const EffectReport& er, const std::vector<std::string>& names) {
  const EffectVerdict& v = er.verdict;
  json j = {{"pairs", v.pairs},         {"replicates", er.runs.replicates},
            {"pending", v.pending},     {"left_out", v.left_out},
            {"builds", er.runs.builds}, {"kernels", er.runs.kernels}};
  json collapsed = {{"n", v.pairs}};
  json arms = json::object(), runs = json::object();
  for (size_t k = 0; k < names.size(); ++k) {
    if (k < er.runs.counts.size()) {
      collapsed[names[k]] = er.runs.counts[k].collapsed;
      runs[names[k]] = CountsJson(er.runs.counts[k]);
    }
    if (k < v.arms.size()) arms[names[k]] = ArmJson(v.arms[k]);
  }
  j["collapsed"] = collapsed;
  j["arms"] = arms;
  j["runs"] = runs;
  if (er.rule.kind == EffectKind::kCollapses) {
    j["diff"] = nullptr;
    j["fisher"] = {{"p_more", NumberOrNull(v.p_more)}, {"p_less", NumberOrNull(v.p_less)}};
  } else {
    j["diff"] = {{"estimate", NumberOrNull(v.estimate)},
                 {"ci", std::isnan(v.ci_low) ? json(nullptr) : json::array({v.ci_low, v.ci_high})},
                 {"ci_level", er.rule.level},
                 {"p_one_sided", NumberOrNull(v.p_one_sided)},
                 {"sd", NumberOrNull(v.sd)},
                 {"smallest_margin", NumberOrNull(v.smallest_margin)}};
    j["fisher"] = nullptr;
  }
  j["p_one_sided"] = NumberOrNull(v.p_one_sided);
  j["holm"] = er.holm ? json(*er.holm) : json(nullptr);
  j["verdict"] = std::string(ToString(v.verdict));
  j["why"] = v.why;
  return j;
}

VerdictsReport ComputeVerdicts(const Criteria& c, SweepRunsCache& cache) {
  VerdictsReport r;
  r.criteria = &c;
  std::string no_baseline;  // why nothing can be scaled yet
  if (!c.baseline) {
    r.scale = 1.0;
  } else {
    const std::vector<ReportRun>* runs = cache.Find(c.baseline->sweep);
    std::string missing;
    std::vector<const ReportRun*> matched;
    if (runs == nullptr) {
      missing = fmt::format("sweep {} is not in the store yet", c.baseline->sweep);
    } else {
      try {
        matched = MatchRuns(c.baseline->sweep, *runs, c.baseline->where, &missing);
      } catch (const Error& e) {
        throw Error(fmt::format("{}: baseline: {}", c.path, e.what()), e.Location());
      }
    }
    double sum = 0;
    for (const ReportRun* run : matched) {
      const auto it = run->values.find(c.metric);
      if (run->status != RunState::kCompleted || it == run->values.end() ||
          !std::isfinite(it->second)) {
        continue;
      }
      sum += it->second;
      ++r.baseline_runs;
    }
    if (r.baseline_runs > 0) {
      r.baseline = sum / r.baseline_runs;
      r.scale = *r.baseline / *c.paper_baseline;
    } else {
      no_baseline = "no baseline run yet (" +
                    (missing.empty() ? fmt::format("sweep {}", c.baseline->sweep) : missing) + ")";
    }
  }
  for (const EffectCriteria& e : c.effects) {
    EffectReport er;
    er.criteria = &e;
    EffectRule& rule = er.rule;
    rule.kind = e.kind;
    rule.level = c.level;
    rule.higher_is_better = c.higher_is_better;
    rule.side = e.side;
    rule.planned = e.planned;
    // Without a baseline yet the paper's numbers stand unscaled, only to satisfy the rule's
    // checks: such an effect is not judged (its runs say why).
    const double scale = r.scale.value_or(1.0);
    if (e.paper_swb) rule.effect = *e.paper_swb * scale;
    if (const std::optional<double> m = e.margin ? e.margin : c.margin) rule.margin = *m * scale;
    const std::string where = fmt::format("{}: line {}: effect '{}'", c.path, e.line, e.id);
    try {
      er.runs = LoadPairedArms(cache, e.Arms(), e.ArmNames(), c.metric);
      if (!r.scale && e.kind != EffectKind::kCollapses && er.runs.missing.empty()) {
        er.runs.missing = no_baseline;
      }
      er.verdict = JudgeEffect(rule, er.runs);
    } catch (const Error& x) {
      throw Error(fmt::format("{}: {}", where, x.what()), x.Location());
    }
    r.effects.push_back(std::move(er));
  }
  std::vector<EffectVerdict> verdicts;
  std::vector<bool> confirmatory;
  for (const EffectReport& er : r.effects) {
    verdicts.push_back(er.verdict);
    confirmatory.push_back(er.criteria->confirmatory);
  }
  r.multiplicity = SummarizeMultiplicity(verdicts, confirmatory, OneSidedAlpha(c.level));
  for (size_t i = 0; i < r.effects.size(); ++i) r.effects[i].holm = r.multiplicity.holm[i];
  return r;
}

json VerdictsJson(const VerdictsReport& r) {
  const Criteria& c = *r.criteria;
  const Multiplicity& m = r.multiplicity;
  json j = {{"criteria", c.path},
            {"fixed", c.fixed},
            {"round", c.round},
            {"metric", c.metric},
            {"higher_is_better", c.higher_is_better},
            {"level", c.level}};
  if (c.baseline) {
    j["baseline"] = {{"value", OptionalOrNull(r.baseline)},
                     {"n", r.baseline_runs},
                     {"paper", OptionalOrNull(c.paper_baseline)},
                     {"scale", OptionalOrNull(r.scale)},
                     {"sweep", c.baseline->sweep}};
  } else {
    j["baseline"] = nullptr;
  }
  j["multiplicity"] = {{"confirmatory", m.confirmatory},
                       {"exploratory", m.exploratory},
                       {"untested", m.untested},
                       {"alpha_one_sided", m.alpha},
                       {"correction", "none (Holm beside)"},
                       {"agrees", m.agrees},
                       {"holm_agrees", m.holm_agrees}};
  json effects = json::array();
  for (const EffectReport& e : r.effects) effects.push_back(EffectJson(r, e));
  j["effects"] = effects;
  return j;
}

std::string VerdictsText(const VerdictsReport& r) {
  std::string out = HeaderLine(r) + "\n" + BaselineLine(r) + "\n" + MultiplicityLine(r) + "\n";
  for (const EffectReport& e : r.effects) {
    const EffectCriteria& c = *e.criteria;
    std::string about = c.table.empty() ? "" : "table " + c.table + ", ";
    about +=
        fmt::format("{}, {}", c.confirmatory ? "confirmatory" : "exploratory", ToString(c.kind));
    if (c.interaction) about += ", interaction";
    out += fmt::format("\n{} ({}): {}\n", c.id, about, c.claim);
    out += fmt::format("  paper {}; scaled to ours {}\n", PaperText(c, ", "), ScaledText(r, e));
    out += fmt::format("  {}; {} {}\n", EffectPairsText(e),
                       c.kind == EffectKind::kCollapses ? "counts" : "b - a", EffectDeltaText(e));
    out += fmt::format("  {}: {}\n", EffectVerdictText(e), e.verdict.why);
  }
  return out;
}

std::string VerdictsMarkdown(const VerdictsReport& r) {
  std::string out =
      HeaderLine(r) + ".\n\n" + BaselineLine(r) + ".\n\n" + MultiplicityLine(r) + ".\n\n";
  out += fmt::format(
      "| effect | claim | paper SWB / CH | paper scaled to ours | Δ [{:g} % CI] | verdict | why "
      "|\n",
      100 * r.criteria->level);
  out += "|---|---|---:|---:|---:|---|---|\n";
  for (const EffectReport& e : r.effects) {
    const EffectCriteria& c = *e.criteria;
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", MarkdownCell(c.id),
                       MarkdownCell(c.claim), MarkdownCell(PaperText(c, " / ")),
                       MarkdownCell(ScaledText(r, e)), MarkdownCell(EffectDeltaText(e)),
                       MarkdownCell(EffectVerdictText(e)), MarkdownCell(e.verdict.why));
  }
  return out;
}

}  // namespace mavg
