// A spec's contrasts (`compare:`): what they parse to, the one-line error of each bad entry (a
// table of cases), and the plan-time check over the spec's points: each arm selects one run per
// replicate, the arms pair, and a value no point has is named with the values there are. A
// --grid or --replicates that narrows a sweep drops the contrasts it makes unanswerable.
#include "engine/sweep/contrasts.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>

#include "engine/core/error.h"
#include "engine/sweep/cli_spec.h"
#include "engine/sweep/spec.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::ErrorOf;

class Contrasts : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("base.yaml"))
        << "data: {train: tr, dev: dv}\nmodel: {hidden_layers: 1, hidden_dim: 8}\n";
  }
  // A spec over algorithm x workers, 3 replicates, with `compare` (YAML lines after
  // "compare:\n").
  std::string Spec(const std::string& compare, int replicates = 3) const {
    return "name: s\nbase: " + dir_.File("base.yaml") +
           "\ngrid: {parallel.algorithm: [average, bmuf], parallel.workers: [2, 4]}\n"
           "replicates: " +
           std::to_string(replicates) + "\ncompare:\n" + compare;
  }
  SweepSpec Parse(const std::string& text) const { return ParseSweepSpec(text, "s.yaml", ""); }
  testing::TempDir dir_;
};

TEST_F(Contrasts, ParsesEveryKey) {
  const SweepSpec s = Parse(Spec(
      "  bmuf_vs_average:\n"
      "    a: {parallel.algorithm: average}\n    b: {parallel.algorithm: bmuf}\n"
      "    where: {parallel.workers: 4}\n    claim: not_worse\n    margin: 0.5\n"
      "    metric: test_error\n    level: 0.9\n"
      "  acc: {a: {parallel.workers: 2}, b: {parallel.workers: 4}, where: {parallel.algorithm: "
      "bmuf}, claim: equivalent, margin: 0.01, metric: test_acc, level: 0.9}\n"));
  ASSERT_EQ(s.contrasts.size(), 2u);
  const Contrast& c = s.contrasts[0];
  EXPECT_EQ(c.name, "bmuf_vs_average");
  EXPECT_EQ(c.line, 6);
  EXPECT_EQ(c.claim, ContrastClaim::kNotWorse);
  EXPECT_EQ(c.margin, 0.5);
  EXPECT_EQ(c.metric, "test_error");
  EXPECT_FALSE(c.higher_is_better);
  EXPECT_EQ(c.level, 0.9);
  EXPECT_EQ(SelectionText(c.ArmA()), "parallel.workers=4, parallel.algorithm=average");
  EXPECT_EQ(SelectionText(c.ArmB()), "parallel.workers=4, parallel.algorithm=bmuf");
  EXPECT_EQ(ClaimText(c), "b is not worse than a by 0.5 or more on test_error (lower is better)");
  // An accuracy is better higher unless said otherwise.
  EXPECT_TRUE(s.contrasts[1].higher_is_better);
  EXPECT_EQ(s.contrasts[1].level, 0.9);
  // Stored specs give their contrasts back without the base config.
  const StoredContrasts stored = ParseStoredContrasts(s.yaml, "stored");
  ASSERT_EQ(stored.contrasts.size(), 2u);
  EXPECT_EQ(stored.replicates, 3);
  EXPECT_EQ(stored.contrasts[1].name, "acc");
  EXPECT_TRUE(ParseStoredContrasts("name: x\nbase: b.yaml\n", "stored").contrasts.empty());
}

TEST_F(Contrasts, OneLevelForTheFamily) {
  const std::string e = ErrorOf([&] {
    Parse(
        Spec("  x: {a: {parallel.workers: 2}, b: {parallel.workers: 4}, claim: beats}\n"
             "  y: {a: {parallel.workers: 2}, b: {parallel.workers: 4}, claim: beats, level: "
             "0.9}\n"));
  });
  EXPECT_NE(e.find("s.yaml: line 7: compare.y.level: 0.9, but compare.x has 0.95"),
            std::string::npos)
      << e;
}

TEST_F(Contrasts, BadEntriesAreOneLineNamingTheLine) {
  const std::string ab = "a: {parallel.algorithm: average}, b: {parallel.algorithm: bmuf}";
  struct Case {
    std::string entry, error;
  };
  const std::vector<Case> cases = {
      {"x: {" + ab + "}", "s.yaml: line 6: compare.x: 'claim' is required"},
      {"x: {" + ab + ", claim: beat}",
       "compare.x.claim: expects beats | not_worse | equivalent, not 'beat'"},
      {"x: {" + ab + ", claim: equivalent}", "compare.x: claim equivalent needs a margin"},
      {"x: {" + ab + ", claim: not_worse, margin: 0}", "compare.x.margin: expects a positive"},
      {"x: {" + ab + ", claim: not_worse, margin: big}", "compare.x.margin: expects a number"},
      {"x: {" + ab + ", claim: beats, margin: 1}", "'beats' claims no size"},
      {"x: {" + ab + ", claim: beats, metrc: wer}", "unknown key 'metrc' (did you mean 'metric'?)"},
      {"x: {" + ab + ", claim: beats, level: 95}", "compare.x.level: expects a number between"},
      {"x: {" + ab + ", claim: beats, higher_is_better: yes}",
       "higher_is_better: expects true or false"},
      {"x: {a: {parallel.algorithm: average}, claim: beats}", "'b' (arm b's values"},
      {"x: {a: {parallel.algorithm: average}, b: {}, claim: beats}",
       "compare.x.b: expects a mapping of config keys"},
      {"x: {a: {parallel.algorithm: average}, b: {parallel.algorithm: bmf}, claim: beats}",
       "line 6: parallel.algorithm: 'bmf' is not one of"},
      {"x: {a: {parallel.algorithm: average}, b: {parallel.workerz: 4}, claim: beats}",
       "parallel.workerz"},
      {"x: {a: {parallel.workers: 2}, b: {parallel.workers: \"4\"}, claim: beats}",
       "quoted string '4'"},
      {"x: {a: {parallel.workers: 2}, b: {parallel.workers: [4]}, claim: beats}",
       "must be a single value"},
      {"x: {" + ab + ", where: {parallel.algorithm: bmuf}, claim: beats}",
       "'parallel.algorithm' is in 'where' and in arm a: give it once"},
      {"x: {a: {parallel.workers: 2}, b: {parallel.workers: 2}, claim: beats}",
       "arms a and b have the same values"},
      {"x y: {" + ab + ", claim: beats}", "contrast 'x y' is not a valid name"},
      {"x: [1]", "compare.x: expects a mapping"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.entry);
    const std::string e = ErrorOf([&] { Parse(Spec("  " + c.entry + "\n")); });
    EXPECT_NE(e.find(c.error), std::string::npos) << e;
    EXPECT_NE(e.find("s.yaml: line "), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_NE(ErrorOf([&] { Parse(Spec("  []\n")); }).find("'compare' maps each contrast's name"),
            std::string::npos);
}

TEST_F(Contrasts, PlanTimeChecks) {
  struct Case {
    std::string entry;
    int replicates;
    std::string error;  // empty: plans
    int pairs;
  };
  const std::vector<Case> cases = {
      {"x: {a: {parallel.algorithm: average}, b: {parallel.algorithm: bmuf}, where: "
       "{parallel.workers: 4}, claim: beats}",
       3, "", 3},
      // A key the sweep does not vary selects every point that has its value.
      {"x: {a: {parallel.algorithm: average, model.hidden_dim: 8}, b: {parallel.algorithm: "
       "bmuf}, where: {parallel.workers: 2}, claim: beats}",
       2, "", 2},
      {"x: {a: {parallel.algorithm: average}, b: {parallel.algorithm: bmuf}, claim: beats}", 3,
       "arm a holds 2 runs of replicate 0 (parallel.workers varies: 2, 4): give its "
       "value in a, b or where",
       0},
      {"x: {a: {parallel.workers: 2}, b: {parallel.workers: 8}, where: {parallel.algorithm: "
       "bmuf}, claim: beats}",
       3, "arm b selects no run: no point has parallel.workers=8 (its values: 2, 4)", 0},
      {"x: {a: {parallel.workers: 2}, b: {parallel.workers: 4}, where: {parallel.algorithm: "
       "bmuf, model.hidden_dim: 16}, claim: beats}",
       3, "no point has model.hidden_dim=16 (its values: 8)", 0},
      {"x: {a: {parallel.workers: 2, model.hidden_dim: 8}, b: {parallel.workers: 2}, where: "
       "{parallel.algorithm: bmuf}, claim: beats}",
       3, "arms a and b both select run", 0},
      {"x: {a: {parallel.algorithm: average}, b: {parallel.algorithm: bmuf}, where: "
       "{parallel.workers: 4}, claim: beats}",
       1, "the sweep has 1 replicate: a contrast pairs runs by replicate and needs 2 or more", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.entry);
    const SweepSpec s = Parse(Spec("  " + c.entry + "\n", c.replicates));
    const std::string e = ErrorOf([&] { ExpandSweep(s); });
    if (c.error.empty()) {
      EXPECT_EQ(e, "");
      SweepSpec bare = s;
      bare.contrasts.clear();
      const std::vector<SweepPoint> points = ExpandSweep(bare);
      std::vector<const SweepPoint*> ps;
      for (const SweepPoint& x : points) ps.push_back(&x);
      const ContrastPlan p = PlanContrast(s.contrasts[0], ps, s.replicates);
      EXPECT_EQ(p.pairs, c.pairs);
      EXPECT_EQ(p.a.size(), static_cast<size_t>(c.pairs));
      EXPECT_EQ(p.b.size(), static_cast<size_t>(c.pairs));
    } else {
      EXPECT_EQ(e.rfind("s.yaml: line 6: compare.x: ", 0), 0u) << e;
      EXPECT_NE(e.find(c.error), std::string::npos) << e;
    }
  }
}

// --grid that takes an arm's value out, or --replicates 1, leaves the contrast out of the
// narrowed sweep (and its spec text) instead of refusing the narrowing; one that still holds
// both arms stays.
TEST_F(Contrasts, NarrowingDropsTheContrastsItMakesUnanswerable) {
  std::ofstream(dir_.File("s.yaml")) << Spec(
      "  algo: {a: {parallel.algorithm: average}, b: {parallel.algorithm: bmuf}, where: "
      "{parallel.workers: 4}, claim: beats}\n"
      "  workers: {a: {parallel.workers: 2}, b: {parallel.workers: 4}, where: "
      "{parallel.algorithm: bmuf}, claim: beats}\n");
  SweepOverrides o;
  o.grids = {"parallel.algorithm=bmuf"};
  SweepSpec s = ResolveSweepSpec(dir_.File("s.yaml"), o);
  ASSERT_EQ(s.contrasts.size(), 1u);
  EXPECT_EQ(s.contrasts[0].name, "workers");
  EXPECT_EQ(s.yaml.find("algo:"), std::string::npos) << s.yaml;
  EXPECT_NO_THROW(ExpandSweep(s));
  o = SweepOverrides();
  o.replicates = 1;
  s = ResolveSweepSpec(dir_.File("s.yaml"), o);
  EXPECT_TRUE(s.contrasts.empty());
  EXPECT_EQ(s.yaml.find("compare"), std::string::npos) << s.yaml;
  // With a stop_early too, --replicates 1 leaves both out (neither is usable), not an error.
  std::ofstream(dir_.File("t.yaml"))
      << Spec(
             "  algo: {a: {parallel.algorithm: average}, b: {parallel.algorithm: bmuf}, where: "
             "{parallel.workers: 4}, claim: beats}\n") +
             "stop_early: {rule: paired, rungs: [1]}\n";
  o = SweepOverrides();
  o.replicates = 1;
  s = ResolveSweepSpec(dir_.File("t.yaml"), o);
  EXPECT_TRUE(s.contrasts.empty());
  EXPECT_FALSE(s.stop_early.has_value());
  EXPECT_NO_THROW(ExpandSweep(s));
  // Unnarrowed, both stay.
  EXPECT_EQ(ResolveSweepSpec(dir_.File("s.yaml"), SweepOverrides()).contrasts.size(), 2u);
}

}  // namespace
}  // namespace mavg
