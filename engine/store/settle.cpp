#include "engine/store/settle.h"

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"

namespace mavg {
namespace {

// The "status" of result.json as a RunState, `absent` without one. A
// text that is not a RunState throws naming the file and the valid ones.
RunState FileStatus(const nlohmann::json& file, const std::string& path, RunState absent) {
  if (!file.contains("status")) return absent;
  const nlohmann::json& s = file["status"];
  return ParseRunStateOrThrow(s.is_string() ? s.get<std::string>() : DumpJson(s), path);
}

}  // namespace

RunFiles ReadRunFiles(const std::string& run_dir) {
  RunFiles files{run_dir, std::nullopt, std::nullopt, "", ""};
  try {
    files.state = ReadRunState(run_dir);
  } catch (const Error& e) {
    files.state_error = e.what();
  }
  const std::string result = run_dir + "/result.json";
  if (PathExists(result)) {
    try {
      files.result = ReadJsonFile(result);
    } catch (const Error& e) {
      files.result_error = e.what();
    }
  }
  return files;
}

SettledRun SettleRunStatus(const RunFiles& files, std::optional<LaunchState> launcher) {
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
      out.status = FileStatus(*files.result, files.run_dir + "/result.json", RunState::kFailed);
      out.reason =
          files.result->value("error", out.status == RunState::kCompleted ? "" : out.reason);
      out.result_usable = true;
    } catch (const Error& e) {
      out.status = RunState::kFailed, out.reason = e.what();
    }
  }
  if (out.result_usable) {
    const nlohmann::json& result = *files.result;
    if (out.status == RunState::kDiverged && result.contains("diverged_at")) {
      const auto& d = result["diverged_at"];
      out.reason = fmt::format("non-finite loss in epoch {} minibatch {} (lr {})",
                               d.value("epoch", 0), d.value("minibatch", 0), d.value("lr", 0.0));
    }
    if (out.status == RunState::kCollapsed && result.contains("collapse")) {
      out.reason = result["collapse"].value("reason", out.reason);
    }
  }
  // A run that stopped at a checkpoint because the launcher stopped it: the launcher's reason
  // decides (time limit: failed, resumable by retry; Ctrl-C: interrupted).
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
