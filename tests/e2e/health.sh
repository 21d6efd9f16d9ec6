#!/usr/bin/env bash
# Training health: a run whose losses stay finite but which learns nothing ends `collapsed`
# (exit 4), not `completed`; the check's thresholds are config keys (0 turns a check off);
# sweeps, status and report tables show the verdict.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
write_config() {  # write_config FILE LR [MORE SCHEDULE KEYS]
  cat > "$1" <<YAML
data: {train: data/train, dev: data/dev, test: data/test, context: 0}
model: {hidden_layers: 2, hidden_dim: 64, activation: sigmoid}
optimizer: {minibatch: 32}
schedule: {type: constant, lr: $2, epochs: 2${3:+, $3}}
device_options: {threads: 1}
YAML
}

# lr 5 on the summed gradient: the sigmoids saturate, the CV loss stays far above ln(10).
write_config bad.yaml 5
rc=0
"$MAVG" train bad.yaml --out bad --no-progress > bad.out 2> bad.err || rc=$?
[ "$rc" -eq 4 ] || fail "a collapsed run exits 4, got $rc: $(tail -2 bad.err)"
grep -q "collapsed: no better than chance" bad.err || fail "no collapse line in the log"
grep -q "^bad: collapsed" bad.out || fail "summary line: $(cat bad.out)"
python3 - <<'PY'
import json, math
r = json.load(open("bad/result.json"))
s = json.load(open("bad/state.json"))
assert r["status"] == "collapsed" and s["status"] == "collapsed", (r["status"], s["status"])
c = r["collapse"]
assert c["check"] == "chance", c
# 2000 Fashion-MNIST images are balanced: the input-free loss is close to ln(10).
assert abs(c["input_free_loss"] - math.log(10)) < 0.05, c
assert c["best_cv_loss"] >= c["input_free_loss"], c
assert "no better than chance" in c["reason"]
# Measured like a completed run: its numbers show how bad it is.
assert 0 <= r["test_acc"] < 0.3, r["test_acc"]
PY
[ -s bad/model.bin ] || fail "a collapsed run keeps its model"

# Preempted in epoch 2 and resumed: the check still sees epoch 1's CV loss (kept in the
# checkpoint) and gives the same verdict on the same numbers.
rc=0
MAVG_TEST_STOP_AT=2:5 "$MAVG" -q train bad.yaml --out bad-pre --no-progress > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 75 ] || fail "expected a preemption (75), got $rc"
rc=0
"$MAVG" -q train --resume bad-pre --no-progress > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 4 ] || fail "the resumed run should end collapsed (4), got $rc"
python3 - <<'PY'
import json
a = json.load(open("bad/result.json"))["collapse"]
b = json.load(open("bad-pre/result.json"))["collapse"]
assert a == b, (a, b)
PY

# The same run with the checks off completes; the keys do not change the run id.
write_config off.yaml 5 "collapse: {chance_fraction: 0, growth: 0}"
"$MAVG" train off.yaml --out off --no-progress > /dev/null 2>&1 || fail "checks off: rc $?"
[ "$(json_get off/result.json status)" = completed ] || fail "checks off: not completed"
[ "$(json_get off/result.json run_id)" = "$(json_get bad/result.json run_id)" ] \
  || fail "collapse thresholds changed the run id"

# A healthy run is untouched by the check.
write_config good.yaml 0.008
"$MAVG" train good.yaml --out good --no-progress > /dev/null 2>&1 || fail "healthy run: rc $?"
[ "$(json_get good/result.json status)" = completed ] || fail "healthy run not completed"

# In a sweep: the summary and status list it with the reason, the table cell says so, and the
# sweep exits 1 as for a diverged run.
cat > s.yaml <<YAML
name: health
base: good.yaml
grid: {schedule.lr: [0.008, 5]}
YAML
R=(--results res)
rc=0
"$MAVG" -q sweep run s.yaml "${R[@]}" > run.txt || rc=$?
[ "$rc" -eq 1 ] || fail "a sweep with a collapsed run exits 1, got $rc"
grep -q "completed 1, collapsed 1" run.txt || fail "summary: $(cat run.txt)"
grep -q "collapsed .*no better than chance" run.txt || fail "summary lacks the reason"
"$MAVG" sweep status health "${R[@]}" > status.txt
grep -q "collapsed 1" status.txt || fail "status counts: $(cat status.txt)"
grep -q "^  collapsed .*no better than chance" status.txt || fail "status lacks the run"
"$MAVG" sweep plan s.yaml "${R[@]}" | contains "collapsed" || fail "plan does not show it"
"$MAVG" report table health "${R[@]}" --rows schedule.lr --value test_acc > t.md
grep -q "| 5 *| collapsed" t.md || fail "table cell: $(cat t.md)"
# Nothing relaunches it but a retry, which starts it over.
"$MAVG" -q sweep run s.yaml "${R[@]}" | contains "launched 0" || fail "a collapsed run relaunched"
rc=0
"$MAVG" -q sweep retry health "${R[@]}" --state collapsed > retry.txt || rc=$?
grep -q "launched 1" retry.txt || fail "retry --state collapsed: $(cat retry.txt)"
echo PASS
