// `mavg train` around one training run: the communicator, the run directory, and recording the
// outcome (or the failure) so that no rank hangs and nothing is left half-written.
#include <cstdio>

#include "engine/comm/mpi/mpi_communicator.h"
#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/logging.h"
#include "engine/core/signals.h"
#include "engine/core/sysinfo.h"
#include "engine/train/run_dir.h"
#include "engine/train/trainer.h"
#include "engine/train/training_run.h"

namespace mavg {
namespace {

std::unique_ptr<Communicator> MakeCommunicator(const RunConfig& config) {
  if (config.parallel.mode != ParallelMode::kMpi) {
    MAVG_CHECK(!LaunchedUnderMpi(),
               "parallel.mode is '{}' but this process was started by mpirun: set "
               "parallel.mode=mpi, or run without mpirun",
               config.parallel.mode);
    return CreateLocalCommunicator();
  }
  // Overlapped averaging and streamed fragments with an overlap sum on a communication thread.
  const bool background = config.parallel.overlap || config.parallel.stream.overlap_steps > 0;
  auto comm = CreateMpiCommunicator(config.parallel.deterministic, background);
  MAVG_CHECK(comm->WorldSize() == config.parallel.workers,
             "parallel.workers is {} but {} MPI rank(s) were started (mpirun -np {} mavg train "
             "...)",
             config.parallel.workers, comm->WorldSize(), config.parallel.workers);
  return comm;
}

}  // namespace

TrainOutcome Train(const ResolvedRun& spec, const TrainOptions& options) {
  const RunConfig& config = spec.config;
  std::unique_ptr<Communicator> comm = MakeCommunicator(config);
  const bool root = comm->Rank() == 0;
  if (comm->IsDistributed()) SetLogRank(comm->Rank(), comm->WorldSize());
  InstallStopSignalHandlers();

  std::optional<RunDir> run;
  try {
    if (root) {
      run = options.resume ? RunDir::Resume(options.run_dir)
                           : RunDir::Prepare(options.run_dir, options.force);
      // state.json first: from then on the directory is a run's, whatever else a crash leaves.
      run->State().world_size = config.parallel.workers;
      run->State().mode = std::string(ToString(config.parallel.mode));
      run->WriteState(RunState::kRunning);
      if (!options.resume) WriteFileAtomic(run->File("config.yaml"), ToYaml(config));
      AddLogFile(run->File("log.txt"));
      spdlog::info("[train] run {} attempt {} in {}", spec.run_id, run->Attempt(), run->Path());
    }
    comm->Barrier();
  } catch (const std::exception& e) {
    if (comm->IsDistributed()) {
      std::fprintf(stderr, "mavg: error: %s\n", e.what());
      comm->Abort(1);
    }
    throw;
  }

  TrainOutcome out;
  out.rank = comm->Rank();
  try {
    out.result = RunTraining(spec, options, *comm, run ? &*run : nullptr);
  } catch (const std::exception& e) {
    if (root) {
      try {                                             // best effort: the disk may be what failed
        const std::string error = ErrorText(e.what());  // not every exception is an Error
        LogErrorToFiles(fmt::format("[train] failed: {}", error));
        RunResult failed;
        failed.status = RunState::kFailed;
        failed.error = error;
        failed.run_id = spec.run_id;
        failed.finished = UtcNow();
        run->WriteResult(failed);
        run->State().error = error;
        run->WriteState(RunState::kFailed);
        RemoveLogFiles();
      } catch (const std::exception& write_error) {
        std::fprintf(stderr, "mavg: error: cannot record the failure: %s\n", write_error.what());
      }
    }
    if (comm->IsDistributed()) {
      // Peers may be waiting in a collective: take them all down rather than hang.
      std::fprintf(stderr, "mavg: error: rank %d: %s\n", comm->Rank(), e.what());
      comm->Abort(1);
    }
    throw;
  }
  if (root) {
    try {
      run->WriteResult(out.result);
      run->WriteState(out.result.status.value_or(RunState::kFailed));
      RemoveLogFiles();
    } catch (const std::exception& e) {
      if (comm->IsDistributed()) {  // peers wait at the barrier below: take them down
        std::fprintf(stderr, "mavg: error: %s\n", e.what());
        comm->Abort(1);
      }
      throw;
    }
  }
  // No rank leaves before the root has written the run's files: under mpirun a rank that exits
  // non-zero (preempted, diverged) gets the others killed.
  comm->Barrier();
  return out;
}

}  // namespace mavg
