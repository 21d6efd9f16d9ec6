// Sweeps from the command line (--base/--set/--grid, alone or on a spec file): the spec they
// make, the name it gets from its content, and the errors of bad options.
#include "engine/sweep/cli_spec.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/sweep/spec.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

class CliSpec : public ::testing::Test {
 protected:
  void SetUp() override {
    Write("base.yaml", "data: {train: tr, dev: dv}\nmodel: {hidden_layers: 1, hidden_dim: 8}\n");
    Write("s.yaml",
          "# a comment\nname: paper\nbase: base.yaml\nset: {schedule.epochs: 3}\n"
          "grid: {parallel.workers: [1, 2, 4], parallel.average_every: [1, 10]}\n"
          "zip: [{optimizer.minibatch: [16, 32], schedule.lr: [0.1, 0.2]}]\n");
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_.File(name)) << text;
  }
  std::string F(const std::string& name) const { return dir_.File(name); }
  SweepOverrides Base() const {
    SweepOverrides o;
    o.base = F("base.yaml");
    return o;
  }
  static std::vector<std::string> Ids(const SweepSpec& s) {
    std::vector<std::string> ids;
    for (const SweepPoint& p : ExpandSweep(s)) ids.push_back(p.run_id);
    return ids;
  }
  std::string ErrorOf(const std::string& spec, const SweepOverrides& o) const {
    try {
      ResolveSweepSpec(spec, o);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  testing::TempDir dir_;
};

TEST_F(CliSpec, GridAndSetWithoutAFile) {
  SweepOverrides o = Base();
  o.grids = {"parallel.workers=1,2,4", "optimizer.type=sgd,ngsgd"};
  o.sets = {"schedule.epochs=2", "schedule.lr=0.004"};
  const SweepSpec s = ResolveSweepSpec("", o);
  EXPECT_TRUE(s.generated);
  EXPECT_EQ(s.axes, (std::vector<std::string>{"parallel.workers", "optimizer.type"}));
  EXPECT_EQ(ExpandSweep(s).size(), 6u);
  EXPECT_EQ(s.base.schedule.epochs, 2);
  EXPECT_DOUBLE_EQ(s.base.schedule.lr, 0.004);
  // Named after the base config and its content; the same options give the same name, --set in
  // another order too; different content another.
  ASSERT_EQ(s.name.size(), std::string("base-").size() + 8);
  EXPECT_EQ(s.name.rfind("base-", 0), 0u);
  SweepOverrides reordered = o;
  std::swap(reordered.sets[0], reordered.sets[1]);
  EXPECT_EQ(ResolveSweepSpec("", reordered).name, s.name);
  SweepOverrides other = o;
  other.grids[0] = "parallel.workers=1,2";
  EXPECT_NE(ResolveSweepSpec("", other).name, s.name);
  other = o;
  other.name = "mine";
  EXPECT_EQ(ResolveSweepSpec("", other).name, "mine");
  // The text the store keeps is a spec file like any other: written out and loaded, it is the
  // same sweep with the same runs.
  Write("written.yaml", s.yaml);
  const SweepSpec again = LoadSweepSpec(F("written.yaml"));
  EXPECT_EQ(again.name, s.name);
  EXPECT_EQ(Ids(again), Ids(s));
  EXPECT_NE(s.yaml.find("parallel.workers: [1, 2, 4]"), std::string::npos) << s.yaml;
}

TEST_F(CliSpec, OnASpecFile) {
  const SweepSpec file = ResolveSweepSpec(F("s.yaml"), {});
  EXPECT_FALSE(file.generated);
  EXPECT_EQ(file.name, "paper");
  SweepOverrides o;
  o.grids = {"parallel.workers=1,8", "model.activation=relu,tanh"};
  o.sets = {"schedule.epochs=1"};
  o.replicates = 2;
  const SweepSpec s = ResolveSweepSpec(F("s.yaml"), o);
  EXPECT_EQ(s.name.rfind("paper-", 0), 0u);
  // A grid axis of the spec keeps its place with the new values; a new one comes last.
  EXPECT_EQ(s.axes,
            (std::vector<std::string>{"parallel.workers", "parallel.average_every",
                                      "model.activation", "optimizer.minibatch", "schedule.lr"}));
  EXPECT_EQ(ExpandSweep(s).size(), 2u * 2 * 2 * 2 * 2);
  EXPECT_EQ(s.base.schedule.epochs, 1);
  EXPECT_EQ(s.replicates, 2);
  // Comments are no content: the same name with or without them.
  Write("s2.yaml", ReadFile(F("s.yaml")).substr(std::string("# a comment\n").size()));
  SweepSpec s2 = ResolveSweepSpec(F("s2.yaml"), o);
  EXPECT_EQ(s2.name, s.name);
}

TEST_F(CliSpec, BadOptionsNameTheOption) {
  SweepOverrides o = Base();
  o.grids = {"parallel.wrkers=1,2"};
  EXPECT_EQ(ErrorOf("", o),
            "--grid parallel.wrkers: unknown config key 'parallel.wrkers' (did you mean "
            "'parallel.workers'?)");
  // The value named, not the whole list (a long list made every message, and every check that
  // built one, as long as the list).
  o.grids = {"parallel.workers=1,two"};
  EXPECT_NE(ErrorOf("", o).find("--grid parallel.workers=two: "), std::string::npos);
  o.grids = {"parallel.workers=1,,2"};
  EXPECT_NE(ErrorOf("", o).find("an empty value"), std::string::npos);
  o.grids = {"parallel.workers"};
  EXPECT_NE(ErrorOf("", o).find("--grid 'parallel.workers': expected KEY=V1,V2,..."),
            std::string::npos);
  o.grids = {"parallel.workers=1", "parallel.workers=2"};
  EXPECT_NE(ErrorOf("", o).find("is given twice"), std::string::npos);
  o.grids = {"parallel.workers=1,2"};
  o.sets = {"parallel.workers=4"};
  EXPECT_NE(ErrorOf("", o).find("also given to --set"), std::string::npos);
  // A value out of its key's range: found when the points are validated, naming the key.
  o.grids = {};
  o.sets = {"schedule.lr=-1"};
  try {
    ExpandSweep(ResolveSweepSpec("", o));
    ADD_FAILURE() << "lr -1 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("command line point []: schedule.lr: -1 is out of range"),
              std::string::npos)
        << e.what();
  }
  // On the spec file: a --set that would hide an axis, a --grid on a zipped axis.
  SweepOverrides f;
  f.sets = {"parallel.workers=4"};
  EXPECT_NE(ErrorOf(F("s.yaml"), f).find("'parallel.workers' is an axis of"), std::string::npos);
  f.sets = {};
  f.grids = {"schedule.lr=0.1"};
  EXPECT_NE(ErrorOf(F("s.yaml"), f).find("'schedule.lr' is a zipped axis"), std::string::npos);
  // Neither or both of a spec and --base.
  EXPECT_NE(ErrorOf("", {}).find("a sweep needs a spec file or --base"), std::string::npos);
  EXPECT_NE(ErrorOf(F("s.yaml"), Base()).find("not both"), std::string::npos);
  SweepOverrides missing;
  missing.base = F("nope.yaml");
  EXPECT_NE(ErrorOf("", missing).find("nope.yaml: config file not found"), std::string::npos);
}

// A spec too large on its own is run when the command line narrows it (--grid replaces an axis,
// --replicates the count); the size the command line makes is what is refused.
TEST_F(CliSpec, CommandLineNarrowsAnOversizedSpec) {
  std::string lrs = "[";
  for (int i = 0; i < 200; ++i) lrs += (i > 0 ? ", " : "") + std::to_string(i + 1) + "e-4";
  lrs += "]";
  Write("big.yaml", "base: base.yaml\nmax_runs: 1000\ngrid: {schedule.lr: " + lrs +
                        ", parallel.workers: [1, 2, 4, 8, 16, 32]}\n");
  EXPECT_NE(ErrorOf(F("big.yaml"), {}).find("1200 runs"), std::string::npos)
      << ErrorOf(F("big.yaml"), {});
  SweepOverrides narrow;
  narrow.grids = {"schedule.lr=0.001,0.002"};
  EXPECT_EQ(Ids(ResolveSweepSpec(F("big.yaml"), narrow)).size(), 12u);
  // Replicates on the command line count, the spec's own do not.
  Write("reps.yaml",
        "base: base.yaml\nmax_runs: 10\nreplicates: 20\n"
        "grid: {parallel.workers: [1, 2]}\n");
  EXPECT_NE(ErrorOf(F("reps.yaml"), {}).find("40 runs"), std::string::npos);
  SweepOverrides fewer;
  fewer.replicates = 2;
  EXPECT_EQ(Ids(ResolveSweepSpec(F("reps.yaml"), fewer)).size(), 4u);
  SweepOverrides more;
  more.grids = {"schedule.lr=0.1,0.2,0.3"};
  EXPECT_NE(ErrorOf(F("reps.yaml"), more).find("120 runs"), std::string::npos)
      << ErrorOf(F("reps.yaml"), more);
  // A count the size pass cannot read as plain decimal: sized from the spec as read.
  Write("hex.yaml",
        "base: base.yaml\nmax_runs: 10\nreplicates: 0x14\n"
        "grid: {parallel.workers: [1, 2]}\n");
  EXPECT_FALSE(ScanSpecSize("replicates: 0x14\n").known);
  const std::string hex = ErrorOf(F("hex.yaml"), more);
  EXPECT_NE(hex.find("hex.yaml"), std::string::npos) << hex;
  EXPECT_TRUE(hex.find("120 runs") != std::string::npos ||
              hex.find("replicates must be an integer") != std::string::npos)
      << hex;
}

TEST(SpecSize, ReadFromTheText) {
  const SpecSize s = ScanSpecSize(
      "name: x\nbase: b.yaml\nreplicates: 3\nmax_runs: 50\n"
      "grid: {a.b: [1, 2, 3], c: 4, d: [[1, 2], [3]]}\n"
      "zip: [{e: [1, 2], f: [3, 4]}, {g: [5, 6, 7]}]\ninclude: [{a.b: 9}, {a.b: 10}]\n");
  ASSERT_TRUE(s.known);
  EXPECT_EQ(s.grid, (std::vector<std::pair<std::string, size_t>>{{"a.b", 3}, {"c", 1}, {"d", 2}}));
  EXPECT_EQ(s.zips, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(s.includes, 2u);
  EXPECT_EQ(s.replicates, 3);
  EXPECT_EQ(s.max_runs, 50);
  EXPECT_FALSE(ScanSpecSize("replicates: +20000\n").known);
  EXPECT_FALSE(ScanSpecSize("max_runs: 1e9\n").known);
  EXPECT_FALSE(ScanSpecSize("grid: [unclosed\n").known);
  EXPECT_TRUE(ScanSpecSize("max_runs: 7\n").known);
}

}  // namespace
}  // namespace mavg
