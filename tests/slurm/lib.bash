# Shared helpers for the `slurm` tests (sourced): the e2e helpers, plus the single-node test
# cluster of scripts/slurm/local-cluster.sh (started here if it is not running).
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.bash"
"$MAVG_SOURCE_DIR/scripts/slurm/local-cluster.sh" start >/dev/null
export SLURM_CONF="${MAVG_SLURM_DIR:-/var/tmp/mavg-slurm}/slurm.conf"

# wait_jobs SWEEP [SECONDS]: until no job of the sweep is queued; requeued tasks are released
# at once instead of after SLURM's 121 s requeue delay. The queue must look empty twice, 2 s
# apart: a job being requeued (scontrol requeue) is briefly listed nowhere.
wait_jobs() {
  local name="mavg-$1" limit="${2:-300}" t=0 empty=0
  while [ "$empty" -lt 2 ]; do
    if [ -n "$(squeue -h -n "$name" -o %i)" ]; then
      empty=0
    else
      empty=$((empty + 1))
      [ "$empty" -lt 2 ] || break
    fi
    for j in $(squeue -h -r -n "$name" -t PD -o "%i %r" | awk '$2 == "BeginTime" {print $1}'); do
      scontrol update jobid="$j" StartTime=now 2>/dev/null || true
    done
    sleep 1; t=$((t + 1))
    [ "$empty" -eq 0 ] || { sleep 1; t=$((t + 1)); }
    [ "$t" -lt "$limit" ] || fail "jobs of $1 still queued after ${limit}s: $(squeue -h -n "$name")"
  done
}

# wait_starts SWEEP N [SECONDS]: until the sweep's job logs (results dir res) show N task
# starts, releasing requeued tasks from SLURM's requeue delay meanwhile. A requeued job can be
# listed nowhere for longer than wait_jobs's 2 s, which would read as its end: wait for its
# second start first.
wait_starts() {
  local name="mavg-$1" n="$2" limit="${3:-120}" t=0
  while [ "$(cat res/runs/"$1"/slurm/logs/*.out 2>/dev/null | grep -c "mavg: task ")" -lt "$n" ]; do
    for j in $(squeue -h -r -n "$name" -t PD -o "%i %r" | awk '$2 == "BeginTime" {print $1}'); do
      scontrol update jobid="$j" StartTime=now 2>/dev/null || true
    done
    sleep 0.5; t=$((t + 1))
    [ "$t" -lt "$((limit * 2))" ] ||
      fail "$1: fewer than $n task starts after ${limit}s: queue [$(squeue -h -n "$name")]; job logs: $(tail -n 8 res/runs/"$1"/slurm/logs/*.out 2>&1)"
  done
}

# wait_file PATH [SECONDS]
wait_file() {
  local t=0
  while [ ! -e "$1" ]; do sleep 0.2; t=$((t + 1)); [ "$t" -lt "$((${2:-120} * 5))" ] || fail "no $1"; done
}

# db FILE SQL: rows as lines, columns separated by '|' (Python's sqlite3: no extra package).
db() {
  python3 -c 'import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))' "$1" "$2"
}
