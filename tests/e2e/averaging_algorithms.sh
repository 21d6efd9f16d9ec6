#!/usr/bin/env bash
# BMUF, overlapped and two-level averaging with simulated workers: plain averaging is BMUF with
# eta 0 and zeta 1 bit for bit; two-level with g = N or K2 = K is flat averaging; with lr 0
# nothing moves; preempted inside a block (workers differing, a mean in flight) and resumed,
# every algorithm gives the uninterrupted model bit for bit; bad combinations are clear errors.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 4000 1000
cat > alg.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 2, hidden_dim: 48}
optimizer: {minibatch: 32}
schedule: {type: exponential, lr: 0.004, final_ratio: 0.5, epochs: 2}
parallel: {workers: 4, mode: simulated, average_every: 3}
device_options: {threads: 1}
YAML
train() { local out=$1; shift; "$MAVG" -q train alg.yaml "$@" --out "$out" --no-progress; }
same() { "$MAVG" model diff "$1/model.bin" "$2/model.bin" --max-rel 0 >/dev/null || fail "$3"; }
differ() { ! "$MAVG" model diff "$1/model.bin" "$2/model.bin" --max-rel 0 >/dev/null 2>&1 || fail "$3"; }

bmuf=(--set parallel.algorithm=bmuf --set parallel.lr_scaling=none)
overlap=("${bmuf[@]}" --set parallel.overlap=true)
two=(--set parallel.group_size=2 --set parallel.average_every_global=6)

train plain
train bmuf0 --set parallel.algorithm=bmuf --set parallel.bmuf.block_momentum=0
same plain bmuf0 "BMUF with eta 0, zeta 1 differs from plain averaging"
train bmuf "${bmuf[@]}"
differ plain bmuf "BMUF with block momentum gave the plain model"
train g4 --set parallel.group_size=4 --set parallel.average_every_global=6
same plain g4 "two-level with g = N differs from flat averaging"
train k2 --set parallel.group_size=2 --set parallel.average_every_global=3
same plain k2 "two-level with K2 = K differs from flat averaging"
python3 - <<'PY'
import json
for run in ("bmuf", "g4"):
    for m in map(json.loads, open(f"{run}/metrics.jsonl")):
        assert m["projected_wall_s"] > 0 and m["averagings"] > 0, m
    r = json.load(open(f"{run}/result.json"))
    assert r["status"] == "completed" and r["test_acc"] > 0.6, r
PY

# lr 0: whatever the algorithm, the model is the initial one (two workers: the mean of two
# equal numbers is exact). Such a run learns nothing by design: the collapse check is off.
lr0=(--set schedule.lr=0 --set schedule.collapse.chance_fraction=0)
train lr0-one --set parallel.workers=1 "${lr0[@]}"
for v in overlap bmuf; do
  if [ $v = overlap ]; then sets=("${overlap[@]}"); else sets=("${bmuf[@]}"); fi
  train lr0-$v --set parallel.workers=2 "${lr0[@]}" "${sets[@]}"
  same lr0-one lr0-$v "with lr 0 the $v model moved"
done

# Preempted after minibatch 8 (so at combine point 3, an odd one: two-level groups differ, and
# an overlapped mean is in flight), resumed: bit for bit the uninterrupted run.
for v in bmuf overlap two nesterov-off; do
  case $v in
    bmuf) sets=("${bmuf[@]}") ;;
    overlap) sets=("${overlap[@]}") ;;
    two) sets=("${two[@]}") ;;
    nesterov-off) sets=("${bmuf[@]}" --set parallel.bmuf.nesterov=false --set parallel.overlap=true) ;;
  esac
  train full-$v "${sets[@]}"
  rc=0
  MAVG_TEST_STOP_AT=2:8 train pre-$v "${sets[@]}" || rc=$?
  [ "$rc" -eq 75 ] || fail "$v: preempted run should exit 75, got $rc"
  if [ $v = two ] || [ $v = overlap ]; then
    ls pre-$v/checkpoint | contains '^params-1\.' || fail "$v: workers differ, but no per-worker parameters were checkpointed"
  fi
  "$MAVG" -q train --resume pre-$v --no-progress
  same full-$v pre-$v "$v: the resumed model differs"
done
# The final checkpoint (an epoch's end) has nothing pending and every worker on one model.
python3 -c 'import json; m=json.load(open("pre-overlap/checkpoint/meta.json")); a=m["averager"]; assert a["pending"] is False and a["agree"] is True, m' \
  || fail "the final checkpoint of an overlapped run has a mean pending"

expect_error "not available with two-level" "$MAVG" train alg.yaml "${two[@]}" --set parallel.overlap=true --out bad
expect_error "does not divide parallel.workers" "$MAVG" train alg.yaml --set parallel.group_size=3 --set parallel.average_every_global=6 --out bad
expect_error "not a multiple of parallel.average_every" "$MAVG" train alg.yaml --set parallel.group_size=2 --set parallel.average_every_global=4 --out bad
expect_error "needs both" "$MAVG" train alg.yaml --set parallel.group_size=2 --out bad
expect_error "block_momentum" "$MAVG" train alg.yaml --set parallel.algorithm=bmuf --set parallel.bmuf.block_momentum=1 --out bad
echo PASS
