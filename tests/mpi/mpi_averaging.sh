#!/usr/bin/env bash
# BMUF, overlapped BMUF (the sum on a communication thread) and two-level averaging
# (MPI_Comm_split groups) under mpirun -np 4: bit for bit the simulated workers' model with
# deterministic sums; two-level with g = N is flat averaging; an overlapped run preempted with
# a sum in flight resumes bit for bit.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 3000 500
cat > alg.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 2, hidden_dim: 48}
optimizer: {minibatch: 32}
schedule: {type: exponential, lr: 0.004, final_ratio: 0.5, epochs: 2}
parallel: {workers: 4, average_every: 3, deterministic: true}
device_options: {threads: 1}
YAML
same() { "$MAVG" model diff "$1/model.bin" "$2/model.bin" --max-rel 0 >/dev/null || fail "$3"; }
declare -A sets=(
  [bmuf]="--set parallel.algorithm=bmuf --set parallel.lr_scaling=none"
  [overlap]="--set parallel.algorithm=bmuf --set parallel.lr_scaling=none --set parallel.overlap=true"
  [overlap-plain]="--set parallel.overlap=true"
  [two]="--set parallel.group_size=2 --set parallel.average_every_global=6"
)
for v in bmuf overlap overlap-plain two; do
  # shellcheck disable=SC2086
  "$MAVG" -q train alg.yaml ${sets[$v]} --out sim-$v --no-progress
  # shellcheck disable=SC2086
  "${MPIRUN[@]}" -np 4 "$MAVG" -q train alg.yaml ${sets[$v]} --set parallel.mode=mpi \
    --out mpi-$v --no-progress
  same sim-$v mpi-$v "$v: MPI differs from simulated"
  echo "ok: $v simulated = mpi"
done
python3 - <<'PY'
import json
for m in map(json.loads, open("mpi-overlap/metrics.jsonl")):
    assert m["comm_s"] > 0 and "wait_s" in m and "projected_wall_s" not in m, m
PY
# g = N under MPI: the group communicator is the world; flat averaging bit for bit.
"${MPIRUN[@]}" -np 4 "$MAVG" -q train alg.yaml --set parallel.mode=mpi --out mpi-flat --no-progress
"${MPIRUN[@]}" -np 4 "$MAVG" -q train alg.yaml --set parallel.mode=mpi --set parallel.group_size=4 \
  --set parallel.average_every_global=6 --out mpi-g4 --no-progress
same mpi-flat mpi-g4 "two-level with g = N differs from flat averaging under MPI"
# Overlapped, preempted with a mean in flight (combine point 3 of epoch 2), resumed.
rc=0
# shellcheck disable=SC2086
MAVG_TEST_STOP_AT=2:8 "${MPIRUN[@]}" -np 4 "$MAVG" -q train alg.yaml ${sets[overlap]} \
  --set parallel.mode=mpi --out mpi-pre --no-progress || rc=$?
[ "$rc" -ne 0 ] || fail "preempted MPI run should exit non-zero"
[ "$(json_get mpi-pre/state.json status)" = preempted ] || fail "MPI run not preempted"
"${MPIRUN[@]}" -np 4 "$MAVG" -q train --resume mpi-pre --no-progress
same mpi-overlap mpi-pre "overlapped MPI run resumed differs"
echo PASS
