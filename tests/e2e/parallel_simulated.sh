#!/usr/bin/env bash
# Simulated workers: averaging, metrics, preemption + bit-exact resume, divergence.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 4000 1000
cat > par.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 2, hidden_dim: 64}
optimizer: {minibatch: 32, momentum: 0.5}
schedule: {type: exponential, lr: 0.004, final_ratio: 0.5, epochs: 3}
parallel: {workers: 4, mode: simulated, average_every: 5}
device_options: {threads: 1}
YAML
"$MAVG" -q train par.yaml --out full --no-progress
python3 - <<'PY'
import json
lines = [json.loads(l) for l in open("full/metrics.jsonl")]
assert len(lines) == 3, lines
for m in lines:
    assert m["world_size"] == 4
    # 4000 frames / 4 shards = 1000 per worker = 31 minibatches of 32; K = 5 -> 6 averagings,
    # 30 minibatches, 4 x 30 x 32 = 3840 frames trained, 160 dropped.
    assert m["averagings"] == 6 and m["minibatches"] == 30, m
    assert m["frames"] == 3840 and m["frames_dropped"] == 160, m
    assert m["projected_wall_s"] > 0 and m["comm_s"] > 0
    assert abs(m["lr"] - 4 * 0.004 * 0.5 ** ((m["epoch"] - 1) / 2)) < 1e-6, m  # linear scaling
r = json.load(open("full/result.json"))
assert r["status"] == "completed" and r["world_size"] == 4 and r["mode"] == "simulated"
print("test accuracy", r["test_acc"])
assert r["test_acc"] > 0.6
# Throughput measured here (frames over the epochs' wall_s - cv_s) and projected onto 4 devices
# (frames over their projected_wall_s), each named so; one attempt.
assert r["attempts"] == 1 and "frames_per_s" not in r, r
close = lambda a, b: abs(a - b) <= 1e-9 * max(1.0, abs(b))
assert close(r["train_s"], sum(m["wall_s"] - m["cv_s"] for m in lines)), r
assert close(r["projected_train_s"], sum(m["projected_wall_s"] for m in lines)), r
assert close(r["measured_frames_per_s"], r["frames"] / r["train_s"]), r
assert close(r["projected_frames_per_s"], r["frames"] / r["projected_train_s"]), r
# Bytes every worker put into the combines: 6 a epoch, each the P parameters as 4-byte floats.
for m in lines:
    assert m["comm_bytes"] == 6 * r["num_params"] * 4, (m["comm_bytes"], r["num_params"])
assert r["comm_bytes"] == sum(m["comm_bytes"] for m in lines), r
PY
# With the momentum averaged too, twice the bytes; with it reset, the parameters' alone.
"$MAVG" -q train par.yaml --set parallel.optimizer_state=average --set schedule.epochs=1 --out avg-state --no-progress
"$MAVG" -q train par.yaml --set parallel.optimizer_state=reset --set schedule.epochs=1 --out reset-state --no-progress
python3 - <<'PY' || fail "comm_bytes does not count the optimizer state averaged"
import json
for run, copies in (("avg-state", 2), ("reset-state", 1)):
    r = json.load(open(run + "/result.json"))
    m = json.loads(open(run + "/metrics.jsonl").readline())
    assert m["comm_bytes"] == 6 * copies * r["num_params"] * 4 == r["comm_bytes"], (run, m, r)
PY
# ... and each trains another model than keeping the momentum does.
"$MAVG" -q train par.yaml --set schedule.epochs=1 --out keep-state --no-progress
for run in avg-state reset-state; do
  "$MAVG" model diff keep-state/model.bin $run/model.bin --max-rel 0 > /dev/null 2>&1 &&
    fail "parallel.optimizer_state of $run changed nothing"
done

# Preempted in the middle of epoch 2 (after minibatch 12, so at averaging 3), then resumed.
rc=0
MAVG_TEST_STOP_AT=2:12 "$MAVG" -q train par.yaml --out pre --no-progress || rc=$?
[ "$rc" -eq 75 ] || fail "preempted run should exit 75, got $rc"
[ "$(json_get pre/state.json status)" = preempted ] || fail "state not preempted"
[ "$(wc -l < pre/metrics.jsonl)" -eq 1 ] || fail "one finished epoch expected"
python3 -c 'import json; m=json.load(open("pre/checkpoint/meta.json")); assert m["progress"]["averagings"] == 3, m'
cp pre/result.json pre-attempt1-result.json   # the resume replaces it
cp pre/checkpoint/meta.json pre-attempt1-meta.json
"$MAVG" -q train --resume pre --no-progress
[ "$(json_get pre/state.json status)" = completed ] || fail "resumed run not completed"
# The resumed run's times include the first attempt's: wall_s at least the preempted attempt's
# plus the epoch the second attempt ran whole, epoch 2's wall_s its part in the first attempt
# (carried in the checkpoint's progress) and more; two attempts.
python3 - <<'PY' || fail "a resumed run's times leave out the first attempt"
import json
first = json.load(open("pre-attempt1-result.json"))
progress = json.load(open("pre-attempt1-meta.json"))["progress"]
r = json.load(open("pre/result.json"))
m = [json.loads(l) for l in open("pre/metrics.jsonl")]
assert first["attempts"] == 1 and r["attempts"] == 2, (first, r)
assert r["wall_s"] >= first["wall_s"] + m[2]["wall_s"], (first["wall_s"], m[2]["wall_s"], r["wall_s"])
assert 0 < progress["wall_s"] < m[1]["wall_s"], (progress, m[1])
assert abs(r["train_s"] - sum(x["wall_s"] - x["cv_s"] for x in m)) <= 1e-9 * r["train_s"], r
full = json.load(open("full/result.json"))
assert r["comm_bytes"] == full["comm_bytes"], (r["comm_bytes"], full["comm_bytes"])
PY
"$MAVG" model diff full/model.bin pre/model.bin --max-rel 0 || fail "resumed model differs"
diff <(python3 -c 'import json; [print(json.loads(l)["train_loss"], json.loads(l)["cv_loss"]) for l in open("full/metrics.jsonl")]') \
     <(python3 -c 'import json; [print(json.loads(l)["train_loss"], json.loads(l)["cv_loss"]) for l in open("pre/metrics.jsonl")]') \
  || fail "resumed run's metrics differ"
expect_error "already completed" "$MAVG" train --resume pre
expect_error "--set cannot change a run being resumed" "$MAVG" train --resume full --set seed=3

# Workers stepping at once (2 threads: two at a time, each on one thread) train the same model,
# bit for bit, as the same workers one after another on one thread; also when preempted and
# resumed at once, and when one of them diverges. The CV set, evaluated with the run's 2
# threads, gives the same losses too (the GEMMs' tiles do not depend on the thread count).
"$MAVG" train par.yaml --set device_options.threads=2 --out at-once --no-progress 2> at-once.log
grep -q "2 workers step at once" at-once.log || fail "no concurrent steps: $(cat at-once.log)"
grep -Eq "epoch  1 .* measured [0-9]+ frames/s, [0-9.]+s \+ CV [0-9.]+s; projected [0-9]+ frames/s, [0-9.]+s on 4 devices" at-once.log ||
  fail "the epoch line does not say which throughput is measured, which projected: $(grep 'epoch  1' at-once.log)"
"$MAVG" model diff full/model.bin at-once/model.bin --max-rel 0 || fail "workers at once: a different model"
python3 - <<'PY' || fail "workers at once: different metrics"
import json
a = [json.loads(l) for l in open("full/metrics.jsonl")]
b = [json.loads(l) for l in open("at-once/metrics.jsonl")]
assert len(a) == len(b) == 3
for x, y in zip(a, b):
    assert x["train_loss"] == y["train_loss"], (x["train_loss"], y["train_loss"])
    assert x["cv_loss"] == y["cv_loss"], (x["cv_loss"], y["cv_loss"])
PY
rc=0
MAVG_TEST_STOP_AT=2:12 "$MAVG" -q train par.yaml --set device_options.threads=2 --out at-once-pre --no-progress || rc=$?
[ "$rc" -eq 75 ] || fail "preempted run (workers at once) should exit 75, got $rc"
"$MAVG" -q train --resume at-once-pre --set device_options.threads=2 --no-progress
"$MAVG" model diff full/model.bin at-once-pre/model.bin --max-rel 0 || fail "resumed at once: a different model"
rc=0
"$MAVG" -q train par.yaml --set model.activation=relu --set schedule.lr=1 --set device_options.threads=2 \
  --out at-once-div --no-progress || rc=$?
[ "$rc" -eq 3 ] || fail "diverged run (workers at once) should exit 3, got $rc"
echo "ok: workers at once = workers in turn, bit for bit"

# One worker, newbob (initial CV loss, possible rejections): preempted inside epoch 1, resumed.
nb=(--set parallel.workers=1 --set schedule.type=newbob --set schedule.lr=0.02)
"$MAVG" -q train par.yaml "${nb[@]}" --out nb-full --no-progress
rc=0
MAVG_TEST_STOP_AT=1:20 "$MAVG" -q train par.yaml "${nb[@]}" --out nb-pre --no-progress || rc=$?
[ "$rc" -eq 75 ] || fail "preempted newbob run should exit 75, got $rc"
"$MAVG" -q train --resume nb-pre --no-progress
"$MAVG" model diff nb-full/model.bin nb-pre/model.bin --max-rel 0 || fail "resumed newbob model differs"
diff <(python3 -c 'import json,sys; [print(json.loads(l)["cv_loss"], json.loads(l)["accepted"]) for l in open("nb-full/metrics.jsonl")]') \
     <(python3 -c 'import json,sys; [print(json.loads(l)["cv_loss"], json.loads(l)["accepted"]) for l in open("nb-pre/metrics.jsonl")]') \
  || fail "resumed newbob metrics differ"

# A checkpoint another build wrote is not resumed: the run starts again (a run's numbers are
# one build's), and its files are replaced only as the new checkpoints commit.
rc=0
MAVG_TEST_STOP_AT=2:12 "$MAVG" -q train par.yaml --out other --no-progress || rc=$?
[ "$rc" -eq 75 ] || fail "preempted run should exit 75, got $rc"
python3 - <<'PY'
import json
m = json.load(open("other/checkpoint/meta.json"))
assert m["code_version"] == json.load(open("full/result.json"))["build"]["code_version"], m
m["code_version"] = "0123456789abcdef"
json.dump(m, open("other/checkpoint/meta.json", "w"))
PY
"$MAVG" train --resume other --no-progress 2> other.log
grep -q "written by another build (code version 0123456789abcdef, this is " other.log ||
  fail "another build's checkpoint was not refused: $(cat other.log)"
grep -q "resumed from checkpoint" other.log && fail "another build's checkpoint was resumed"
"$MAVG" model diff full/model.bin other/model.bin --max-rel 0 || fail "the restarted run differs"
[ "$(wc -l < other/metrics.jsonl)" -eq 3 ] || fail "the restarted run's metrics: $(cat other/metrics.jsonl)"
[ "$(json_get other/result.json attempts)" = 1 ] || fail "the restart counts the other build's attempt"

# Divergence: a non-finite loss stops the run with status diverged and exit code 3.
rc=0
"$MAVG" -q train par.yaml --set model.activation=relu --set schedule.lr=1 --out div --no-progress || rc=$?
[ "$rc" -eq 3 ] || fail "diverged run should exit 3, got $rc"
python3 -c 'import json; r=json.load(open("div/result.json")); assert r["status"]=="diverged" and r["diverged_at"]["epoch"]==1 and "lr" in r["diverged_at"], r'

# Too little data for one averaging: a clear error.
expect_error "not enough for one averaging" "$MAVG" train par.yaml --set parallel.workers=64 --set parallel.average_every=100 --out small --no-progress
echo PASS
