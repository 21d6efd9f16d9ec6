#!/usr/bin/env bash
# Under mpirun: divergence on any rank stops all; preemption (hook and real signal) checkpoints
# and resumes bit for bit; a stop signal during RBM pretraining stops every rank; a killed rank
# takes the job down within seconds.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 3000 500
cat > f.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 2, hidden_dim: 64}
optimizer: {minibatch: 32, momentum: 0.5}
schedule: {type: exponential, lr: 0.004, final_ratio: 0.5, epochs: 3}
parallel: {workers: 2, average_every: 4, deterministic: true}
device_options: {threads: 1}
YAML
MPI=(--set parallel.mode=mpi)

# Divergence: status diverged, exit 3, on every rank together.
rc=0
"${MPIRUN[@]}" -np 2 "$MAVG" -q train f.yaml "${MPI[@]}" --set model.activation=relu \
  --set schedule.lr=1 --out div --no-progress >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 3 ] || fail "diverged MPI run should exit 3, got $rc"
[ "$(json_get div/state.json status)" = diverged ] || fail "state not diverged"

# Preemption at a fixed point (rank 0 only gets the request; the ranks agree), then resume.
"$MAVG" -q train f.yaml --out ref --no-progress   # simulated reference
rc=0
MAVG_TEST_STOP_AT=2:10 "${MPIRUN[@]}" -np 2 -x MAVG_TEST_STOP_AT "$MAVG" -q train f.yaml "${MPI[@]}" \
  --out pre --no-progress >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 75 ] || fail "preempted MPI run should exit 75, got $rc"
[ "$(json_get pre/state.json status)" = preempted ] || fail "state not preempted"
ls pre/checkpoint/opt-0.*.bin pre/checkpoint/opt-1.*.bin >/dev/null || fail "per-rank optimizer state missing"
"${MPIRUN[@]}" -np 2 "$MAVG" -q train --resume pre --no-progress >/dev/null
"$MAVG" model diff ref/model.bin pre/model.bin --max-rel 0 || fail "resumed MPI model differs"

# A real SIGUSR1 sent to one rank only: both stop at the next averaging point.
cat > long.yaml <<YAML
data: {train: data/train, dev: data/dev}
model: {hidden_layers: 2, hidden_dim: 64}
optimizer: {minibatch: 32}
schedule: {type: constant, lr: 0.004, epochs: 1000}
parallel: {workers: 2, average_every: 4, mode: mpi}
device_options: {threads: 1}
YAML
rc_file=$WORK/sig.rc
( rc=0; "${MPIRUN[@]}" -np 2 "$MAVG" -q train long.yaml --out sig --no-progress >/dev/null 2>&1 || rc=$?
  echo "$rc" > "$rc_file" ) &
for _ in $(seq 100); do [ -s sig/metrics.jsonl ] && break; sleep 0.1; done
[ -s sig/metrics.jsonl ] || fail "long run did not start"
rank=$(pgrep -f -- "--out sig" | while read -r p; do
  [ "$(ps -o comm= -p "$p")" = mavg ] && echo "$p"; done | tail -1)
kill -USR1 "$rank"
for _ in $(seq 200); do [ -s "$rc_file" ] && break; sleep 0.1; done
[ "$(cat "$rc_file")" = 75 ] || fail "SIGUSR1 run should exit 75, got $(cat "$rc_file" 2>/dev/null)"
python3 -c 'import json; r=json.load(open("sig/result.json")); assert r["status"]=="preempted" and r["signal"]==10, r'

# A stop signal during RBM pretraining (rank 0 pretrains, rank 1 waits for its stack): both stop
# at once, preempted, with nothing cached.
rc_file=$WORK/rbm.rc
( rc=0; "${MPIRUN[@]}" -np 2 "$MAVG" train long.yaml --set model.init=rbm \
    --set pretrain.rbm.epochs_gaussian=10000 --cache-dir rbm-cache --out rbmsig --no-progress \
    > rbmsig.log 2>&1 || rc=$?
  echo "$rc" > "$rc_file" ) &
for _ in $(seq 300); do grep -q "cache miss: pretraining" rbmsig.log 2> /dev/null && break; sleep 0.1; done
grep -q "cache miss: pretraining" rbmsig.log || fail "pretraining did not start: $(cat rbmsig.log)"
pgrep -f -- "--out rbmsig" | while read -r p; do
  [ "$(ps -o comm= -p "$p")" = mavg ] && kill -USR1 "$p"; done
for _ in $(seq 600); do [ -s "$rc_file" ] && break; sleep 0.1; done
[ "$(cat "$rc_file" 2> /dev/null)" = 75 ] ||
  fail "stopped while pretraining: exit $(cat "$rc_file" 2> /dev/null), not 75: $(tail -5 rbmsig.log)"
grep -q "stop requested (signal 10) during RBM pretraining" rbmsig.log || fail "$(tail -5 rbmsig.log)"
[ "$(json_get rbmsig/state.json status)" = preempted ] || fail "state: $(cat rbmsig/state.json)"
if ls rbm-cache/rbm-*/dbn.bin 2> /dev/null; then fail "a stopped pretraining left a stack"; fi

# A rank killed outright: mpirun ends the job (non-zero) within seconds instead of hanging.
rc_file=$WORK/kill.rc
( rc=0; "${MPIRUN[@]}" -np 2 "$MAVG" -q train long.yaml --out kill --no-progress >/dev/null 2>&1 || rc=$?
  echo "$rc" > "$rc_file" ) &
for _ in $(seq 100); do [ -s kill/metrics.jsonl ] && break; sleep 0.1; done
rank=$(pgrep -f -- "--out kill" | while read -r p; do
  [ "$(ps -o comm= -p "$p")" = mavg ] && echo "$p"; done | tail -1)
start=$(date +%s)
kill -KILL "$rank"
for _ in $(seq 300); do [ -s "$rc_file" ] && break; sleep 0.1; done
[ -s "$rc_file" ] || fail "job still running 30 s after a rank was killed"
[ "$(cat "$rc_file")" -ne 0 ] || fail "job with a killed rank exited 0"
echo "job ended $(( $(date +%s) - start )) s after the kill"
echo PASS
