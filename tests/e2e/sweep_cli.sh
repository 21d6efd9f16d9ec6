#!/usr/bin/env bash
# Sweeps from the command line (--base, --grid, --set), first-class: a name derived from their
# content, plan, resume, status and reports by that name, a spec file written where the results
# are; --grid/--set on a spec file; bad options refused with nothing changed. Then the flat
# export of the runs (`report runs`, read by pandas) and `run diff`.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
small_base base.yaml 16 1
R=(--results res)
G=(--base base.yaml --grid parallel.workers=1,2 --grid optimizer.type=sgd,ngsgd
   --set schedule.epochs=2 --set parallel.mode=simulated)

"$MAVG" sweep plan "${G[@]}" "${R[@]}" > plan.txt
name=$(head -1 plan.txt | cut -d' ' -f2)
[[ "$name" =~ ^base-[0-9a-f]{8}$ ]] || fail "a command-line sweep's name: '$name' ($(head -1 plan.txt))"
grep -q "totals: new 4 done 0" plan.txt || fail "plan: $(tail -1 plan.txt)"
[ ! -e res ] || fail "planning wrote files"
# The same command line (--set in another order) is the same sweep; other values another one.
"$MAVG" sweep plan --base ./base.yaml --grid parallel.workers=1,2 --grid optimizer.type=sgd,ngsgd \
  --set parallel.mode=simulated --set schedule.epochs=2 "${R[@]}" | sed -n 1p | contains "^sweep $name " ||
  fail "the same options gave another name"
other=$("$MAVG" sweep plan --base base.yaml --grid parallel.workers=1,4 "${R[@]}" | sed -n 1p | cut -d' ' -f2)
[ "$other" != "$name" ] || fail "other grid values, same name $other"
"$MAVG" -q sweep run "${G[@]}" "${R[@]}" --dry-run > dry.txt
[ ! -e "res/sweeps/$name.yaml" ] || fail "a dry run wrote the spec"

"$MAVG" -q sweep run "${G[@]}" "${R[@]}" --jobs 2 > run1.txt
grep -q "launched 4, completed 4" run1.txt || fail "run: $(cat run1.txt)"
grep -q "^sweep $name: spec written to res/sweeps/$name.yaml" run1.txt || fail "spec path: $(cat run1.txt)"
# Resumed: nothing new. The written spec is a spec file like any other: the same sweep.
"$MAVG" -q sweep run "${G[@]}" "${R[@]}" | contains "launched 0" || fail "the second run launched runs"
"$MAVG" sweep plan "res/sweeps/$name.yaml" "${R[@]}" > plan2.txt
grep -q "^sweep $name " plan2.txt && grep -q "totals: new 0 done 4" plan2.txt || fail "written spec: $(cat plan2.txt)"
"$MAVG" -q sweep run "res/sweeps/$name.yaml" "${R[@]}" | contains "launched 0" || fail "the written spec is another sweep"
python3 - "$name" <<'PY' || fail "the database's spec is not the written one"
import sqlite3, sys
(spec,) = sqlite3.connect("res/mavg.db").execute("SELECT spec_yaml FROM sweeps WHERE name = ?", (sys.argv[1],)).fetchone()
assert spec == open(f"res/sweeps/{sys.argv[1]}.yaml").read(), spec
assert "grid:" in spec and "parallel.workers: [1, 2]" in spec and "schedule.epochs: 2" in spec, spec
PY
"$MAVG" sweep status "$name" "${R[@]}" | contains "4 runs: done 4" || fail "status"
"$MAVG" -q sweep retry "$name" "${R[@]}" --state failed | contains "retrying 0 run" || fail "retry"
"$MAVG" report table "$name" "${R[@]}" --rows parallel.workers --cols optimizer.type --value test_error > t.md
[ "$(grep -c '(n=1)' t.md)" = 2 ] || fail "report table on the command-line sweep: $(cat t.md)"

# One worker averages nothing: the plan names the 1-worker runs that train the same model.
"$MAVG" sweep plan --base base.yaml --grid parallel.workers=1,2 --grid parallel.average_every=1,10 "${R[@]}" > same.txt
grep -q "^same training: 1 group(s) of runs" same.txt || fail "no same-training note: $(cat same.txt)"
[ "$(grep -A1 '^same training' same.txt | tail -1 | grep -o 'parallel.workers=1 ' | wc -l)" = 2 ] ||
  fail "the same-training group: $(cat same.txt)"

# On a spec file: its grid narrowed, an axis added. Same points, same runs: all done already.
cat > s.yaml <<YAML
name: small
base: base.yaml
set: {parallel.mode: simulated, schedule.epochs: 2}
grid: {parallel.workers: [1, 2, 4]}
YAML
"$MAVG" sweep plan s.yaml --grid parallel.workers=1,2 --grid optimizer.type=sgd,ngsgd "${R[@]}" > plan3.txt
head -1 plan3.txt | contains "^sweep small-[0-9a-f]\{8\} (s.yaml + command line): 4 runs" || fail "composed: $(head -1 plan3.txt)"
grep -q "totals: new 0 done 4" plan3.txt || fail "composed sweep does not reuse the runs: $(tail -1 plan3.txt)"

# Bad options: one line naming the option; the database is not touched.
dump() { python3 -c 'import sqlite3,sys; print("\n".join(sqlite3.connect(sys.argv[1]).iterdump()))' res/mavg.db; }
dump > before.sql
expect_error "--grid parallel.wrkers: unknown config key 'parallel.wrkers' (did you mean 'parallel.workers'?)" \
  "$MAVG" sweep run --base base.yaml --grid parallel.wrkers=1,2 "${R[@]}"
expect_error "--grid parallel.workers=x: " "$MAVG" sweep run --base base.yaml --grid parallel.workers=1,x "${R[@]}"
expect_error "command line point [parallel.workers=1]: schedule.lr: -1 is out of range" \
  "$MAVG" sweep run --base base.yaml --set schedule.lr=-1 --grid parallel.workers=1 "${R[@]}"
expect_error "'parallel.workers' is an axis of s.yaml; narrow it with --grid parallel.workers=4" \
  "$MAVG" sweep run s.yaml --set parallel.workers=4 "${R[@]}"
expect_error "a sweep needs a spec file or --base CONFIG" "$MAVG" sweep run "${R[@]}"
expect_error "give a sweep spec or --base CONFIG, not both" "$MAVG" sweep plan s.yaml --base base.yaml
expect_error "nope.yaml: config file not found" "$MAVG" sweep run --base nope.yaml --grid seed=1,2 "${R[@]}"
# Data that cannot be read: the plan and a dry run name the path and how many runs read it;
# a run refuses to start them.
N=(--base base.yaml --set data.train=nowhere/train --grid parallel.workers=1,2 "${R[@]}")
"$MAVG" sweep plan "${N[@]}" | contains -x "data: the data of the 2 run(s) not done cannot be read: data.train nowhere/train: not found (2 of the runs) (sweep run refuses to start them)" ||
  fail "plan: no word of the missing data: $("$MAVG" sweep plan "${N[@]}")"
"$MAVG" -q sweep run "${N[@]}" --dry-run | contains "^data: the data of the 2 run(s) to launch cannot be read: data.train nowhere/train" ||
  fail "dry run: no word of the missing data"
expect_error "command line: the data of the 2 run(s) to launch cannot be read: data.train nowhere/train: not found (2 of the runs)" \
  "$MAVG" sweep run "${N[@]}"
# A misspelt sweep name gets the closest one.
expect_error "no sweep named '${name}x' (did you mean '$name'?)" "$MAVG" sweep status "${name}x" "${R[@]}"
dump > after.sql
cmp -s before.sql after.sql || fail "a refused command changed the database"
[ "$(ls res/sweeps)" = "$name.yaml" ] || fail "a refused command wrote a spec: $(ls res/sweeps)"

# report runs: one flat row per run; pandas reads both formats as they are, and the numbers
# are the database's.
"$MAVG" report runs "$name" "${R[@]}" > runs.csv
"$MAVG" report runs "$name" "${R[@]}" --format json --out runs.json | contains "^4 runs of sweep $name in runs.json" ||
  fail "report runs --out"
/usr/bin/python3 - <<'PY' || fail "pandas on report runs"
import sqlite3
import pandas as pd
c = pd.read_csv("runs.csv", dtype={"run_id": str})
j = pd.read_json("runs.json", dtype={"run_id": str})
assert len(c) == 4 and len(j) == 4, (len(c), len(j))
assert list(c.columns) == list(j.columns), (list(c.columns), list(j.columns))
for col in ["sweep", "run_id", "replicate", "status", "parallel.workers", "optimizer.type",
            "test_acc", "test_error", "cv_loss", "final_cv_loss", "epoch_s", "projected_epoch_s",
            "wall_s", "mode", "run_dir"]:
    assert col in c.columns, (col, list(c.columns))
assert (c["status"] == "completed").all()
assert sorted(c["parallel.workers"]) == [1, 1, 2, 2], c["parallel.workers"]
assert c["test_acc"].dtype == float and c["parallel.workers"].dtype.kind == "i"
# One row per run: grouping needs no pivot.
assert c.groupby(["parallel.workers", "optimizer.type"])["test_error"].mean().size == 4
db = sqlite3.connect("res/mavg.db")
for _, row in c.iterrows():
    (acc,) = db.execute("SELECT value FROM results WHERE run_id = ? AND key = 'test_acc'",
                        (row["run_id"],)).fetchone()
    assert abs(acc - row["test_acc"]) < 1e-12, (row["run_id"], acc, row["test_acc"])
    assert abs(100 * (1 - acc) - row["test_error"]) < 1e-9
    assert j.loc[j["run_id"] == row["run_id"], "test_acc"].item() == row["test_acc"]
PY
expect_error "no sweep named 'nosuch'" "$MAVG" report runs nosuch "${R[@]}"

# run diff: by directory or by run id (prefix), config keys and metrics side by side.
read -r a_id a_dir b_id b_dir < <(/usr/bin/python3 -c '
import pandas as pd
c = pd.read_csv("runs.csv", dtype={"run_id": str})
a = c[(c["parallel.workers"] == 1) & (c["optimizer.type"] == "sgd")].iloc[0]
b = c[(c["parallel.workers"] == 2) & (c["optimizer.type"] == "ngsgd")].iloc[0]
print(a.run_id, a.run_dir, b.run_id, b.run_dir)')
"$MAVG" run diff "$a_dir" "$b_dir" > diff.md
grep -q "| parallel.workers | 1 | 2 |" diff.md || fail "diff lacks workers: $(cat diff.md)"
grep -q "| optimizer.type | sgd | ngsgd |" diff.md || fail "diff lacks optimizer: $(cat diff.md)"
grep -q "^| test_acc | " diff.md && grep -q "^| 2 | " diff.md || fail "diff lacks metrics or epochs: $(cat diff.md)"
! grep -q "| data.train " diff.md || fail "diff shows a key that is the same"
"$MAVG" run diff "${a_id:0:6}" "$b_id" "${R[@]}" > diff2.md
cmp -s <(tail -n +3 diff.md) <(tail -n +3 diff2.md) || fail "diff by run id differs from diff by directory"
"$MAVG" run diff "$a_dir" "$a_dir" | contains "Config: the same" || fail "a run against itself"
expect_error "'zzzzzz' is neither a run directory nor a run id in res/mavg.db" "$MAVG" run diff zzzzzz "$b_id" "${R[@]}"
# Time before launch: the 4 runs above (2 epochs) time the same work at 3 epochs; other work
# (another network) has nothing to go on.
"$MAVG" sweep plan --base base.yaml --grid parallel.workers=1,2 --grid optimizer.type=sgd,ngsgd \
  --set schedule.epochs=3 --set parallel.mode=simulated --jobs 2 "${R[@]}" > est.txt
grep -q "^time: 4 of 4 pending run(s) about .* at --jobs 2; from 4 completed run(s) of the same work per epoch" est.txt ||
  fail "no time estimate from the like runs: $(tail -2 est.txt)"
# Each pending run has its own estimate in the plan's last column.
head -2 est.txt | tail -1 | contains "  estimate *$" || fail "no estimate column: $(head -2 est.txt)"
[ "$(grep -cE '^[0-9a-f]{16} +new .* [0-9.]+ (s|min|h) *$' est.txt)" -eq 4 ] ||
  fail "not every pending run has an estimate: $(cat est.txt)"
# ... and as they run, each ending run's line says what is left.
"$MAVG" sweep run --base base.yaml --grid parallel.workers=1,2 --grid optimizer.type=sgd,ngsgd \
  --set schedule.epochs=3 --set parallel.mode=simulated --jobs 2 "${R[@]}" > eta.txt 2>&1
grep -q "\[sweep\] 1/4 .* completed (exit 0); 3 to go, about .* left" eta.txt ||
  fail "no time left as runs end: $(grep '\[sweep\] [0-9]' eta.txt)"
"$MAVG" sweep plan --base base.yaml --grid parallel.workers=1,2 --set model.hidden_dim=24 "${R[@]}" > none.txt
contains "^time: 2 pending run(s), nothing to go on" < none.txt || fail "an estimate without like runs"
[ "$(grep -cE '^[0-9a-f]{16} +new .* \? *$' none.txt)" -eq 2 ] || fail "no '?' for runs without an estimate: $(cat none.txt)"
"$MAVG" sweep plan "${G[@]}" "${R[@]}" | grep -q "^time:" && fail "an estimate for a sweep with nothing pending"
# The same runs under another name are reused, and named as such.
"$MAVG" sweep plan "${G[@]}" --name again "${R[@]}" |
  contains "^reused: 4 finished run(s) are other sweeps' runs too (a run id is its config), not run again: $name (4)" ||
  fail "reused runs not named"
# Narrowing a spec with --grid: an exclude entry naming a value --grid left out goes with it
# (no warning that it matches nothing); one that still can match stays; a typo still warns.
cat > ex.yaml <<'YAML'
base: base.yaml
grid: {parallel.workers: [1, 2, 4], schedule.lr: [0.004, 0.008]}
exclude:
  - {parallel.workers: 4, schedule.lr: 0.008}
  - {parallel.workers: 2, schedule.lr: 0.008}
YAML
"$MAVG" sweep plan ex.yaml --grid parallel.workers=1,2 "${R[@]}" > ex.txt 2> ex.err
! grep -q "matches no point" ex.err || fail "narrowed exclude reported as a typo: $(cat ex.err)"
grep -q "totals: new 3 " ex.txt || fail "narrowed plan: $(tail -1 ex.txt)"
"$MAVG" sweep plan ex.yaml --grid schedule.lr=0.004,8e-3 "${R[@]}" > ex2.txt 2> ex2.err
grep -q "totals: new 4 " ex2.txt && ! grep -q "matches no point" ex2.err ||
  fail "a value written another way (8e-3) did not keep its excludes: $(tail -1 ex2.txt) $(cat ex2.err)"
sed -i 's/schedule.lr: 0.008}$/schedule.lr: 0.016}/' ex.yaml
"$MAVG" sweep plan ex.yaml "${R[@]}" 2>&1 >/dev/null | contains "matches no point" ||
  fail "an exclude entry that can never match was not reported"
echo PASS
