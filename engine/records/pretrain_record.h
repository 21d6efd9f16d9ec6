#pragma once
// One epoch of one layer's RBM pretraining: a line of <run>/pretrain.jsonl (and of a cached
// stack's), a row of the store's table `pretrain`. Pretraining fills it (pretrain/dbn.cpp), the
// trainer adds whether the stack came from the cache, the store inserts it; all from
// kPretrainFields.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/records/field_table.h"
#include "engine/records/record_lines.h"

namespace mavg {

inline constexpr const char* kPretrainFileName = "pretrain.jsonl";

struct PretrainEpoch {
  int64_t layer = 0;                 // 1-based
  int64_t epoch = 0;                 // 1-based, per layer
  std::optional<std::string> units;  // gaussian-bernoulli | bernoulli-bernoulli
  std::optional<int64_t> visible, hidden, frames;
  // Mean squared reconstruction error per visible unit: over the epoch, its first and last tenth.
  std::optional<double> recon_mse, recon_mse_first, recon_mse_last;
  std::optional<double> lr;                  // applied at the epoch's end: lr x (1 - momentum)
  std::optional<double> momentum;            // used in the update
  std::optional<double> scheduled_momentum;  // the schedule's (differs with Kaldi's bug)
  std::optional<int64_t> guard_triggers;     // steps the divergence guard shrank
  // After the epoch: the fraction of hidden units whose activation std is below 0.02 over the
  // first 20,000 frames (pretrain/dbn.h DeadUnitFraction); absent in older records.
  std::optional<double> dead_fraction;
  std::optional<double> seconds;
  std::optional<bool> cached;        // the stack came from the cache (no pretraining here)
  std::optional<std::string> stack;  // the stack's cache key
};

// In the order of the store's columns (kNone: in pretrain.record_json only).
inline constexpr records::Field<PretrainEpoch> kPretrainFields[] = {
    {"layer", &PretrainEpoch::layer, records::Column::kInteger},
    {"epoch", &PretrainEpoch::epoch, records::Column::kInteger},
    {"units", &PretrainEpoch::units, records::Column::kText},
    {"visible", &PretrainEpoch::visible, records::Column::kInteger},
    {"hidden", &PretrainEpoch::hidden, records::Column::kInteger},
    {"frames", &PretrainEpoch::frames, records::Column::kInteger},
    {"recon_mse", &PretrainEpoch::recon_mse, records::Column::kReal},
    {"recon_mse_first", &PretrainEpoch::recon_mse_first, records::Column::kReal},
    {"recon_mse_last", &PretrainEpoch::recon_mse_last, records::Column::kReal},
    {"lr", &PretrainEpoch::lr, records::Column::kReal},
    {"momentum", &PretrainEpoch::momentum, records::Column::kReal},
    {"guard_triggers", &PretrainEpoch::guard_triggers, records::Column::kInteger},
    {"seconds", &PretrainEpoch::seconds, records::Column::kReal},
    {"cached", &PretrainEpoch::cached, records::Column::kInteger},
    {"stack", &PretrainEpoch::stack, records::Column::kText},
    {"scheduled_momentum", &PretrainEpoch::scheduled_momentum},
    {"dead_fraction", &PretrainEpoch::dead_fraction},
};
static_assert(records::UniqueNames(kPretrainFields), "kPretrainFields: one unique name per field");

nlohmann::json ToJson(const PretrainEpoch& record);
PretrainEpoch PretrainEpochFromJson(const nlohmann::json& json, std::string_view where);

// The lines of a pretrain.jsonl (records/record_lines.h).
using PretrainLines = records::RecordLines<PretrainEpoch>;
PretrainLines ReadPretrainLines(const std::string& path);

}  // namespace mavg
