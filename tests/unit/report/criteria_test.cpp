// The criteria file of `mavg report verdicts`: a full file read back, and every malformed part
// refused on one line that names the file, the line, the effect's id and the key.
#include "engine/report/criteria.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "engine/core/error.h"

namespace mavg {
namespace {

const char* const kGood = R"(fixed: 2026-12-07
round: 2
metric: wer
level: 0.95
baseline: {sweep: table1, where: {parallel.workers: 1}}
paper_baseline: 14.7
margin: 0.5
effects:
  - id: t1-16
    table: "1"
    claim: averaging over 16 workers loses little against 1
    kind: small
    confirmatory: true
    sweep: table1
    where: {}
    a: {parallel.workers: 1}
    b: {parallel.workers: 16}
    paper: {swb: 0.4, ch: 0.2}
    planned: 10
  - id: t2-32
    claim: NG-SGD gains more at 32 workers
    kind: direction
    confirmatory: false
    sweep: table2
    where: {optimizer.minibatch: 256}
    a: {optimizer.type: sgd, parallel.workers: 1}
    b: {optimizer.type: ngsgd, parallel.workers: 1}
    a2: {optimizer.type: sgd, parallel.workers: 32}
    b2: {optimizer.type: ngsgd, parallel.workers: 32}
    paper: {swb: -0.9, ch: null}
    margin: 0.25
  - id: sgd-collapse
    claim: SGD with max-change collapses at 16 workers
    kind: collapses
    confirmatory: true
    sweep: design
    sweep_b: design-sgd
    a: {parallel.workers: 16}
    b: {parallel.workers: 16}
    paper: {direction: more, b: "3/3", a: "0/3"}
)";

TEST(Criteria, ReadsAWholeFile) {
  const Criteria c = ParseCriteria(kGood, "c.yaml");
  EXPECT_EQ(c.fixed, "2026-12-07");
  EXPECT_EQ(c.round, nlohmann::json(2));
  EXPECT_EQ(c.metric, "wer");
  EXPECT_FALSE(c.higher_is_better);
  EXPECT_DOUBLE_EQ(c.level, 0.95);
  ASSERT_TRUE(c.baseline);
  EXPECT_EQ(c.baseline->sweep, "table1");
  EXPECT_EQ(c.baseline->where, (Selection{{"parallel.workers", "1"}}));
  EXPECT_DOUBLE_EQ(*c.paper_baseline, 14.7);
  EXPECT_DOUBLE_EQ(*c.margin, 0.5);
  ASSERT_EQ(c.effects.size(), 3u);

  const EffectCriteria& t1 = c.effects[0];
  EXPECT_EQ(t1.id, "t1-16");
  EXPECT_EQ(t1.table, "1");
  EXPECT_EQ(t1.kind, EffectKind::kSmall);
  EXPECT_TRUE(t1.confirmatory);
  EXPECT_FALSE(t1.interaction);
  EXPECT_EQ(t1.planned, 10);
  EXPECT_FALSE(t1.margin);  // the file's
  EXPECT_DOUBLE_EQ(*t1.paper_swb, 0.4);
  EXPECT_EQ(t1.paper, (nlohmann::json{{"swb", 0.4}, {"ch", 0.2}}));
  EXPECT_EQ(t1.line, 9);
  const std::vector<ArmSelection> arms = t1.Arms();
  ASSERT_EQ(arms.size(), 2u);
  EXPECT_EQ(arms[1].sweep, "table1");
  EXPECT_EQ(arms[1].values, (Selection{{"parallel.workers", "16"}}));

  const EffectCriteria& t2 = c.effects[1];
  EXPECT_TRUE(t2.interaction);
  EXPECT_DOUBLE_EQ(*t2.margin, 0.25);
  EXPECT_TRUE(t2.paper["ch"].is_null());
  EXPECT_EQ(t2.ArmNames(), (std::vector<std::string>{"a", "b", "a2", "b2"}));
  const std::vector<ArmSelection> arms2 = t2.Arms();
  ASSERT_EQ(arms2.size(), 4u);
  // `where` comes first in every arm.
  EXPECT_EQ(arms2[3].values, (Selection{{"optimizer.minibatch", "256"},
                                        {"optimizer.type", "ngsgd"},
                                        {"parallel.workers", "32"}}));

  const EffectCriteria& col = c.effects[2];
  EXPECT_EQ(col.kind, EffectKind::kCollapses);
  EXPECT_EQ(col.side, CollapseSide::kMore);
  EXPECT_EQ(col.paper["b"], "3/3");
  const std::vector<ArmSelection> arms3 = col.Arms();
  EXPECT_EQ(arms3[0].sweep, "design");
  EXPECT_EQ(arms3[1].sweep, "design-sgd");
}

// The message of parsing `text` (which must fail).
std::string ErrorOf(const std::string& text) {
  try {
    ParseCriteria(text, "c.yaml");
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("c.yaml", 0), 0u) << message;
    return message;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

// kGood with `from` replaced by `to` (once).
std::string Good(const std::string& from, const std::string& to) {
  std::string text = kGood;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(Criteria, OneLineErrors) {
  struct Bad {
    std::string text;
    const char* message;
  };
  const std::vector<Bad> cases = {
      {Good("    kind: small", "    kindd: small"),
       "line 12: effect 't1-16': key 'kindd': unknown (did you mean 'kind'?"},
      {Good("    kind: small", "    kindd: small"), "effect 't1-16': key 'kind': missing"},
      {Good("    kind: small", "    kind: smaller"),
       "effect 't1-16': key 'kind': 'smaller' is not a kind (direction | beats | small | "
       "equivalent | "
       "collapses)"},
      {Good("  - id: t2-32", "  - id: t1-16"), "effect 't1-16': key 'id': duplicate"},
      {Good("  - id: t2-32", "  - id: T2_32"),
       "effect 'T2_32': key 'id': expects lower-case letters, digits and -"},
      {Good("    paper: {swb: -0.9, ch: null}", "    paper: {swb: 0, ch: null}"),
       "effect 't2-32': key 'paper.swb': a direction effect needs the paper's b - a, non-zero"},
      {Good("    paper: {swb: -0.9, ch: null}", "    paper: null"),
       "effect 't2-32': key 'paper.swb'"},
      {Good("    paper: {swb: -0.9, ch: null}", "    paper: {swb: -0.9, sbw: 1}"),
       "effect 't2-32': key 'paper.sbw': unknown (did you mean 'swb'?"},
      {Good("margin: 0.5\n", ""),
       "effect 't1-16': key 'margin': missing: a small effect needs a "
       "margin"},
      {Good("    margin: 0.25", "    margin: -1"),
       "effect 't2-32': key 'margin': must be positive"},
      {Good("    paper: {direction: more, b: \"3/3\", a: \"0/3\"}", "    paper: {b: \"3/3\"}"),
       "effect 'sgd-collapse': key 'paper.direction': missing"},
      {Good("direction: more", "direction: most"),
       "effect 'sgd-collapse': key 'paper.direction': 'most' is not more or less"},
      {Good("    b2: {optimizer.type: ngsgd, parallel.workers: 32}\n", ""),
       "effect 't2-32': key 'b2': missing (an interaction needs both a2 and b2)"},
      {Good("    b: {parallel.workers: 16}\n    paper: {direction",
            "    b: {parallel.workers: 16}\n    a2: {parallel.workers: 1}\n    b2: "
            "{parallel.workers: "
            "1}\n    paper: {direction"),
       "effect 'sgd-collapse': key 'a2': a collapses effect counts two arms"},
      {Good("    a: {parallel.workers: 1}\n", ""), "effect 't1-16': key 'a': missing"},
      {Good("    a: {parallel.workers: 1}", "    a: 1"),
       "effect 't1-16': key 'a': expects a mapping of axis values"},
      {Good("    a: {parallel.workers: 1}", "    a: {parallel.workers: [1, 2]}"),
       "effect 't1-16': key 'a.parallel.workers': expects one value"},
      {Good("    planned: 10", "    planned: ten"),
       "effect 't1-16': key 'planned': expects a whole"},
      {Good("    planned: 10", "    planned: 2.5"), "key 'planned'"},
      {Good("    planned: 10", "    planned: -1"), "key 'planned': expects a whole"},
      {Good("    confirmatory: true\n    sweep: table1",
            "    confirmatory: yes please\n    sweep: "
            "table1"),
       "effect 't1-16': key 'confirmatory': expects true or false"},
      {Good("paper_baseline: 14.7\n", ""), "key 'paper_baseline': missing: effects scale by"},
      {Good("level: 0.95", "level: 95"), "key 'level': must lie between 0 and 1"},
      {Good("fixed: 2026-12-07\n", ""), "key 'fixed': missing"},
      {Good("metric: wer", "metrik: wer"), "key 'metrik': unknown (did you mean 'metric'?"},
      {Good("baseline: {sweep: table1,", "baseline: {swep: table1,"),
       "key 'baseline.swep': unknown"},
      {"- a\n- b\n", "a criteria file is a mapping"},
      {"fixed: [1\n", "invalid YAML"},
  };
  for (const Bad& b : cases) {
    const std::string message = ErrorOf(b.text);
    EXPECT_NE(message.find(b.message), std::string::npos)
        << "expected: " << b.message << "\ngot: " << message;
  }
}

TEST(Criteria, EveryProblemAtOnce) {
  std::string text = Good("metric: wer", "metrik: wer");
  text.replace(text.find("    kind: small"), 15, "    kind: smaller");
  const std::string message = ErrorOf(text);
  EXPECT_NE(message.find("c.yaml: 3 problems: "), std::string::npos) << message;
  EXPECT_NE(message.find("key 'metrik': unknown"), std::string::npos) << message;
  EXPECT_NE(message.find("key 'metric': missing"), std::string::npos) << message;
  EXPECT_NE(message.find("'smaller' is not a kind"), std::string::npos) << message;
}

// A kind mistyped is one problem, not also that of the default kind's missing keys.
TEST(Criteria, ABadKindIsOneProblem) {
  const std::string message = ErrorOf(Good("    kind: collapses", "    kind: colapses"));
  EXPECT_EQ(message.rfind("c.yaml: line 34: effect 'sgd-collapse': key 'kind': 'colapses'", 0), 0u)
      << message;
}

TEST(Criteria, DefaultsAndOptionalKeys) {
  const Criteria c = ParseCriteria(R"(fixed: today
metric: test_error
higher_is_better: false
effects:
  - id: e
    claim: equal
    kind: equivalent
    confirmatory: false
    sweep: s
    a: {x: 1}
    b: {x: 2}
    margin: 0.1
)",
                                   "c.yaml");
  EXPECT_TRUE(c.round.is_null());
  EXPECT_FALSE(c.baseline);
  EXPECT_FALSE(c.paper_baseline);
  EXPECT_DOUBLE_EQ(c.level, 0.95);
  ASSERT_EQ(c.effects.size(), 1u);
  EXPECT_TRUE(c.effects[0].paper.is_null());
  EXPECT_EQ(c.effects[0].planned, -1);  // not said
  EXPECT_TRUE(c.effects[0].where.empty());
}

TEST(Criteria, MissingFile) { EXPECT_THROW(LoadCriteria("/nonexistent/criteria.yaml"), Error); }

}  // namespace
}  // namespace mavg

namespace mavg {
namespace {

// The reproduction's own criteria (fixed before its runs) stay readable by the parser that
// judges them: every effect's kind has what it needs, and the confirmatory family is the
// paper's tables.
TEST(Criteria, TheReproductionsFileParses) {
  const std::filesystem::path path = std::filesystem::path(MAVG_TEST_FIXTURES) / ".." / ".." /
                                     "sweeps" / "paper" / "criteria.yaml";
  const Criteria c = LoadCriteria(path.string());
  ASSERT_FALSE(c.effects.empty());
  int confirmatory = 0;
  for (const EffectCriteria& e : c.effects) {
    confirmatory += e.confirmatory;
    if (e.confirmatory) {
      EXPECT_GT(e.planned, 0) << e.id;  // a confirmatory effect is run
    }
  }
  EXPECT_GT(confirmatory, 0);
}

}  // namespace
}  // namespace mavg
