// Arms read from the store and paired by replicate (`report compare SWEEP`, `report verdicts`):
// values matched as the store keeps them, collapsed runs as outcomes, unfinished runs leaving
// their pair out; and a criteria file judged on such a store, with its JSON.
#include "engine/report/paired_arms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "engine/core/error.h"
#include "engine/report/criteria.h"
#include "engine/report/verdicts_report.h"
#include "tests/unit/report/fake_sweep.h"

namespace mavg {
namespace {

using testing::FakeRun;
using testing::FakeSweep;
using testing::Make;

FakeRun StoreRun(const std::string& workers, int replicate, const std::string& status, double wer) {
  FakeRun f = Make({{"parallel.workers", workers}}, replicate, std::stoi(workers), status);
  if (!std::isnan(wer)) f.results = {{"wer", wer}};
  return f;
}

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// 1 worker: replicates 0-2 completed. 16 workers: 0 completed, 1 collapsed, 2 still running,
// 3 completed (no partner), 4 failed.
void AddTable(FakeSweep& s) {
  s.Add(StoreRun("1", 0, "completed", 3.6));
  s.Add(StoreRun("1", 1, "completed", 3.7));
  s.Add(StoreRun("1", 2, "completed", 3.5));
  s.Add(StoreRun("16", 0, "completed", 3.8));
  s.Add(StoreRun("16", 1, "collapsed", kNone));
  s.Add(StoreRun("16", 2, "running", kNone));
  s.Add(StoreRun("16", 3, "completed", 3.9));
  s.Add(StoreRun("16", 4, "failed", kNone));
}

TEST(PairedArms, MatchesValuesAsTheStoreKeepsThem) {
  FakeSweep s("t1");
  AddTable(s);
  const std::vector<ReportRun> runs = s.Load();
  std::string missing;
  EXPECT_EQ(MatchRuns("t1", runs, {{"parallel.workers", "16"}}, &missing).size(), 5u);
  EXPECT_EQ(missing, "");
  // Numbers compare as numbers.
  EXPECT_EQ(MatchRuns("t1", runs, {{"parallel.workers", "16.0"}}, &missing).size(), 5u);
  EXPECT_EQ(MatchRuns("t1", runs, {{"parallel.workers", "1.6e1"}}, &missing).size(), 5u);
  // A key the sweep does not vary: the run's config (here each replicate's seed).
  EXPECT_EQ(MatchRuns("t1", runs, {{"seed", "2"}}, &missing).size(), 2u);
  EXPECT_EQ(MatchRuns("t1", runs, {{"parallel.workers", "1"}, {"seed", "2"}}, &missing).size(), 1u);
  // A value no run has: nothing, and why.
  EXPECT_TRUE(MatchRuns("t1", runs, {{"parallel.workers", "7"}}, &missing).empty());
  EXPECT_EQ(missing, "no run of sweep t1 has parallel.workers=7 (its values: 1, 16)");
  EXPECT_TRUE(MatchRuns("t1", runs, {{"parallel.workers", "1"}, {"seed", "4"}}, &missing).empty());
  EXPECT_EQ(missing, "no run of sweep t1 has parallel.workers=1, seed=4");
  // A key no run has is an error naming the axes.
  try {
    MatchRuns("t1", runs, {{"parallel.worker", "1"}}, &missing);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "no run of sweep t1 has the key 'parallel.worker' (its axes: "
                 "parallel.workers)");
  }
}

TEST(PairedArms, PairsByReplicate) {
  FakeSweep s("t1");
  AddTable(s);
  SweepRunsCache cache(s.GetStore());
  const EffectRuns r = LoadPairedArms(
      cache, {{"t1", {{"parallel.workers", "1"}}}, {"t1", {{"parallel.workers", "16"}}}},
      {"a", "b"}, "wer");
  EXPECT_EQ(r.missing, "");
  // Replicate 2 waits for b's run, 3 has no a, 4 failed: pairs 0 and 1.
  EXPECT_EQ(r.replicates, (std::vector<int>{0, 1}));
  ASSERT_EQ(r.arms.size(), 2u);
  ASSERT_EQ(r.arms[0].size(), 2u);
  EXPECT_DOUBLE_EQ(r.arms[0][0].value, 3.6);
  EXPECT_DOUBLE_EQ(r.arms[0][1].value, 3.7);
  EXPECT_DOUBLE_EQ(r.arms[1][0].value, 3.8);
  EXPECT_FALSE(r.arms[1][0].collapsed);
  EXPECT_TRUE(r.arms[1][1].collapsed);
  const ArmCounts& b = r.counts[1];
  EXPECT_EQ(b.runs, 5);
  EXPECT_EQ(b.ended, 3);  // completed 0 and 3, collapsed 1
  EXPECT_EQ(b.collapsed, 1);
  EXPECT_EQ(b.waiting, 1);
  EXPECT_EQ(b.unusable, 1);
  EXPECT_EQ(r.counts[0].ended, 3);
}

TEST(PairedArms, WhatIsMissingIsSaid) {
  FakeSweep s("t1");
  AddTable(s);
  SweepRunsCache cache(s.GetStore());
  EffectRuns r = LoadPairedArms(
      cache, {{"t1", {{"parallel.workers", "1"}}}, {"t1", {{"parallel.workers", "7"}}}}, {"a", "b"},
      "wer");
  EXPECT_EQ(r.missing, "arm b: no run of sweep t1 has parallel.workers=7 (its values: 1, 16)");
  EXPECT_TRUE(r.replicates.empty());
  r = LoadPairedArms(cache, {{"nope", {}}, {"t1", {{"parallel.workers", "1"}}}}, {"a", "b"}, "wer");
  EXPECT_EQ(r.missing, "arm a: sweep nope is not in the store yet");
  EXPECT_EQ(r.counts[1].ended, 3);
  // A metric no run has leaves every completed run unusable.
  r = LoadPairedArms(cache,
                     {{"t1", {{"parallel.workers", "1"}}}, {"t1", {{"parallel.workers", "16"}}}},
                     {"a", "b"}, "bleu");
  EXPECT_EQ(r.counts[0].unusable, 3);
  EXPECT_EQ(r.replicates, std::vector<int>{});
  // A key no run has names the arm.
  EXPECT_THROW(
      {
        try {
          LoadPairedArms(cache, {{"t1", {{"workers", "1"}}}, {"t1", {}}}, {"a", "b"}, "wer");
        } catch (const Error& e) {
          EXPECT_EQ(
              std::string(e.what()).rfind("arm a: no run of sweep t1 has the key 'workers'", 0), 0u)
              << e.what();
          throw;
        }
      },
      Error);
}

TEST(PairedArms, TwoRunsOfAReplicateNameTheFreeAxis) {
  FakeSweep s("t3");
  for (const char* every : {"1", "5"}) {
    FakeRun f = Make({{"parallel.workers", "16"}, {"parallel.average_every", every}}, 0, 16);
    f.results = {{"wer", 4.0}};
    s.Add(f);
  }
  SweepRunsCache cache(s.GetStore());
  try {
    LoadPairedArms(cache, {{"t3", {{"parallel.workers", "16"}}}, {"t3", {}}}, {"a", "b"}, "wer");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "arm a: 2 runs of replicate 0 (parallel.average_every varies: 1, 5): give its "
                 "value too");
  }
  const EffectRuns r = LoadPairedArms(
      cache,
      {{"t3", {{"parallel.average_every", "1"}}}, {"t3", {{"parallel.average_every", "5.0"}}}},
      {"a", "b"}, "wer");
  EXPECT_EQ(r.replicates, std::vector<int>{0});
}

TEST(PairedArms, FourArmsShareTheirReplicates) {
  ArmOutcomes a, b, a2, b2;
  for (int r : {0, 1, 2, 3}) a.ended[r] = {1.0 * r, false};
  for (int r : {0, 1, 2}) b.ended[r] = {2.0 * r, false};
  for (int r : {1, 2, 3}) a2.ended[r] = {3.0 * r, false};
  for (int r : {0, 2, 3}) b2.ended[r] = {0, true};
  const EffectRuns runs = PairByReplicate({a, b, a2, b2});
  EXPECT_EQ(runs.replicates, std::vector<int>{2});
  ASSERT_EQ(runs.arms.size(), 4u);
  EXPECT_DOUBLE_EQ(runs.arms[2][0].value, 6.0);
  EXPECT_TRUE(runs.arms[3][0].collapsed);
}

// A pair is one seed: runs of one replicate index trained from different seeds (e.g. a sweep
// with a seed of its own) are refused, naming both; builds and kernels are collected.
TEST(PairedArms, APairSharesItsSeedAndSaysItsBuilds) {
  ReportRun r0, r1;
  r0.run_id = "aaaa", r1.run_id = "bbbb";
  r0.config = {{"seed", 777}}, r1.config = {{"seed", 777}};
  r0.texts["build.code_version"] = "v1", r1.texts["build.code_version"] = "v2";
  ArmOutcomes a, b;
  a.ended[0] = {1.0, false}, a.runs[0] = &r0;
  b.ended[0] = {2.0, false}, b.runs[0] = &r1;
  const EffectRuns runs = PairByReplicate({a, b});
  EXPECT_EQ(runs.builds, (std::set<std::string>{"v1", "v2"}));
  r1.config["seed"] = 778;
  try {
    PairByReplicate({a, b});
    FAIL() << "paired runs of two seeds were accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("aaaa (seed 777) and bbbb (seed 778)"), std::string::npos) << what;
  }
}

// A criteria file on a store: the baseline's scale, the paired verdicts and the JSON keys.
TEST(VerdictsReport, JudgesAStore) {
  FakeSweep s("t1");
  const double a[] = {3.60, 3.70, 3.50, 3.65};
  const double d[] = {0.05, 0.08, 0.06, 0.07};
  for (int r = 0; r < 4; ++r) {
    s.Add(StoreRun("1", r, "completed", a[r]));
    s.Add(StoreRun("16", r, "completed", a[r] + d[r]));
  }
  s.Add(StoreRun("32", 0, "collapsed", kNone));
  s.Add(StoreRun("32", 1, "collapsed", kNone));
  s.Add(StoreRun("32", 2, "collapsed", kNone));
  const Criteria c = ParseCriteria(R"(fixed: 2026-12-07
round: test
metric: wer
baseline: {sweep: t1, where: {parallel.workers: 1}}
paper_baseline: 14.7
margin: 0.5
effects:
  - id: small-16
    table: "1"
    claim: 16 workers lose little
    kind: small
    confirmatory: true
    sweep: t1
    a: {parallel.workers: 1}
    b: {parallel.workers: 16}
    paper: {swb: 0.4, ch: 0.2}
    planned: 10
  - id: dir-16
    claim: 16 workers lose
    kind: direction
    confirmatory: true
    sweep: t1
    a: {parallel.workers: 1}
    b: {parallel.workers: 16}
    paper: {swb: 0.4}
  - id: collapse-32
    claim: 32 workers collapse
    kind: collapses
    confirmatory: false
    sweep: t1
    a: {parallel.workers: 1}
    b: {parallel.workers: 32}
    paper: {direction: more, b: "3/3"}
  - id: none
    claim: a cell never run
    kind: direction
    confirmatory: false
    sweep: t1
    a: {parallel.workers: 1}
    b: {parallel.workers: 64}
    paper: {swb: 1}
)",
                                   "c.yaml");
  SweepRunsCache cache(s.GetStore());
  const VerdictsReport r = ComputeVerdicts(c, cache);
  const double baseline = (3.60 + 3.70 + 3.50 + 3.65) / 4;
  ASSERT_TRUE(r.baseline);
  EXPECT_NEAR(*r.baseline, baseline, 1e-12);
  EXPECT_EQ(r.baseline_runs, 4);
  EXPECT_NEAR(*r.scale, baseline / 14.7, 1e-12);
  ASSERT_EQ(r.effects.size(), 4u);
  // small: d = 0.065 +- 0.013, far below the scaled margin 0.5 x 0.25.
  EXPECT_EQ(r.effects[0].verdict.verdict, Verdict::kAgrees) << r.effects[0].verdict.why;
  EXPECT_TRUE(r.effects[0].verdict.pending);  // 4 of 10
  EXPECT_NEAR(*r.effects[0].rule.margin, 0.5 * baseline / 14.7, 1e-12);
  EXPECT_NEAR(*r.effects[0].rule.effect, 0.4 * baseline / 14.7, 1e-12);
  // direction: the interval is above 0.
  EXPECT_EQ(r.effects[1].verdict.verdict, Verdict::kAgrees) << r.effects[1].verdict.why;
  // 3 of 3 against 0 of 4: Fisher's p = 1 / C(7, 3) = 1/35, not below 2.5 %.
  EXPECT_EQ(r.effects[2].verdict.verdict, Verdict::kInconclusive) << r.effects[2].verdict.why;
  EXPECT_NEAR(r.effects[2].verdict.p_one_sided, 1.0 / 35, 1e-12);
  EXPECT_EQ(r.effects[3].verdict.verdict, Verdict::kNoRuns);
  EXPECT_EQ(r.effects[3].verdict.why,
            "arm b: no run of sweep t1 has parallel.workers=64 (its values: 1, 16, 32)");
  EXPECT_EQ(r.multiplicity.confirmatory, 2);
  EXPECT_EQ(r.multiplicity.exploratory, 1);
  EXPECT_EQ(r.multiplicity.untested, 1);
  EXPECT_EQ(r.multiplicity.holm_agrees, 2);

  const nlohmann::json j = VerdictsJson(r);
  for (const char* key :
       {"fixed", "round", "metric", "level", "baseline", "multiplicity", "effects"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["round"], "test");
  EXPECT_EQ(j["baseline"]["n"], 4);
  EXPECT_DOUBLE_EQ(j["baseline"]["paper"].get<double>(), 14.7);
  EXPECT_DOUBLE_EQ(j["multiplicity"]["alpha_one_sided"].get<double>(), 0.025);
  const nlohmann::json& e = j["effects"][0];
  for (const char* key :
       {"id", "table", "claim", "kind", "confirmatory", "paper", "scaled_effect", "scaled_margin",
        "pairs", "planned", "pending", "left_out", "collapsed", "arms", "diff", "verdict", "why"}) {
    EXPECT_TRUE(e.contains(key)) << key;
  }
  EXPECT_EQ(e["pairs"], 4);
  EXPECT_EQ(e["planned"], 10);
  EXPECT_EQ(e["verdict"], "agrees");
  EXPECT_EQ(e["collapsed"], (nlohmann::json{{"a", 0}, {"b", 0}, {"n", 4}}));
  for (const char* key : {"estimate", "ci", "ci_level", "p_one_sided", "sd", "smallest_margin"}) {
    EXPECT_TRUE(e["diff"].contains(key)) << key;
  }
  EXPECT_NEAR(e["diff"]["estimate"].get<double>(), 0.065, 1e-9);
  EXPECT_EQ(e["arms"]["b"]["n"], 4);
  EXPECT_TRUE(j["effects"][2]["diff"].is_null());
  EXPECT_EQ(j["effects"][2]["collapsed"]["b"], 3);
  EXPECT_EQ(j["effects"][3]["verdict"], "no runs");
  // Text and Markdown say the same.
  const std::string md = VerdictsMarkdown(r);
  EXPECT_NE(md.find("| small-16 | 16 workers lose little |"), std::string::npos) << md;
  EXPECT_NE(md.find("b 3/3, a 0/4 collapsed"), std::string::npos) << md;
  const std::string text = VerdictsText(r);
  EXPECT_NE(text.find("agrees (pending):"), std::string::npos) << text;
}

TEST(VerdictsReport, NothingIsScaledBeforeTheBaselineRuns) {
  FakeSweep s("t1");
  s.Add(StoreRun("16", 0, "completed", 3.0));
  s.Add(StoreRun("16", 1, "completed", 3.1));
  const Criteria c = ParseCriteria(R"(fixed: x
metric: wer
baseline: {sweep: t1, where: {parallel.workers: 16}}
paper_baseline: 14.7
effects:
  - id: e
    claim: c
    kind: direction
    confirmatory: true
    sweep: t1
    a: {parallel.workers: 16}
    b: {parallel.workers: 16}
    paper: {swb: 1}
)",
                                   "c.yaml");
  SweepRunsCache cache(s.GetStore());
  VerdictsReport r = ComputeVerdicts(c, cache);
  EXPECT_TRUE(r.scale);  // the baseline ran
  // A baseline cell without a completed run: nothing scaled, nothing judged.
  Criteria late = c;
  late.baseline->where = {{"parallel.workers", "1"}};
  r = ComputeVerdicts(late, cache);
  EXPECT_FALSE(r.scale);
  EXPECT_EQ(r.effects[0].verdict.verdict, Verdict::kNoRuns);
  EXPECT_NE(r.effects[0].verdict.why.find("no baseline run yet"), std::string::npos)
      << r.effects[0].verdict.why;
  EXPECT_TRUE(VerdictsJson(r)["effects"][0]["scaled_effect"].is_null());
  // An unknown key names the file and the effect.
  Criteria typo = c;
  typo.effects[0].b = {{"parallel.worker", "16"}};
  try {
    ComputeVerdicts(typo, cache);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("c.yaml: line 6: effect 'e': arm b: no run of sweep t1 "
                                          "has the key 'parallel.worker'",
                                          0),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace mavg
