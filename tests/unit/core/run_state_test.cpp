// Run, launch and plan states: every text round-trips, texts are unique, and a misspelt text is
// refused with a message naming it and the valid ones. The texts themselves are pinned: they
// are stored in results databases and run directories.
#include "engine/core/run_state.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace mavg {
namespace {

template <class State, size_t N, class Parse, class ParseOrThrow>
void ExpectRoundTrip(const EnumText<State> (&table)[N], Parse parse, ParseOrThrow parse_or_throw) {
  std::set<std::string_view> texts;
  for (size_t i = 0; i < N; ++i) {
    const State s = table[i].value;
    EXPECT_EQ(static_cast<size_t>(s), i) << "table out of enum order at " << table[i].text;
    EXPECT_EQ(ToString(s), table[i].text);
    EXPECT_EQ(parse(ToString(s)), s) << table[i].text;
    EXPECT_EQ(parse_or_throw(ToString(s), "here"), s) << table[i].text;
    EXPECT_EQ(fmt::format("{}", s), table[i].text);
    EXPECT_TRUE(texts.insert(table[i].text).second) << "duplicate text " << table[i].text;
  }
}

// The message of the Error that `fn` throws; fails the test if it throws none.
template <class Fn>
std::string ErrorOf(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no mavg::Error thrown";
  return "";
}

TEST(RunState, RoundTripsAndUnique) {
  ExpectRoundTrip(kRunStates, ParseRunState, ParseRunStateOrThrow);
}

TEST(LaunchState, RoundTripsAndUnique) {
  ExpectRoundTrip(kLaunchStates, ParseLaunchState, ParseLaunchStateOrThrow);
}

TEST(PlanState, RoundTripsAndUnique) {
  ExpectRoundTrip(kPlanStates, ParsePlanState, ParsePlanStateOrThrow);
}

// The database and run-file contract: these texts must never change.
TEST(RunState, TextsArePinned) {
  const std::vector<std::string_view> run = {"new",       "running",     "completed",
                                             "failed",    "diverged",    "collapsed",
                                             "preempted", "interrupted", "stopped"};
  ASSERT_EQ(std::size(kRunStates), run.size());
  for (size_t i = 0; i < run.size(); ++i) EXPECT_EQ(kRunStates[i].text, run[i]);
  const std::vector<std::string_view> launch = {"finished", "timeout", "interrupted",
                                                "failed-to-start"};
  ASSERT_EQ(std::size(kLaunchStates), launch.size());
  for (size_t i = 0; i < launch.size(); ++i) EXPECT_EQ(kLaunchStates[i].text, launch[i]);
  const std::vector<std::string_view> plan = {"new",      "done",        "stale",
                                              "running",  "interrupted", "failed",
                                              "diverged", "collapsed",   "stopped"};
  ASSERT_EQ(std::size(kPlanStates), plan.size());
  for (size_t i = 0; i < plan.size(); ++i) EXPECT_EQ(kPlanStates[i].text, plan[i]);
}

TEST(RunState, UnknownTextIsRefused) {
  for (const char* bad : {"complete", "Completed", "COMPLETED", " failed", "failed ", "", "done",
                          "timeout", "stale", "preemted"}) {
    EXPECT_EQ(ParseRunState(bad), std::nullopt) << "'" << bad << "'";
  }
  const std::string msg = ErrorOf([] { ParseRunStateOrThrow("complted", "run/state.json"); });
  EXPECT_NE(msg.find("run/state.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'complted'"), std::string::npos) << msg;
  for (const auto& row : kRunStates) {
    EXPECT_NE(msg.find(std::string(row.text)), std::string::npos) << msg;
  }
  // Without a source the message starts with the complaint itself.
  EXPECT_EQ(ErrorOf([] { ParseRunStateOrThrow("x", ""); }).rfind("unknown run state 'x'", 0), 0u);
}

TEST(LaunchState, UnknownTextIsRefused) {
  EXPECT_EQ(ParseLaunchState("running"), std::nullopt);  // a RunState's text is no LaunchState
  EXPECT_EQ(ParseLaunchState("failed_to_start"), std::nullopt);
  const std::string msg = ErrorOf([] { ParseLaunchStateOrThrow("time-out", "attempts.state"); });
  EXPECT_NE(msg.find("'time-out'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("failed-to-start"), std::string::npos) << msg;
}

TEST(PlanState, UnknownTextIsRefused) {
  EXPECT_EQ(ParsePlanState("preempted"), std::nullopt);  // plans call it interrupted
  EXPECT_EQ(ParsePlanState("completed"), std::nullopt);  // plans call it done or stale
  const std::string msg = ErrorOf([] { ParsePlanStateOrThrow("faild", "--state"); });
  EXPECT_EQ(msg.rfind("--state: unknown plan state 'faild'", 0), 0u) << msg;
  EXPECT_NE(msg.find(PlanStateNames()), std::string::npos) << msg;
}

TEST(RunState, Predicates) {
  for (const auto& [s, text] : kRunStates) {
    // Every run is exactly one of: not ended yet, ended with a verdict, resumable, stopped early
    // (resumed only when asked: sweep retry --state stopped).
    const int kinds = (s == RunState::kNew || s == RunState::kRunning) + IsTerminal(s) +
                      IsResumable(s) + (s == RunState::kStopped);
    EXPECT_EQ(kinds, 1) << text;
    EXPECT_EQ(HasEnded(s), s != RunState::kNew && s != RunState::kRunning) << text;
  }
  EXPECT_TRUE(IsTerminal(RunState::kCompleted));
  EXPECT_TRUE(IsTerminal(RunState::kFailed));
  EXPECT_TRUE(IsTerminal(RunState::kDiverged));
  EXPECT_TRUE(IsTerminal(RunState::kCollapsed));
  EXPECT_TRUE(IsUnhealthy(RunState::kDiverged) && IsUnhealthy(RunState::kCollapsed));
  EXPECT_FALSE(IsUnhealthy(RunState::kCompleted) || IsUnhealthy(RunState::kFailed));
  EXPECT_TRUE(IsResumable(RunState::kPreempted));
  EXPECT_TRUE(IsResumable(RunState::kInterrupted));
}

TEST(PlanState, FromRunState) {
  EXPECT_EQ(PlanStateOf(RunState::kNew, true), PlanState::kNew);
  EXPECT_EQ(PlanStateOf(RunState::kRunning, true), PlanState::kRunning);
  EXPECT_EQ(PlanStateOf(RunState::kCompleted, true), PlanState::kDone);
  EXPECT_EQ(PlanStateOf(RunState::kCompleted, false), PlanState::kStale);
  EXPECT_EQ(PlanStateOf(RunState::kFailed, false), PlanState::kFailed);
  EXPECT_EQ(PlanStateOf(RunState::kDiverged, true), PlanState::kDiverged);
  EXPECT_EQ(PlanStateOf(RunState::kCollapsed, true), PlanState::kCollapsed);
  EXPECT_EQ(PlanStateOf(RunState::kPreempted, true), PlanState::kInterrupted);
  EXPECT_EQ(PlanStateOf(RunState::kInterrupted, true), PlanState::kInterrupted);
  // Apart from done/stale, a run's plan state has the same text as its status.
  for (const auto& [s, text] : kRunStates) {
    if (s == RunState::kCompleted || s == RunState::kPreempted) continue;
    EXPECT_EQ(ToString(PlanStateOf(s, true)), text);
  }
}

}  // namespace
}  // namespace mavg
