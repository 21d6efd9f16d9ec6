#!/usr/bin/env bash
# A spec's `resources` in the sbatch script that `sweep run --launcher slurm --dry-run` prints
# (no cluster needed): every key on its own #SBATCH line; keys that cannot apply refused with
# one line naming them; the local launcher saying which requests it does not use.
source "$(dirname "$0")/lib.bash"
cat > base.yaml <<YAML
data: {train: data/train, dev: data/dev}
model: {hidden_layers: 1, hidden_dim: 8}
YAML
spec() {  # spec NAME RESOURCES [SET]: a 2-point sweep
  printf 'name: %s\nbase: base.yaml\nset: {%s}\ngrid: {schedule.lr: [0.1, 0.2]}\nresources: %s\n' \
    "$1" "${3:-parallel.workers: 1}" "$2" > "$1.yaml"
}
R=(--results res)
spec full '{time: "01:30:00", threads: 2, gpus_per_worker: 1, nodes: 2, mem: 16G, qos: high, constraint: "a100&ib", sbatch: ["--exclusive", "--reservation=paper", "--comment=sweep-full"]}' \
  'device: cuda, parallel.mode: mpi, parallel.workers: 4'
"$MAVG" sweep run full.yaml --launcher slurm --partition gpu --account proj "${R[@]}" --dry-run > full.txt
for line in "--ntasks=4" "--cpus-per-task=2" "--nodes=2" "--gpus-per-task=1" "--mem=16G" \
            "--time=0-01:30:00" "--qos=high" "--constraint=a100&ib" "--partition=gpu" \
            "--account=proj" "--exclusive" "--reservation=paper" "--comment=sweep-full"; do
  [ "$(grep -cx -- "#SBATCH $line" full.txt)" = 1 ] || fail "the script lacks '#SBATCH $line': $(cat full.txt)"
done
grep -q "mpirun -np 4 " full.txt || fail "no mpirun -np 4"
[ ! -e res ] || fail "a dry run wrote files"
# Nothing asked, nothing written; a CUDA run still gets its one GPU per task.
spec plain '{time: "10:00"}'
"$MAVG" sweep run plain.yaml --launcher slurm "${R[@]}" --dry-run > plain.txt
for opt in --nodes --gpus-per-task --mem --qos --constraint --exclusive; do
  ! grep -q -- "^#SBATCH $opt" plain.txt || fail "$opt without being asked"
done
spec gpu '{time: "10:00"}' 'device: cuda'
"$MAVG" sweep run gpu.yaml --launcher slurm "${R[@]}" --dry-run | contains -x "#SBATCH --gpus-per-task=1" ||
  fail "a cuda run without gpus_per_worker gets no GPU"

# Keys that cannot apply: one line naming the key (and its line, or the point).
spec typo '{time: "10:00", memory: 4G}'
expect_error "typo.yaml: line 5: unknown resource 'memory' (did you mean 'mem'? resources: time, threads, gpus_per_worker, nodes, mem, qos, constraint, sbatch)" \
  "$MAVG" sweep run typo.yaml --launcher slurm "${R[@]}" --dry-run
spec mem '{mem: 16GB}'
expect_error "resources.mem '16GB' is not a SLURM memory size" "$MAVG" sweep plan mem.yaml "${R[@]}"
spec own '{sbatch: ["--exclusive", "--time=2:00:00"]}'
expect_error "resources.sbatch entry '--time=2:00:00': mavg sets --time itself (use resources.time or the --time flag)" \
  "$MAVG" sweep run own.yaml --launcher slurm "${R[@]}" --dry-run
spec cpu '{gpus_per_worker: 1}'
expect_error "point [schedule.lr=0.1]: resources.gpus_per_worker is 1 but the run trains on device cpu" \
  "$MAVG" sweep plan cpu.yaml "${R[@]}"
spec nodes '{nodes: 2}' 'parallel.workers: 2'
expect_error "resources.nodes is 2, but only an MPI run (parallel.mode mpi) with at least one rank per node spreads over nodes (this run: mode simulated, 2 worker(s))" \
  "$MAVG" sweep plan nodes.yaml "${R[@]}"

# The local launcher runs none of the SLURM requests, and says so (here before a dry run).
spec local '{time: "10:00", mem: 4G, qos: high, sbatch: ["--exclusive"]}'
"$MAVG" sweep run local.yaml "${R[@]}" --dry-run > local.txt 2> local.err
grep -q "resources mem, qos, sbatch are requests to SLURM: the local launcher does not use them" local.err ||
  fail "no word about the unused requests: $(cat local.err)"
echo PASS
