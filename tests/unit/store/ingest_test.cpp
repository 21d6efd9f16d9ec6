// The store's ingest of a run directory: epoch rows inserted from the typed records (every column
// from the record's table), lines that are not records left out with the rest kept, attempts
// recorded from state.json, a second ingest replacing the first.
#include <gtest/gtest.h>

#include <string>

#include "engine/core/files.h"
#include "engine/records/epoch_row.h"
#include "engine/store/store.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

class Ingest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.PutSweep({"s", "name: s\n", "hash", ""}, false);
    MakeDirs(dir_);
    store_.RegisterRuns("s", {{"r", "{}", dir_, RunState::kNew, "", ""}}, {{"r", "[]", 0, 0}});
  }
  int64_t Count(const std::string& sql) {
    auto q = store_.Db().Prepare(sql);
    EXPECT_TRUE(q.Step());
    return q.Int(0);
  }

  testing::TempDir tmp_;
  Store store_{tmp_.File("mavg.db")};
  std::string dir_ = tmp_.File("run");
};

TEST_F(Ingest, EpochColumnsComeFromTheRecord) {
  EpochRow row;
  row.epoch = 2, row.lr = 0.25, row.accepted = false, row.frames = 640, row.wall_s = 3.5;
  row.cv_s = 0.5, row.train_loss = std::nan(""), row.max_change_limited = 0.125;
  WriteFileAtomic(dir_ + "/state.json", R"({"status": "running", "attempt": 3})");
  WriteFileAtomic(dir_ + "/metrics.jsonl", ToJson(row).dump() + "\n");
  EXPECT_EQ(store_.IngestRun("r", dir_), RunState::kRunning);

  auto q = store_.Db().Prepare(
      "SELECT epoch, attempt, lr, accepted, frames, wall_s, cv_s, train_loss, cv_loss, "
      "metrics_json FROM epochs WHERE run_id = 'r'");
  ASSERT_TRUE(q.Step());
  EXPECT_EQ(q.Int(0), 2);
  EXPECT_EQ(q.Int(1), 3) << "the attempt from state.json";
  EXPECT_EQ(q.Real(2), 0.25);
  EXPECT_EQ(q.Int(3), 0);
  EXPECT_EQ(q.Int(4), 640);
  EXPECT_EQ(q.Real(5), 3.5);
  EXPECT_EQ(q.Real(6), 0.5);
  EXPECT_TRUE(q.IsNull(7)) << "a non-finite loss is NULL";
  EXPECT_TRUE(q.IsNull(8)) << "an absent field is NULL";
  EXPECT_EQ(nlohmann::json::parse(q.Text(9)), ToJson(row)) << "the whole line kept";
  EXPECT_FALSE(q.Step());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM attempts WHERE run_id = 'r' AND n = 3"), 1);
}

TEST_F(Ingest, BadLinesAreLeftOutAndTheRestKept) {
  WriteFileAtomic(dir_ + "/state.json", R"({"status": "running", "attempt": 1})");
  WriteFileAtomic(dir_ + "/metrics.jsonl",
                  "{\"epoch\": 1, \"lr\": 0.5}\n{\"epoch\": 2, \"lr\": \"x\"}\n{\"lr\": 1}\n"
                  "{\"epoch\": 3, \"old_key\": 7}\n");
  store_.IngestRun("r", dir_);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM epochs WHERE run_id = 'r'"), 2);
  EXPECT_EQ(Count("SELECT json_extract(metrics_json, '$.old_key') FROM epochs WHERE epoch = 3"), 7);

  // A second ingest replaces the rows: the run went on and rewrote its lines.
  WriteFileAtomic(dir_ + "/metrics.jsonl", "{\"epoch\": 1, \"lr\": 0.5}\n");
  store_.IngestRun("r", dir_);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM epochs WHERE run_id = 'r'"), 1);
}

TEST_F(Ingest, AStateThatIsNotARecordFailsTheRunWithWhy) {
  WriteFileAtomic(dir_ + "/state.json", R"({"status": "running", "attempt": "two"})");
  EXPECT_EQ(store_.IngestRun("r", dir_), RunState::kFailed);
  const RunRecord run = store_.RunsOfSweep("s").at("r");
  EXPECT_EQ(run.reason, dir_ + "/state.json: 'attempt' is a string, expected an integer");
}

}  // namespace
}  // namespace mavg
