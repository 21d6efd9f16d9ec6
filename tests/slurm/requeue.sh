#!/usr/bin/env bash
# A job requeued mid-run (scontrol requeue) resumes from its checkpoint and ends with the same
# model, bit for bit, as an uninterrupted run; so does a job warned of its time limit (the
# SIGUSR1 of --signal=B:USR1, sent here with scancel), which checkpoints and requeues itself.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
cat > base.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 2, hidden_dim: 512}
optimizer: {minibatch: 16, momentum: 0.5}
schedule: {type: exponential, lr: 0.002, final_ratio: 0.5, epochs: 30}
YAML
printf 'name: slurm-rq\nbase: base.yaml\nresources: {threads: 1}\n' > rq.yaml
"$MAVG" -q train base.yaml --set device_options.threads=1 --out ref --no-progress
"$MAVG" -q sweep run rq.yaml --launcher slurm --results res > run.txt 2>&1
run=$(db res/mavg.db "select run_dir from runs")
job=$(db res/mavg.db "select job_id from attempts where launcher='slurm'")
wait_file "$run/checkpoint/meta.json" 120
scontrol requeue "$job"
echo "requeued $job after $(python3 -c "import json; print(json.load(open('$run/checkpoint/meta.json'))['epochs_done'])") epoch(s)"
wait_starts slurm-rq 2
wait_jobs slurm-rq
"$MAVG" sweep status slurm-rq --results res | tee status.txt
grep -q "done 1" status.txt || fail "run not done"
grep -q "resumed from checkpoint" "$run/log.txt" || fail "the requeued job did not resume"
[ "$(grep -c "mavg: task 0" res/runs/slurm-rq/slurm/logs/*.out)" -eq 2 ] || fail "expected two starts"
"$MAVG" model diff ref/model.bin "$run/model.bin" | tee diff.txt
grep -q "identical yes" diff.txt || fail "requeued run differs from the uninterrupted one"

# The time-limit warning: what SLURM sends at --signal=B:USR1@<s>, delivered now.
printf 'name: slurm-tl\nbase: base.yaml\nset: {seed: 5}\nresources: {threads: 1}\n' > tl.yaml
"$MAVG" -q train base.yaml --set device_options.threads=1 --set seed=5 --out ref5 --no-progress
"$MAVG" -q sweep run tl.yaml --launcher slurm --results res > tl.txt 2>&1
run=$(db res/mavg.db "select r.run_dir from runs r join sweep_runs s on s.run_id = r.run_id where s.sweep='slurm-tl'")
job=$(db res/mavg.db "select a.job_id from attempts a join sweep_runs s on s.run_id = a.run_id where s.sweep='slurm-tl' and a.launcher='slurm'")
wait_file "$run/checkpoint/meta.json" 120
scancel --signal=USR1 --batch "$job"
wait_starts slurm-tl 2
wait_jobs slurm-tl
grep -q "checkpointed before the time limit: requeueing" res/runs/slurm-tl/slurm/logs/*.out ||
  fail "the warned job did not requeue itself"
grep -q "resumed from checkpoint" "$run/log.txt" || fail "the requeued job did not resume"
"$MAVG" sweep status slurm-tl --results res | contains "done 1" || fail "time-limited run not done"
"$MAVG" model diff ref5/model.bin "$run/model.bin" | contains "identical yes" ||
  fail "the run requeued at its time limit differs from the uninterrupted one"
echo PASS
