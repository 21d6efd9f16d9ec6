// Run ids are pinned: the shipped configs' and every point of the shipped sweep specs' (in
// tests/fixtures/run_ids.txt), and each archived run of the reproduction (archive/paper-round1,
// archive/paper), whose directory is named by its id. A run id is a hash of the identity keys'
// values (config/schema.h); a new key that enters the identity of runs that never set it
// changes every existing id, so stored runs would no longer be found (sweep plan would run
// them again) and this test fails. Say how a new key enters the identity where it is declared
// (.OmittedAt, .UsedWhen, .NotIdentity).
//
// MAVG_WRITE_RUN_ID_PINS=FILE writes the current ids to FILE instead (only when an id is meant
// to change, e.g. a default that changes what a config trains; say so in the commit).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/config/schema.h"
#include "engine/core/files.h"
#include "engine/sweep/spec.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = fs::path(MAVG_TEST_FIXTURES).parent_path().parent_path();

// "configs/digits.yaml" -> id; "sweeps/paper/table1.yaml#3" -> the id of its point 3 (plan
// order, replicates included).
std::map<std::string, std::string> CurrentIds() {
  std::map<std::string, std::string> ids;
  const fs::path cwd = fs::current_path();
  fs::current_path(kSource);  // specs name their base configs from the repository root
  try {
    for (const auto& e : fs::directory_iterator("configs")) {
      if (e.path().extension() != ".yaml") continue;
      ids[e.path().generic_string()] = RunId(LoadConfigFile(e.path().string()));
    }
    for (const auto& e : fs::recursive_directory_iterator("sweeps")) {
      // (reference.yaml: the paper's numbers; criteria.yaml: the reproduction's verdict rules)
      if (e.path().extension() != ".yaml" || e.path().filename() == "reference.yaml" ||
          e.path().filename() == "criteria.yaml") {
        continue;
      }
      const SweepSpec spec = LoadSweepSpec(e.path().string());
      const std::vector<SweepPoint> points = ExpandSweep(spec);
      for (size_t i = 0; i < points.size(); ++i) {
        ids[e.path().generic_string() + "#" + std::to_string(i)] = points[i].run_id;
      }
    }
  } catch (...) {
    fs::current_path(cwd);
    throw;
  }
  fs::current_path(cwd);
  return ids;
}

TEST(RunIdPins, ShippedConfigsAndSweepPointsKeepTheirIds) {
  const std::map<std::string, std::string> now = CurrentIds();
  ASSERT_GT(now.size(), 100u);
  if (const char* out = std::getenv("MAVG_WRITE_RUN_ID_PINS")) {
    std::string text =
        "# Run ids of the shipped configs and sweep points "
        "(tests/unit/config/run_id_pins_test.cpp)\n";
    for (const auto& [what, id] : now) text += what + " " + id + "\n";
    WriteFileAtomic(out, text);
    GTEST_SKIP() << "wrote " << now.size() << " pins to " << out;
  }
  std::ifstream in(fs::path(MAVG_TEST_FIXTURES) / "run_ids.txt");
  ASSERT_TRUE(in) << "tests/fixtures/run_ids.txt missing";
  std::map<std::string, std::string> pinned;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string what, id;
    fields >> what >> id;
    pinned[what] = id;
  }
  for (const auto& [what, id] : pinned) {
    const auto it = now.find(what);
    if (it == now.end()) continue;  // a config or point since removed: nothing to keep
    EXPECT_EQ(it->second, id) << what << ": its run id changed";
  }
}

TEST(RunIdPins, ArchivedRunsKeepTheirIds) {
  // Round 1's 120 runs, and round 2's as they are archived.
  int checked = 0, round1 = 0;
  for (const char* archive : {"paper-round1", "paper"}) {
    const fs::path runs = kSource / "archive" / archive / "runs";
    if (!fs::exists(runs)) continue;
    for (const auto& sweep : fs::directory_iterator(runs)) {
      for (const auto& run : fs::directory_iterator(sweep.path())) {
        const fs::path config = run.path() / "config.yaml";
        if (!fs::exists(config)) continue;
        EXPECT_EQ(RunId(LoadConfigFile(config.string())), run.path().filename().string())
            << config << ": its run id changed";
        ++checked;
        if (std::string(archive) == "paper-round1") ++round1;
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no archived runs in this checkout";
  if (fs::exists(kSource / "archive" / "paper-round1" / "runs")) {
    EXPECT_GE(round1, 120);
  }
}

}  // namespace
}  // namespace mavg
