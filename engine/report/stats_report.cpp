#include "engine/report/stats_report.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "engine/core/error.h"

namespace mavg {
using nlohmann::json;

json NumberOrNull(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json ArmJson(const ArmSummary& s) {
  return {{"n", s.n},
          {"collapsed", s.collapsed},
          {"mean", NumberOrNull(s.mean)},
          {"sd", NumberOrNull(s.sd)}};
}

namespace {

// 4 significant digits, "n/a" for what could not be computed.
std::string Fmt(double x) {
  if (std::isnan(x)) return "n/a";
  if (x == 0 || !std::isfinite(x)) return fmt::format("{}", x);
  const int digits = std::clamp(3 - static_cast<int>(std::floor(std::log10(std::fabs(x)))), 0, 6);
  return fmt::format("{:.{}f}", x, digits);
}

std::string LevelText(double level) { return fmt::format("{:g} %", 100 * level); }

// A seed count: null when it could not be computed (0).
json SeedsJson(int seeds) { return seeds > 0 ? json(seeds) : json(nullptr); }

std::string SeedsText(int seeds) {
  return seeds == kMoreSeeds ? fmt::format("more than {}", kMoreSeeds - 1)
                             : fmt::format("{}", seeds);
}

json DifferenceJson(const TDifference& d) {
  return {{"estimate", NumberOrNull(d.estimate)},
          {"se", NumberOrNull(d.se)},
          {"df", NumberOrNull(d.df)},
          {"t", NumberOrNull(d.t)},
          {"p", NumberOrNull(d.p)},
          {"ci_low", NumberOrNull(d.ci_low)},
          {"ci_high", NumberOrNull(d.ci_high)},
          {"mdd", NumberOrNull(d.mdd)},
          {"n", d.n},
          {"left_out", d.left_out},
          {"seeds_needed", SeedsJson(d.seeds_needed)}};
}

json EquivalenceJson(const std::optional<Equivalence>& e) {
  if (!e) return nullptr;
  return {{"margin", e->margin},
          {"alpha", e->alpha},
          {"p_lower", e->p_lower},
          {"p_upper", e->p_upper},
          {"p_tost", e->p_tost},
          {"ci_level", e->ci_level},
          {"ci_low", e->ci_low},
          {"ci_high", e->ci_high},
          {"equivalent", e->equivalent},
          {"smallest_margin", e->smallest_margin},
          {"smallest_margin_upper", e->smallest_margin_upper},
          {"seeds_needed", SeedsJson(e->seeds_needed)},
          {"seeds_needed_upper", SeedsJson(e->seeds_needed_upper)}};
}

json OptionsJson(const char* kind, const CompareOptions& o) {
  return {{"kind", kind},
          {"paired", o.paired},
          {"level", o.level},
          {"power", o.power},
          {"margin", o.margin ? json(*o.margin) : json(nullptr)},
          {"detect", o.detect ? json(*o.detect) : json(nullptr)},
          {"higher_is_better", o.higher_is_better}};
}

json RankJson(const RankTest& r) {
  return {{"method", std::string(ToString(r.method))},
          {"statistic", r.statistic},
          {"p", r.p},
          {"min_p", r.min_p},
          {"n", r.n},
          {"zeros", r.zeros}};
}

std::string RankLine(const RankTest& r) {
  std::string text = fmt::format(
      "rank test ({}, exact, collapsed runs as the worst outcomes): statistic {}, p {} (at "
      "least {} with these ranks), n {}",
      ToString(r.method), Fmt(r.statistic), Fmt(r.p), Fmt(r.min_p), r.n);
  if (r.zeros > 0) text += fmt::format(" ({} equal pairs left out)", r.zeros);
  return text + "\n";
}

// The parts of a comparison without the options.
json ComparisonParts(const Comparison& c) {
  return {{"a", ArmJson(c.a)},
          {"b", ArmJson(c.b)},
          {"difference", DifferenceJson(c.diff)},
          {"equivalence", EquivalenceJson(c.equivalence)},
          {"rank_test", RankJson(c.rank)}};
}

std::string ArmLine(const char* name, const ArmSummary& s) {
  std::string line = fmt::format("{}: mean {}, sd {}, n {}", name, Fmt(s.mean), Fmt(s.sd), s.n);
  if (s.collapsed > 0) line += fmt::format(" ({} collapsed, left out)", s.collapsed);
  return line + "\n";
}

std::string DifferenceLines(const char* what, const TDifference& d, const CompareOptions& o) {
  const std::string used =
      o.paired ? fmt::format("paired by seed: {} seeds, {} with a collapsed run left out", d.n,
                             d.left_out)
               : fmt::format("Welch: {} values, {} collapsed left out", d.n, d.left_out);
  std::string text = fmt::format(
      "{}: {}, {} CI [{}, {}], se {}, df {}, t {}, p {} ({})\n"
      "smallest detectable difference (alpha {:g}, power {:g}): {}",
      what, Fmt(d.estimate), LevelText(o.level), Fmt(d.ci_low), Fmt(d.ci_high), Fmt(d.se),
      Fmt(d.df), Fmt(d.t), Fmt(d.p), used, 1 - o.level, o.power, Fmt(d.mdd));
  if (d.seeds_needed > 0) {
    text += fmt::format("; {:g} needs {} seeds at this spread", std::fabs(*o.detect),
                        SeedsText(d.seeds_needed));
  }
  return text + "\n";
}

std::string EquivalenceLine(const std::optional<Equivalence>& e, const CompareOptions& o) {
  if (!e && o.margin) {
    return fmt::format("equivalence within +-{}: n/a (no t part to test it with)\n",
                       Fmt(*o.margin));
  }
  if (!e) return "";
  std::string text = fmt::format(
      "equivalence within +-{} (two one-sided tests, alpha {:g}): p {}, {} CI [{}, {}]: {}\n"
      "smallest margin these runs could show (power {:g}, true difference 0): {}",
      Fmt(e->margin), e->alpha, Fmt(e->p_tost), LevelText(e->ci_level), Fmt(e->ci_low),
      Fmt(e->ci_high), e->equivalent ? "equivalent" : "not shown equivalent", o.power,
      Fmt(e->smallest_margin));
  if (e->seeds_needed > 0) {
    text += fmt::format("; +-{} needs {} seeds at this spread", Fmt(e->margin),
                        SeedsText(e->seeds_needed));
  }
  text += fmt::format("\nnon-inferiority (b - a below +{}): p {}; smallest margin {}",
                      Fmt(e->margin), Fmt(e->p_upper), Fmt(e->smallest_margin_upper));
  if (e->seeds_needed_upper > 0) {
    text += fmt::format("; +{} needs {} seeds at this spread", Fmt(e->margin),
                        SeedsText(e->seeds_needed_upper));
  }
  return text + "\n";
}

std::string ComparisonLines(const char* what, const Comparison& c, const CompareOptions& o) {
  return ArmLine("a", c.a) + ArmLine("b", c.b) + DifferenceLines(what, c.diff, o) +
         EquivalenceLine(c.equivalence, o) + RankLine(c.rank);
}

}  // namespace

Arm ParseArm(const std::string& text, const std::string& flag) {
  MAVG_CHECK(!text.empty(), "{}: no values (give them as 7.0,6.9,x)", flag);
  Arm arm;
  size_t pos = 0;
  for (int item = 1;; ++item) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    std::string s = text.substr(pos, comma - pos);
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
    while (!s.empty() && s.back() == ' ') s.pop_back();
    MAVG_CHECK(!s.empty(), "{}: value {} is empty", flag, item);
    if (s == "x" || s == "collapsed") {
      arm.push_back({0, true});
    } else {
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(s.c_str(), &end);
      MAVG_CHECK(end == s.c_str() + s.size() && errno == 0 && std::isfinite(v),
                 "{}: value {} '{}' is not a number (x or collapsed marks a collapsed run)", flag,
                 item, s);
      arm.push_back({v, false});
    }
    if (comma == text.size()) break;
    pos = comma + 1;
  }
  return arm;
}

json ComparisonJson(const Comparison& c, const CompareOptions& options) {
  json j = OptionsJson("compare", options);
  j.update(ComparisonParts(c));
  return j;
}

json InteractionJson(const Interaction& r, const CompareOptions& options) {
  json j = OptionsJson("interaction", options);
  j["first"] = ComparisonParts(r.first);
  j["second"] = ComparisonParts(r.second);
  j["interaction"] = DifferenceJson(r.diff);
  j["equivalence"] = EquivalenceJson(r.equivalence);
  if (options.paired) j["rank_test"] = RankJson(r.rank);
  return j;
}

json BootstrapJson(const BootstrapResult& r, const BootstrapOptions& options) {
  return {{"kind", "bootstrap"},        {"a", options.name_a},
          {"b", options.name_b},        {"utterances", r.utterances},
          {"ref_words", r.ref_words},   {"wer_a", r.wer_a},
          {"wer_b", r.wer_b},           {"diff", r.diff},
          {"level", options.level},     {"ci_low", r.ci_low},
          {"ci_high", r.ci_high},       {"fraction_b_better", r.fraction_b_better},
          {"samples", options.samples}, {"seed", options.seed}};
}

std::string ComparisonText(const Comparison& c, const CompareOptions& options) {
  return ComparisonLines("b - a", c, options);
}

std::string InteractionText(const Interaction& r, const CompareOptions& options) {
  return "first setting (a1, b1):\n" + ComparisonLines("b1 - a1", r.first, options) +
         "\nsecond setting (a2, b2):\n" + ComparisonLines("b2 - a2", r.second, options) +
         "\ninteraction:\n" + DifferenceLines("(b2 - a2) - (b1 - a1)", r.diff, options) +
         EquivalenceLine(r.equivalence, options) + (options.paired ? RankLine(r.rank) : "");
}

std::string BootstrapText(const BootstrapResult& r, const BootstrapOptions& options) {
  return fmt::format(
      "a: {} WER {:.2f} %\nb: {} WER {:.2f} %\n"
      "b - a: {:+.2f} points, {} CI [{:+.2f}, {:+.2f}] (paired bootstrap over {} utterances, "
      "{} reference words; {} resamples, seed {}); b better in {:.1f} % of resamples\n",
      options.name_a, r.wer_a, options.name_b, r.wer_b, r.diff, LevelText(options.level), r.ci_low,
      r.ci_high, r.utterances, r.ref_words, options.samples, options.seed,
      100 * r.fraction_b_better);
}

}  // namespace mavg
