// A checkpoint's meta.json is validated field by field against the config before a resume.
#include "engine/train/checkpoint.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"

namespace mavg {
namespace {

nlohmann::json GoodMeta() {
  return {{"generation", 4},
          {"epochs_done", 3},
          {"progress", nullptr},
          {"stopped", false},
          {"schedule", nlohmann::json::object()},
          {"has_best", true},
          {"run_id", "0123456789abcdef"},
          {"world_size", 2},
          {"averager", nlohmann::json::object()},
          {"cv_best", {10.5, 3.0, 20.0}},
          {"cv_losses", {0.9, nullptr, 0.7}},
          {"compute_total", 1.5},
          {"frames_total", 1000}};
}

RunConfig Config() {
  RunConfig c;
  c.schedule.epochs = 5;
  c.parallel.workers = 2;
  return c;
}

std::string ErrorOf(const nlohmann::json& meta) {
  try {
    ValidateCheckpointMeta(meta, Config(), "run/checkpoint/meta.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Checkpoint, AValidRecordPasses) {
  EXPECT_EQ(ErrorOf(GoodMeta()), "");
  nlohmann::json m = GoodMeta();
  m["progress"] = {{"minibatches", 7}, {"averagings", 1}};
  EXPECT_EQ(ErrorOf(m), "");
  m = GoodMeta();
  m["epochs_done"] = 5;  // the last epoch done
  m["stopped"] = true;
  m["cv_losses"] = {1.0, 0.9, 0.8, 0.7, 0.6};
  EXPECT_EQ(ErrorOf(m), "");
  m = GoodMeta();
  m.erase("cv_losses");  // written by an older version
  EXPECT_EQ(ErrorOf(m), "");
}

TEST(Checkpoint, EveryBadFieldIsNamedWithTheFile) {
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{{"epochs_done", -3}}, "'epochs_done' is -3, must be 0..5"},
      {{{"epochs_done", 5000}}, "'epochs_done' is 5000, must be 0..5"},
      {{{"epochs_done", "3"}}, "'epochs_done' is \"3\", expected an integer"},
      {{{"generation", 0}}, "'generation' is 0"},
      {{{"world_size", 4}}, "'world_size' is 4, must be 2 (the config's parallel.workers)"},
      {{{"stopped", 1}}, "'stopped' is 1, expected true or false"},
      {{{"cv_best", {1.0, 2.0}}}, "'cv_best'"},
      {{{"cv_best", {1.0, -2.0, 3.0}}}, "'cv_best'"},
      {{{"compute_total", -1.0}}, "'compute_total'"},
      {{{"cv_losses", {0.9, 0.8}}}, "'cv_losses' is [0.9,0.8], expected one number"},
      {{{"cv_losses", {0.9, -0.8, 0.7}}}, "'cv_losses'"},
      {{{"cv_losses", {0.9, "x", 0.7}}}, "'cv_losses'"},
      {{{"frames_total", -5}}, "'frames_total' is -5"},
      {{{"steps_total", -2}}, "'steps_total' is -2"},
      {{{"progress", {{"minibatches", -1}}}}, "'progress'"},
      {{{"progress", 3}}, "'progress'"},
      {{{"schedule", 3}}, "'schedule' is not an object"},
      {{{"run_id", 12}}, "'run_id' is not a string"},
  };
  for (const auto& [patch, needle] : cases) {
    nlohmann::json m = GoodMeta();
    m.merge_patch(patch);
    const std::string e = ErrorOf(m);
    EXPECT_NE(e.find("run/checkpoint/meta.json: "), std::string::npos) << patch.dump() << ": " << e;
    EXPECT_NE(e.find(needle), std::string::npos) << patch.dump() << ": " << e;
  }
  nlohmann::json m = GoodMeta();
  m.erase("has_best");
  EXPECT_NE(ErrorOf(m).find("'has_best' is missing"), std::string::npos);
  m = GoodMeta();
  m["epochs_done"] = 5;
  m["cv_losses"] = {1.0, 0.9, 0.8, 0.7, 0.6};
  m["progress"] = {{"minibatches", 2}};
  EXPECT_NE(ErrorOf(m).find("after the last epoch"), std::string::npos);
  EXPECT_NE(ErrorOf(nlohmann::json::array()).find("a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace mavg
