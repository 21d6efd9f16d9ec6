#pragma once
// The training run itself (trainer.cpp): setup, epochs over a WorkerGroup, evaluation, the
// model and result. Train() (train.cpp) calls it inside the communicator and run directory.

#include <nlohmann/json.hpp>

#include "engine/comm/communicator.h"
#include "engine/config/config.h"
#include "engine/train/run_dir.h"
#include "engine/train/trainer.h"

namespace mavg {

// Returns result.json's content; throws on errors (Train records them). `run` is the run
// directory on the root process, null elsewhere (not owned).
nlohmann::json RunTraining(const RunConfig& config, const TrainOptions& options, Communicator& comm,
                           RunDir* run);

}  // namespace mavg
