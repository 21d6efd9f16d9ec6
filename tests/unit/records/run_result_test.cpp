// result.json as its record (records/run_result.h): every field written and read back, the parts
// (build, diverged_at, collapse) read through their own tables, the store's entries routed by the
// table (results or env), and the names other code uses coming from the table.
#include "engine/records/run_result.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/core/error.h"
#include "engine/records/epoch_row.h"

namespace mavg {
namespace {

using nlohmann::json;

RunResult EveryResultField() {
  RunResult r;
  r.status = RunState::kCollapsed, r.error = "e", r.run_id = "0123456789abcdef";
  r.epochs = 4, r.wall_s = 9.5, r.compute_s = 6.25, r.io_s = 0.5, r.frames = 12000;
  r.comm_bytes = 65536, r.comm_bytes_received = 131072;
  r.frames_per_s = 1920.0, r.num_params = 5000, r.world_size = 4, r.mode = "simulated";
  r.attempts = 2, r.train_s = 8.0, r.projected_train_s = 2.5, r.measured_frames_per_s = 1500.0;
  r.projected_frames_per_s = 4800.0;
  r.blas_kernels = "OpenBLAS Zen", r.host = "h", r.finished = "2026-12-03T00:00:00Z";
  BuildInfo b;
  b.code_version = "abc", b.with_cuda = false, b.cpu = "EPYC (avx2)";
  r.build = ToJson(b);
  r.cv_loss = 1.5, r.cv_acc = 0.25, r.test_loss = 1.75, r.test_acc = 0.5, r.test_frames = 800;
  DivergedAt d;
  d.epoch = 2, d.minibatch = 17, d.averaging = 3, d.lr = 0.5;
  r.diverged_at = ToJson(d);
  CollapseNote c;
  c.check = "chance", c.reason = "no better than chance", c.best_cv_loss = 2.0;
  r.collapse = ToJson(c);
  r.signal = 15, r.epoch = 3, r.pretrain_s = 1.25, r.pretrain_cached = true, r.pretrain_key = "k";
  r.wer = 12.5, r.ser = 30.0, r.wer_dev = 11.0, r.wer_sub = 3, r.wer_del = 2, r.wer_ins = 1;
  r.wer_ref_words = 48, r.decode_acoustic_scale = 0.1, r.decode_word_penalty = -1.0;
  r.decode_no_path = 1, r.decode_partial = 2, r.decode_rtf = 0.0625;
  return r;
}

TEST(RunResult, RoundTripsEveryField) {
  const RunResult r = EveryResultField();
  const json j = ToJson(r);
  EXPECT_EQ(j.size(), std::size(kRunResultFields)) << "every field set is written";
  EXPECT_EQ(j["status"], "collapsed");
  EXPECT_EQ(j["pretrain_cached"], true);
  const RunResult back = RunResultFromJson(json::parse(j.dump()), "result.json");
  EXPECT_EQ(ToJson(back), j);
  EXPECT_EQ(BuildOf(back).code_version, "abc");
  EXPECT_EQ(DivergedAtOf(back).minibatch, 17);
  EXPECT_EQ(CollapseOf(back).reason, "no better than chance");
  EXPECT_EQ(ToJson(RunResult{}), json::object()) << "nothing set, nothing written";
}

TEST(RunResult, ReaderNamesTheFileAndField) {
  const auto error_of = [](const char* text) {
    try {
      RunResultFromJson(json::parse(text), "x/result.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of(R"({"status": 7})"),
            "x/result.json: 'status' is an integer, expected a string");
  EXPECT_NE(error_of(R"({"status": "exploded"})").find("unknown run state 'exploded'"),
            std::string::npos);
  EXPECT_EQ(error_of(R"({"epochs": 2.5})"), "x/result.json: 'epochs' is 2.5, expected an integer");
  EXPECT_EQ(error_of(R"({"build": "abc"})"),
            "x/result.json: 'build' is a string, expected an object");
  EXPECT_EQ(error_of(R"({"wer": 5, "future_key": [1]})"), "")
      << "keys of other builds are kept out";
  EXPECT_EQ(error_of(R"({"epochs": 3.0})"), "") << "an integral number is an integer";
}

// A part of the wrong shape words no reason; the result stays usable.
TEST(RunResult, PartsReadLeniently) {
  RunResult r;
  r.diverged_at = json{{"epoch", "two"}};
  EXPECT_FALSE(DivergedAtOf(r).epoch.has_value());
  EXPECT_FALSE(BuildOf(r).code_version.has_value());
}

// The store's rows: fields of the result in table results, the environment (host, finished and
// every object's entries as key.sub) in table env; keys outside the table kept as they were.
TEST(RunResult, EntriesRoutedByTheTable) {
  json file = ToJson(EveryResultField());
  file["other_build_metric"] = 3.5;
  file["other_build_detail"] = {{"a", 1}};
  std::map<std::string, std::pair<bool, records::Cell>> by_key;
  for (const ResultEntry& e : ResultEntries(file)) by_key[e.key] = {e.environment, e.value};
  EXPECT_EQ(by_key.at("wer"), std::make_pair(false, records::Cell(12.5)));
  EXPECT_EQ(by_key.at("epochs"), std::make_pair(false, records::Cell(int64_t{4})));
  EXPECT_EQ(by_key.at("pretrain_cached"), std::make_pair(false, records::Cell(int64_t{1})));
  EXPECT_EQ(by_key.at("status"), std::make_pair(false, records::Cell(std::string("collapsed"))));
  EXPECT_EQ(by_key.at("host"), std::make_pair(true, records::Cell(std::string("h"))));
  EXPECT_EQ(by_key.at("finished").first, true);
  EXPECT_EQ(by_key.at("build.code_version"),
            std::make_pair(true, records::Cell(std::string("abc"))));
  EXPECT_EQ(by_key.at("build.with_cuda"),
            std::make_pair(true, records::Cell(std::string("false"))));
  EXPECT_EQ(by_key.at("diverged_at.minibatch"),
            std::make_pair(true, records::Cell(std::string("17"))));
  EXPECT_EQ(by_key.at("collapse.reason").first, true);
  EXPECT_EQ(by_key.at("other_build_metric"), std::make_pair(false, records::Cell(3.5)));
  EXPECT_EQ(by_key.at("other_build_detail.a"),
            std::make_pair(true, records::Cell(std::string("1"))));
  EXPECT_EQ(by_key.count("build"), 0u) << "an object is its entries";
  json with_null = {{"cv_loss", nullptr}};
  const std::vector<ResultEntry> null_entries = ResultEntries(with_null);
  ASSERT_EQ(null_entries.size(), 1u);
  EXPECT_EQ(null_entries[0].value, records::Cell()) << "a non-finite value is NULL";
}

TEST(RunResult, NamesComeFromTheTable) {
  EXPECT_EQ(ResultKey(&RunResult::test_acc), "test_acc");
  EXPECT_EQ(ResultKey(&RunResult::decode_no_path), "decode_no_path");
  EXPECT_EQ(BuildKey(&BuildInfo::device), "build.device");
  const std::vector<std::string_view> names = RunResultNames();
  EXPECT_EQ(names.size(), std::size(kRunResultFields));
  EXPECT_EQ(std::set<std::string_view>(names.begin(), names.end()).size(), names.size());
  EXPECT_EQ(MeanName(&EpochRow::frames), "frames_per_epoch");
  EXPECT_EQ(MeanName(&EpochRow::projected_wall_s), "projected_epoch_s");
  EXPECT_EQ(MeanName(&EpochRow::lr), "") << "reports do not average the lr";
}

// Every time and throughput says whether it was measured or projected: its field's Timing, and
// its name (a projection's starts with projected_); the earlier builds' frames_per_s, a
// projection under a plain name, is shown labelled.
TEST(RunResult, TimesSayMeasuredOrProjected) {
  const auto is_time = [](std::string_view name) {
    return name.ends_with("_s") || name.ends_with("_per_s") || name.ends_with("_total");
  };
  for (const auto& f : kRunResultFields) {
    if (is_time(f.name)) {
      EXPECT_NE(f.timing, records::Timing::kNone) << f.name;
    }
  }
  for (const auto& f : kEpochFields) {
    if (is_time(f.name)) {
      EXPECT_NE(f.timing, records::Timing::kNone) << f.name;
    }
  }
  for (const EpochMean& m : EpochMeans()) {
    if (is_time(m.name)) {
      EXPECT_NE(m.timing, records::Timing::kNone) << m.name;
    }
  }
  EXPECT_EQ(records::FindField(kRunResultFields, "measured_frames_per_s")->timing,
            records::Timing::kMeasured);
  EXPECT_EQ(records::FindField(kRunResultFields, "projected_frames_per_s")->timing,
            records::Timing::kProjected);
  EXPECT_EQ(records::FindField(kRunResultFields, "wall_s")->timing, records::Timing::kMeasured);
  EXPECT_EQ(ShownResultName("frames_per_s"), "frames_per_s (earlier build: projected)");
  EXPECT_EQ(ShownResultName("wall_s"), "wall_s");
  EXPECT_EQ(ShownResultName("projected_frames_per_s"), "projected_frames_per_s");
  EXPECT_EQ(ShownResultName("an_outside_metric"), "an_outside_metric");
  // A table whose names do not say their timing is refused (at compile time beside each table).
  struct T {
    std::optional<double> a, b;
  };
  constexpr records::Field<T> kUnsaid[] = {
      {.name = "a_s", .member = &T::a, .timing = records::Timing::kProjected}};
  constexpr records::Field<T> kMissaid[] = {
      {.name = "projected_b_s", .member = &T::b, .timing = records::Timing::kMeasured}};
  constexpr records::Field<T> kSaid[] = {
      {.name = "a_s", .member = &T::a, .timing = records::Timing::kMeasured},
      {.name = "projected_b_s", .member = &T::b, .timing = records::Timing::kProjected}};
  static_assert(!records::NamesSayTiming(kUnsaid));
  static_assert(!records::NamesSayTiming(kMissaid));
  static_assert(records::NamesSayTiming(kSaid));
}

// Update takes every field a part sets and leaves the others.
TEST(RunResult, UpdateTakesWhatThePartSets) {
  RunResult r;
  r.wer = 1.0, r.epochs = 3;
  RunResult part;
  part.wer = 2.0, part.ser = 4.0;
  Update(r, part);
  EXPECT_EQ(r.wer, 2.0);
  EXPECT_EQ(r.ser, 4.0);
  EXPECT_EQ(r.epochs, 3);
}

}  // namespace
}  // namespace mavg
