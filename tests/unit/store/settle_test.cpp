// A run's status from its files and its launcher's word (store/settle.h), over a table of
// cases, and the store's ingest agreeing with it on a real run directory.
#include "engine/store/settle.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/store/store.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

std::optional<nlohmann::json> Json(const char* text) {
  if (text == nullptr) return std::nullopt;
  return nlohmann::json::parse(text);
}

// state.json as ReadRunFiles reads it: a record, or why it is not one.
void ReadState(const char* text, RunFiles& files) {
  if (text == nullptr) return;
  try {
    files.state = RunStateFromJson(nlohmann::json::parse(text), "x/state.json");
  } catch (const Error& e) {
    files.state_error = e.what();
  }
}

struct Case {
  const char* name;
  const char* state;   // state.json (nullptr: absent)
  const char* result;  // result.json (nullptr: absent)
  const char* state_error;
  const char* result_error;
  std::optional<LaunchState> launcher;
  RunState status;
  const char* reason;  // exact, or a part of it when it starts with '~'
  bool result_usable;
};

const Case kCases[] = {
    {"nothing written", nullptr, nullptr, "", "", std::nullopt, RunState::kNew, "", false},
    {"running", R"({"status": "running"})", nullptr, "", "", std::nullopt, RunState::kRunning, "",
     false},
    {"state without a status", R"({"attempt": 2})", nullptr, "", "", std::nullopt,
     RunState::kRunning, "", false},
    {"state says failed", R"({"status": "failed", "error": "out of memory"})", nullptr, "", "",
     std::nullopt, RunState::kFailed, "out of memory", false},
    {"state unreadable", nullptr, nullptr, "x/state.json: corrupt JSON (...)", "", std::nullopt,
     RunState::kFailed, "x/state.json: corrupt JSON (...)", false},
    {"state status not a RunState", R"({"status": "exploded"})", nullptr, "", "", std::nullopt,
     RunState::kFailed, "~state.json", false},
    {"completed", R"({"status": "running", "error": "old"})", R"({"status": "completed"})", "", "",
     std::nullopt, RunState::kCompleted, "", true},
    {"result failed keeps the state's reason", R"({"status": "failed", "error": "disk"})",
     R"({"status": "failed"})", "", "", std::nullopt, RunState::kFailed, "disk", true},
    {"result's own error wins", R"({"status": "failed", "error": "disk"})",
     R"({"status": "failed", "error": "nan"})", "", "", std::nullopt, RunState::kFailed, "nan",
     true},
    {"result without a status", R"({"status": "running"})", R"({"wer": 5})", "", "", std::nullopt,
     RunState::kFailed, "", true},
    {"result unreadable", R"({"status": "completed"})", nullptr, "",
     "x/result.json: corrupt JSON (...)", std::nullopt, RunState::kFailed,
     "x/result.json: corrupt JSON (...)", false},
    {"result status not a RunState", nullptr, R"({"status": 7})", "", "", std::nullopt,
     RunState::kFailed, "~result.json", false},
    {"diverged says where", nullptr,
     R"({"status": "diverged", "diverged_at": {"epoch": 3, "minibatch": 17, "lr": 0.5}})", "", "",
     std::nullopt, RunState::kDiverged, "non-finite loss in epoch 3 minibatch 17 (lr 0.5)", true},
    {"collapsed says why", nullptr,
     R"({"status": "collapsed", "collapse": {"reason": "one class"}})", "", "", std::nullopt,
     RunState::kCollapsed, "one class", true},
    {"preempted, launcher silent", R"({"status": "preempted"})", nullptr, "", "", std::nullopt,
     RunState::kPreempted, "", false},
    {"preempted at the time limit", R"({"status": "preempted"})", nullptr, "", "",
     LaunchState::kTimeout, RunState::kFailed, "~time limit", false},
    {"preempted by the controller", R"({"status": "preempted"})", nullptr, "", "",
     LaunchState::kInterrupted, RunState::kInterrupted, "~interrupted by the sweep controller",
     false},
    {"running when the launcher timed it out", R"({"status": "running"})", nullptr, "", "",
     LaunchState::kTimeout, RunState::kFailed, "~time limit", false},
    {"the launcher's word does not undo an end", R"({"status": "completed"})",
     R"({"status": "completed"})", "", "", LaunchState::kInterrupted, RunState::kCompleted, "",
     true},
    {"finished launch of a failed run", R"({"status": "failed", "error": "x"})", nullptr, "", "",
     LaunchState::kFinished, RunState::kFailed, "x", false},
};

TEST(SettleRunStatus, TableOfCases) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    RunFiles files{"x", std::nullopt, Json(c.result), c.state_error, c.result_error};
    ReadState(c.state, files);
    const SettledRun got = SettleRunStatus(files, c.launcher);
    EXPECT_EQ(got.status, c.status);
    const std::string want = c.reason;
    if (!want.empty() && want[0] == '~') {
      EXPECT_NE(got.reason.find(want.substr(1)), std::string::npos) << got.reason;
    } else {
      EXPECT_EQ(got.reason, want);
    }
    EXPECT_EQ(got.result_usable, c.result_usable);
  }
}

// A run its sweep stopped at a rung: its files say preempted (the pause), the store says stopped;
// it stays stopped with the store's reason, and only then: a run whose files moved on (a retry
// completed it) or a stored status other than stopped takes the files' word.
TEST(SettleRunStatus, AStoppedRunStaysStoppedWhileItsFilesSayPaused) {
  RunFiles paused{"x", std::nullopt, Json(R"({"status": "preempted"})"), "", ""};
  ReadState(R"({"status": "preempted"})", paused);
  const StoredStatus stopped{RunState::kStopped, "stopped at epoch 1 (paired): ..."};
  SettledRun got = SettleRunStatus(paused, LaunchState::kFinished, stopped);
  EXPECT_EQ(got.status, RunState::kStopped);
  EXPECT_EQ(got.reason, stopped.reason);
  EXPECT_EQ(
      SettleRunStatus(paused, LaunchState::kFinished, StoredStatus{RunState::kRunning, ""}).status,
      RunState::kPreempted);
  EXPECT_EQ(SettleRunStatus(paused, LaunchState::kFinished).status, RunState::kPreempted);
  RunFiles done{"x", std::nullopt, Json(R"({"status": "completed"})"), "", ""};
  ReadState(R"({"status": "completed"})", done);
  EXPECT_EQ(SettleRunStatus(done, LaunchState::kFinished, stopped).status, RunState::kCompleted);
}

// The store's ingest settles a run directory's files as the function does, with the launcher's
// verdict read from the attempts table, and keeps a result's values only when usable.
TEST(SettleRunStatus, IngestAgrees) {
  testing::TempDir tmp;
  Store store(tmp.File("mavg.db"));
  store.PutSweep({"s", "name: s\n", "hash", ""}, false);
  const std::string dir = tmp.File("run");
  MakeDirs(dir);
  store.RegisterRuns("s", {{"r", "{}", dir, RunState::kNew, "", ""}}, {{"r", "[]", 0, 0}});
  WriteFileAtomic(dir + "/state.json", R"({"status": "preempted", "attempt": 1})");
  store.StartAttempt("r", 1, "local", "pid 1", "host");
  EXPECT_EQ(store.IngestRun("r", dir), RunState::kPreempted);
  store.EndAttempt("r", 1, LaunchState::kTimeout, 0);
  EXPECT_EQ(store.IngestRun("r", dir), RunState::kFailed);
  EXPECT_NE(store.RunsOfSweep("s").at("r").reason.find("time limit"), std::string::npos);

  WriteFileAtomic(dir + "/result.json", R"({"status": "completed", "wer": 4.5})");
  EXPECT_EQ(store.IngestRun("r", dir), RunState::kCompleted);
  auto q = store.Db().Prepare("SELECT value FROM results WHERE run_id = 'r' AND key = 'wer'");
  ASSERT_TRUE(q.Step());
  EXPECT_EQ(q.Real(0), 4.5);

  WriteFileAtomic(dir + "/result.json", R"({"status": "exploded", "wer": 9})");
  EXPECT_EQ(store.IngestRun("r", dir), RunState::kFailed);
  auto none = store.Db().Prepare("SELECT COUNT(*) FROM results WHERE run_id = 'r'");
  ASSERT_TRUE(none.Step());
  EXPECT_EQ(none.Int(0), 0) << "a result whose status is not a RunState is not stored";
}

}  // namespace
}  // namespace mavg
