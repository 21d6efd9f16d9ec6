#!/usr/bin/env bash
# A 6-run sweep with two resource shapes (1 and 2 MPI ranks) on the test cluster: one job array
# per shape, every run completed and collected; dry runs submit nothing; an sbatch failure is
# reported with SLURM's message and retried.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
cat > base.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 2, hidden_dim: 32}
optimizer: {minibatch: 32}
schedule: {type: exponential, lr: 0.004, final_ratio: 0.5, epochs: 2}
parallel: {mode: mpi, average_every: 5}
YAML
cat > s6.yaml <<YAML
name: slurm-s6
base: base.yaml
grid: {parallel.workers: [1, 2], schedule.lr: [0.002, 0.004, 0.008]}
YAML

"$MAVG" sweep run s6.yaml --launcher slurm --results res --dry-run > dry.txt
grep -q "#SBATCH --ntasks=2" dry.txt || fail "dry run lacks the 2-rank script"
[ -z "$(squeue -h -n mavg-slurm-s6)" ] || fail "the dry run submitted jobs"
[ ! -e res/mavg.db ] || fail "the dry run created a database"

start=$(date +%s.%N)
"$MAVG" sweep run s6.yaml --launcher slurm --results res --wait --poll 0.5 > run.txt 2>&1 ||
  fail "sweep failed: $(cat run.txt)"
end=$(date +%s.%N)
echo "6-run sweep: submission to collected results in $(python3 -c "print(round($end - $start, 1))") s"
echo "--- the sbatch script of the 2-worker (2-rank MPI) runs:"
cat res/runs/slurm-s6/slurm/r2-t1-mpi-0-*.sbatch
echo "---"
[ "$(ls res/runs/slurm-s6/slurm/*.sbatch | wc -l)" -eq 2 ] || fail "expected two job arrays"
[ "$(cat res/runs/slurm-s6/slurm/r2-t1-mpi-0-*.manifest | grep -c .)" -eq 3 ] || fail "manifest"
[ "$(db res/mavg.db "select count(*) from sweep_results where sweep='slurm-s6' and status='completed'")" -eq 6 ] ||
  fail "not all completed: $(db res/mavg.db "select run_id, status, reason from runs")"
[ "$(db res/mavg.db "select count(distinct substr(job_id, 1, instr(job_id, '_') - 1)) from attempts where launcher='slurm'")" -eq 2 ] ||
  fail "expected two arrays in the attempts"
[ "$(db res/mavg.db "select count(*) from results where key='world_size' and value=2")" -eq 3 ] || fail "world sizes"
"$MAVG" sweep collect slurm-s6 --results res | contains "6 ingested" || fail "collect"
# Each SLURM task settled its own BLAS kernels, the ones mavg chooses on this machine.
"$MAVG" devices --json devices.json >/dev/null
kernels="OpenBLAS $(python3 -c 'import json; print(json.load(open("devices.json"))["cpu"]["blas_kernels"])')"
[ "$(db res/mavg.db "select count(*) from results where key='blas_kernels' and value='$kernels'")" -eq 6 ] ||
  fail "kernels: $(db res/mavg.db "select run_id, value from results where key='blas_kernels'"), expected $kernels"

# sbatch refuses (no such partition): SLURM's message on every run, non-zero exit, then retry.
cat > bad.yaml <<YAML
name: slurm-bad
base: base.yaml
set: {parallel.workers: 1, schedule.epochs: 1}
grid: {schedule.lr: [0.001, 0.003]}
YAML
rc=0
"$MAVG" sweep run bad.yaml --launcher slurm --results res --wait --partition nosuch > bad.txt 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "an sbatch failure must fail the sweep"
grep -q "invalid partition" bad.txt || fail "SLURM's message missing: $(cat bad.txt)"
"$MAVG" sweep status slurm-bad --results res | contains "failed to start: sbatch failed" || fail "status"
"$MAVG" sweep retry slurm-bad --state failed --launcher slurm --results res --wait --poll 0.5 > retry.txt 2>&1 ||
  fail "retry failed: $(cat retry.txt)"
[ "$(db res/mavg.db "select count(*) from sweep_results where sweep='slurm-bad' and status='completed'")" -eq 2 ] ||
  fail "retried runs not completed"
echo PASS
