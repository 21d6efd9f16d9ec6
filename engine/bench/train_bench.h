#pragma once
// `mavg bench train`: the training step of a config's network on random data, against the
// SGEMM rate of the same GEMMs at the same thread count, measured interleaved in one run so that
// machine noise affects both alike; with several optimizers (--optimizers sgd,ngsgd), each one's
// step in the same rounds, on networks of its own, so that their ratio is measured side by side.

#include <memory>
#include <nlohmann/json.hpp>

#include "engine/backend/device_buffer.h"
#include "engine/config/config.h"
#include "engine/core/median.h"
#include "engine/nn/network.h"

namespace mavg {

struct TrainBenchOptions {
  int raw_dim = 40;  // input frame dimension before splicing (input = raw_dim x (2c+1))
  int warmup = 2;    // untimed steps first
  int repeats = 5;   // timed rounds (each: one training step per optimizer + the GEMMs alone)
  // optimizer.type of each arm, in order (empty: the config's); the others keep the config's
  // optimizer settings.
  std::vector<std::string> optimizers;
};

// Returns the measurements as JSON and logs a summary: the first optimizer's at the top level
// (medians over rounds), and every optimizer's in "arms" with means as well (NG-SGD's periodic
// Fisher updates make the mean the fair figure: use repeats divisible by update_period, after a
// warm-up past its first updates), frames/s relative to the first.
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

}  // namespace mavg
