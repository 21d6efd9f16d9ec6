#include "engine/store/store.h"

#include <cmath>
#include <iterator>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"
#include "engine/core/logging.h"
#include "engine/core/nearest.h"
#include "engine/core/sysinfo.h"
#include "engine/records/epoch_row.h"
#include "engine/records/pretrain_record.h"
#include "engine/records/run_result.h"
#include "engine/store/extra_metrics.h"
#include "engine/store/settle.h"

namespace mavg {

namespace store_schema {
const std::vector<std::string>& Migrations();
}

namespace {

// A state's text as a bound parameter.
template <class State>
sql::Value AsValue(State s) {
  return sql::Value(std::string(ToString(s)));
}

// Columns 0-5: run_id, config_json, run_dir, status, reason, code_version. A status that is not
// a RunState names the database and the run.
RunRecord ReadRunRecord(const sql::Statement& s, const std::string& db_path) {
  const std::string id = s.Text(0);
  const RunState status = ParseRunStateOrThrow(s.Text(3), fmt::format("{}: run {}", db_path, id));
  return RunRecord{id, s.Text(1), s.Text(2), status, s.Text(4), s.Text(5)};
}

// Launcher outcomes that outrank the run's own view of an attempt in attempts.state: the run
// only saw itself stop at a checkpoint, the launcher knows why.
constexpr LaunchState kLauncherVerdicts[] = {LaunchState::kTimeout, LaunchState::kInterrupted,
                                             LaunchState::kFailedToStart};

}  // namespace

Store::Store(const std::string& db_path, sql::OpenMode mode) : db_(db_path, 60000, mode) {
  Migrate();
}

void Store::Migrate() {
  const auto& migrations = store_schema::Migrations();
  const int64_t version = db_.UserVersion();
  MAVG_CHECK(version <= static_cast<int64_t>(migrations.size()),
             "{}: database schema version {} is newer than this mavg understands ({})", db_.Path(),
             version, migrations.size());
  if (version == static_cast<int64_t>(migrations.size())) return;
  if (db_.ReadOnly()) {  // ":memory:" is opened writable, so this is a file on disk
    MAVG_CHECK(version > 0, "{}: opened read-only, and it holds no mavg results (no schema)",
               db_.Path());
    MAVG_FAIL(
        "{}: opened read-only, and its schema (version {}) is older than this mavg's ({}): run "
        "one mavg sweep command where it is writable to migrate it",
        db_.Path(), version, migrations.size());
  }
  sql::Transaction tx(db_);
  // Re-read inside the write lock: another process may have migrated meanwhile.
  for (int64_t v = db_.UserVersion(); v < static_cast<int64_t>(migrations.size()); ++v) {
    db_.Exec(migrations[v]);
    db_.SetUserVersion(v + 1);
  }
  tx.Commit();
}

std::optional<SweepRecord> Store::GetSweep(const std::string& name) {
  auto s = db_.Prepare("SELECT name, spec_yaml, spec_hash, created FROM sweeps WHERE name = ?");
  s.Bind(1, name);
  if (!s.Step()) return std::nullopt;
  return SweepRecord{s.Text(0), s.Text(1), s.Text(2), s.Text(3)};
}

SweepRecord Store::RequireSweep(const std::string& name) {
  if (std::optional<SweepRecord> sweep = GetSweep(name)) return *sweep;
  std::vector<std::string> names;
  for (const SweepRecord& s : Sweeps()) names.push_back(s.name);
  MAVG_FAIL("{}: no sweep named '{}'{}", db_.Path(), name,
            names.empty() ? std::string(" (it holds no sweep yet)")
                          : fmt::format(" (did you mean '{}'?)", Nearest(name, names)));
}

std::vector<SweepRecord> Store::Sweeps() {
  auto s = db_.Prepare("SELECT name, spec_yaml, spec_hash, created FROM sweeps ORDER BY name");
  std::vector<SweepRecord> out;
  while (s.Step()) out.push_back({s.Text(0), s.Text(1), s.Text(2), s.Text(3)});
  return out;
}

void Store::PutSweep(const SweepRecord& sweep, bool force) {
  sql::Transaction tx(db_);
  if (auto old = GetSweep(sweep.name)) {
    if (old->spec_hash == sweep.spec_hash) {
      // The same runs; settings outside the run ids (resources: memory, time, QoS ...) may have
      // changed, and retries and reports read them from here.
      if (old->spec_yaml != sweep.spec_yaml) {
        auto u = db_.Prepare("UPDATE sweeps SET spec_yaml = ? WHERE name = ?");
        u.Bind(1, sweep.spec_yaml).Bind(2, sweep.name).Run();
        tx.Commit();
      }
      return;
    }
    MAVG_CHECK(force,
               "sweep '{}' already exists in {} with a different spec (use --force to replace "
               "it, or give this sweep another name)",
               sweep.name, db_.Path());
    auto d = db_.Prepare("DELETE FROM sweep_runs WHERE sweep = ?");
    d.Bind(1, sweep.name).Run();
    auto u = db_.Prepare("UPDATE sweeps SET spec_yaml = ?, spec_hash = ? WHERE name = ?");
    u.Bind(1, sweep.spec_yaml).Bind(2, sweep.spec_hash).Bind(3, sweep.name).Run();
  } else {
    auto i =
        db_.Prepare("INSERT INTO sweeps(name, spec_yaml, spec_hash, created) VALUES (?,?,?,?)");
    i.Bind(1, sweep.name).Bind(2, sweep.spec_yaml).Bind(3, sweep.spec_hash).Bind(4, UtcNow()).Run();
  }
  tx.Commit();
}

void Store::RegisterRuns(const std::string& sweep, const std::vector<RunRecord>& runs,
                         const std::vector<SweepMember>& members) {
  sql::Transaction tx(db_);
  auto ins = db_.Prepare(
      "INSERT INTO runs(run_id, config_json, run_dir) VALUES (?,?,?) ON CONFLICT DO NOTHING");
  for (const RunRecord& r : runs)
    ins.Bind(1, r.run_id).Bind(2, r.config_json).Bind(3, r.run_dir).Run();
  auto mem = db_.Prepare(
      "INSERT INTO sweep_runs(sweep, run_id, axes_json, replicate, position) VALUES (?,?,?,?,?) "
      "ON CONFLICT(sweep, run_id) DO UPDATE SET axes_json = excluded.axes_json, "
      "replicate = excluded.replicate, position = excluded.position");
  for (const SweepMember& m : members) {
    mem.Bind(1, sweep)
        .Bind(2, m.run_id)
        .Bind(3, m.axes_json)
        .Bind(4, m.replicate)
        .Bind(5, m.position)
        .Run();
  }
  tx.Commit();
}

std::map<std::string, RunRecord> Store::RunsOfSweep(const std::string& sweep) {
  auto s = db_.Prepare(
      "SELECT r.run_id, r.config_json, r.run_dir, r.status, r.reason, r.code_version "
      "FROM sweep_runs sr JOIN runs r ON r.run_id = sr.run_id WHERE sr.sweep = ?");
  s.Bind(1, sweep);
  std::map<std::string, RunRecord> out;
  while (s.Step()) out[s.Text(0)] = ReadRunRecord(s, db_.Path());
  return out;
}

std::map<std::string, std::vector<Store::EpochCv>> Store::SweepEpochs(const std::string& sweep) {
  auto s = db_.Prepare(
      "SELECT e.run_id, e.epoch, e.accepted, e.cv_loss, e.cv_acc FROM epochs e JOIN sweep_runs "
      "sr ON sr.run_id = e.run_id WHERE sr.sweep = ? ORDER BY e.run_id, e.epoch");
  s.Bind(1, sweep);
  std::map<std::string, std::vector<EpochCv>> out;
  while (s.Step()) {
    EpochCv e;
    e.epoch = static_cast<int>(s.Real(1));
    e.accepted = s.IsNull(2) || s.Real(2) != 0;
    if (!s.IsNull(3)) e.cv_loss = s.Real(3);
    if (!s.IsNull(4)) e.cv_acc = s.Real(4);
    out[s.Text(0)].push_back(e);
  }
  return out;
}

std::vector<SweepMember> Store::MembersOfSweep(const std::string& sweep) {
  auto s = db_.Prepare(
      "SELECT run_id, axes_json, replicate, position FROM sweep_runs WHERE sweep = ? "
      "ORDER BY position");
  s.Bind(1, sweep);
  std::vector<SweepMember> out;
  while (s.Step()) {
    out.push_back({s.Text(0), s.Text(1), static_cast<int>(s.Int(2)), static_cast<int>(s.Int(3))});
  }
  return out;
}

std::map<std::string, RunRecord> Store::FindRuns(const std::vector<std::string>& run_ids) {
  std::map<std::string, RunRecord> out;
  auto s = db_.Prepare(
      "SELECT run_id, config_json, run_dir, status, reason, code_version FROM runs "
      "WHERE run_id = ?");
  for (const std::string& id : run_ids) {
    s.Bind(1, id);
    if (s.Step()) out[id] = ReadRunRecord(s, db_.Path());
    s.Reset();
  }
  return out;
}

void Store::SetRunStatus(const std::string& run_id, RunState status, const std::string& reason) {
  auto s = db_.Prepare("UPDATE runs SET status = ?, reason = ? WHERE run_id = ?");
  s.Bind(1, AsValue(status)).Bind(2, reason).Bind(3, run_id).Run();
}

bool Store::ClaimRun(const std::string& run_id, RunState expected, const std::string& claimer) {
  sql::Transaction tx(db_);
  auto s = db_.Prepare("UPDATE runs SET status = ?, reason = ? WHERE run_id = ? AND status = ?");
  s.Bind(1, AsValue(RunState::kRunning))
      .Bind(2, claimer)
      .Bind(3, run_id)
      .Bind(4, AsValue(expected))
      .Run();
  const bool claimed = sqlite3_changes(db_.Raw()) == 1;
  tx.Commit();
  return claimed;
}

void Store::ReleaseClaim(const std::string& run_id, RunState previous, const std::string& claimer) {
  auto s = db_.Prepare(
      "UPDATE runs SET status = ?, reason = '' WHERE run_id = ? AND status = ? AND reason = ?");
  s.Bind(1, AsValue(previous))
      .Bind(2, run_id)
      .Bind(3, AsValue(RunState::kRunning))
      .Bind(4, claimer)
      .Run();
}

void Store::StartAttempt(const std::string& run_id, int n, const std::string& launcher,
                         const std::string& job_id, const std::string& host) {
  auto s = db_.Prepare(
      "INSERT INTO attempts(run_id, n, launcher, job_id, state, started, host) "
      "VALUES (?,?,?,?,?,?,?) ON CONFLICT(run_id, n) DO UPDATE SET "
      "launcher = excluded.launcher, job_id = excluded.job_id, state = excluded.state, "
      "started = excluded.started, host = excluded.host, ended = NULL, exit_code = NULL");
  s.Bind(1, run_id)
      .Bind(2, n)
      .Bind(3, launcher)
      .Bind(4, job_id)
      .Bind(5, AsValue(RunState::kRunning))
      .Bind(6, UtcNow())
      .Bind(7, host)
      .Run();
}

void Store::EndAttempt(const std::string& run_id, int n, LaunchState state, int exit_code) {
  auto s = db_.Prepare(
      "UPDATE attempts SET state = ?, exit_code = ?, ended = ? WHERE run_id = ? AND n = ?");
  s.Bind(1, AsValue(state)).Bind(2, exit_code).Bind(3, UtcNow()).Bind(4, run_id).Bind(5, n).Run();
}

std::map<std::string, AttemptRecord> Store::LatestAttempts(const std::string& sweep) {
  auto s = db_.Prepare(
      "SELECT a.run_id, a.n, a.launcher, COALESCE(a.job_id, ''), COALESCE(a.state, '') "
      "FROM attempts a JOIN sweep_runs sr ON sr.run_id = a.run_id "
      "WHERE sr.sweep = ? AND a.launcher IS NOT NULL ORDER BY a.run_id, a.n");
  s.Bind(1, sweep);
  std::map<std::string, AttemptRecord> out;
  while (s.Step()) {
    AttemptRecord a{s.Text(0), static_cast<int>(s.Int(1)), s.Text(2), s.Text(3), s.Text(4)};
    out[a.run_id] = a;
  }
  return out;
}

namespace {

// The launcher's word on a run's latest attempt; a run's own status there (the launcher has not
// reported) is no launch state: nullopt.
std::optional<LaunchState> LatestLaunchState(sql::Database& db, const std::string& run_id) {
  auto last = db.Prepare("SELECT state FROM attempts WHERE run_id = ? ORDER BY n DESC LIMIT 1");
  last.Bind(1, run_id);
  return last.Step() ? ParseLaunchState(last.Text(0)) : std::nullopt;
}

// The run's status and reason as the store holds them (none for a run it does not hold).
std::optional<StoredStatus> StoredStatusOf(sql::Database& db, const std::string& run_id) {
  auto q = db.Prepare("SELECT status, reason FROM runs WHERE run_id = ?");
  q.Bind(1, run_id);
  if (!q.Step()) return std::nullopt;
  const std::optional<RunState> status = ParseRunState(q.Text(0));
  if (!status) return std::nullopt;
  return StoredStatus{*status, q.Text(1)};
}

// `rows` into `table` of a run, replacing the run's rows: columns from the record's table, then
// the whole line as written in `json_column`. Lines left out are warned about.
template <class R, size_t N>
void ReplaceRows(sql::Database& db, const std::string& table, const std::string& run_id,
                 const std::vector<std::pair<std::string, records::Cell>>& leading,
                 const records::RecordLines<R>& rows, const records::Field<R> (&fields)[N],
                 const std::string& json_column) {
  auto del = db.Prepare(fmt::format("DELETE FROM {} WHERE run_id = ?", table));
  del.Bind(1, run_id).Run();
  for (const std::string& why : rows.skipped) {
    spdlog::warn("[store] {} (line left out)", why);
  }
  std::string columns = "run_id", params = "?";
  for (const auto& [name, value] : leading) columns += ", " + name, params += ",?";
  for (int i = 0; i < records::ColumnCount(fields); ++i) params += ",?";
  auto ins = db.Prepare(fmt::format("INSERT OR REPLACE INTO {}({}, {}, {}) VALUES ({},?)", table,
                                    columns, records::ColumnList(fields), json_column, params));
  for (const records::RecordLine<R>& line : rows.lines) {
    int param = 1;
    ins.Bind(param++, run_id);
    for (const auto& [name, value] : leading) ins.Bind(param++, value);
    for (const records::Cell& cell : records::Cells(line.row, fields)) ins.Bind(param++, cell);
    ins.Bind(param, DumpJson(line.json)).Run();
  }
}

// Table epochs of a run: one row per metrics.jsonl line (records/epoch_row.h).
void ReplaceEpochs(sql::Database& db, const std::string& run_id, int attempt,
                   const EpochLines& epochs) {
  ReplaceRows(db, "epochs", run_id, {{"attempt", records::Cell(int64_t{attempt})}}, epochs,
              kEpochFields, "metrics_json");
}

// Table pretrain of a run: one row per pretrain.jsonl line (records/pretrain_record.h).
void ReplacePretrain(sql::Database& db, const std::string& run_id, const std::string& run_dir) {
  ReplaceRows(db, "pretrain", run_id, {}, ReadPretrainLines(run_dir + "/" + kPretrainFileName),
              kPretrainFields, "record_json");
}

// Tables results and env of a run: result.json's entries (records/run_result.h: the table
// says which are the environment), when usable, and the metrics computed outside mavg beside.
void ReplaceResults(sql::Database& db, const std::string& run_id, const std::string& run_dir,
                    const nlohmann::json* result) {
  auto del_r = db.Prepare("DELETE FROM results WHERE run_id = ?");
  del_r.Bind(1, run_id).Run();
  auto del_env = db.Prepare("DELETE FROM env WHERE run_id = ?");
  del_env.Bind(1, run_id).Run();
  if (result == nullptr) return;
  auto ins_r = db.Prepare("INSERT INTO results(run_id, key, value) VALUES (?,?,?)");
  auto ins_env = db.Prepare("INSERT INTO env(run_id, key, value) VALUES (?,?,?)");
  for (const ResultEntry& e : ResultEntries(*result)) {
    (e.environment ? ins_env : ins_r).Bind(1, run_id).Bind(2, e.key).Bind(3, e.value).Run();
  }
  // Metrics computed outside mavg (engine/store/extra_metrics.h), beside its own.
  try {
    for (const auto& [key, value] : ReadExtraMetrics(run_dir)) {
      if (result->contains(key)) continue;  // never over a result mavg measured
      ins_r.Bind(1, run_id).Bind(2, key).Bind(3, value).Run();
    }
  } catch (const Error& e) {
    spdlog::warn("[store] {} (its extra metrics are left out)", e.what());
  }
}

// The run's own view of its attempt in table attempts; the launcher's columns are kept if
// present, and its verdicts outrank the run's status.
void RecordAttempt(sql::Database& db, const std::string& run_id, const RunStateFile& state,
                   RunState status) {
  std::string verdicts;  // "?,?,?": parameters 6.. hold kLauncherVerdicts
  for (size_t i = 0; i < std::size(kLauncherVerdicts); ++i) verdicts += i ? ",?" : "?";
  auto att = db.Prepare(
      fmt::format("INSERT INTO attempts(run_id, n, state, started, host) VALUES (?,?,?,?,?) "
                  "ON CONFLICT(run_id, n) DO UPDATE SET state = CASE WHEN attempts.state IN ({}) "
                  "THEN attempts.state ELSE excluded.state END, "
                  "started = COALESCE(attempts.started, excluded.started), "
                  "host = COALESCE(attempts.host, excluded.host)",
                  verdicts));
  att.Bind(1, run_id)
      .Bind(2, state.Attempt())
      .Bind(3, AsValue(status))
      .Bind(4, state.started.value_or(""))
      .Bind(5, state.host.value_or(""));
  int param = 6;
  for (LaunchState v : kLauncherVerdicts) att.Bind(param++, AsValue(v));
  att.Run();
}

}  // namespace

RunState Store::IngestRun(const std::string& run_id, const std::string& run_dir) {
  const RunFiles files = ReadRunFiles(run_dir);
  const int attempt = files.state ? static_cast<int>(files.state->attempt.value_or(1)) : 0;
  const EpochLines epochs = ReadEpochLines(run_dir + "/" + kMetricsFileName);

  sql::Transaction tx(db_);
  const SettledRun settled =
      SettleRunStatus(files, LatestLaunchState(db_, run_id), StoredStatusOf(db_, run_id));
  const nlohmann::json* result = settled.result_usable ? &*files.result : nullptr;
  auto upd = db_.Prepare("UPDATE runs SET status = ?, reason = ? WHERE run_id = ?");
  upd.Bind(1, AsValue(settled.status)).Bind(2, settled.reason).Bind(3, run_id).Run();
  if (settled.result && settled.result->build) {
    auto cv = db_.Prepare("UPDATE runs SET code_version = ? WHERE run_id = ?");
    cv.Bind(1, BuildOf(*settled.result).code_version.value_or("")).Bind(2, run_id).Run();
  }
  ReplaceEpochs(db_, run_id, attempt, epochs);
  ReplacePretrain(db_, run_id, run_dir);
  ReplaceResults(db_, run_id, run_dir, result);
  if (files.state && attempt > 0) RecordAttempt(db_, run_id, *files.state, settled.status);
  tx.Commit();
  return settled.status;
}

CollectSummary Store::Collect(const std::string& sweep) {
  RequireSweep(sweep);
  CollectSummary summary;
  for (const auto& [run_id, run] : RunsOfSweep(sweep)) {
    ++summary.runs;
    if (!PathExists(RunStatePath(run.run_dir)) && !PathExists(RunResultPath(run.run_dir))) {
      ++summary.missing;
      ++summary.by_status[run.status];
      continue;
    }
    const RunState status = IngestRun(run_id, run.run_dir);
    ++summary.ingested;
    ++summary.by_status[status];
  }
  return summary;
}

}  // namespace mavg
