// The store's ingest of a run directory: epoch rows inserted from the typed records (every column
// from the record's table), lines that are not records left out with the rest kept, attempts
// recorded from state.json, a second ingest replacing the first.
#include <gtest/gtest.h>

#include <string>

#include "engine/core/files.h"
#include "engine/records/epoch_row.h"
#include "engine/records/pretrain_record.h"
#include "engine/records/run_result.h"
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

namespace mavg {
namespace {

// result.json's fields into table results, its environment into env (records/run_result.h), the
// build's code version onto the run; pretrain.jsonl's records into table pretrain.
TEST_F(Ingest, ResultAndPretrainRowsComeFromTheirRecords) {
  RunResult r;
  r.status = RunState::kCompleted, r.wer = 4.5, r.epochs = 2, r.host = "h";
  BuildInfo b;
  b.code_version = "v1", b.with_cuda = false;
  r.build = ToJson(b);
  WriteFileAtomic(dir_ + "/state.json", R"({"status": "completed", "attempt": 1})");
  WriteFileAtomic(RunResultPath(dir_), ToJson(r).dump());
  PretrainEpoch p;
  p.layer = 1, p.epoch = 2, p.units = "gaussian-bernoulli", p.recon_mse = 0.5, p.cached = true;
  WriteFileAtomic(dir_ + "/" + kPretrainFileName, ToJson(p).dump() + "\n{\"layer\": \"x\"}\n");
  EXPECT_EQ(store_.IngestRun("r", dir_), RunState::kCompleted);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE run_id = 'r' AND key IN ('wer', 'epochs', "
                  "'status')"),
            3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE run_id = 'r' AND key = 'host'"), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM env WHERE run_id = 'r' AND key = 'host' AND value = 'h'"),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM env WHERE run_id = 'r' AND key = 'build.with_cuda' AND "
                  "value = 'false'"),
            1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM runs WHERE run_id = 'r' AND code_version = 'v1'"), 1);
  auto q = store_.Db().Prepare(
      "SELECT layer, epoch, units, recon_mse, cached, stack FROM pretrain WHERE run_id = 'r'");
  ASSERT_TRUE(q.Step());
  EXPECT_EQ(q.Int(0), 1);
  EXPECT_EQ(q.Int(1), 2);
  EXPECT_EQ(q.Text(2), "gaussian-bernoulli");
  EXPECT_EQ(q.Real(3), 0.5);
  EXPECT_EQ(q.Int(4), 1);
  EXPECT_TRUE(q.IsNull(5));
  EXPECT_FALSE(q.Step()) << "the line that is not a record is left out";
}

// A result.json with a field of the wrong type is not the run's result: the run fails with why,
// and no value of it is stored.
TEST_F(Ingest, AResultThatIsNotARecordFailsTheRun) {
  WriteFileAtomic(dir_ + "/state.json", R"({"status": "completed", "attempt": 1})");
  WriteFileAtomic(RunResultPath(dir_), R"({"status": "completed", "wer": "low"})");
  EXPECT_EQ(store_.IngestRun("r", dir_), RunState::kFailed);
  EXPECT_EQ(store_.RunsOfSweep("s").at("r").reason,
            dir_ + "/result.json: 'wer' is a string, expected a number");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM results WHERE run_id = 'r'"), 0);
}

}  // namespace
}  // namespace mavg
