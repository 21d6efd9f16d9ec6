// Schema migrations of the results store: migration k takes user_version k-1 to k.
#include <string>
#include <vector>

namespace mavg::store_schema {

const std::vector<std::string>& Migrations() {
  static const std::vector<std::string> kMigrations = {
      // 1: the initial schema.
      R"sql(
CREATE TABLE sweeps (
  name      TEXT PRIMARY KEY,
  spec_yaml TEXT NOT NULL,
  spec_hash TEXT NOT NULL,
  created   TEXT NOT NULL
);
CREATE TABLE runs (
  run_id       TEXT PRIMARY KEY,
  config_json  TEXT NOT NULL,
  run_dir      TEXT NOT NULL,
  status       TEXT NOT NULL DEFAULT 'new',  -- new running completed failed diverged preempted interrupted
  reason       TEXT NOT NULL DEFAULT '',     -- one line: why it failed
  code_version TEXT NOT NULL DEFAULT ''      -- engine source hash of the build that ran it
);
CREATE TABLE sweep_runs (
  sweep     TEXT NOT NULL REFERENCES sweeps(name) ON DELETE CASCADE,
  run_id    TEXT NOT NULL REFERENCES runs(run_id),
  axes_json TEXT NOT NULL,                   -- [["axis", "value"], ...]
  replicate INTEGER NOT NULL,
  position  INTEGER NOT NULL,
  PRIMARY KEY (sweep, run_id)
);
CREATE TABLE attempts (
  run_id    TEXT NOT NULL REFERENCES runs(run_id),
  n         INTEGER NOT NULL,
  launcher  TEXT,
  job_id    TEXT,
  state     TEXT,
  exit_code INTEGER,
  started   TEXT,
  ended     TEXT,
  host      TEXT,
  PRIMARY KEY (run_id, n)
);
CREATE TABLE epochs (
  run_id           TEXT NOT NULL REFERENCES runs(run_id),
  epoch            INTEGER NOT NULL,
  attempt          INTEGER,
  lr REAL, accepted INTEGER, train_loss REAL, train_acc REAL, cv_loss REAL, cv_acc REAL,
  frames INTEGER, frames_dropped INTEGER, averagings INTEGER, world_size INTEGER,
  wall_s REAL, compute_s REAL, comm_s REAL, io_s REAL, wait_s REAL, cv_s REAL,
  projected_wall_s REAL,
  metrics_json     TEXT NOT NULL,            -- the whole metrics.jsonl line
  PRIMARY KEY (run_id, epoch)
);
CREATE TABLE results (
  run_id TEXT NOT NULL REFERENCES runs(run_id),
  key    TEXT NOT NULL,
  value,
  PRIMARY KEY (run_id, key)
);
CREATE TABLE env (
  run_id TEXT NOT NULL REFERENCES runs(run_id),
  key    TEXT NOT NULL,
  value  TEXT,
  PRIMARY KEY (run_id, key)
);
CREATE INDEX sweep_runs_by_run ON sweep_runs(run_id);

-- One row per (sweep, run) with its axes and the common results.
CREATE VIEW sweep_results AS
SELECT sr.sweep, sr.position, sr.replicate, r.run_id, r.status, r.reason, sr.axes_json,
       r.run_dir,
       (SELECT value FROM results x WHERE x.run_id = r.run_id AND x.key = 'test_acc')  AS test_acc,
       (SELECT value FROM results x WHERE x.run_id = r.run_id AND x.key = 'test_loss') AS test_loss,
       (SELECT value FROM results x WHERE x.run_id = r.run_id AND x.key = 'cv_acc')    AS cv_acc,
       (SELECT value FROM results x WHERE x.run_id = r.run_id AND x.key = 'cv_loss')   AS cv_loss,
       (SELECT value FROM results x WHERE x.run_id = r.run_id AND x.key = 'wer')       AS wer,
       (SELECT value FROM results x WHERE x.run_id = r.run_id AND x.key = 'epochs')    AS epochs,
       (SELECT value FROM results x WHERE x.run_id = r.run_id AND x.key = 'wall_s')    AS wall_s,
       (SELECT value FROM results x WHERE x.run_id = r.run_id AND x.key = 'world_size') AS world_size
FROM sweep_runs sr JOIN runs r ON r.run_id = sr.run_id;

-- One row per (sweep, run, axis): filter runs by axis values in plain SQL.
CREATE VIEW sweep_axes AS
SELECT sr.sweep, sr.run_id, json_extract(a.value, '$[0]') AS axis,
       json_extract(a.value, '$[1]') AS value
FROM sweep_runs sr, json_each(sr.axes_json) a;

-- Per-epoch metrics of each sweep's runs.
CREATE VIEW sweep_epochs AS
SELECT sr.sweep, e.* FROM sweep_runs sr JOIN epochs e ON e.run_id = sr.run_id;
)sql",
      // 2: RBM pretraining records (pretrain.jsonl), one row per layer and epoch.
      R"sql(
CREATE TABLE pretrain (
  run_id          TEXT NOT NULL REFERENCES runs(run_id),
  layer           INTEGER NOT NULL,
  epoch           INTEGER NOT NULL,
  units TEXT, visible INTEGER, hidden INTEGER, frames INTEGER,
  recon_mse REAL, recon_mse_first REAL, recon_mse_last REAL,
  lr REAL, momentum REAL, guard_triggers INTEGER, seconds REAL,
  cached          INTEGER,                   -- 1: the stack came from the cache
  stack           TEXT,                      -- the cache key of the stack
  record_json     TEXT NOT NULL,             -- the whole pretrain.jsonl line
  PRIMARY KEY (run_id, layer, epoch)
);
CREATE VIEW sweep_pretrain AS
SELECT sr.sweep, p.* FROM sweep_runs sr JOIN pretrain p ON p.run_id = sr.run_id;
)sql",
      // 3: each epoch's CPU use, its threads' wait for a core, and whether other work shared
      // its cores (records/epoch_row.h).
      R"sql(
ALTER TABLE epochs ADD COLUMN cpu_util REAL;
ALTER TABLE epochs ADD COLUMN cpu_wait REAL;
ALTER TABLE epochs ADD COLUMN contended INTEGER;
)sql",
  };
  return kMigrations;
}

}  // namespace mavg::store_schema
