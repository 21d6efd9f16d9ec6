#pragma once
// `mavg bench data --config FILE` (alone, or under mpirun -np N): what loading a run's data
// costs each process -- the training frames it holds, the bytes of their features, and its
// peak resident memory. Rank r of N reads only shard r of N (what `mavg train` does with
// parallel.mode mpi); with `whole`, every rank reads every shard, as a simulated run does.

#include <nlohmann/json.hpp>

#include "engine/config/config.h"

namespace mavg {

struct DataBenchOptions {
  bool whole = false;  // every rank loads every shard (for comparison)
};

// On rank 0 the report of every rank; null on the others.
nlohmann::json BenchDataLoad(const RunConfig& config, const DataBenchOptions& options);

}  // namespace mavg
