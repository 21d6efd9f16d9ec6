#pragma once
// Run, launch and plan states as types. Each enum's text lives in one table below, and that
// text is a contract: it is what runs.status and attempts.state hold in the results database,
// what "status" holds in a run's state.json and result.json, and what `sweep plan`, `sweep
// status` and `sweep retry --state` print and read. Never change a text (existing databases and
// run directories hold it); a new state is a new row (ToString, ParseEnum and EnumNames come from
// core/enum_text.h, whose checks keep every table complete, in enum order and free of
// duplicates).
//
//   RunState     a run: new -> running -> completed | failed | diverged | collapsed | preempted |
//                interrupted | stopped
//   LaunchState  what a launcher saw of one attempt (attempts.state once the launcher reported;
//                before that the column holds the run's own RunState)
//   PlanState    a run as a sweep plan sees it (completed splits into done / stale by code version;
//                preempted and interrupted are both "interrupted": resumable)

#include <optional>
#include <string>
#include <string_view>

#include "engine/core/enum_text.h"

namespace mavg {

enum class RunState {
  kNew,          // registered in the database, never launched (database only)
  kRunning,      // claimed by a controller, or training (state.json while alive)
  kCompleted,    // trained to the end
  kFailed,       // an error, a time limit, or a process that ended without a result
  kDiverged,     // a non-finite loss (retrying starts it over)
  kCollapsed,    // trained to the end but learned nothing, or was thrown back (train/health.h)
  kPreempted,    // stopped by a signal at a checkpoint (resumable)
  kInterrupted,  // stopped by the sweep controller: Ctrl-C or `sweep cancel` (resumable)
  kStopped,      // stopped early by its sweep's stop_early rule at a rung: its arm was losing
                 // (keeps its epochs and checkpoint; `sweep retry --state stopped` resumes it)
};

enum class LaunchState {
  kFinished,       // the process ended by itself: its run directory says how
  kTimeout,        // stopped at the time limit
  kInterrupted,    // stopped by Ctrl-C or `sweep cancel`
  kFailedToStart,  // never started (exec or sbatch failed)
};

enum class PlanState {
  kNew,
  kDone,   // completed by this code version
  kStale,  // completed by another code version (--rerun-stale redoes it)
  kRunning,
  kInterrupted,  // preempted or interrupted: `sweep run` resumes it
  kFailed,
  kDiverged,
  kCollapsed,
  kStopped,  // stopped early (stop_early): resumed only by `sweep retry --state stopped`
};

// The tables, in enum order (also the order in which counts are printed); MAVG_ENUM_TEXTS
// (core/enum_text.h) checks each is complete, in order and free of duplicates.
inline constexpr EnumText<RunState> kRunStates[] = {
    {RunState::kNew, "new"},
    {RunState::kRunning, "running"},
    {RunState::kCompleted, "completed"},
    {RunState::kFailed, "failed"},
    {RunState::kDiverged, "diverged"},
    {RunState::kCollapsed, "collapsed"},
    {RunState::kPreempted, "preempted"},
    {RunState::kInterrupted, "interrupted"},
    {RunState::kStopped, "stopped"},
};
MAVG_ENUM_TEXTS(RunState, kRunStates)
inline constexpr EnumText<LaunchState> kLaunchStates[] = {
    {LaunchState::kFinished, "finished"},
    {LaunchState::kTimeout, "timeout"},
    {LaunchState::kInterrupted, "interrupted"},
    {LaunchState::kFailedToStart, "failed-to-start"},
};
MAVG_ENUM_TEXTS(LaunchState, kLaunchStates)
inline constexpr EnumText<PlanState> kPlanStates[] = {
    {PlanState::kNew, "new"},
    {PlanState::kDone, "done"},
    {PlanState::kStale, "stale"},
    {PlanState::kRunning, "running"},
    {PlanState::kInterrupted, "interrupted"},
    {PlanState::kFailed, "failed"},
    {PlanState::kDiverged, "diverged"},
    {PlanState::kCollapsed, "collapsed"},
    {PlanState::kStopped, "stopped"},
};
MAVG_ENUM_TEXTS(PlanState, kPlanStates)

// The state with this text; nullopt for any other text (exact match, case-sensitive).
std::optional<RunState> ParseRunState(std::string_view text);
std::optional<LaunchState> ParseLaunchState(std::string_view text);
std::optional<PlanState> ParsePlanState(std::string_view text);

// As above, but an unknown text throws mavg::Error naming it, where it came from (`where`,
// e.g. a file or an option; may be empty) and the valid texts.
RunState ParseRunStateOrThrow(std::string_view text, std::string_view where);
LaunchState ParseLaunchStateOrThrow(std::string_view text, std::string_view where);
PlanState ParsePlanStateOrThrow(std::string_view text, std::string_view where);

// "new, running, completed, ..." for help texts and error messages.
std::string RunStateNames();
std::string LaunchStateNames();
std::string PlanStateNames();

// Ended with a verdict (completed, failed, diverged, collapsed): nothing resumes it; only
// `sweep retry` or --force runs it again.
constexpr bool IsTerminal(RunState s) {
  return s == RunState::kCompleted || s == RunState::kFailed || s == RunState::kDiverged ||
         s == RunState::kCollapsed;
}
// Trained, but to a model that must not be used (diverged, collapsed): a retry starts over.
constexpr bool IsUnhealthy(RunState s) {
  return s == RunState::kDiverged || s == RunState::kCollapsed;
}
// Stopped at a checkpoint (preempted, interrupted): the next launch continues it.
constexpr bool IsResumable(RunState s) {
  return s == RunState::kPreempted || s == RunState::kInterrupted;
}
// The run recorded an outcome (terminal, resumable or stopped early); new and running have none
// yet.
constexpr bool HasEnded(RunState s) {
  return IsTerminal(s) || IsResumable(s) || s == RunState::kStopped;
}

// How a plan sees a run with this status; `current_code`: it was made by this code version
// (decides done or stale for a completed run).
constexpr PlanState PlanStateOf(RunState s, bool current_code) {
  switch (s) {
    case RunState::kNew:
      return PlanState::kNew;
    case RunState::kRunning:
      return PlanState::kRunning;
    case RunState::kCompleted:
      return current_code ? PlanState::kDone : PlanState::kStale;
    case RunState::kFailed:
      return PlanState::kFailed;
    case RunState::kDiverged:
      return PlanState::kDiverged;
    case RunState::kCollapsed:
      return PlanState::kCollapsed;
    case RunState::kPreempted:
    case RunState::kInterrupted:
      return PlanState::kInterrupted;
    case RunState::kStopped:
      return PlanState::kStopped;
  }
  return PlanState::kFailed;  // unreachable: every RunState is handled above
}

}  // namespace mavg

// fmt::format("{}", state) writes the state's text.
MAVG_ENUM_FORMATTER(mavg::RunState);
MAVG_ENUM_FORMATTER(mavg::LaunchState);
MAVG_ENUM_FORMATTER(mavg::PlanState);
