#pragma once
// Logging through spdlog. Messages carry a `[subsystem]` tag at the start of the text, e.g.
// LOG_INFO("[train] epoch {} lr {}", ...). Under several ranks every line also carries the rank,
// and info-level lines are printed by rank 0 only. Metrics are not log lines: they go to run
// files (metrics.jsonl, result.json).

#include <spdlog/spdlog.h>

#include <string>

namespace mavg {

// Sets up the console logger. verbosity: 0 = info, 1 = debug, -1 = warnings only.
void InitLogging(int verbosity = 0, int rank = 0, int world_size = 1);
// Re-initialises with the same verbosity once the process knows its rank (MPI).
void SetLogRank(int rank, int world_size);
// Also writes every log line to `path` (appending), e.g. the run's log.txt.
void AddLogFile(const std::string& path);
// Stops writing to any file added with AddLogFile.
void RemoveLogFiles();
// Writes an error line to the log files only (for errors main() prints on the console anyway).
void LogErrorToFiles(const std::string& message);

}  // namespace mavg
