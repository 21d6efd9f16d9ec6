#pragma once
// A run's status, settled from what the run wrote (state.json, result.json) and what its
// launcher said of its latest attempt: one pure function, so that the store's ingest and its
// tests agree on every case (tests/unit/store/settle_test.cpp).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/core/run_state.h"
#include "engine/records/run_result.h"
#include "engine/records/run_state_file.h"

namespace mavg {

// A run directory's files as read: parsed, or why a file that exists could not be (absent:
// neither).
struct RunFiles {
  std::string run_dir;  // for messages
  std::optional<RunStateFile> state;
  std::optional<nlohmann::json> result;
  std::string state_error, result_error;  // "<file>: why", one line
};
// Reads <run_dir>/state.json and result.json; never throws for what is in them.
RunFiles ReadRunFiles(const std::string& run_dir);

struct SettledRun {
  RunState status = RunState::kNew;
  std::string reason;
  // result.json was read as a record (records/run_result.h): its values are the run's results.
  bool result_usable = false;
  std::optional<RunResult> result;  // that record, when usable
};

// The rules, in order:
// - state.json's status (running without one), its error the reason; unreadable (not JSON, a
//   field of the wrong type, a status that is not a RunState): failed, with why.
// - result.json outranks it: its status (failed without one) and "error" (a completed run has
//   no reason); unreadable or not a result (a field of the wrong type, a status that is not a
//   RunState): failed, with why.
// - a diverged or collapsed result says where (non-finite loss in epoch E minibatch M / the
//   collapse's reason).
// - a run that stopped at a checkpoint (preempted) or never said it ended (running) takes the
//   launcher's verdict: a time limit makes it failed (retry resumes it), an interruption
//   interrupted.
// - a run the store holds as stopped (its sweep's stop_early stopped it at a rung) whose files
//   still say preempted (the pause there) stays stopped, with the store's reason: the stop is
//   the sweep's word, not the run's, and only a new launch (sweep retry --state stopped) ends it.
struct StoredStatus {
  RunState status = RunState::kNew;
  std::string reason;
};
SettledRun SettleRunStatus(const RunFiles& files, std::optional<LaunchState> launcher,
                           const std::optional<StoredStatus>& stored = std::nullopt);

}  // namespace mavg
