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
# BMUF is an outer optimizer: block momentum eta and block lr zeta are outer Nesterov's momentum
# and lr (DiLoCo's step), and classical block momentum is outer heavy-ball momentum. With
# Nesterov the steps are the same bits (the workers' parameters and the filter's state at a
# combine point mid-epoch); what an epoch's end evaluates is each method's own model: BMUF's W_g,
# DiLoCo's outer parameters W_g + eta Delta.
bmuf_eta=(--set parallel.bmuf.block_momentum=0.6 --set parallel.bmuf.block_lr=0.9)
outer_mu=(--set parallel.lr_scaling=none --set parallel.outer.momentum=0.6 --set parallel.outer.lr=0.9)
train bmuf-eta "${bmuf[@]}" "${bmuf_eta[@]}"
train outer-nesterov --set parallel.outer.type=nesterov "${outer_mu[@]}"
differ bmuf-eta outer-nesterov "outer Nesterov evaluated BMUF's W_g, not its own parameters"
for v in bmuf-eta outer-nesterov; do
  if [ $v = bmuf-eta ]; then sets=("${bmuf[@]}" "${bmuf_eta[@]}"); else sets=(--set parallel.outer.type=nesterov "${outer_mu[@]}"); fi
  rc=0
  MAVG_TEST_STOP_AT=2:8 train mid-$v "${sets[@]}" || rc=$?
  [ "$rc" -eq 75 ] || fail "$v: preempted run should exit 75, got $rc"
done
for f in mid-bmuf-eta/checkpoint/{params,bmuf}.*.bin; do
  cmp "$f" "mid-outer-nesterov/checkpoint/${f##*/}" || fail "BMUF's and outer Nesterov's steps differ: ${f##*/}"
done
train bmuf-classical "${bmuf[@]}" "${bmuf_eta[@]}" --set parallel.bmuf.nesterov=false
train outer-momentum --set parallel.outer.type=momentum "${outer_mu[@]}"
same bmuf-classical outer-momentum "classical BMUF differs from outer momentum"
differ bmuf-eta bmuf-classical "Nesterov and classical block momentum gave one model"
train outer-adam --set parallel.outer.type=adam --set parallel.outer.lr=0.001 --set parallel.lr_scaling=none
differ plain outer-adam "outer Adam gave the plain model"
train g4 --set parallel.group_size=4 --set parallel.average_every_global=6
same plain g4 "two-level with g = N differs from flat averaging"
train k2 --set parallel.group_size=2 --set parallel.average_every_global=3
same plain k2 "two-level with K2 = K differs from flat averaging"
# DiLoCo's inner optimizer, AdamW (its moments carried across epochs and checkpointed)
adam=(--set optimizer.type=adam --set schedule.lr=0.001 --set optimizer.adam.weight_decay=0.1
      --set parallel.lr_scaling=none)
train adam "${adam[@]}"
python3 - <<'PY'
import json
for run in ("bmuf", "g4", "outer-adam", "adam"):
    for m in map(json.loads, open(f"{run}/metrics.jsonl")):
        assert m["projected_wall_s"] > 0 and m["averagings"] > 0, m
    r = json.load(open(f"{run}/result.json"))
    assert r["status"] == "completed", r
    assert run == "outer-adam" or r["test_acc"] > 0.6, r
PY

# When to combine (parallel.combine.policy): each policy's combines per epoch as written out by
# hand for this task (31 full minibatches per worker, K = 3, lr 0.004 then 0.002), the run's step
# carried into epoch 2, and a run preempted inside epoch 2 resumed bit for bit (the policy's step
# comes back from the checkpoint, or epoch 2 would plan a warm-up again).
post=(--set parallel.combine.policy=post_local --set parallel.combine.warmup_steps=8)
qsr=(--set parallel.combine.policy=qsr --set parallel.combine.qsr_gamma=0.008)
lst=(--set parallel.combine.policy=list --set "parallel.combine.list=0:1, 20:5")
train post "${post[@]}"
train qsr "${qsr[@]}"
train lst "${lst[@]}"
python3 - <<'PY'
import json
# post-local: steps 0-7 every step, then s = 8, 11, ..., 29 (minibatches 9-30 by 3): 8 + 8; epoch
# 2 (step 30 on): minibatches 3, 6, ..., 30. QSR: H = (0.008/0.004)^2 = 4, then 16. The list: 20
# steps every step, then every 5 (25, 30); epoch 2 every 5.
want = {"post": [16, 10], "qsr": [7, 1], "lst": [22, 6]}
for run, counts in want.items():
    got = [json.loads(l)["averagings"] for l in open(f"{run}/metrics.jsonl")]
    assert got == counts, (run, got, counts)
    r = json.load(open(f"{run}/result.json"))
    assert r["status"] == "completed", r
PY
differ plain post "post-local SGD gave the plain model"
for v in post qsr; do
  if [ $v = post ]; then sets=("${post[@]}"); else sets=("${qsr[@]}"); fi
  rc=0
  MAVG_TEST_STOP_AT=2:8 train pre-$v "${sets[@]}" || rc=$?
  [ "$rc" -eq 75 ] || fail "$v: preempted run should exit 75, got $rc"
  "$MAVG" -q train --resume pre-$v --no-progress
  same $v pre-$v "$v: the resumed model differs"
done

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
stream=(--set parallel.average_every=6 --set parallel.stream.fragments=3
        --set parallel.stream.overlap_steps=1 --set parallel.stream.mix=0.5 --set parallel.outer.type=nesterov)
for v in bmuf overlap two nesterov-off outer-adam adam stream stream-int4; do
  case $v in
    # Streaming: fragment 0 of 3 started after minibatch 8, its merge due after 9.
    stream) sets=("${stream[@]}") ;;
    stream-int4) sets=("${stream[@]}" --set parallel.stream.pattern=contiguous
                       --set parallel.compress.format=int4 --set parallel.compress.error_feedback=true) ;;
    adam) sets=("${adam[@]}" --set parallel.outer.type=nesterov) ;;
    outer-adam) sets=(--set parallel.outer.type=adam --set parallel.outer.lr=0.001 --set parallel.overlap=true) ;;
    bmuf) sets=("${bmuf[@]}") ;;
    overlap) sets=("${overlap[@]}") ;;
    two) sets=("${two[@]}") ;;
    nesterov-off) sets=("${bmuf[@]}" --set parallel.bmuf.nesterov=false --set parallel.overlap=true) ;;
  esac
  train full-$v "${sets[@]}"
  rc=0
  MAVG_TEST_STOP_AT=2:8 train pre-$v "${sets[@]}" || rc=$?
  [ "$rc" -eq 75 ] || fail "$v: preempted run should exit 75, got $rc"
  if [ $v = two ] || [ $v = overlap ] || [ $v = stream ]; then
    ls pre-$v/checkpoint | contains '^params-1\.' || fail "$v: workers differ, but no per-worker parameters were checkpointed"
  fi
  case $v in stream*)
    ls pre-$v/checkpoint | contains 'stream-mean' || fail "$v: no fragment in flight was checkpointed"
    python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["averager"]; assert a["stream_fragment"] == 0, a' \
      pre-$v/checkpoint/meta.json || fail "$v: the checkpoint does not name fragment 0 in flight" ;;
  esac
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
expect_error "parallel.combine.warmup_epochs: 2 is not shorter than the run" "$MAVG" train alg.yaml --set parallel.combine.policy=post_local --set parallel.combine.warmup_epochs=2 --out bad
expect_error "parallel.combine.warmup_steps: 62 is not shorter than the run (2 epochs of at most 31 minibatches per worker: 62 steps)" "$MAVG" train alg.yaml --set parallel.combine.policy=post_local --set parallel.combine.warmup_steps=62 --out bad
expect_error "qsr needs a growth coefficient" "$MAVG" train alg.yaml --set parallel.combine.policy=qsr --out bad
expect_error "parallel.combine.list: '1:2' does not start at step 0" "$MAVG" train alg.yaml --set parallel.combine.policy=list --set parallel.combine.list=1:2 --out bad
expect_error "with two-level averaging" "$MAVG" train alg.yaml "${two[@]}" "${post[@]}" --out bad
expect_error "counts minibatches, not frames" "$MAVG" train alg.yaml "${post[@]}" --set parallel.average_frames=96 --out bad
expect_error "BMUF is itself an outer optimizer" "$MAVG" train alg.yaml --set parallel.algorithm=bmuf --set parallel.outer.type=adam --out bad
expect_error "parallel.outer.lr" "$MAVG" train alg.yaml --set parallel.outer.type=nesterov --set parallel.outer.lr=0 --out bad
# Compressed deltas: what they do not compose with, before any run starts.
z=(--set parallel.compress.format=int4)
expect_error "error feedback carries a compression's rounding error, and fp32 deltas have none" "$MAVG" train alg.yaml --set parallel.compress.error_feedback=true --out bad
expect_error "parallel.compress.format: int4 with parallel.overlap" "$MAVG" train alg.yaml "${z[@]}" --set parallel.overlap=true --out bad
expect_error "parallel.compress.format: int4 with two-level averaging" "$MAVG" train alg.yaml "${z[@]}" "${two[@]}" --out bad
expect_error "parallel.compress.format: int4 with parallel.optimizer_state average" "$MAVG" train alg.yaml "${z[@]}" --set optimizer.momentum=0.5 --set parallel.optimizer_state=average --out bad
expect_error "parallel.compress.format" "$MAVG" train alg.yaml --set parallel.compress.format=fp4 --out bad
expect_error "parallel.compress.block" "$MAVG" train alg.yaml "${z[@]}" --set parallel.compress.block=-1 --out bad
# One worker combines nothing: its stream settings are free (as its other parallel keys).
"$MAVG" -q train alg.yaml --set parallel.workers=1 --set parallel.stream.fragments=9 \
  --set schedule.epochs=1 --out one-stream --no-progress || fail "one worker refused its stream settings"
# Streaming: what it does not compose with, and fragments or overlaps that cannot be, before any
# run starts (3 layers; K = 6).
st=(--set parallel.average_every=6 --set parallel.stream.fragments=2)
expect_error "parallel.stream.overlap_steps: 4 local steps is longer than the 3 between fragment combines" "$MAVG" train alg.yaml "${st[@]}" --set parallel.stream.overlap_steps=4 --out bad
expect_error "parallel.stream.fragments: 4 fragments of a model with 3 layers" "$MAVG" train alg.yaml "${st[@]}" --set parallel.stream.fragments=4 --out bad
expect_error "parallel.stream.fragments: 2 fragments in a period of 1 minibatches" "$MAVG" train alg.yaml "${st[@]}" --set parallel.average_every=1 --out bad
expect_error "parallel.stream.layers: '0; 1' leaves layer 2 out" "$MAVG" train alg.yaml "${st[@]}" --set parallel.stream.pattern=list --set "parallel.stream.layers=0; 1" --out bad
expect_error "puts layer 1 in fragments 0 and 1" "$MAVG" train alg.yaml "${st[@]}" --set parallel.stream.pattern=list --set "parallel.stream.layers=0-1; 1-2" --out bad
expect_error "parallel.stream.mix: 1 keeps all" "$MAVG" train alg.yaml "${st[@]}" --set parallel.stream.mix=1 --out bad
expect_error "streaming with parallel.overlap" "$MAVG" train alg.yaml "${st[@]}" --set parallel.overlap=true --out bad
expect_error "streaming with two-level averaging" "$MAVG" train alg.yaml "${st[@]}" --set parallel.group_size=2 --set parallel.average_every_global=12 --out bad
expect_error "streaming with parallel.combine.policy post_local" "$MAVG" train alg.yaml "${st[@]}" --set parallel.combine.policy=post_local --set parallel.combine.warmup_steps=5 --out bad
echo PASS
