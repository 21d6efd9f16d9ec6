#pragma once
// `mavg bench replicas`: N simulated workers on one device (N parameter replicas trained in
// turn, averaged every K minibatches with Backend::MeanOfReplicas) against one worker, per
// frame, in alternating rounds of one run. `mavg bench average`: what one averaging of the
// config's parameters costs: host staging (device -> page-locked host -> device, the copies an
// MPI rank adds around its all-reduce), and the on-device replica mean of 2 and of N replicas.

#include <nlohmann/json.hpp>

#include "engine/config/config.h"

namespace mavg {

struct ReplicaBenchOptions {
  int raw_dim = 40;  // input frame dimension before splicing
  int workers = 16;  // N
  int every = 10;    // K: minibatches per worker between averagings
  int repeats = 3;   // rounds, each: one worker for K steps, N workers for K steps each
};

nlohmann::json BenchReplicas(const RunConfig& config, const ReplicaBenchOptions& options);
nlohmann::json BenchAverage(const RunConfig& config, const ReplicaBenchOptions& options);

}  // namespace mavg
