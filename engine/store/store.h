#pragma once
// The results store: one SQLite database (results/mavg.db by default). The controller process
// (`mavg sweep ...`) is its only writer; training runs only write files in their run
// directories, which `Collect` ingests. Schema (migrated with PRAGMA user_version; see
// schema.cpp for the SQL and the views):
//   sweeps(name, spec_yaml, spec_hash, created)
//   runs(run_id, config_json, run_dir, status, reason, code_version)
//   sweep_runs(sweep, run_id, axes_json, replicate, position)   a run may belong to many sweeps
//   attempts(run_id, n, launcher, job_id, state, exit_code, started, ended, host)
//   epochs(run_id, epoch, attempt, lr, accepted, train_loss, ..., metrics_json)
//   results(run_id, key, value)   env(run_id, key, value)

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/run_state.h"
#include "engine/store/sqlite.h"

namespace mavg {

struct SweepRecord {
  std::string name, spec_yaml, spec_hash, created;
};

struct RunRecord {
  std::string run_id, config_json, run_dir;
  RunState status = RunState::kNew;
  std::string reason, code_version;
};

struct SweepMember {
  std::string run_id;
  std::string axes_json;  // [["parallel.workers", "4"], ...] in the sweep's axis order
  int replicate = 0;
  int position = 0;  // order of the point in the sweep
};

struct AttemptRecord {
  std::string run_id;
  int n = 0;
  std::string launcher, job_id;
  std::string state;  // a LaunchState's text once the launcher reported, else a RunState's
};

struct CollectSummary {
  int runs = 0;      // runs of the sweep looked at
  int ingested = 0;  // with files (state/result) found and stored
  int missing = 0;   // no run directory or no files yet
  std::map<RunState, int> by_status;
};

class Store {
 public:
  // Opens (creating) the database and brings its schema to the latest migration (schema.cpp). A
  // file that is not a database, or one from a newer mavg, is a one-line error naming the file.
  // Read-only (reports, plans, an archived or write-protected database): no migration; one from
  // an older mavg is an error saying to open it writable once.
  explicit Store(const std::string& db_path, sql::OpenMode mode = sql::OpenMode::kReadWrite);

  sql::Database& Db() { return db_; }

  std::optional<SweepRecord> GetSweep(const std::string& name);
  // The sweep named `name`; else throws "<db>: no sweep named '<name>' (did you mean
  // '<closest>'?)" (or "(it holds no sweep yet)").
  SweepRecord RequireSweep(const std::string& name);
  // Records the sweep; a different spec under an existing name is refused unless `force`.
  void PutSweep(const SweepRecord& sweep, bool force);
  std::vector<SweepRecord> Sweeps();

  // Adds runs that do not exist yet (status "new") and the sweep's membership rows.
  void RegisterRuns(const std::string& sweep, const std::vector<RunRecord>& runs,
                    const std::vector<SweepMember>& members);
  std::map<std::string, RunRecord> RunsOfSweep(const std::string& sweep);
  std::vector<SweepMember> MembersOfSweep(const std::string& sweep);
  // run_id -> record for the given ids that exist.
  std::map<std::string, RunRecord> FindRuns(const std::vector<std::string>& run_ids);
  void SetRunStatus(const std::string& run_id, RunState status, const std::string& reason = "");
  // Marks the run "running" if its status is still `expected` (compare-and-set in one write
  // transaction), with `claimer` (ClaimerText) as its reason until the run reports; false when
  // another controller got there first.
  bool ClaimRun(const std::string& run_id, RunState expected, const std::string& claimer = "");
  // Gives back a claim whose run never started (the controller stopped first): the run is
  // `previous` again, unless its status or its claimer changed meanwhile.
  void ReleaseClaim(const std::string& run_id, RunState previous, const std::string& claimer);

  // Launcher bookkeeping of one attempt.
  void StartAttempt(const std::string& run_id, int n, const std::string& launcher,
                    const std::string& job_id, const std::string& host);
  void EndAttempt(const std::string& run_id, int n, LaunchState state, int exit_code);
  // The latest launcher-recorded attempt of every run of the sweep.
  std::map<std::string, AttemptRecord> LatestAttempts(const std::string& sweep);

  // Ingests one run directory (state.json, result.json, metrics.jsonl) in one transaction.
  // Idempotent: the same files give the same rows. A corrupt result.json makes the run
  // "failed" with the parse error as its reason, and so does a status that is not a RunState.
  // Returns the status stored.
  RunState IngestRun(const std::string& run_id, const std::string& run_dir);
  // Ingests every run of the sweep.
  CollectSummary Collect(const std::string& sweep);

  // Each run's epochs as the store has them (epoch order): what a sweep's stop_early rungs
  // read.
  struct EpochCv {
    int epoch = 0;
    bool accepted = true;
    std::optional<double> cv_loss, cv_acc;
  };
  std::map<std::string, std::vector<EpochCv>> SweepEpochs(const std::string& sweep);

 private:
  void Migrate();
  sql::Database db_;
};

}  // namespace mavg
