#include "engine/core/run_state.h"

#include "engine/core/error.h"

namespace mavg {
namespace {

template <HasTexts State>
State FindOrThrow(std::string_view text, std::string_view where, std::string_view kind) {
  if (const auto s = ParseEnum<State>(text)) return *s;
  MAVG_FAIL("{}{}unknown {} '{}' (valid: {})", where, where.empty() ? "" : ": ", kind, text,
            EnumNames<State>());
}

}  // namespace

std::optional<RunState> ParseRunState(std::string_view text) { return ParseEnum<RunState>(text); }
std::optional<LaunchState> ParseLaunchState(std::string_view text) {
  return ParseEnum<LaunchState>(text);
}
std::optional<PlanState> ParsePlanState(std::string_view text) {
  return ParseEnum<PlanState>(text);
}

RunState ParseRunStateOrThrow(std::string_view text, std::string_view where) {
  return FindOrThrow<RunState>(text, where, "run state");
}
LaunchState ParseLaunchStateOrThrow(std::string_view text, std::string_view where) {
  return FindOrThrow<LaunchState>(text, where, "launch state");
}
PlanState ParsePlanStateOrThrow(std::string_view text, std::string_view where) {
  return FindOrThrow<PlanState>(text, where, "plan state");
}

std::string RunStateNames() { return EnumNames<RunState>(); }
std::string LaunchStateNames() { return EnumNames<LaunchState>(); }
std::string PlanStateNames() { return EnumNames<PlanState>(); }

}  // namespace mavg
