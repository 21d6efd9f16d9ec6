#pragma once
// The run directory contract (README.md "Run directory"), written by `mavg train`, read by the
// store; the records of records/ define the files' fields:
//   config.yaml    resolved config         state.json     RunStateFile (status, attempt, ...)
//   metrics.jsonl  an EpochRow per epoch   result.json    RunResult (the final summary)
//   pretrain.jsonl a PretrainEpoch per RBM layer and epoch (model.init rbm)
//   model.bin      final model             log.txt        the run's log
//   checkpoint/    train/checkpoint.h
// Every JSON file is replaced atomically; metrics.jsonl is appended line by line.

#include <nlohmann/json.hpp>
#include <string>

#include "engine/core/run_state.h"
#include "engine/core/sysinfo.h"
#include "engine/records/epoch_row.h"
#include "engine/records/run_result.h"
#include "engine/records/run_state_file.h"

namespace mavg {

class RunDir {
 public:
  // Creates `path` if needed. A directory that holds a completed run is refused unless `force`;
  // one whose state says running under a live process on this host is always refused. When a
  // previous attempt exists its metrics, result and model are removed and the attempt number
  // goes up.
  static RunDir Prepare(const std::string& path, bool force);
  // Opens an existing run to continue it from its checkpoint: keeps every file, raises the
  // attempt number. Refuses a completed run and one in progress under a live process.
  static RunDir Resume(const std::string& path);
  // Keeps the metrics lines of epochs <= `epochs` (the ones a checkpoint covers).
  void TruncateMetrics(int epochs) const;

  const std::string& Path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  int Attempt() const { return attempt_; }

  // The state the next WriteState writes: fields set here (epoch, error, world_size, mode) are
  // kept across writes.
  RunStateFile& State() { return state_; }
  // Writes state.json: `status`, this attempt, process, host, start, a fresh heartbeat, and the
  // fields set through State().
  void WriteState(RunState status);
  void AppendMetrics(const EpochRow& epoch);
  // Writes result.json.
  void WriteResult(const RunResult& result) const;
  void WriteJson(const std::string& name, const nlohmann::json& value) const;

 private:
  RunDir(std::string path, int attempt, std::string started, int lock_fd)
      : path_(std::move(path)),
        attempt_(attempt),
        started_(std::move(started)),
        lock_fd_(lock_fd) {}
  std::string path_;
  int attempt_;
  std::string started_;  // ISO-8601 UTC start of this attempt
  int lock_fd_ = -1;     // flock on <run>/.lock, held while this process lives
  RunStateFile state_;
};

}  // namespace mavg
