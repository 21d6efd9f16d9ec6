#!/usr/bin/env bash
# A spec's `resources` on the test cluster: a sweep asking for time, threads, memory, one node,
# a QoS, a node feature and extra sbatch options runs to the end, and SLURM holds every request
# (scontrol show job; the QoS in SLURM's copy of the batch script, since a cluster without
# accounting keeps no QoS). Requests the cluster cannot grant reach it too: two nodes leave the
# job pending for want of them (cancelled by sweep cancel, the runs resumable), a GPU is refused
# by sbatch with SLURM's message on the run.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
node=$(hostname -s)
# The node's feature (scripts/slurm/local-cluster.sh; a cluster started by an older script gets it).
scontrol show node "$node" | contains "ActiveFeatures=.*mavgtest" ||
  scontrol update NodeName="$node" AvailableFeatures=mavgtest ActiveFeatures=mavgtest
small_base base.yaml 16 1
cat > r.yaml <<YAML
name: slurm-res
base: base.yaml
grid: {schedule.lr: [0.002, 0.004]}
resources: {time: "00:10:00", threads: 1, mem: 200M, nodes: 1, qos: normal, constraint: mavgtest,
            sbatch: ["--comment=mavg-resources", "--nice=7"]}
YAML
"$MAVG" sweep run r.yaml --launcher slurm --results res --wait --poll 0.5 > run.txt 2>&1 ||
  fail "sweep failed: $(cat run.txt)"
[ "$(db res/mavg.db "select count(*) from sweep_results where sweep='slurm-res' and status='completed'")" = 2 ] ||
  fail "not completed: $(db res/mavg.db "select run_id, status, reason from runs")"
for job in $(db res/mavg.db "select job_id from attempts a join sweep_runs s using(run_id) where s.sweep='slurm-res'"); do
  info=$(scontrol show job "$job")
  for want in "TimeLimit=00:10:00" "MinMemoryNode=200M" "NumNodes=1" "CPUs/Task=1" "Features=mavgtest" \
              "Comment=mavg-resources" "Nice=7" "JobState=COMPLETED"; do
    grep -q -- "$want" <<< "$info" || fail "job $job lacks $want: $info"
  done
  scontrol write batch_script "$job" - | contains -x "#SBATCH --qos=normal" || fail "job $job's script lacks the QoS"
done
echo "ok: every request on the cluster's jobs"

# Two nodes on a one-node cluster: submitted, and pending for want of nodes.
cat > n.yaml <<YAML
name: slurm-nodes
base: base.yaml
set: {parallel.mode: mpi, parallel.workers: 2}
grid: {schedule.lr: [0.002]}
resources: {nodes: 2}
YAML
"$MAVG" sweep run n.yaml --launcher slurm --results res > n.txt 2>&1 || fail "nodes: $(cat n.txt)"
job=$(db res/mavg.db "select job_id from attempts a join sweep_runs s using(run_id) where s.sweep='slurm-nodes'")
sleep 2
scontrol show job "$job" | contains "NumNodes=2" || fail "job $job does not ask two nodes: $(scontrol show job "$job")"
# Pending for want of nodes: the scheduler gives PartitionNodeLimit, or PartitionConfig when it
# evaluates the job before the node limit (which one depends on its timing); None until then.
reason=None
for _ in $(seq 40); do
  reason=$(squeue -h -j "${job%_*}" -o %r)
  case "$reason" in PartitionNodeLimit | PartitionConfig) break ;; esac
  sleep 0.5
done
case "$reason" in
  PartitionNodeLimit | PartitionConfig) ;;
  *) fail "job $job: $(squeue -h -j "${job%_*}" -o '%T %r')" ;;
esac
"$MAVG" sweep cancel slurm-nodes --results res | contains "cancelled 1 run" || fail "cancel"
echo "ok: two nodes asked, pending for want of them"

# A GPU on a cluster without any: sbatch's refusal on the run.
cat > g.yaml <<YAML
name: slurm-gpu
base: base.yaml
set: {device: cuda}
grid: {schedule.lr: [0.002]}
resources: {gpus_per_worker: 1}
YAML
rc=0
"$MAVG" sweep run g.yaml --launcher slurm --results res --wait --poll 0.5 > g.txt 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "a GPU request on a cluster without GPUs succeeded"
"$MAVG" sweep status slurm-gpu --results res | contains "failed to start: sbatch failed.*gres" ||
  fail "SLURM's message is not on the run: $("$MAVG" sweep status slurm-gpu --results res)"
echo PASS
