#pragma once
// <run>/state.json: what a run says of itself while it lives and when it stops. One writer (the
// run, train/run_dir.h), readers in the store (ingest), the sweep controller (is a run alive,
// hung, which attempt comes next) and the run directory itself (resume, refuse a live run); all
// through this record. Every field is optional: a state.json may be from an earlier build, or
// cut short by a crash before its first complete write.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "engine/records/field_table.h"

namespace mavg {

inline constexpr const char* kStateFileName = "state.json";

struct RunStateFile {
  std::optional<RunState> status;  // absent: running (the run has not said otherwise)
  std::optional<int64_t> attempt;  // 1, 2, ... (each launch of the run)
  std::optional<int64_t> pid;      // the training process, on `host`
  std::optional<std::string> host;
  std::optional<std::string> started;    // ISO-8601 UTC start of this attempt
  std::optional<std::string> heartbeat;  // ISO-8601 UTC, refreshed while training
  std::optional<int64_t> world_size;     // workers
  std::optional<std::string> mode;       // parallel.mode
  std::optional<int64_t> epoch;          // the last epoch finished
  std::optional<std::string> error;      // one line: why it failed

  RunState Status() const { return status.value_or(RunState::kRunning); }
  int Attempt() const { return static_cast<int>(attempt.value_or(0)); }
};

inline constexpr records::Field<RunStateFile> kRunStateFields[] = {
    {"status", &RunStateFile::status},
    {"attempt", &RunStateFile::attempt},
    {"pid", &RunStateFile::pid},
    {"host", &RunStateFile::host},
    {"started", &RunStateFile::started},
    {"heartbeat", &RunStateFile::heartbeat},
    {"world_size", &RunStateFile::world_size},
    {"mode", &RunStateFile::mode},
    {"epoch", &RunStateFile::epoch},
    {"error", &RunStateFile::error},
};
static_assert(records::UniqueNames(kRunStateFields), "kRunStateFields: one unique name per field");

nlohmann::json ToJson(const RunStateFile& state);
// Throws mavg::Error naming `where` and the field for a field of the wrong type or a status that
// is not a RunState.
RunStateFile RunStateFromJson(const nlohmann::json& json, std::string_view where);

// <run_dir>/state.json: nullopt when there is none; throws mavg::Error naming the file when it is
// not JSON or not a state.
std::optional<RunStateFile> ReadRunState(const std::string& run_dir);
std::string RunStatePath(const std::string& run_dir);

}  // namespace mavg
