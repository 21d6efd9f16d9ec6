#pragma once
// The training run itself (trainer.cpp): setup, epochs over a WorkerGroup, evaluation, the
// model and result. Train() (train.cpp) calls it inside the communicator and run directory.

#include "engine/comm/communicator.h"
#include "engine/train/run_dir.h"
#include "engine/train/trainer.h"

namespace mavg {

// The run's result; throws on errors (Train records them). `dir` is the run directory on the
// root process, null elsewhere (not owned).
RunResult RunTraining(const ResolvedRun& run, const TrainOptions& options, Communicator& comm,
                      RunDir* dir);

}  // namespace mavg
