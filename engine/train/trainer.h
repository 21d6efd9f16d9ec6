#pragma once
// `mavg train`: one training run from a config to a complete run directory, with one worker,
// N simulated workers in this process, or one MPI rank per worker.

#include <string>

#include "engine/config/schema.h"
#include "engine/records/run_result.h"

namespace mavg {

// Exit codes of `mavg train` (documented in the README).
constexpr int kExitDiverged = 3;
constexpr int kExitCollapsed = 4;   // trained, but learned nothing or was thrown back (health.h)
constexpr int kExitPreempted = 75;  // EX_TEMPFAIL: a scheduler may requeue; --resume continues

struct TrainOptions {
  std::string run_dir;    // where the run files go
  bool force = false;     // overwrite a completed run
  bool resume = false;    // continue run_dir from its checkpoint
  bool progress = false;  // draw a progress line on stderr
  std::string cache_dir;  // pretrained stacks shared between runs (empty: no cache)
  // > 0: pause after this epoch (its checkpoint written) when epochs remain, as a stop signal
  // would at that point: the run ends preempted, and --resume continues it bit for bit (a
  // sweep's stop_early rungs).
  int until_epoch = 0;
};

// What a training process ends with.
struct TrainOutcome {
  RunResult result;  // result.json's record (on every rank)
  int rank = 0;      // this process's rank: rank 0 reports for everyone
};

// Trains and writes config.yaml, state.json, metrics.jsonl, result.json, model.bin, log.txt,
// checkpoint/. The result's status is completed, diverged (a non-finite loss on some worker:
// where in diverged_at), collapsed (trained to the end, but the CV loss says it learned nothing or
// was thrown back: the check in collapse) or preempted (a stop signal: checkpointed, resumable).
// Other problems throw after marking the run failed; under MPI a failing rank aborts all ranks
// so none hangs.
TrainOutcome Train(const ResolvedRun& run, const TrainOptions& options);

}  // namespace mavg
