#include "engine/core/run_state.h"

#include "engine/core/error.h"

namespace mavg {
namespace {

template <class State, size_t N>
std::optional<State> Find(const StateText<State> (&table)[N], std::string_view text) {
  for (const auto& row : table) {
    if (row.text == text) return row.state;
  }
  return std::nullopt;
}

template <class State, size_t N>
std::string Names(const StateText<State> (&table)[N]) {
  std::string out;
  for (const auto& row : table) out += fmt::format("{}{}", out.empty() ? "" : ", ", row.text);
  return out;
}

template <class State, size_t N>
State FindOrThrow(const StateText<State> (&table)[N], std::string_view text, std::string_view where,
                  std::string_view kind) {
  if (const auto s = Find(table, text)) return *s;
  MAVG_FAIL("{}{}unknown {} '{}' (valid: {})", where, where.empty() ? "" : ": ", kind, text,
            Names(table));
}

}  // namespace

std::optional<RunState> ParseRunState(std::string_view text) { return Find(kRunStates, text); }
std::optional<LaunchState> ParseLaunchState(std::string_view text) {
  return Find(kLaunchStates, text);
}
std::optional<PlanState> ParsePlanState(std::string_view text) { return Find(kPlanStates, text); }

RunState ParseRunStateOrThrow(std::string_view text, std::string_view where) {
  return FindOrThrow(kRunStates, text, where, "run state");
}
LaunchState ParseLaunchStateOrThrow(std::string_view text, std::string_view where) {
  return FindOrThrow(kLaunchStates, text, where, "launch state");
}
PlanState ParsePlanStateOrThrow(std::string_view text, std::string_view where) {
  return FindOrThrow(kPlanStates, text, where, "plan state");
}

std::string RunStateNames() { return Names(kRunStates); }
std::string LaunchStateNames() { return Names(kLaunchStates); }
std::string PlanStateNames() { return Names(kPlanStates); }

}  // namespace mavg
