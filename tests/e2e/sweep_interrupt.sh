#!/usr/bin/env bash
# Ctrl-C on `mavg sweep run` stops the runs at a checkpoint, marks them interrupted and leaves
# the database consistent; running the sweep again resumes them; a per-run timeout stops a run
# and records why.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 1000 200
cat > base.yaml <<YAML
data: {train: data/train, dev: data/dev}
model: {hidden_layers: 1, hidden_dim: 16}
optimizer: {minibatch: 32}
schedule: {type: constant, lr: 0.004, epochs: 10000}
parallel: {workers: 2, average_every: 2}
YAML
printf 'name: long\nbase: base.yaml\ngrid: {seed: [1]}\n' > long.yaml
R=(--results res)
rc_file=$WORK/rc
( rc=0; "$MAVG" -q sweep run long.yaml "${R[@]}" > run.log 2>&1 || rc=$?; echo "$rc" > "$rc_file" ) &
run_dir=
for _ in $(seq 200); do
  run_dir=$(ls -d res/runs/long/*/ 2>/dev/null | head -1 || true)
  [ -n "$run_dir" ] && [ -s "$run_dir/metrics.jsonl" ] && break
  sleep 0.1
done
[ -s "$run_dir/metrics.jsonl" ] || fail "the run did not start"
controller=$(pgrep -f -- "sweep run long.yaml" | head -1)
kill -INT "$controller"
for _ in $(seq 300); do [ -s "$rc_file" ] && break; sleep 0.1; done
[ "$(cat "$rc_file")" = 130 ] || fail "interrupted sweep should exit 130, got $(cat "$rc_file"): $(cat run.log)"
[ "$(json_get "$run_dir/state.json" status)" = preempted ] || fail "run not checkpointed/preempted"
[ -s "$run_dir/checkpoint/meta.json" ] || fail "no checkpoint"
"$MAVG" sweep status long "${R[@]}" | contains "interrupted" || fail "status should show interrupted"
python3 -c 'import sqlite3; db=sqlite3.connect("res/mavg.db"); assert db.execute("PRAGMA integrity_check").fetchone()[0]=="ok"; assert db.execute("SELECT state FROM attempts").fetchone()[0]=="interrupted"'
epochs_before=$(wc -l < "$run_dir/metrics.jsonl")

# Again: the interrupted run resumes from its checkpoint; a timeout then stops it (6 s: room
# for a sanitized build's start and at least one more epoch).
rc=0
"$MAVG" -q sweep run long.yaml "${R[@]}" --timeout 6 > run2.log 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a timed-out run should make the sweep exit 1, got $rc"
grep -q -- "--resume" "$run_dir/launcher.log" || fail "second attempt did not resume"
[ "$(wc -l < "$run_dir/metrics.jsonl")" -gt "$epochs_before" ] || fail "no progress after resuming"
"$MAVG" sweep status long "${R[@]}" | contains "stopped at the time limit" || fail "timeout reason missing"
# Collecting again keeps the launcher's verdict; retry resumes from the checkpoint.
"$MAVG" sweep collect long "${R[@]}" >/dev/null
"$MAVG" sweep status long "${R[@]}" | contains "failed 1" || fail "collect changed the timed-out run's status"
rc=0
"$MAVG" -q sweep retry long "${R[@]}" --state failed --timeout 2 > retry.log 2>&1 || rc=$?
[ "$(grep -c -- "--resume" "$run_dir/launcher.log")" -ge 2 ] || fail "retry did not resume"
grep -q "device_options.threads=" "$run_dir/launcher.log" || fail "launcher does not set threads"
# Runs a stopped controller never started go back to new (they were claimed, "running", and
# no later sweep would have launched them); a controller killed outright (-9, no chance to give
# its claims back) leaves claims that the next sweep run sees are dead and launches.
printf 'name: three\nbase: base.yaml\ngrid: {seed: [4, 5, 6]}\n' > three.yaml
rc_file=$WORK/rc3
( rc=0; "$MAVG" -q sweep run three.yaml "${R[@]}" --jobs 1 > three.log 2>&1 || rc=$?; echo "$rc" > "$rc_file" ) &
for _ in $(seq 200); do
  ls res/runs/three/*/metrics.jsonl > /dev/null 2>&1 && break
  sleep 0.1
done
kill -INT "$(pgrep -f -- "sweep run three.yaml" | head -1)"
for _ in $(seq 300); do [ -s "$rc_file" ] && break; sleep 0.1; done
[ "$(cat "$rc_file")" = 130 ] || fail "interrupted sweep should exit 130: $(cat three.log)"
grep -q "launched 1, interrupted 1, 2 not started" three.log || fail "summary: $(cat three.log)"
states=$(python3 -c 'import sqlite3; db=sqlite3.connect("res/mavg.db"); print(" ".join(sorted(r[0] for r in db.execute("SELECT r.status FROM runs r JOIN sweep_runs s ON s.run_id=r.run_id WHERE s.sweep=\"three\""))))')
[ "$states" = "interrupted new new" ] || fail "after Ctrl-C the runs are: $states"
( "$MAVG" -q sweep run three.yaml "${R[@]}" --jobs 1 > three2.log 2>&1 || true ) &
for _ in $(seq 200); do
  [ "$(grep -l '"status": *"running"' res/runs/three/*/state.json 2>/dev/null | wc -l)" -ge 1 ] && break
  sleep 0.1
done
controller=$(pgrep -f -- "sweep run three.yaml" | head -1)
trainer=$(pgrep -f -- "mavg train.*res/runs/three" | head -1 || true)
kill -9 "$controller" ${trainer:+"$trainer"}
sleep 0.5
rc=0
"$MAVG" -q sweep run three.yaml "${R[@]}" --timeout 2 --jobs 3 > three3.log 2>&1 || rc=$?
grep -q "launched 3" three3.log || fail "after a killed controller not every run was launched: $(cat three3.log)"
echo PASS
