// stop_early's rung decisions on scripted runs: the paired rule stops exactly the arms whose
// paired differences from the best arm lie wholly above 0 (or the margin), worked by hand; ASHA
// keeps the best floor(n / eta) by mean; runs that did not reach the rung are not evidence;
// decisions do not depend on the order the runs come in beyond ties. Then the spec's entry:
// what it parses to and the one-line errors of the plan-time checks.
#include "engine/sweep/stop_early.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "engine/sweep/spec.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::ErrorOf;

// Arm `arm`'s runs with these values, replicates 0, 1, ...
std::vector<RungRun> Arm(const std::string& arm, const std::vector<double>& values) {
  std::vector<RungRun> out;
  for (size_t i = 0; i < values.size(); ++i) {
    RungRun r;
    r.run_id = arm + std::to_string(i);
    r.arm = arm;
    r.replicate = static_cast<int>(i);
    r.value = values[i];
    out.push_back(r);
  }
  return out;
}

std::vector<RungRun> Join(std::initializer_list<std::vector<RungRun>> arms) {
  std::vector<RungRun> out;
  for (const auto& a : arms) out.insert(out.end(), a.begin(), a.end());
  return out;
}

std::vector<std::string> Stopped(const std::vector<ArmFate>& fates) {
  std::vector<std::string> out;
  for (const ArmFate& f : fates) {
    if (f.stop) out.push_back(f.arm);
  }
  return out;
}

StopEarly Paired(double margin = 0) {
  StopEarly s;
  s.rule = StopRule::kPaired;
  s.rungs = {1};
  s.margin = margin;
  return s;
}

// d = b - best over 3 pairs with sd 0.1: the 95 % interval is mean -+ 4.3027 * 0.1 / sqrt(3) =
// mean -+ 0.2484, so a mean difference of 0.3 is shown worse (L = 0.0516 > 0) and 0.2 is not.
TEST(StopEarly, PairedStopsTheArmsShownWorseThanTheBest) {
  const auto best = Arm("a", {1.0, 1.1, 1.2});
  const auto worse = Arm("b", {1.2, 1.4, 1.6});  // d = 0.2, 0.3, 0.4: mean 0.3, sd 0.1
  const auto close = Arm("c", {1.1, 1.3, 1.5});  // d = 0.1, 0.2, 0.3: mean 0.2
  const auto runs = Join({worse, best, close});
  const std::vector<ArmFate> fates = DecideRung(Paired(), 1, runs);
  ASSERT_EQ(fates.size(), 3u);
  EXPECT_EQ(fates[0].arm, "b");  // first seen first
  EXPECT_EQ(Stopped(fates), (std::vector<std::string>{"b"}));
  EXPECT_NE(fates[0].why.find("stopped at epoch 1 (paired): worse than arm a on cv_loss over 3 "
                              "pairs: 95 % CI [+0.052, +0.55] above 0: b is worse"),
            std::string::npos)
      << fates[0].why;
  // A margin of 0.05 (L = 0.0516 above it) still stops b; 0.06 does not.
  EXPECT_EQ(Stopped(DecideRung(Paired(0.05), 1, runs)), (std::vector<std::string>{"b"}));
  EXPECT_TRUE(Stopped(DecideRung(Paired(0.06), 1, runs)).empty());
  // The runs in another order: the same fates.
  std::vector<RungRun> reversed(runs.rbegin(), runs.rend());
  EXPECT_EQ(Stopped(DecideRung(Paired(), 1, reversed)), (std::vector<std::string>{"b"}));
}

// An arm with a collapsed run is never the best, however good its other runs: the arm that
// did not collapse is the reference, and the collapsed pair is left out of the interval.
TEST(StopEarly, AnArmWithACollapseIsNeverTheBest) {
  auto shaky = Arm("s", {0.1, 0.2, 0.3, 0.4});
  shaky[3].collapsed = true;
  const auto steady = Arm("t", {1.0, 1.1, 1.2, 1.3});
  const std::vector<ArmFate> fates = DecideRung(Paired(), 1, Join({shaky, steady}));
  ASSERT_EQ(fates.size(), 2u);
  EXPECT_FALSE(fates[0].stop);  // s is better on its 3 pairs: not shown worse than t
  EXPECT_FALSE(fates[1].stop);  // t is the reference
  // The steady arm worse than a clean one by about 0.9: stopped, against that arm.
  const auto clean = Arm("c", {0.1, 0.25, 0.3, 0.45});
  const auto f = DecideRung(Paired(), 1, Join({shaky, steady, clean}));
  EXPECT_EQ(Stopped(f), (std::vector<std::string>{"t"}));
  EXPECT_NE(f[1].why.find("worse than arm c"), std::string::npos) << f[1].why;
}

TEST(StopEarly, PairedNeedsPairsAndReachedRuns) {
  // Two pairs only with no spread: no interval, nothing stopped.
  EXPECT_TRUE(
      Stopped(DecideRung(Paired(), 1, Join({Arm("a", {1.0, 1.0}), Arm("b", {2.0, 2.0})}))).empty());
  // A run without a value did not reach the rung: not evidence (and not a pair).
  auto b = Arm("b", {1.2, 1.4, 1.6});
  b[2].value.reset();
  b[1].value.reset();
  EXPECT_TRUE(Stopped(DecideRung(Paired(), 1, Join({Arm("a", {1.0, 1.1, 1.2}), b}))).empty());
  // One arm: nothing to compare.
  EXPECT_TRUE(Stopped(DecideRung(Paired(), 1, Arm("a", {1.0, 2.0, 3.0}))).empty());
  // Higher is better (cv_acc): the arm with the lower accuracy is the worse one.
  StopEarly acc = Paired();
  acc.metric = RungMetric::kCvAcc;
  EXPECT_EQ(
      Stopped(DecideRung(acc, 1, Join({Arm("a", {0.9, 0.91, 0.92}), Arm("b", {0.6, 0.5, 0.4})}))),
      (std::vector<std::string>{"b"}));
}

TEST(StopEarly, AshaKeepsTheBestFloorNOverEta) {
  StopEarly s;
  s.rule = StopRule::kAsha;
  s.eta = 3;
  // Means: a 2, b 1, c 4, d 3, e 5, f 0.5, g 6: 7 arms, floor(7 / 3) = 2 go on: f and b.
  const auto runs = Join({Arm("a", {2, 2}), Arm("b", {1, 1}), Arm("c", {4, 4}), Arm("d", {3, 3}),
                          Arm("e", {5, 5}), Arm("f", {0.5, 0.5}), Arm("g", {6, 6})});
  const std::vector<ArmFate> fates = DecideRung(s, 2, runs);
  EXPECT_EQ(Stopped(fates), (std::vector<std::string>{"a", "c", "d", "e", "g"}));
  EXPECT_NE(fates[0].why.find("stopped at epoch 2 (asha): ranked 3 of 7 arms by mean cv_loss 2; "
                              "the best 2 go on"),
            std::string::npos)
      << fates[0].why;
  // Two arms at eta 3: at least one goes on. Ties: plan order.
  EXPECT_EQ(Stopped(DecideRung(s, 1, Join({Arm("a", {1, 2}), Arm("b", {1, 2})}))),
            (std::vector<std::string>{"b"}));
  // A collapsed arm ranks last.
  auto c = Arm("c", {0.1, 0.1});
  for (RungRun& r : c) r.collapsed = true;
  s.eta = 2;
  EXPECT_EQ(Stopped(DecideRung(s, 1, Join({c, Arm("a", {1, 1})}))),
            (std::vector<std::string>{"c"}));
}

class StopEarlySpec : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("base.yaml"))
        << "data: {train: tr, dev: dv}\nmodel: {hidden_layers: 1, hidden_dim: 8}\n"
           "schedule: {epochs: 4}\n";
  }
  SweepSpec Parse(const std::string& stop, int replicates = 3) const {
    return ParseSweepSpec(
        "name: s\nbase: " + dir_.File("base.yaml") +
            "\ngrid: {parallel.algorithm: [average, bmuf], parallel.workers: [2, 4]}\n"
            "replicates: " +
            std::to_string(replicates) + "\nstop_early: " + stop + "\n",
        "s.yaml", "");
  }
  testing::TempDir dir_;
};

TEST_F(StopEarlySpec, ParsesAndChecksAtPlanTime) {
  const SweepSpec s = Parse(
      "{rule: asha, rungs: [1, 3], metric: cv_acc, arms: "
      "[parallel.algorithm], eta: 2}");
  ASSERT_TRUE(s.stop_early.has_value());
  EXPECT_EQ(s.stop_early->rule, StopRule::kAsha);
  EXPECT_EQ(s.stop_early->rungs, (std::vector<int>{1, 3}));
  EXPECT_TRUE(s.stop_early->HigherIsBetter());
  EXPECT_EQ(s.stop_early->eta, 2);
  const std::vector<SweepPoint> points = ExpandSweep(s);
  EXPECT_EQ(ArmOf(*s.stop_early, points[0]), "parallel.algorithm=average");
  struct Case {
    std::string stop;
    int replicates;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"{rule: paired, rungs: [4]}", 3,
       "s.yaml: line 5: stop_early.rungs: rung 4 is not before the last epoch (4 epochs"},
      {"{rule: paired, rungs: [1]}", 1, "stop_early: the sweep has 1 replicate"},
      {"{rule: paired, rungs: [1], arms: [parallel.worker]}", 3,
       "stop_early.arms: 'parallel.worker' is not an axis of this sweep"},
      {"{rule: paired, rungs: [1], metric: wer}", 3, "stop_early.metric: expects cv_loss | cv_acc"},
      {"{rule: paired, rungs: [0]}", 3, "stop_early.rungs: expects a whole number >= 1, not 0"},
      {"{rule: paired, rungs: [1.5]}", 3, "stop_early.rungs: expects a whole number >= 1"},
      {"{rule: paired, rungs: []}", 3, "'rungs' is required"},
      {"{rungs: [1]}", 3, "'rule' is required: paired or asha"},
      {"{rule: asha, rungs: [1], eta: 1}", 3, "stop_early.eta: expects 2 or more"},
      {"{rule: paired, rungs: [1], eta: 2}", 3, "stop_early.eta: belongs to rule asha"},
      {"{rule: paired, rungs: [1], margn: 2}", 3, "unknown key 'margn' (did you mean 'margin'?)"},
      {"{rule: paired, rungs: [1], level: 2}", 3, "stop_early.level: expects a number between"},
      {"[1]", 3, "stop_early: expects a mapping"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.stop);
    const std::string e = ErrorOf([&] { ExpandSweep(Parse(c.stop, c.replicates)); });
    EXPECT_NE(e.find(c.error), std::string::npos) << e;
    EXPECT_EQ(e.rfind("s.yaml: line 5: stop_early", 0), 0u) << e;
  }
  // One arm: the arms are the values of parallel.workers alone, narrowed... by the grid here.
  const std::string one = ErrorOf([&] {
    ExpandSweep(ParseSweepSpec("name: s\nbase: " + dir_.File("base.yaml") +
                                   "\ngrid: {parallel.workers: [2]}\nreplicates: 2\n"
                                   "stop_early: {rule: paired, rungs: [1]}\n",
                               "s.yaml", ""));
  });
  EXPECT_NE(one.find("stop_early: the sweep has 1 arm: nothing to compare"), std::string::npos)
      << one;
}

}  // namespace
}  // namespace mavg
