#include "engine/store/settle.h"

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"

namespace mavg {
RunFiles ReadRunFiles(const std::string& run_dir) {
  RunFiles files{run_dir, std::nullopt, std::nullopt, "", ""};
  try {
    files.state = ReadRunState(run_dir);
  } catch (const Error& e) {
    files.state_error = e.what();
  }
  const std::string result = RunResultPath(run_dir);
  if (PathExists(result)) {
    try {
      files.result = ReadJsonFile(result);
    } catch (const Error& e) {
      files.result_error = e.what();
    }
  }
  return files;
}

SettledRun SettleRunStatus(const RunFiles& files, std::optional<LaunchState> launcher,
                           const std::optional<StoredStatus>& stored) {
  SettledRun out;
  if (!files.state_error.empty()) {
    out.status = RunState::kFailed, out.reason = files.state_error;
  } else if (files.state) {
    out.reason = files.state->error.value_or("");
    out.status = files.state->Status();
  }
  if (!files.result_error.empty()) {
    out.status = RunState::kFailed, out.reason = files.result_error;
  } else if (files.result) {
    try {
      out.result = RunResultFromJson(*files.result, RunResultPath(files.run_dir));
      out.status = out.result->status.value_or(RunState::kFailed);
      out.reason = out.result->error.value_or(out.status == RunState::kCompleted ? "" : out.reason);
      out.result_usable = true;
    } catch (const Error& e) {
      out.status = RunState::kFailed, out.reason = e.what();
    }
  }
  if (out.result) {
    if (out.status == RunState::kDiverged && out.result->diverged_at) {
      const DivergedAt d = DivergedAtOf(*out.result);
      out.reason = fmt::format("non-finite loss in epoch {} minibatch {} (lr {})",
                               d.epoch.value_or(0), d.minibatch.value_or(0), d.lr.value_or(0.0));
    }
    if (out.status == RunState::kCollapsed && out.result->collapse) {
      out.reason = CollapseOf(*out.result).reason.value_or(out.reason);
    }
  }
  // A run that stopped at a checkpoint because the launcher stopped it: the launcher's reason
  // decides (time limit: failed, resumable by retry; Ctrl-C: interrupted).
  if (out.status == RunState::kPreempted && stored && stored->status == RunState::kStopped) {
    out.status = RunState::kStopped;
    out.reason = stored->reason;
    return out;
  }
  if (out.status == RunState::kPreempted || out.status == RunState::kRunning) {
    if (launcher == LaunchState::kTimeout) {
      out.status = RunState::kFailed;
      out.reason = "stopped at the time limit (its checkpoint is kept: retry resumes it)";
    } else if (launcher == LaunchState::kInterrupted) {
      out.status = RunState::kInterrupted;
      out.reason = "interrupted by the sweep controller (resumable)";
    }
  }
  return out;
}

}  // namespace mavg
