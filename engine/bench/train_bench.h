#pragma once
// `mavg bench train`: the training step of a config's network on random data, against the
// SGEMM rate of the same GEMMs at the same thread count, measured interleaved in one run so that
// machine noise affects both alike.

#include <nlohmann/json.hpp>

#include "engine/config/config.h"

namespace mavg {

struct TrainBenchOptions {
  int raw_dim = 40;  // input frame dimension before splicing (input = raw_dim x (2c+1))
  int warmup = 2;    // untimed steps first
  int repeats = 5;   // timed rounds (each: one training step + the same GEMMs alone)
};

// Returns the measurements (medians over rounds) as JSON and logs a summary.
nlohmann::json BenchTrainStep(const RunConfig& config, const TrainBenchOptions& options);

}  // namespace mavg
