#include "engine/report/contrast_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "engine/core/error.h"
#include "engine/report/render.h"
#include "engine/report/sweep_data.h"

namespace mavg {
namespace {

using nlohmann::json;

json ValuesJson(const Contrast::Values& values) {
  json j = json::object();
  for (const auto& [k, v] : values) j[k] = v;
  return j;
}

std::string MultiplicityText(const ContrastsReport& r) {
  const Multiplicity& m = r.multiplicity;
  return fmt::format(
      "{} contrast{} tested{}, each at {:g} % one-sided without correction; that agree: {}, "
      "after Holm's correction over the {}: {}",
      m.confirmatory, m.confirmatory == 1 ? "" : "s",
      m.untested > 0 ? fmt::format(" ({} not yet)", m.untested) : std::string(), 100 * m.alpha,
      m.agrees, m.confirmatory, m.holm_agrees);
}

}  // namespace

EffectKind KindOfClaim(ContrastClaim claim) {
  switch (claim) {
    case ContrastClaim::kBeats:
      return EffectKind::kBeats;
    case ContrastClaim::kNotWorse:
      return EffectKind::kSmall;
    case ContrastClaim::kEquivalent:
      return EffectKind::kEquivalent;
  }
  return EffectKind::kBeats;
}

ContrastsReport ComputeContrasts(const std::string& sweep, const StoredContrasts& stored,
                                 const std::vector<std::string>& only, SweepRunsCache& cache) {
  ContrastsReport r;
  r.sweep = sweep;
  r.replicates = stored.replicates;
  std::vector<std::string> names;
  for (const Contrast& c : stored.contrasts) names.push_back(c.name);
  for (const std::string& name : only) {
    MAVG_CHECK(std::find(names.begin(), names.end(), name) != names.end(),
               "--contrast {}: the spec of sweep {} has no such contrast (its contrasts: {})", name,
               sweep, report::Join(names));
  }
  const std::vector<ReportRun>* runs = cache.Find(sweep);
  MAVG_CHECK(runs != nullptr, "no sweep named '{}' in the store", sweep);
  const std::vector<std::string> metrics = MetricNames(*runs);
  for (const Contrast& c : stored.contrasts) {
    if (!only.empty() && std::find(only.begin(), only.end(), c.name) == only.end()) continue;
    const std::string where = fmt::format("compare.{}", c.name);
    MAVG_CHECK(
        metrics.empty() || std::find(metrics.begin(), metrics.end(), c.metric) != metrics.end(),
        "{}: no run of sweep {} has the metric '{}' (available: {})", where, sweep, c.metric,
        report::Join(metrics));
    ContrastResult result{c, {}};
    EffectReport& e = result.effect;
    e.rule.kind = KindOfClaim(c.claim);
    e.rule.level = c.level;
    e.rule.higher_is_better = c.higher_is_better;
    e.rule.margin = c.margin;
    e.rule.planned = stored.replicates;
    try {
      e.runs = LoadPairedArms(cache, {{sweep, c.ArmA()}, {sweep, c.ArmB()}}, {"a", "b"}, c.metric);
      e.verdict = JudgeEffect(e.rule, e.runs);
    } catch (const Error& x) {
      throw Error(fmt::format("{}: {}", where, x.what()), x.Location());
    }
    r.results.push_back(std::move(result));
  }
  std::vector<EffectVerdict> verdicts;
  for (const ContrastResult& c : r.results) verdicts.push_back(c.effect.verdict);
  // One family at one level (the spec refuses mixed levels: sweep/contrasts.h).
  const double level = stored.contrasts.empty() ? 0.95 : stored.contrasts.front().level;
  r.multiplicity = SummarizeMultiplicity(verdicts, std::vector<bool>(verdicts.size(), true),
                                         OneSidedAlpha(level));
  for (size_t i = 0; i < r.results.size(); ++i) r.results[i].effect.holm = r.multiplicity.holm[i];
  return r;
}

json ContrastsJson(const ContrastsReport& r) {
  const Multiplicity& m = r.multiplicity;
  json contrasts = json::array();
  for (const ContrastResult& cr : r.results) {
    const Contrast& c = cr.contrast;
    json j = {{"name", c.name},
              {"claim", std::string(ToString(c.claim))},
              {"claim_text", ClaimText(c)},
              {"kind", std::string(ToString(cr.effect.rule.kind))},
              {"metric", c.metric},
              {"higher_is_better", c.higher_is_better},
              {"level", c.level},
              {"margin", c.margin ? json(*c.margin) : json(nullptr)},
              {"a", ValuesJson(c.a)},
              {"b", ValuesJson(c.b)},
              {"where", ValuesJson(c.where)},
              {"planned", r.replicates},
              {"delta_text", EffectDeltaText(cr.effect)},
              {"pairs_text", EffectPairsText(cr.effect)}};
    j.update(EffectOutcomeJson(cr.effect, {"a", "b"}));
    contrasts.push_back(j);
  }
  return {{"sweep", r.sweep},
          {"contrasts", contrasts},
          {"multiplicity",
           {{"tested", m.confirmatory},
            {"untested", m.untested},
            {"alpha_one_sided", m.alpha},
            {"correction", "none (Holm beside)"},
            {"agrees", m.agrees},
            {"holm_agrees", m.holm_agrees},
            {"text", MultiplicityText(r)}}}};
}

std::string ContrastsText(const ContrastsReport& r) {
  std::string out =
      fmt::format("sweep {}: the contrasts of its spec, b - a paired by replicate\n{}\n", r.sweep,
                  MultiplicityText(r));
  for (const ContrastResult& cr : r.results) {
    const Contrast& c = cr.contrast;
    const EffectReport& e = cr.effect;
    out += fmt::format("\n{}: {}\n", c.name, ClaimText(c));
    out += fmt::format("  a: {}; b: {}{}\n", SelectionText(c.a), SelectionText(c.b),
                       c.where.empty() ? "" : "; where " + SelectionText(c.where));
    std::string arms;
    for (size_t k = 0; k < e.verdict.arms.size() && k < 2; ++k) {
      const ArmSummary& s = e.verdict.arms[k];
      if (s.n == 0) continue;
      arms += fmt::format("{}{} mean {:.4g}{}", arms.empty() ? ": " : ", ", k == 0 ? "a" : "b",
                          s.mean, s.n > 1 ? fmt::format(" (sd {:.3g})", s.sd) : "");
    }
    out += fmt::format("  {}{}{}; b - a {}\n", EffectPairsText(e),
                       e.runs.replicates.empty()
                           ? ""
                           : fmt::format(" (replicates {})", fmt::join(e.runs.replicates, ", ")),
                       arms, EffectDeltaText(e));
    out += fmt::format("  {}: {}\n", EffectVerdictText(e), e.verdict.why);
  }
  return out;
}

}  // namespace mavg
