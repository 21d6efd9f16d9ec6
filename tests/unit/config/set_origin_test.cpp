// Validation problems are reported against where the value came from: a --set that names the
// key, else the config file.
#include <gtest/gtest.h>

#include "engine/config/schema.h"
#include "engine/core/error.h"

namespace mavg {
namespace {

std::string ValidateError(const RunConfig& c, const std::vector<std::string>& sets) {
  try {
    Validate(c, "x.yaml", sets);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

RunConfig Good() {
  RunConfig c;
  c.data.train = "tr";
  c.data.dev = "dv";
  return c;
}

TEST(SetOrigin, AProblemOfAKeyGivenByASetNamesTheSet) {
  RunConfig c = Good();
  ApplyOverride(c, "schedule.lr=-1");
  EXPECT_EQ(ValidateError(c, {"schedule.lr=-1"}),
            "--set schedule.lr=-1: schedule.lr: -1 is out of range (must be >= 0)");
  // Without the --set, the file is the origin, as before.
  EXPECT_EQ(ValidateError(c, {}), "x.yaml: schedule.lr: -1 is out of range (must be >= 0)");
  // A --set of another key does not take the blame (nor one whose name only starts alike).
  EXPECT_EQ(ValidateError(c, {"schedule.epochs=3", "schedule.l=1"}),
            "x.yaml: schedule.lr: -1 is out of range (must be >= 0)");
}

TEST(SetOrigin, ACrossKeyProblemNamesTheSetThatMadeIt) {
  RunConfig c = Good();
  c.optimizer.momentum = 0.9;  // from the file
  ApplyOverride(c, "optimizer.type=ngsgd");
  const std::string e = ValidateError(c, {"optimizer.type=ngsgd"});
  EXPECT_EQ(e.rfind("--set optimizer.type=ngsgd: optimizer.momentum: 0.9", 0), 0u) << e;
}

TEST(SetOrigin, ProblemsFromSeveralOriginsEachNamedOnOneLine) {
  RunConfig c = Good();
  c.optimizer.minibatch = 0;  // from the file
  ApplyOverride(c, "schedule.lr=-1");
  const std::string e = ValidateError(c, {"schedule.lr=-1"});
  EXPECT_EQ(e.rfind("2 problems: ", 0), 0u) << e;
  EXPECT_NE(e.find("x.yaml: optimizer.minibatch: 0 is out of range"), std::string::npos) << e;
  EXPECT_NE(e.find("--set schedule.lr=-1: schedule.lr: -1 is out of range"), std::string::npos)
      << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace mavg
