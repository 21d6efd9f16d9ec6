#include "engine/records/checkpoint_meta.h"

#include <algorithm>
#include <cmath>

namespace mavg {
namespace {

std::string Dump(const std::vector<double>& xs) {
  return records::detail::Numbers(xs).dump().substr(0, 80);
}

bool FiniteNonNegative(double x) { return std::isfinite(x) && x >= 0; }

}  // namespace

nlohmann::json ToJson(const CheckpointMeta& meta) {
  return records::ToJson(meta, kCheckpointFields);
}
nlohmann::json ToJson(const EpochProgress& progress) {
  return records::ToJson(progress, kEpochProgressFields);
}

CheckpointMeta CheckpointMetaFromJson(const nlohmann::json& json, std::string_view where) {
  return records::FromJson(json, kCheckpointFields, where, records::Wording::kCheckpoint);
}

std::optional<EpochProgress> CheckpointMeta::Progress(std::string_view where) const {
  if (!progress) return std::nullopt;
  const std::string at = fmt::format("{}: 'progress'", where);
  EpochProgress p =
      records::FromJson(*progress, kEpochProgressFields, at, records::Wording::kCheckpoint);
  MAVG_CHECK(p.minibatches >= 0,
             "{}: 'progress' is {}, expected null or an object with minibatches >= 0", where,
             progress->dump().substr(0, 80));
  MAVG_CHECK(!p.wall_s || FiniteNonNegative(*p.wall_s),
             "{}: 'progress' has 'wall_s' {}, expected a finite number >= 0", where,
             records::detail::Number(p.wall_s.value_or(0)).dump());
  return p;
}

void CheckpointMeta::Validate(const Limits& limits, std::string_view where) const {
  const auto range = [&](std::string_view name, int64_t x, int64_t lo, int64_t hi,
                         const std::string& what) {
    MAVG_CHECK(x >= lo && x <= hi, "{}: '{}' is {}, must be {}", where, name, x, what);
  };
  range("generation", generation, 1, INT64_MAX, ">= 1");
  range("epochs_done", epochs_done, 0, limits.epochs,
        fmt::format("0..{} (the config's schedule.epochs)", limits.epochs));
  range("world_size", world_size, limits.workers, limits.workers,
        fmt::format("{} (the config's parallel.workers)", limits.workers));
  MAVG_CHECK(cv_best.size() == 3 && std::all_of(cv_best.begin(), cv_best.end(), FiniteNonNegative),
             "{}: 'cv_best' is {}, expected 3 finite numbers >= 0", where, Dump(cv_best));
  if (cv_losses) {  // absent in checkpoints of older versions
    MAVG_CHECK(cv_losses->size() == static_cast<size_t>(epochs_done) &&
                   std::all_of(cv_losses->begin(), cv_losses->end(),
                               [](double x) { return std::isnan(x) || FiniteNonNegative(x); }),
               "{}: 'cv_losses' is {}, expected one number >= 0 (or null) per epoch done", where,
               Dump(*cv_losses));
  }
  const auto seconds = [&](std::string_view name, const std::optional<double>& x) {
    if (!x) return;
    MAVG_CHECK(FiniteNonNegative(*x), "{}: '{}' is {}, expected a finite number >= 0", where, name,
               records::detail::Number(*x).dump());
  };
  seconds("compute_total", compute_total);
  if (frames_total) range("frames_total", *frames_total, 0, INT64_MAX, ">= 0");
  if (steps_total) range("steps_total", *steps_total, 0, INT64_MAX, ">= 0");
  if (attempts) range("attempts", *attempts, 1, INT64_MAX, ">= 1");
  seconds("wall_total", wall_total);
  seconds("io_total", io_total);
  seconds("train_total", train_total);
  seconds("projected_total", projected_total);
  if (Progress(where)) {
    MAVG_CHECK(epochs_done < limits.epochs,
               "{}: 'progress' inside epoch {} after the last epoch ({})", where, epochs_done + 1,
               limits.epochs);
  }
}

}  // namespace mavg
