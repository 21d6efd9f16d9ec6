#pragma once
// `mavg bench train`: the training step of a config's network on random data, against the
// SGEMM rate of the same GEMMs at the same thread count, measured interleaved in one run so that
// machine noise affects both alike.

#include <memory>
#include <nlohmann/json.hpp>

#include "engine/backend/device_buffer.h"
#include "engine/config/config.h"
#include "engine/nn/network.h"

namespace mavg {

struct TrainBenchOptions {
  int raw_dim = 40;  // input frame dimension before splicing (input = raw_dim x (2c+1))
  int warmup = 2;    // untimed steps first
  int repeats = 5;   // timed rounds (each: one training step + the same GEMMs alone)
};

// Returns the measurements (medians over rounds) as JSON and logs a summary.
nlohmann::json BenchTrainStep(const RunConfig& config, const TrainBenchOptions& options);

// What every training benchmark starts from: the config's device, its network (Kaldi nnet1
// initialisation), one minibatch of random inputs ~ N(0, 1) with uniform labels.
struct BenchSetup {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Network> net;
  Matrix x;                      // [minibatch x input]
  DeviceBuffer<int32_t> labels;  // [minibatch]
  DeviceBuffer<double> stats;    // [3] loss sums
  int64_t minibatch = 0;
};
BenchSetup MakeBenchSetup(const RunConfig& config, int raw_dim);

double Median(std::vector<double> v);

}  // namespace mavg
