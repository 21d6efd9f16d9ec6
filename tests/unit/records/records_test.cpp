// The typed run-file records (engine/records/): JSON written and read back field for field, the
// reader's errors naming the file, line and key, and the tables agreeing with the store's schema.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/records/epoch_row.h"
#include "engine/records/run_state_file.h"
#include "engine/store/store.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using nlohmann::json;

EpochRow FullRow() {
  EpochRow r;
  r.epoch = 3;
  r.lr = 0.008;
  r.accepted = false;
  r.train_loss = 1.25, r.train_acc = 0.5, r.cv_loss = 1.5, r.cv_acc = 0.25;
  r.frames = 12345, r.frames_dropped = 7, r.minibatches = 48, r.averagings = 4, r.world_size = 4;
  r.comm_bytes = 4 * 4096, r.comm_bytes_received = 3 * 4 * 4096;
  r.wall_s = 9.5, r.compute_s = 6.0, r.compute_s_mean = 5.5, r.io_s = 0.5, r.io_s_mean = 0.25;
  r.comm_s = 1.0, r.comm_s_mean = 0.75, r.wait_s = 0.125, r.wait_s_mean = 0.0625, r.cv_s = 2.0;
  r.projected_wall_s = 3.5, r.max_change_limited = 0.125;
  r.max_change_scale_p50 = 0.75, r.max_change_scale_p10 = 0.0625;
  r.projected_compute_s = 1.5, r.global_averagings = 2;
  r.cpu_util = 0.625, r.cpu_wait = 0.25, r.contended = true;
  return r;
}

// Every field of the table, compared through the table itself.
void ExpectSame(const EpochRow& a, const EpochRow& b) {
  EXPECT_EQ(ToJson(a), ToJson(b));
  EXPECT_EQ(records::Cells(a, kEpochFields), records::Cells(b, kEpochFields));
}

TEST(EpochRow, RoundTripsEveryField) {
  const EpochRow row = FullRow();
  const json j = ToJson(row);
  EXPECT_EQ(j.size(), std::size(kEpochFields)) << "every field set is written";
  EXPECT_EQ(j["epoch"], 3);
  EXPECT_EQ(j["accepted"], false);
  EXPECT_EQ(j["frames"], 12345);
  EXPECT_EQ(j["wall_s"], 9.5);
  const EpochRow back = EpochRowFromJson(json::parse(j.dump()), "m:1");
  ExpectSame(row, back);
  EXPECT_EQ(back.frames, 12345);
  EXPECT_EQ(back.cv_s, 2.0);
}

TEST(EpochRow, AbsentFieldsAreNotWrittenAndNonFiniteIsNull) {
  EpochRow row;
  row.epoch = 1;
  row.train_loss = std::numeric_limits<double>::quiet_NaN();
  row.cv_loss = std::numeric_limits<double>::infinity();
  const json j = ToJson(row);
  EXPECT_EQ(j, json::parse(R"({"epoch": 1, "train_loss": null, "cv_loss": null})"));
  const EpochRow back = EpochRowFromJson(j, "m:1");
  ASSERT_TRUE(back.train_loss.has_value());
  EXPECT_TRUE(std::isnan(*back.train_loss));
  EXPECT_FALSE(back.lr.has_value());
  EXPECT_TRUE(back.Accepted()) << "absent accepted counts as accepted";
  // The insert binds NULL for absent and non-finite values.
  const std::vector<records::Cell> cells = records::Cells(back, kEpochFields);
  ASSERT_EQ(cells.size(), static_cast<size_t>(records::ColumnCount(kEpochFields)));
  EXPECT_EQ(cells[0], records::Cell(int64_t{1}));
  for (size_t i = 1; i < cells.size(); ++i) {
    EXPECT_TRUE(std::holds_alternative<std::monostate>(cells[i])) << i;
  }
}

TEST(EpochRow, IntegralNumbersReadAsIntegers) {
  const EpochRow r = EpochRowFromJson(json::parse(R"({"epoch": 2.0, "frames": 1e3})"), "m:1");
  EXPECT_EQ(r.epoch, 2);
  EXPECT_EQ(r.frames, 1000);
}

// Each bad line names where it is and the key, and says what was expected.
TEST(EpochRow, ReaderErrorsNameTheLineAndKey) {
  struct Bad {
    const char* line;
    const char* message;
  };
  const Bad cases[] = {
      {R"({"lr": 0.1})", "f:4: no 'epoch'"},
      {R"({"epoch": "3"})", "f:4: 'epoch' is a string, expected an integer"},
      {R"({"epoch": 1, "frames": 2.5})", "f:4: 'frames' is 2.5, expected an integer"},
      {R"({"epoch": 1, "lr": "fast"})", "f:4: 'lr' is a string, expected a number"},
      {R"({"epoch": 1, "accepted": 1})", "f:4: 'accepted' is an integer, expected a boolean"},
      {R"({"epoch": 1, "frames": 18446744073709551615})",
       "f:4: 'frames' is 18446744073709551615, out of range"},
      {R"([1, 2])", "f:4: an array, expected a JSON object"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.line);
    try {
      EpochRowFromJson(json::parse(c.line), "f:4");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), c.message);
    }
  }
}

TEST(EpochRow, ReadLinesKeepsGoodLinesAndSaysWhichAreLeftOut) {
  testing::TempDir tmp;
  const std::string path = tmp.File("metrics.jsonl");
  WriteFileAtomic(path,
                  "{\"epoch\": 1, \"lr\": 0.5, \"extra\": [1]}\n"
                  "not json\n"
                  "{\"epoch\": \"two\"}\n"
                  "\n"
                  "{\"epoch\": 3}\n"
                  "{\"epoch\": 4, \"lr");  // torn: a process killed mid-write
  const EpochLines read = ReadEpochLines(path);
  ASSERT_EQ(read.lines.size(), 2u);
  EXPECT_EQ(read.lines[0].row.epoch, 1);
  EXPECT_EQ(read.lines[0].json["extra"], json::array({1})) << "keys outside the table kept";
  EXPECT_EQ(read.lines[1].row.epoch, 3);
  ASSERT_EQ(read.skipped.size(), 2u);
  EXPECT_EQ(read.skipped[0], path + ":2: not a JSON line");
  EXPECT_EQ(read.skipped[1], path + ":3: 'epoch' is a string, expected an integer");
  EXPECT_TRUE(ReadEpochLines(tmp.File("none.jsonl")).lines.empty());
}

// Every field with a column has it in the store's table `epochs`, with that type; every column
// of the table but the row's keys is a field's.
TEST(EpochRow, ColumnsMatchTheStoreSchema) {
  Store store(":memory:");
  auto s = store.Db().Prepare("SELECT name, type FROM pragma_table_info('epochs')");
  std::map<std::string, std::string> schema;
  while (s.Step()) schema[s.Text(0)] = s.Text(1);
  std::set<std::string> fields;
  for (const auto& f : kEpochFields) {
    if (f.column == records::Column::kNone) continue;
    const std::string name(f.name);
    fields.insert(name);
    ASSERT_TRUE(schema.count(name)) << name;
    EXPECT_EQ(schema[name], f.column == records::Column::kInteger ? "INTEGER" : "REAL") << name;
  }
  for (const auto& [name, type] : schema) {
    if (name == "run_id" || name == "attempt" || name == "metrics_json") continue;
    EXPECT_TRUE(fields.count(name)) << "column " << name << " has no field";
  }
}

TEST(EpochRow, ReportMeansComeFromTheTable) {
  std::map<std::string, std::string> means;
  for (const EpochMean& m : EpochMeans()) means[m.name] = m.expr;
  EXPECT_EQ(means.at("epoch_s"), "e.wall_s - COALESCE(e.cv_s, 0)");
  EXPECT_EQ(means.at("frames_per_epoch"), "e.frames");
  EXPECT_EQ(means.at("projected_epoch_s"), "e.projected_wall_s");
  EXPECT_EQ(means.at("max_change_limited"), "json_extract(e.metrics_json, '$.max_change_limited')");
  // The mean worker's compute and data seconds, for the speedup projected within a run.
  EXPECT_EQ(means.at("worker_compute_s"), "json_extract(e.metrics_json, '$.compute_s_mean')");
  EXPECT_EQ(means.at("worker_io_s"), "json_extract(e.metrics_json, '$.io_s_mean')");
  EXPECT_EQ(means.at("max_change_scale_p50"),
            "json_extract(e.metrics_json, '$.max_change_scale_p50')");
  EXPECT_EQ(means.at("max_change_scale_p10"),
            "json_extract(e.metrics_json, '$.max_change_scale_p10')");
  // Each epoch's CPU use, and the fraction of a run's epochs that were contended.
  EXPECT_EQ(means.at("cpu_util"), "e.cpu_util");
  EXPECT_EQ(means.at("cpu_wait"), "e.cpu_wait");
  EXPECT_EQ(means.at("contended_fraction"), "e.contended");
  // The bytes a worker put into an epoch's combines.
  EXPECT_EQ(means.at("comm_bytes_per_epoch"), "json_extract(e.metrics_json, '$.comm_bytes')");
  // ... what they brought it, and the minibatches a worker took in the epoch.
  EXPECT_EQ(means.at("comm_bytes_received_per_epoch"),
            "json_extract(e.metrics_json, '$.comm_bytes_received')");
  EXPECT_EQ(means.at("minibatches_per_epoch"), "json_extract(e.metrics_json, '$.minibatches')");
  EXPECT_EQ(means.size(), 22u);
}

TEST(EpochRow, TrainSeconds) {
  EpochRow r;
  EXPECT_EQ(r.TrainSeconds(), 0.0);
  r.cv_s = 1.0;
  EXPECT_EQ(r.TrainSeconds(), 0.0) << "no wall time, no training time";
  r.wall_s = 5.0;
  EXPECT_EQ(r.TrainSeconds(), 4.0);
  r.cv_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(r.TrainSeconds(), 5.0);
}

TEST(RunStateFile, RoundTripAndDefaults) {
  RunStateFile s;
  EXPECT_EQ(s.Status(), RunState::kRunning) << "a state without a status is running";
  EXPECT_EQ(s.Attempt(), 0);
  EXPECT_EQ(ToJson(s), json::object());
  s.status = RunState::kPreempted;
  s.attempt = 2, s.pid = 77, s.host = "h", s.started = "a", s.heartbeat = "b";
  s.world_size = 4, s.mode = "mpi", s.epoch = 3, s.error = "e";
  const json j = ToJson(s);
  EXPECT_EQ(j["status"], "preempted");
  EXPECT_EQ(j.size(), std::size(kRunStateFields));
  const RunStateFile back = RunStateFromJson(j, "state.json");
  EXPECT_EQ(ToJson(back), j);
  EXPECT_EQ(back.Attempt(), 2);
}

TEST(RunStateFile, ReadNamesTheFile) {
  testing::TempDir tmp;
  EXPECT_FALSE(ReadRunState(tmp.Path()).has_value());
  WriteFileAtomic(RunStatePath(tmp.Path()), R"({"status": "exploded"})");
  try {
    ReadRunState(tmp.Path());
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(tmp.Path() + "/state.json: 'status'"), std::string::npos)
        << e.what();
  }
  WriteFileAtomic(RunStatePath(tmp.Path()), R"({"status": "running", "pid")");
  EXPECT_THROW(ReadRunState(tmp.Path()), Error);
  WriteFileAtomic(RunStatePath(tmp.Path()), R"({"attempt": "2"})");
  EXPECT_THROW(ReadRunState(tmp.Path()), Error);
}

}  // namespace
}  // namespace mavg
