#!/usr/bin/env bash
# RBM pretraining: pretrain.jsonl and result fields, the shared stack cache in a sweep (plan
# shows it, one run pretrains, the other hits), the database rows, resume without pretraining
# again, a stop signal while pretraining or waiting for a stack, and config errors.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
cat > rbm.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 2, hidden_dim: 32, init: rbm}
optimizer: {minibatch: 32}
schedule: {type: exponential, lr: 0.004, final_ratio: 0.5, epochs: 2}
pretrain: {rbm: {minibatch: 20}}
device_options: {threads: 1}
YAML

"$MAVG" -q train rbm.yaml --out one --cache-dir cache1 --no-progress
python3 - <<'PY'
import json, glob
recs = [json.loads(l) for l in open("one/pretrain.jsonl")]
assert [(r["layer"], r["epoch"]) for r in recs] == [(1, 1), (1, 2), (2, 1)], recs
assert recs[0]["units"] == "gaussian-bernoulli" and recs[2]["units"] == "bernoulli-bernoulli"
assert all(r["cached"] is False and r["frames"] > 0 and r["recon_mse"] > 0 for r in recs)
assert all(0 <= r["dead_fraction"] <= 1 for r in recs), recs
r = json.load(open("one/result.json"))
assert r["status"] == "completed" and r["pretrain_cached"] is False and r["pretrain_s"] > 0, r
assert len(glob.glob("cache1/rbm-*/dbn.bin")) == 1
print("test accuracy with RBM init", r["test_acc"])
assert r["test_acc"] > 0.5
PY

# A second run with the same stack (another schedule) hits the cache.
"$MAVG" -q train rbm.yaml --set schedule.lr=0.002 --out two --cache-dir cache1 --no-progress
python3 -c '
import json
r = json.load(open("two/result.json")); assert r["pretrain_cached"] is True, r
recs = [json.loads(l) for l in open("two/pretrain.jsonl")]
assert len(recs) == 3 and all(x["cached"] for x in recs), recs'

# A sweep over workers shares one stack: the plan shows it, one run pretrains.
cat > sweep.yaml <<YAML
name: rbm-share
base: rbm.yaml
set: {parallel.mode: simulated, parallel.average_every: 5}
grid: {parallel.workers: [1, 2]}
YAML
"$MAVG" sweep plan sweep.yaml --results res > plan.txt
grep -q "pretraining (model.init rbm): 1 shared stack" plan.txt || fail "plan lacks the stack: $(cat plan.txt)"
grep -q "to pretrain  used by 2 run(s)" plan.txt || fail "plan: $(cat plan.txt)"
"$MAVG" -q sweep run sweep.yaml --results res --jobs 1 > run.txt 2>&1 || fail "sweep failed: $(cat run.txt)"
"$MAVG" sweep plan sweep.yaml --results res | contains "cached  used by 2 run(s)" || fail "plan after the run"
python3 - <<'PY'
import sqlite3
db = sqlite3.connect("res/mavg.db")
cached = db.execute("select value from results where key='pretrain_cached' order by value").fetchall()
assert [c[0] for c in cached] == [0, 1], cached
rows = db.execute("select sweep, layer, epoch, cached, recon_mse from sweep_pretrain order by cached, layer, epoch").fetchall()
assert len(rows) == 6 and all(r[0] == "rbm-share" and r[4] > 0 for r in rows), rows
print("pretrain rows", rows)
# The dead units' fraction reaches the store by name (in the record kept whole).
dead = db.execute("select json_extract(record_json, '$.dead_fraction') from sweep_pretrain").fetchall()
assert len(dead) == 6 and all(0 <= d[0] <= 1 for d in dead), dead
PY

# Preempted after pretraining, resumed: the stack comes from the checkpoint, not pretrained again.
rc=0
MAVG_TEST_STOP_AT=1:5 "$MAVG" -q train rbm.yaml --out pre --cache-dir "" --no-progress || rc=$?
[ "$rc" -eq 75 ] || fail "preempted run should exit 75, got $rc"
cp pre/pretrain.jsonl pretrain-before.jsonl
"$MAVG" -q train --resume pre --cache-dir "" --no-progress
cmp -s pre/pretrain.jsonl pretrain-before.jsonl || fail "resume pretrained again"
python3 -c '
import json
r = json.load(open("pre/result.json")); assert r["status"] == "completed" and r["pretrain_cached"] is False and r["pretrain_s"] > 0, r'

# A stop signal during pretraining ends the run at once, preempted, with nothing cached; so does
# one while waiting for another run that pretrains the same stack.
long=(--set pretrain.rbm.epochs_gaussian=10000 --cache-dir cache3 --no-progress)
wait_for() {  # wait_for FILE TEXT: until FILE holds TEXT (at most a minute)
  for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  fail "$1 never said '$2': $(cat "$1" 2>/dev/null)"
}
stopped() {  # stopped PID: rc = its exit status, once it has ended (it must within a minute)
  for _ in $(seq 600); do kill -0 "$1" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "$1" 2> /dev/null; then kill -KILL "$1"; fail "process $1 ignored SIGTERM"; fi
  rc=0; wait "$1" || rc=$?
}
"$MAVG" train rbm.yaml --out long1 "${long[@]}" 2> long1.log & p1=$!
wait_for long1.log "cache miss: pretraining stack"
"$MAVG" train rbm.yaml --out long2 "${long[@]}" 2> long2.log & p2=$!
wait_for long2.log "another run is pretraining this stack; waiting"
kill -TERM $p2
stopped $p2
[ "$rc" -eq 75 ] || fail "a run stopped while waiting for a stack exited $rc, not 75: $(tail -3 long2.log)"
kill -0 $p1 2> /dev/null || fail "the pretraining run ended with the waiting one: $(tail -3 long1.log)"
kill -TERM $p1
stopped $p1
[ "$rc" -eq 75 ] || fail "a run stopped while pretraining exited $rc, not 75: $(tail -3 long1.log)"
for r in long1 long2; do
  grep -q "stop requested (signal 15) during RBM pretraining" $r.log || fail "$r: $(tail -3 $r.log)"
  [ "$(json_get $r/state.json status)" = preempted ] || fail "$r: $(cat $r/state.json)"
  [ "$(json_get $r/result.json signal)" = 15 ] || fail "$r: $(cat $r/result.json)"
done
if ls cache3/rbm-*/dbn.bin 2> /dev/null; then fail "a stopped pretraining left a stack in the cache"; fi

expect_error "model.activation: relu but model.init rbm needs sigmoid" \
  "$MAVG" train rbm.yaml --set model.activation=relu --out bad
expect_error "pretrain.rbm.lr" "$MAVG" train rbm.yaml --set pretrain.rbm.lr=0 --out bad
expect_error "pretrain.rbm.minibach" "$MAVG" train rbm.yaml --set pretrain.rbm.minibach=5 --out bad
expect_error "pretrain.rbm.momentum_ramp_fraction" \
  "$MAVG" train rbm.yaml --set pretrain.rbm.momentum_ramp_fraction=-0.5 --out bad

# The momentum ramp scaled to the corpus: over half an epoch every layer reaches momentum_max
# in its first epoch, where Kaldi's 20 M frames leave it at the start on these 2,000 frames. A
# stack of its own (the rule is in the cache key).
"$MAVG" -q train rbm.yaml --set schedule.epochs=1 --set pretrain.rbm.momentum_ramp_fraction=0.5 \
  --out ramp --cache-dir cache1 --no-progress
python3 - <<'PY'
import json
r = json.load(open("ramp/result.json")); assert r["pretrain_cached"] is False, r
ramp = [json.loads(l) for l in open("ramp/pretrain.jsonl")]
kaldi = [json.loads(l) for l in open("one/pretrain.jsonl")]
assert [x["scheduled_momentum"] for x in ramp] == [0.9, 0.9, 0.9], ramp
assert [x["scheduled_momentum"] for x in kaldi] == [0.5, 0.5, 0.5], kaldi
PY
echo PASS
