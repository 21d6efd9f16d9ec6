#!/usr/bin/env bash
# `sweep cancel` stops the sweep's jobs and leaves the database consistent (interrupted runs,
# resumed by the next `sweep run`); a job killed without a checkpoint is detected as lost and
# retried.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
cat > base.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 2, hidden_dim: 512}
optimizer: {minibatch: 16}
schedule: {type: exponential, lr: 0.002, final_ratio: 0.5, epochs: 30}
YAML
cat > c.yaml <<YAML
name: slurm-cancel
base: base.yaml
grid: {schedule.lr: [0.002, 0.003, 0.004]}
resources: {threads: 2}
YAML
"$MAVG" -q sweep run c.yaml --launcher slurm --results res > run.txt 2>&1
# 2 CPUs, 2 threads per job: one job runs, two wait.
# Cancel once the first run has written a checkpoint (mid-run).
for i in $(seq 600); do ls res/runs/slurm-cancel/*/checkpoint/meta.json >/dev/null 2>&1 && break; sleep 0.1; done
started=$(dirname "$(dirname "$(ls res/runs/slurm-cancel/*/checkpoint/meta.json | head -1)")")
"$MAVG" sweep cancel slurm-cancel --results res | tee cancel.txt
grep -q "cancelled [23] run" cancel.txt || fail "cancel"
wait_jobs slurm-cancel 60
[ "$(db res/mavg.db "select count(*) from runs where status='running'")" -eq 0 ] || fail "runs left running"
interrupted=$(db res/mavg.db "select count(*) from runs where status='interrupted'")
[ "$interrupted" -ge 2 ] || fail "not interrupted: $(db res/mavg.db "select status, reason from runs")"
# The run cancelled after its first checkpoint had 29 of 30 epochs to go: it is interrupted.
started_status=$(db res/mavg.db "select status from runs where run_id = '$(basename "$started")'")
[ "$started_status" = interrupted ] ||
  fail "the run cancelled mid-run is '$started_status', not interrupted: $(db res/mavg.db "select run_dir, status from runs")"
"$MAVG" sweep collect slurm-cancel --results res >/dev/null
[ "$(db res/mavg.db "select count(*) from runs where status='interrupted'")" -eq "$interrupted" ] ||
  fail "collect changed the cancelled runs: $(db res/mavg.db "select status, reason from runs")"
"$MAVG" sweep run c.yaml --launcher slurm --results res --wait --poll 0.5 > again.txt 2>&1 || fail "rerun: $(cat again.txt)"
[ "$(db res/mavg.db "select count(*) from runs where status='completed'")" -eq 3 ] || fail "not completed after the rerun"
# The run cancelled after its checkpoint continued from it.
grep -q "resumed from checkpoint" "$started/log.txt" || fail "$started did not resume its checkpoint"

# Lost: the run's process killed outright (as the OOM killer would: no checkpoint, no result)
# is found by status and retried.
printf 'name: slurm-lost\nbase: base.yaml\nset: {schedule.lr: 0.005}\nresources: {threads: 1}\n' > l.yaml
"$MAVG" -q sweep run l.yaml --launcher slurm --results res > lost.txt 2>&1
run=$(db res/mavg.db "select r.run_dir from runs r join sweep_runs s on s.run_id = r.run_id where s.sweep='slurm-lost'")
wait_file "$run/state.json" 120
kill -9 "$(python3 -c "import json; print(json.load(open('$run/state.json'))['pid'])")"
wait_jobs slurm-lost 60
"$MAVG" sweep status slurm-lost --results res | tee status.txt
grep -q "lost 1" status.txt || fail "the killed job is not reported lost"
grep -q "failed .*lost: SLURM job" status.txt || fail "no lost reason"
"$MAVG" sweep retry slurm-lost --launcher slurm --results res --wait --poll 0.5 > retry.txt 2>&1 || fail "retry: $(cat retry.txt)"
"$MAVG" sweep status slurm-lost --results res | contains "done 1" || fail "lost run not done after retry"
echo PASS
