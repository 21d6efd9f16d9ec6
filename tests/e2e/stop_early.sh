#!/usr/bin/env bash
# A sweep's stop_early: `sweep run` trains every run to each rung's epoch, pauses it there
# (--until-epoch, a checkpoint), stops the runs of an arm the paired rule shows losing, and takes
# the rest to the end. The runs that went on are the same bits as runs never paused; the stopped
# ones keep their epochs, are reported as stopped (never in the tables), and `sweep retry
# --state stopped` takes them to the end, again the same bits as an uninterrupted run. Bad
# stop_early entries are one line at plan time.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
small_base base.yaml 32 3
echo "parallel: {mode: simulated, workers: 2}" >> base.yaml
echo "device_options: {threads: 1}" >> base.yaml
# lr 0.0003 learns, but slower: its CV loss after epoch 1 is well above lr 0.004's.
cat > s.yaml <<YAML
name: se
base: base.yaml
grid: {schedule.lr: [0.004, 0.0003]}
replicates: 3
stop_early: {rule: paired, rungs: [1]}
YAML
R=(--results res)
"$MAVG" sweep plan s.yaml "${R[@]}" > plan.txt
grep -q "stop_early: paired (an arm shown worse than the best by more than 0 at 95 % stops) on cv_loss after epoch(s) 1; 2 arms:" plan.txt ||
  fail "plan: $(cat plan.txt)"
"$MAVG" sweep run s.yaml "${R[@]}" --jobs 2 > run.txt 2> run.log || fail "sweep run: $(cat run.txt run.log)"
grep -q "rung at epoch 1 (paired): 1 arm(s) stopped" run.txt || fail "no arm stopped: $(cat run.txt)"
grep -q "each to epoch 1 (a stop_early rung)" run.log || fail "no rung phase: $(cat run.log)"

python3 - <<'PY'
import sqlite3
db = sqlite3.connect("res/mavg.db")
rows = db.execute("""
    SELECT json_extract(r.config_json, '$.schedule.lr'), r.status, r.reason,
           (SELECT COUNT(*) FROM epochs e WHERE e.run_id = r.run_id)
    FROM sweep_runs s JOIN runs r USING (run_id) WHERE s.sweep = 'se'""").fetchall()
assert len(rows) == 6, rows
for lr, status, reason, epochs in rows:
    if lr == 0.004:
        assert status == "completed" and epochs == 3, (lr, status, epochs)
    else:
        assert status == "stopped" and epochs == 1, (lr, status, epochs)
        assert reason.startswith("stopped at epoch 1 (paired): worse than arm schedule.lr=0.004 "
                                 "on cv_loss over 3 pairs: 95 % CI ["), reason
PY
echo "ok: the losing arm stopped at the rung with its epoch kept; the other went on"

# The runs that paused at the rung and went on are the bits of one never paused.
read -r DONE STOPPED < <(python3 -c "import sqlite3; d = sqlite3.connect('res/mavg.db'); \
q = lambda s: d.execute(\"SELECT r.run_dir FROM sweep_runs x JOIN runs r USING (run_id) WHERE x.sweep = 'se' AND r.status = ? AND x.replicate = 0\", (s,)).fetchone()[0]; \
print(q('completed'), q('stopped'))")
"$MAVG" -q train "$DONE/config.yaml" --out whole > /dev/null
cmp "$DONE/model.bin" whole/model.bin || fail "a run paused at the rung differs from one never paused"
echo "ok: paused and resumed is the same model, bit for bit"

"$MAVG" sweep status se "${R[@]}" | contains "stopped 3" || fail "status lacks the stopped runs"
"$MAVG" report table se "${R[@]}" --rows schedule.lr --value cv_loss > t.md
grep -q "| 0.004 | .*(n=3)" t.md || fail "table: $(cat t.md)"
! grep -q "0.0003 | [0-9]" t.md || fail "a stopped run was averaged: $(cat t.md)"
"$MAVG" report html se "${R[@]}" --out page > /dev/null
grep -q 'class="badge s-stopped" data-state="stopped">stopped 3' page/index.html ||
  fail "the page does not count the stopped runs"
grep -q "stopped at epoch 1 (paired)" page/index.html || fail "the page does not say why"
# A second sweep run decides the same and launches nothing.
"$MAVG" -q sweep run s.yaml "${R[@]}" --jobs 2 > again.txt
grep -q "rung at epoch 1 (paired): 1 arm(s) stopped" again.txt && ! grep -q "launched [1-9]" again.txt ||
  fail "a rerun changed the sweep: $(cat again.txt)"
echo "ok: rerun launches nothing"
# Collecting the run directories (which say preempted: the pause) keeps the stopped runs stopped.
"$MAVG" sweep collect se "${R[@]}" > /dev/null
"$MAVG" sweep status se "${R[@]}" | contains "stopped 3" || fail "collect undid the stop"
expect_error "--max-runs cannot be combined with it" "$MAVG" sweep run s.yaml "${R[@]}" --max-runs 1
# The trainer alone: paused after epoch 2, then resumed with --until-epoch 1 (a controller that
# died before it recorded the pause): it pauses again at once, training nothing; then goes on.
"$MAVG" -q train "$DONE/config.yaml" --out alone --until-epoch 2 > /dev/null || [ $? -eq 75 ] ||
  fail "--until-epoch 2 did not pause"
[ "$(wc -l < alone/metrics.jsonl)" -eq 2 ] || fail "paused run has $(wc -l < alone/metrics.jsonl) epochs"
"$MAVG" -q train --resume alone --until-epoch 1 > /dev/null || [ $? -eq 75 ] || fail "resume past the epoch"
[ "$(wc -l < alone/metrics.jsonl)" -eq 2 ] || fail "a run past --until-epoch trained on"
"$MAVG" -q train --resume alone > /dev/null
cmp alone/model.bin whole/model.bin || fail "paused twice and resumed differs from never paused"
echo "ok: --until-epoch alone, and resumed past it"

# Retried, a stopped run goes to the end: the bits of a run never stopped.
"$MAVG" -q sweep retry se "${R[@]}" --state stopped --jobs 2 > retry.txt || fail "retry: $(cat retry.txt)"
grep -q "completed 3" retry.txt || fail "retry: $(cat retry.txt)"
"$MAVG" -q train "$STOPPED/config.yaml" --out whole2 > /dev/null
cmp "$STOPPED/model.bin" whole2/model.bin || fail "a stopped run resumed differs from one never stopped"
echo "ok: a stopped run resumed to the end is the same model"

# Bad input: one line at plan time.
se() { sed "s/^stop_early: .*/stop_early: $1/" s.yaml > bad.yaml; }
se "{rule: paired, rungs: [3]}"
expect_error "bad.yaml: line 5: stop_early.rungs: rung 3 is not before the last epoch (3 epochs" \
  "$MAVG" sweep plan bad.yaml "${R[@]}"
se "{rule: paired, rungs: [1], arms: [schedule.lr, model.hidden_dim]}"
expect_error "stop_early.arms: 'model.hidden_dim' is not an axis of this sweep (its axes: schedule.lr)" \
  "$MAVG" sweep plan bad.yaml "${R[@]}"
se "{rule: halving, rungs: [1]}"
expect_error "stop_early.rule: expects paired | asha, not 'halving'" "$MAVG" sweep plan bad.yaml "${R[@]}"
se "{rule: asha, rungs: [1], margin: 1}"
expect_error "stop_early.margin: belongs to rule paired" "$MAVG" sweep plan bad.yaml "${R[@]}"
se "{rule: paired, rungs: [2, 1]}"
expect_error "stop_early.rungs: expects ascending epochs, not 1 after 2" "$MAVG" sweep plan bad.yaml "${R[@]}"
se "{rule: paired, rungs: [1]}"
sed -i 's/^replicates: 3/replicates: 1/' bad.yaml
expect_error "stop_early: the sweep has 1 replicate: an arm's evidence is its runs" \
  "$MAVG" sweep plan bad.yaml "${R[@]}"
sed 's/^name: se/name: se2/' s.yaml > s2.yaml
"$MAVG" sweep run s2.yaml --results res2 --dry-run > dry.txt
[ "$(grep -c -- '--until-epoch 1' dry.txt)" -eq 6 ] || fail "the dry run does not show the rung: $(cat dry.txt)"
expect_error "stop_early runs the sweep rung by rung" \
  "$MAVG" sweep run s.yaml "${R[@]}" --launcher slurm
echo "stop_early: all passed"
