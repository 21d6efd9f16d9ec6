#!/usr/bin/env bash
# The signal handling of the SLURM job script mavg writes, run as SLURM would run one array task
# but with a fake mavg and a fake scontrol, so each case is scripted and fast:
# - the time-limit warning (USR1 to the batch shell) is passed on to the run; a run that then
#   checkpoints and exits "preempted" (75) makes the job requeue itself and exit 75;
# - so does a run that ends at the moment the warning comes: its status is the run's, never the
#   128+n that a `wait` interrupted by the batch shell's trap returns (having reaped the run and
#   dropped its status);
# - a cancel or requeue (TERM) is passed on as USR1 too, and nobody requeues;
# - a run that ends without a signal passes its status through, and nobody requeues.
source "$(dirname "$0")/lib.bash"

fake_slurm

make_small_fmnist data 200 100
small_base base.yaml 16 1
printf 'name: sig\nbase: base.yaml\nresources: {threads: 1}\n' > sig.yaml
"$MAVG" sweep run sig.yaml --launcher slurm --results res > submit.txt 2>&1 ||
  fail "submission failed: $(cat submit.txt)"
script=$(ls "$WORK"/kept/*.sbatch)
grep -qF "$MAVG" "$script" || fail "the job script does not name $MAVG"

# task MAVG_BODY: runs the array task with a fake mavg whose body is MAVG_BODY (bash; $shell is
# the batch shell's pid: the parent of the subshell that started the fake); sets rc to the
# task's status.
task() {
  printf '#!/bin/bash\nshell=$(awk '"'"'{print $4}'"'"' /proc/$PPID/stat)\n%s\n' "$1" > fake-mavg
  chmod +x fake-mavg
  sed "s|$MAVG|$WORK/fake-mavg|g" "$script" > task.sbatch
  rm -f scontrol.txt
  rc=0
  SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_JOB_ID=4242 bash task.sbatch > task.txt 2>&1 || rc=$?
}
requeued() { [ -f scontrol.txt ] && grep -q "requeue 4242_0" scontrol.txt; }

# The warning while the run trains: the run checkpoints on USR1 and exits 75.
task 'trap "exit 75" USR1; kill -USR1 $shell; for i in $(seq 100); do sleep 0.1; done; exit 1'
[ "$rc" -eq 75 ] || fail "warned run: task status $rc, expected 75: $(cat task.txt)"
requeued || fail "warned run: the job did not requeue itself: $(cat task.txt)"
grep -q "checkpointed before the time limit: requeueing" task.txt || fail "no requeue message"

# The warning and the run's end together, many times over: the status is always the run's.
for i in $(seq 30); do
  task 'trap "exit 75" USR1; kill -USR1 $shell; exit 75'
  [ "$rc" -eq 75 ] || fail "run ending as the warning came (try $i): task status $rc, expected 75"
  requeued || fail "run ending as the warning came (try $i): no requeue"
done

# A cancel or requeue (TERM): passed on as USR1, the run exits 75, and the job does not requeue.
task 'trap "exit 75" USR1; kill -TERM $shell; for i in $(seq 100); do sleep 0.1; done; exit 1'
[ "$rc" -eq 75 ] || fail "cancelled run: task status $rc, expected 75: $(cat task.txt)"
! requeued || fail "a cancelled job requeued itself"

# No signal: the run's status, no requeue.
for status in 0 3 75; do
  task "exit $status"
  [ "$rc" -eq "$status" ] || fail "unsignalled run exiting $status: task status $rc"
  ! requeued || fail "an unsignalled run exiting $status requeued its job"
done
echo PASS
