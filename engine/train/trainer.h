#pragma once
// `mavg train`: one training run from a config to a complete run directory.

#include <nlohmann/json.hpp>
#include <string>

#include "engine/config/config.h"

namespace mavg {

struct TrainOptions {
  std::string run_dir;    // where the run files go
  bool force = false;     // overwrite a completed run
  bool progress = false;  // draw a progress line on stderr
};

// Trains and writes config.yaml, state.json, metrics.jsonl, result.json, model.bin, log.txt.
// Returns result.json's content; its "status" is "completed" or "diverged" (a NaN/Inf loss:
// the epoch, minibatch and lr are recorded). Any other problem throws after marking the run
// "failed" with the reason.
nlohmann::json Train(const RunConfig& config, const TrainOptions& options);

}  // namespace mavg
