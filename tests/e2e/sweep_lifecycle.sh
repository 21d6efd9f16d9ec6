#!/usr/bin/env bash
# A sweep from plan to reports: run, skip finished runs, idempotent collect, reuse across
# sweeps, stale runs, failures that do not stop the sweep, retry, reports and figures.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
small_base base.yaml 32 2
cat > s.yaml <<YAML
name: small
base: base.yaml
set: {parallel.mode: simulated}
grid: {parallel.workers: [1, 2], parallel.average_every: [1, 5]}
replicates: 2
YAML
R=(--results res)
"$MAVG" sweep plan s.yaml "${R[@]}" > plan0.txt
grep -q "totals: new 8 done 0" plan0.txt || fail "expected 8 new runs: $(tail -1 plan0.txt)"
[ ! -e res/mavg.db ] || fail "plan must not create the database"
"$MAVG" -q sweep run s.yaml "${R[@]}" --jobs 2 > run1.txt
grep -q "launched 8, completed 8" run1.txt || fail "first run: $(cat run1.txt)"
"$MAVG" sweep plan s.yaml "${R[@]}" | contains "totals: new 0 done 8" || fail "not all done"
"$MAVG" -q sweep run s.yaml "${R[@]}" | contains "launched 0" || fail "finished runs must be skipped"

# Collecting twice changes nothing.
dump() { python3 -c 'import sqlite3,sys; print("\n".join(sqlite3.connect(sys.argv[1]).iterdump()))' res/mavg.db; }
"$MAVG" sweep collect small "${R[@]}" >/dev/null
dump > d1.sql
"$MAVG" sweep collect small "${R[@]}" | contains "8 ingested" || fail "collect"
dump > d2.sql
cmp -s d1.sql d2.sql || fail "collecting twice changed the database"
python3 - <<'PY'
import sqlite3
db = sqlite3.connect("res/mavg.db")
assert db.execute("SELECT COUNT(*) FROM epochs e JOIN sweep_runs s USING(run_id)").fetchone()[0] == 16
assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
assert db.execute("PRAGMA user_version").fetchone()[0] >= 1
# Plain SQL answers questions through the views.
rows = db.execute("""SELECT value, AVG(test_acc) FROM sweep_results r JOIN sweep_axes a
                     ON a.sweep = r.sweep AND a.run_id = r.run_id
                     WHERE r.sweep = 'small' AND a.axis = 'parallel.workers' GROUP BY value""").fetchall()
assert len(rows) == 2 and all(0.5 < acc < 1 for _, acc in rows), rows
# Replicates have different seeds.
seeds = {r[0] for r in db.execute("SELECT json_extract(config_json, '$.seed') FROM runs")}
assert len(seeds) == 2, seeds
PY

# A metric computed outside mavg: attached to every run of one cell, it is a report value like
# the others, survives a collect, and cannot overwrite mavg's own results.
cell=$(python3 -c 'import sqlite3; db=sqlite3.connect("res/mavg.db"); print(" ".join(r[0] for r in db.execute("""SELECT r.run_dir FROM sweep_results r JOIN sweep_axes a ON a.sweep=r.sweep AND a.run_id=r.run_id JOIN sweep_axes b ON b.sweep=r.sweep AND b.run_id=r.run_id WHERE r.sweep="small" AND a.axis="parallel.workers" AND a.value="2" AND b.axis="parallel.average_every" AND b.value="5" """)))')
[ "$(echo "$cell" | wc -w)" = 2 ] || fail "expected 2 runs in the cell: $cell"
v=15
for run in $cell; do
  "$MAVG" run metric "$run" --set wer_eval2000=$v --set rt_factor=0.5 "${R[@]}" | contains "and res/mavg.db" || fail "run metric"
  v=17
done
"$MAVG" sweep collect small "${R[@]}" > /dev/null
"$MAVG" report table small "${R[@]}" --rows parallel.workers --cols parallel.average_every --value wer_eval2000 --format csv > ext.csv
grep -q "^2,5,16,1.41421" ext.csv || fail "the external metric's cell: $(cat ext.csv)"
expect_error "the name of a result mavg measures itself" "$MAVG" run metric "${cell%% *}" --set test_acc=1 "${R[@]}"
expect_error "not a finite number" "$MAVG" run metric "${cell%% *}" --set wer_eval2000=nan "${R[@]}"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/extra_metrics.json"))["metrics"]; assert m=={"wer_eval2000":15.0,"rt_factor":0.5}, m' "${cell%% *}" || fail "a refused --set changed the file"

# Reports.
"$MAVG" report table small "${R[@]}" --rows parallel.workers --cols parallel.average_every --value test_acc > t.md
grep -q "± .* (n=2)" t.md || fail "table lacks mean ± std (n=2): $(cat t.md)"
"$MAVG" report table small "${R[@]}" --rows parallel.workers --cols parallel.average_every --value test_acc --format csv | sed -n 1p | contains "parallel.workers,parallel.average_every,test_acc_mean,test_acc_std,n" || fail "csv header"
"$MAVG" report table small "${R[@]}" --rows parallel.workers --cols parallel.average_every --format latex | contains '\\begin{tabular}' || fail "latex"
expect_error "axis parallel.average_every varies" "$MAVG" report table small "${R[@]}" --rows parallel.workers
expect_error "not an axis" "$MAVG" report table small "${R[@]}" --rows parallel.wrkers
expect_error "has the metric 'wer2'" "$MAVG" report table small "${R[@]}" --rows parallel.workers --cols parallel.average_every --value wer2
"$MAVG" report speedup small "${R[@]}" --baseline parallel.workers=1 --where parallel.average_every=5 --interconnect ib-fdr | contains "projected speedup" || fail "speedup"
# Without --where: one row per averaging interval and worker count; two links; time to target.
"$MAVG" report speedup small "${R[@]}" --intra nvlink4 --inter ib-hdr > sp.md
grep -q "| parallel.average_every | parallel.workers |.*| model epoch s (nvlink4 / ib-hdr) |.*| time to baseline CV loss s | reached target |" sp.md || fail "speedup columns: $(cat sp.md)"
[ "$(grep -c '^| [15] | [12] |' sp.md)" = 4 ] || fail "speedup rows: $(cat sp.md)"
expect_error "needs --inter" "$MAVG" report speedup small "${R[@]}" --intra nvlink4
"$MAVG" report table small "${R[@]}" --rows parallel.workers --cols parallel.average_every --value time_to_target | contains "of 2 reached)" || fail "time_to_target table"
"$MAVG" report paper small "${R[@]}" --reference "$MAVG_SOURCE_DIR/sweeps/paper/reference.yaml" --where parallel.average_every=5 | contains "paper: WER SWB" || fail "paper"
if /usr/bin/python3 -c 'import matplotlib, yaml' 2>/dev/null; then
  /usr/bin/python3 "$MAVG_SOURCE_DIR/analysis/plot.py" res/mavg.db --sweep small --kind metric --out figs >/dev/null
  /usr/bin/python3 "$MAVG_SOURCE_DIR/analysis/plot.py" res/mavg.db --sweep small --kind speedup --out figs \
    --reference "$MAVG_SOURCE_DIR/sweeps/paper/reference.yaml" >/dev/null
  for f in small-test_error small-speedup; do [ -s "figs/$f.png" ] && [ -s "figs/$f.pdf" ] || fail "figure $f"; done
fi

# The same point in another sweep is the same run: reused, not rerun.
cat > other.yaml <<YAML
name: other
base: base.yaml
set: {parallel.mode: simulated}
grid: {parallel.workers: [2, 4], parallel.average_every: [5]}
YAML
"$MAVG" sweep plan other.yaml "${R[@]}" > other.txt
grep -q "totals: new 1 done 1" other.txt || fail "shared point not reused: $(tail -1 other.txt)"
"$MAVG" -q sweep run other.yaml "${R[@]}" | contains "launched 1" || fail "only the new point runs"

# Code changed since a run: stale.
python3 -c 'import sqlite3; db=sqlite3.connect("res/mavg.db"); db.execute("UPDATE runs SET code_version=\"0ld\" WHERE run_id IN (SELECT run_id FROM sweep_runs WHERE sweep=\"other\")"); db.commit()'
"$MAVG" sweep plan other.yaml "${R[@]}" | contains "stale 2" || fail "stale runs not shown"
"$MAVG" -q sweep run other.yaml "${R[@]}" --rerun-stale | contains "launched 2, completed 2" || fail "stale rerun"
"$MAVG" sweep plan other.yaml "${R[@]}" | contains "totals: new 0 done 2 stale 0" || fail "stale runs not redone"

# A failing point does not stop the sweep; the summary names it; exit code non-zero.
cat > bad.yaml <<YAML
name: mixed
base: base.yaml
grid: {model.activation: [sigmoid, relu], schedule.lr: [0.004, 5]}
YAML
rc=0
"$MAVG" -q sweep run bad.yaml "${R[@]}" > mixed.txt || rc=$?
[ "$rc" -eq 1 ] || fail "a sweep with failures should exit 1, got $rc"
grep -q "diverged" mixed.txt || fail "summary lacks the diverged run: $(cat mixed.txt)"
grep -q "completed" mixed.txt || fail "the other runs should complete: $(cat mixed.txt)"
"$MAVG" sweep status mixed "${R[@]}" > status.txt
grep -q "non-finite loss in epoch" status.txt || fail "status lacks the reason: $(cat status.txt)"
grep -Eq "^  diverged [0-9a-f]+ model.activation=[a-z]+ schedule.lr=5: " status.txt || fail "status axes not key=value: $(cat status.txt)"
rc=0
"$MAVG" -q sweep retry mixed "${R[@]}" --state diverged > retry.txt || rc=$?
grep -q "retrying 1 run" retry.txt || fail "retry: $(cat retry.txt)"

# A run the database records as running whose run directory is gone (deleted by hand, a lost
# scratch disk) is relaunched by the next `sweep run`, not waited for forever.
read -r gone_id gone_dir < <(python3 -c 'import sqlite3; print(*sqlite3.connect("res/mavg.db").execute("SELECT run_id, run_dir FROM sweep_results WHERE sweep=\"small\" ORDER BY position LIMIT 1").fetchone())')
python3 -c 'import sqlite3, sys; db = sqlite3.connect("res/mavg.db"); db.execute("UPDATE runs SET status = \"running\" WHERE run_id = ?", (sys.argv[1],)); db.commit()' "$gone_id"
rm -rf "$gone_dir"
"$MAVG" sweep plan s.yaml "${R[@]}" | contains "running 1" || fail "the run is not recorded as running"
"$MAVG" -q sweep run s.yaml "${R[@]}" > gone.txt
grep -q "launched 1, completed 1" gone.txt || fail "a running run without a run dir was not relaunched: $(cat gone.txt)"
[ -s "$gone_dir/result.json" ] || fail "the relaunched run left no result"

# ---- bad input ----
printf 'name: x\nbase: base.yaml\ngrid: {parallel.wrkers: [1, 2]}\n' > e1.yaml
expect_error "unknown axis 'parallel.wrkers' (did you mean 'parallel.workers'?)" "$MAVG" sweep plan e1.yaml "${R[@]}"
printf 'name: x\nbase: base.yaml\ngrid: {parallel.workers: []}\n' > e2.yaml
expect_error "empty list of values" "$MAVG" sweep plan e2.yaml "${R[@]}"
printf 'name: x\nbase: base.yaml\nzip: [{optimizer.minibatch: [16, 32], schedule.lr: [0.1]}]\n' > e3.yaml
expect_error "zip lists must have equal lengths" "$MAVG" sweep plan e3.yaml "${R[@]}"
printf 'name: x\nbase: base.yaml\ngrid: {parallel.workers: [1, 2]}\nexclude: [{seed: 3}]\n' > e4.yaml
expect_error "exclude names 'seed', which is not an axis" "$MAVG" sweep plan e4.yaml "${R[@]}"
printf 'name: x\nbase: base.yaml\ngrid: {parallel.workers: [1, two]}\n' > e5.yaml
expect_error "expects an integer" "$MAVG" sweep plan e5.yaml "${R[@]}"
printf 'name: x\nbase: base.yaml\ngird: {parallel.workers: [1]}\n' > e6.yaml
expect_error "unknown sweep key 'gird' (did you mean 'grid'?)" "$MAVG" sweep plan e6.yaml "${R[@]}"
printf 'name: x\nbase: base.yaml\ngrid:\n  parallel.workers: [1, 2]\n  parallel.workers: [4]\n' > e7.yaml
python3 -c "
v = list(range(1, 101))
print('name: huge\nbase: base.yaml\ngrid:')
for k in ('seed', 'optimizer.minibatch', 'schedule.epochs', 'data.context'):
    print(f'  {k}: {v}')
" > e8.yaml
expect_error "the sweep has 100000000 runs (100 x 100 x 100 x 100 x 1 replicate(s)), more than max_runs 10000" "$MAVG" sweep plan e8.yaml "${R[@]}"
printf 'name: x\nbase: base.yaml\ngrid: {parallel.workers: [1, 2]}\nexclude: [{parallel.workers: 3}]\n' > e9.yaml
"$MAVG" sweep plan e9.yaml "${R[@]}" > /dev/null 2> e9.err || fail "exclude matching nothing: $(cat e9.err)"
grep -q "exclude entry 1 (parallel.workers: 3) matches no point" e9.err || fail "no warning: $(cat e9.err)"
expect_error "e7.yaml:5:3: duplicate key 'grid.parallel.workers' (first at line 4:3)" "$MAVG" sweep plan e7.yaml "${R[@]}"
# A node of the wrong kind (a list where a name goes) is a clean error with its place.
printf 'name: [a, b]\nbase: base.yaml\n' > e10.yaml
expect_error "e10.yaml: line 1: 'name' must be a single value" "$MAVG" sweep plan e10.yaml "${R[@]}"
printf 'name: x\nbase: {a: 1}\n' > e11.yaml
expect_error "e11.yaml:2:7" "$MAVG" sweep plan e11.yaml "${R[@]}"
sed 's/\[1, 2\]/[1, 2, 4]/' s.yaml > s2.yaml
expect_error "already exists in res/mavg.db with a different spec" "$MAVG" sweep run s2.yaml "${R[@]}" --max-runs 1
# An archived database (a folder and file this user cannot write) is read as it is.
# (The last connection to close checkpoints the WAL into the file, so the file alone is whole.)
# Run as nobody, who may not reach this checkout (a clone in a private directory, /root): the
# binary and the archive go to a directory of their own under /tmp that nobody can read.
as_nobody() { (cd "$ro" && runuser -u nobody -- "$@"); }
if command -v runuser > /dev/null && runuser -u nobody -- true 2> /dev/null; then
  ro=$(mktemp -d /tmp/mavg-readonly.XXXXXX)
  chmod 0755 "$ro"
  cp "$MAVG" "$ro/mavg" && chmod 0755 "$ro/mavg"
  mkdir "$ro/archive" && cp res/mavg.db "$ro/archive/"
  chmod 0555 "$ro/archive" && chmod 0444 "$ro/archive/mavg.db"
  as_nobody "$ro/mavg" -q report table small --db "$ro/archive/mavg.db" --rows parallel.workers --cols parallel.average_every > ro-table.txt 2> ro.err || fail "report on a read-only database: $(cat ro.err)"
  [ -s ro-table.txt ] || fail "report on a read-only database printed nothing"
  as_nobody "$ro/mavg" -q sweep status small --db "$ro/archive/mavg.db" > ro-status.txt 2> ro.err || fail "status on a read-only database: $(cat ro.err)"
  grep -q "read-only database" ro-status.txt || fail "status: $(cat ro-status.txt)"
  chmod -R u+w "$ro" && rm -rf "$ro"
  echo "ok: read-only database"
else
  echo "skip: read-only database check (runuser cannot run a command as nobody here)"
fi
echo garbage > notadb.db
expect_error "notadb.db" "$MAVG" sweep status small --db notadb.db
# A corrupt result.json: that run is reported failed with the reason, the rest are ingested.
victim=$(python3 -c 'import sqlite3; print(sqlite3.connect("res/mavg.db").execute("SELECT run_dir FROM sweep_results WHERE sweep=\"small\" ORDER BY position LIMIT 1").fetchone()[0])')
echo '{"status": "compl' > "$victim/result.json"
"$MAVG" sweep collect small "${R[@]}" | contains "completed 7, failed 1" || fail "corrupt result.json not isolated"
"$MAVG" sweep status small "${R[@]}" | contains "result.json: corrupt JSON" || fail "no reason for the corrupt run"
echo PASS
