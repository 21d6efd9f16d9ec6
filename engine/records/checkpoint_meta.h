#pragma once
// <run>/checkpoint/meta.json: the commit record of a checkpoint (train/checkpoint.h has the
// directory: tensor files first, then this record, atomically). The trainer writes it at every
// epoch end and at a preemption point and reads it back to resume; both through
// kCheckpointFields, with the wording of the reader before it (records::Wording::kCheckpoint).
// Parts owned by others are objects they read themselves: "schedule" (train/schedule.h),
// "averager" (train/averager.h), "pretrain" (the result's pretraining fields, run_result.h).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/records/field_table.h"

namespace mavg {

// "progress": where inside an epoch a checkpoint was taken (absent at an epoch's end).
struct EpochProgress {
  int64_t minibatches = 0;                     // per worker, done in the epoch
  std::optional<int64_t> averagings;           // combine points done
  std::optional<double> projected_s;           // the epoch's projected time so far
  std::optional<double> wall_s;                // the epoch's measured time so far, over attempts
  std::optional<std::vector<double>> workers;  // every worker's statistics (WorkerStats, flat)
  // [kScaleBins] the epoch's max-change scale factors so far, all workers (older: absent)
  std::optional<std::vector<double>> max_change_scales;
};
inline constexpr records::Field<EpochProgress> kEpochProgressFields[] = {
    {"minibatches", &EpochProgress::minibatches},
    {"averagings", &EpochProgress::averagings},
    {.name = "projected_s",
     .member = &EpochProgress::projected_s,
     .timing = records::Timing::kProjected},
    {.name = "wall_s", .member = &EpochProgress::wall_s, .timing = records::Timing::kMeasured},
    {"workers", &EpochProgress::workers},
    {"max_change_scales", &EpochProgress::max_change_scales},
};
static_assert(records::UniqueNames(kEpochProgressFields), "kEpochProgressFields: unique names");
static_assert(records::NamesSayTiming(kEpochProgressFields),
              "kEpochProgressFields: a projection's name starts with projected_, no other's does");

struct CheckpointMeta {
  int64_t generation = 0;                  // G: the tensor files <name>.G.bin belong to it
  int64_t epochs_done = 0;                 // completed epochs (accepted or rejected)
  std::optional<nlohmann::json> progress;  // EpochProgress inside an epoch; absent at its end
  bool stopped = false;                    // the schedule ended training here
  nlohmann::json schedule = nlohmann::json::object();  // the schedule's state
  bool has_best = false;                   // best.G.bin holds the last accepted model (newbob)
  std::string run_id;                      // the run it belongs to
  int64_t world_size = 0;                  // workers N
  std::optional<nlohmann::json> averager;  // the averager's state
  std::vector<double> cv_best;             // [loss_sum, correct, frames] of the last accepted epoch
  std::optional<std::vector<double>> cv_losses;  // [epochs_done] every epoch's CV loss (NaN:
                                                 // not finite); older checkpoints: absent
  std::optional<double> compute_total;      // over the epochs done: the slowest worker's compute
  std::optional<int64_t> frames_total;      // over the epochs done: frames trained by all workers
  std::optional<int64_t> comm_bytes_total;  // over the epochs done: a worker's combine bytes
  std::optional<int64_t> comm_bytes_received_total;  // ... and what they brought it
  // minibatches per worker of the accepted epochs done: the combine policy's step (older: absent)
  std::optional<int64_t> steps_total;
  // What the run's times add up to so far (the result's wall_s, train_s, ...): a resumed run
  // continues the sums. Older checkpoints: absent.
  std::optional<int64_t> attempts;          // the processes whose work this checkpoint holds
  std::optional<double> wall_total;         // their wall time up to this checkpoint
  std::optional<double> io_total;           // their time reading the data
  std::optional<double> train_total;        // over the epochs done: wall_s - cv_s
  std::optional<double> projected_total;    // over the epochs done: projected_wall_s
  std::optional<nlohmann::json> pretrain;   // model.init rbm: the result's pretraining fields
  std::optional<std::string> code_version;  // the build that wrote it; older checkpoints: absent
  std::optional<std::string> written;       // ISO-8601 UTC

  // The limits a checkpoint is checked against: those of the config it is resumed with.
  struct Limits {
    int64_t epochs = 0;   // schedule.epochs
    int64_t workers = 0;  // parallel.workers
  };
  // Checks every value against `limits` (ranges, sizes, progress inside the schedule); throws
  // naming `where` and the field.
  void Validate(const Limits& limits, std::string_view where) const;
  // The progress inside an epoch, if any; throws naming `where` when it is not one.
  std::optional<EpochProgress> Progress(std::string_view where) const;
};

inline constexpr records::Field<CheckpointMeta> kCheckpointFields[] = {
    {"generation", &CheckpointMeta::generation},
    {"epochs_done", &CheckpointMeta::epochs_done},
    {"progress", &CheckpointMeta::progress},
    {"stopped", &CheckpointMeta::stopped},
    {"schedule", &CheckpointMeta::schedule},
    {"has_best", &CheckpointMeta::has_best},
    {"run_id", &CheckpointMeta::run_id},
    {"world_size", &CheckpointMeta::world_size},
    {"averager", &CheckpointMeta::averager},
    {"cv_best", &CheckpointMeta::cv_best},
    {"cv_losses", &CheckpointMeta::cv_losses},
    {.name = "compute_total",
     .member = &CheckpointMeta::compute_total,
     .timing = records::Timing::kMeasured},
    {"frames_total", &CheckpointMeta::frames_total},
    {"comm_bytes_total", &CheckpointMeta::comm_bytes_total},
    {"comm_bytes_received_total", &CheckpointMeta::comm_bytes_received_total},
    {"steps_total", &CheckpointMeta::steps_total},
    {"attempts", &CheckpointMeta::attempts},
    {.name = "wall_total",
     .member = &CheckpointMeta::wall_total,
     .timing = records::Timing::kMeasured},
    {.name = "io_total", .member = &CheckpointMeta::io_total, .timing = records::Timing::kMeasured},
    {.name = "train_total",
     .member = &CheckpointMeta::train_total,
     .timing = records::Timing::kMeasured},
    {.name = "projected_total",
     .member = &CheckpointMeta::projected_total,
     .timing = records::Timing::kProjected},
    {"pretrain", &CheckpointMeta::pretrain},
    {"code_version", &CheckpointMeta::code_version},
    {"written", &CheckpointMeta::written},
};
static_assert(records::UniqueNames(kCheckpointFields), "kCheckpointFields: one unique name");
static_assert(records::NamesSayTiming(kCheckpointFields),
              "kCheckpointFields: a projection's name starts with projected_, no other's does");

// A run directory's checkpoint folder, and the commit record in it (relative to the run
// directory: kCheckpointMetaFile).
inline constexpr const char* kCheckpointDirName = "checkpoint";
inline constexpr const char* kCheckpointMetaFile = "checkpoint/meta.json";
inline std::string CheckpointMetaPath(const std::string& run_dir) {
  return run_dir + "/" + kCheckpointMetaFile;
}

nlohmann::json ToJson(const CheckpointMeta& meta);
nlohmann::json ToJson(const EpochProgress& progress);
// Reads the record (types and presence; Validate checks the values); throws naming `where`.
CheckpointMeta CheckpointMetaFromJson(const nlohmann::json& json, std::string_view where);

}  // namespace mavg
