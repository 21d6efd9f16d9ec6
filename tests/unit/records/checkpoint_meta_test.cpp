// A checkpoint's meta.json as its record (records/checkpoint_meta.h): written and read back field
// for field, the progress inside an epoch as its own record, and the pretraining part as the
// result's fields. (tests/unit/train/checkpoint_test.cpp checks every bad value's message.)
#include "engine/records/checkpoint_meta.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "engine/core/error.h"
#include "engine/records/run_result.h"

namespace mavg {
namespace {

using nlohmann::json;

CheckpointMeta EveryCheckpointField() {
  CheckpointMeta m;
  m.generation = 7, m.epochs_done = 2, m.stopped = false, m.has_best = true;
  EpochProgress p;
  p.minibatches = 12, p.averagings = 4, p.projected_s = 1.5, p.workers = std::vector<double>(20, 1);
  p.wall_s = 3.25;
  m.progress = ToJson(p);
  m.schedule = {{"lr", 0.5}};
  m.run_id = "0123456789abcdef", m.world_size = 2;
  m.averager = json{{"agree", true}};
  m.cv_best = {10.5, 3.0, 20.0};
  m.cv_losses = std::vector<double>{0.9, std::numeric_limits<double>::infinity()};
  m.compute_total = 2.5, m.frames_total = 1000, m.steps_total = 96, m.comm_bytes_total = 8192;
  m.comm_bytes_received_total = 16384;
  m.attempts = 2, m.wall_total = 30.5, m.io_total = 0.75, m.train_total = 20.0;
  m.projected_total = 6.0;
  RunResult pretrain;
  pretrain.pretrain_key = "k", pretrain.pretrain_cached = true;
  m.pretrain = ToJson(pretrain);
  m.code_version = "fedcba9876543210";
  m.written = "now";
  return m;
}

TEST(CheckpointMeta, RoundTripsEveryField) {
  const CheckpointMeta m = EveryCheckpointField();
  const json j = ToJson(m);
  EXPECT_EQ(j.size(), std::size(kCheckpointFields));
  EXPECT_EQ(j["cv_losses"], json::parse("[0.9, null]")) << "a non-finite loss is null";
  const CheckpointMeta back = CheckpointMetaFromJson(json::parse(j.dump()), "meta.json");
  EXPECT_EQ(back.generation, 7);
  EXPECT_TRUE(std::isnan(back.cv_losses->at(1))) << "null reads as NaN";
  const std::optional<EpochProgress> p = back.Progress("meta.json");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->minibatches, 12);
  EXPECT_EQ(p->averagings, 4);
  EXPECT_EQ(p->workers->size(), 20u);
  EXPECT_EQ(p->wall_s, 3.25);
  EXPECT_EQ(back.attempts, 2);
  EXPECT_EQ(back.wall_total, 30.5);
  EXPECT_EQ(back.projected_total, 6.0);
  EXPECT_EQ(back.steps_total, 96);
  EXPECT_EQ(RunResultFromJson(*back.pretrain, "pretrain").pretrain_key, "k");
  EXPECT_EQ(back.code_version, "fedcba9876543210");
  EXPECT_NO_THROW(back.Validate({5, 2}, "meta.json"));
}

// A checkpoint at an epoch's end has no progress: written without it, and earlier builds' null
// reads as none.
TEST(CheckpointMeta, NoProgressAtAnEpochsEnd) {
  CheckpointMeta m = EveryCheckpointField();
  m.progress.reset();
  m.pretrain.reset();
  json j = ToJson(m);
  EXPECT_FALSE(j.contains("progress"));
  EXPECT_FALSE(j.contains("pretrain"));
  j["progress"] = nullptr;
  j["pretrain"] = nullptr;
  const CheckpointMeta back = CheckpointMetaFromJson(j, "meta.json");
  EXPECT_FALSE(back.Progress("meta.json").has_value());
  EXPECT_FALSE(back.pretrain.has_value());
}

TEST(CheckpointMeta, ValidateChecksValuesAgainstTheLimits) {
  CheckpointMeta m = EveryCheckpointField();
  EXPECT_THROW(m.Validate({1, 2}, "meta.json"), Error) << "2 epochs done of 1";
  EXPECT_THROW(m.Validate({5, 3}, "meta.json"), Error) << "another world size";
  m.cv_losses->push_back(0.5);
  EXPECT_THROW(m.Validate({5, 2}, "meta.json"), Error) << "one loss per epoch done";
}

// The sums a resumed run continues: checked like the other totals; absent in older checkpoints.
TEST(CheckpointMeta, ValidateChecksTheAttemptsAndTheirTimes) {
  const auto message = [](const CheckpointMeta& m) {
    try {  // as read back (the fixture's infinite CV loss is then NaN: not finite, allowed)
      CheckpointMetaFromJson(json::parse(ToJson(m).dump()), "meta.json")
          .Validate({5, 2}, "meta.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CheckpointMeta m = EveryCheckpointField();
  m.attempts = 0;
  EXPECT_EQ(message(m), "meta.json: 'attempts' is 0, must be >= 1");
  m = EveryCheckpointField();
  m.wall_total = -1.0;
  EXPECT_EQ(message(m), "meta.json: 'wall_total' is -1.0, expected a finite number >= 0");
  m = EveryCheckpointField();
  m.train_total = std::numeric_limits<double>::infinity();
  EXPECT_EQ(message(m), "meta.json: 'train_total' is null, expected a finite number >= 0")
      << "infinity is written as null and read back as NaN";
  m = EveryCheckpointField();
  EpochProgress p = *m.Progress("meta.json");
  p.wall_s = -2.0;
  m.progress = ToJson(p);
  EXPECT_EQ(message(m), "meta.json: 'progress' has 'wall_s' -2.0, expected a finite number >= 0");
  m = EveryCheckpointField();
  m.attempts.reset(), m.wall_total.reset(), m.io_total.reset(), m.train_total.reset();
  m.projected_total.reset();
  EXPECT_EQ(message(m), "") << "an older checkpoint";
}

}  // namespace
}  // namespace mavg
