#pragma once
// Run, launch and plan states as types. Each enum's text lives in one table below, and that
// text is a contract: it is what runs.status and attempts.state hold in the results database,
// what "status" holds in a run's state.json and result.json, and what `sweep plan`, `sweep
// status` and `sweep retry --state` print and read. Never change a text (existing databases and
// run directories hold it); a new state is a new row, and the static_asserts keep every table
// complete, in enum order and free of duplicates.
//
//   RunState     a run: new -> running -> completed | failed | diverged | collapsed | preempted |
//                interrupted
//   LaunchState  what a launcher saw of one attempt (attempts.state once the launcher reported;
//                before that the column holds the run's own RunState)
//   PlanState    a run as a sweep plan sees it (completed splits into done / stale by code version;
//                preempted and interrupted are both "interrupted": resumable)

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

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
};

template <class State>
struct StateText {
  State state;
  std::string_view text;
};

// The tables, in enum order (also the order in which counts are printed).
inline constexpr StateText<RunState> kRunStates[] = {
    {RunState::kNew, "new"},
    {RunState::kRunning, "running"},
    {RunState::kCompleted, "completed"},
    {RunState::kFailed, "failed"},
    {RunState::kDiverged, "diverged"},
    {RunState::kCollapsed, "collapsed"},
    {RunState::kPreempted, "preempted"},
    {RunState::kInterrupted, "interrupted"},
};
inline constexpr StateText<LaunchState> kLaunchStates[] = {
    {LaunchState::kFinished, "finished"},
    {LaunchState::kTimeout, "timeout"},
    {LaunchState::kInterrupted, "interrupted"},
    {LaunchState::kFailedToStart, "failed-to-start"},
};
inline constexpr StateText<PlanState> kPlanStates[] = {
    {PlanState::kNew, "new"},
    {PlanState::kDone, "done"},
    {PlanState::kStale, "stale"},
    {PlanState::kRunning, "running"},
    {PlanState::kInterrupted, "interrupted"},
    {PlanState::kFailed, "failed"},
    {PlanState::kDiverged, "diverged"},
    {PlanState::kCollapsed, "collapsed"},
};

namespace state_detail {
template <class State, size_t N>
constexpr bool WellFormed(const StateText<State> (&table)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (static_cast<size_t>(table[i].state) != i || table[i].text.empty()) return false;
    for (size_t j = 0; j < i; ++j) {
      if (table[j].text == table[i].text) return false;
    }
  }
  return true;
}
}  // namespace state_detail

static_assert(state_detail::WellFormed(kRunStates), "kRunStates: one unique text per RunState");
static_assert(state_detail::WellFormed(kLaunchStates), "kLaunchStates: one per LaunchState");
static_assert(state_detail::WellFormed(kPlanStates), "kPlanStates: one unique text per PlanState");

constexpr std::string_view ToString(RunState s) { return kRunStates[static_cast<size_t>(s)].text; }
constexpr std::string_view ToString(LaunchState s) {
  return kLaunchStates[static_cast<size_t>(s)].text;
}
constexpr std::string_view ToString(PlanState s) {
  return kPlanStates[static_cast<size_t>(s)].text;
}

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
// The run recorded an outcome (terminal or resumable); new and running have none yet.
constexpr bool HasEnded(RunState s) { return IsTerminal(s) || IsResumable(s); }

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
  }
  return PlanState::kFailed;  // unreachable: every RunState is handled above
}

}  // namespace mavg

// fmt::format("{}", state) writes the state's text.
template <>
struct fmt::formatter<mavg::RunState> : fmt::formatter<std::string_view> {
  auto format(mavg::RunState s, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(mavg::ToString(s), ctx);
  }
};
template <>
struct fmt::formatter<mavg::LaunchState> : fmt::formatter<std::string_view> {
  auto format(mavg::LaunchState s, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(mavg::ToString(s), ctx);
  }
};
template <>
struct fmt::formatter<mavg::PlanState> : fmt::formatter<std::string_view> {
  auto format(mavg::PlanState s, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(mavg::ToString(s), ctx);
  }
};
