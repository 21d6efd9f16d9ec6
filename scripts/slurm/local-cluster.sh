#!/usr/bin/env bash
# A single-node SLURM on this machine, for the `slurm` tests and for trying the launcher:
# munged, slurmctld and slurmd on localhost with this machine's CPUs, no accounting daemon (so
# no QoS: SLURM takes --qos and keeps none). The node has the feature `mavgtest`, which the
# tests' resources.constraint asks for.
#   scripts/slurm/local-cluster.sh start|stop|status
# Everything lives in $MAVG_SLURM_DIR (default /var/tmp/mavg-slurm): slurm.conf, state, spool,
# logs. The system's /etc/slurm is not touched: point the SLURM commands at this cluster with
#   export SLURM_CONF=$MAVG_SLURM_DIR/slurm.conf      (`status` prints the line)
# Needs root (the daemons run as root here) and Debian's slurm-wlm and munge
# (scripts/setup.sh installs them). Idempotent: start on a running cluster does nothing.
set -euo pipefail
DIR="${MAVG_SLURM_DIR:-/var/tmp/mavg-slurm}"
CONF="$DIR/slurm.conf"
export SLURM_CONF="$CONF"

die() { echo "local-cluster: $*" >&2; exit 1; }
pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_conf() {
  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
  cat > "$CONF.tmp" <<CONF
# Written by mavg scripts/slurm/local-cluster.sh: a single-node test cluster.
ClusterName=mavg-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
JobRequeue=1
MaxArraySize=1001
KillWait=30
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus RealMemory=$mem Features=mavgtest State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  mv "$CONF.tmp" "$CONF"
}

start() {
  [ "$(id -u)" -eq 0 ] || die "run as root (the daemons of the test cluster run as root)"
  command -v slurmctld >/dev/null && command -v munged >/dev/null ||
    die "slurm-wlm and munge are not installed (scripts/setup.sh installs them)"
  if pid_alive "$DIR/slurmctld.pid" && pid_alive "$DIR/slurmd.pid"; then
    echo "local-cluster: already running ($CONF)"; return 0
  fi
  write_conf
  # munge: the key comes with Debian's package; the daemon runs as the munge user.
  if [ ! -f /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key || die "cannot create /etc/munge/munge.key"
    chown munge:munge /etc/munge/munge.key && chmod 600 /etc/munge/munge.key
  fi
  mkdir -p /run/munge && chown munge:munge /run/munge
  if ! munge -n >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged || die "munged did not start"
  fi
  for i in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n >/dev/null 2>&1 || die "munge does not answer"
  pid_alive "$DIR/slurmctld.pid" || slurmctld -f "$CONF" || die "slurmctld did not start: see $DIR/log/slurmctld.log"
  pid_alive "$DIR/slurmd.pid" || slurmd -f "$CONF" || die "slurmd did not start: see $DIR/log/slurmd.log"
  for i in $(seq 120); do
    state=$(sinfo -h -o %t 2>/dev/null | head -1 || true)
    case "$state" in idle|mix|alloc) break ;; down*|drain*) scontrol update nodename="$(hostname -s)" state=resume 2>/dev/null || true ;; esac
    sleep 0.5
  done
  case "$state" in
    idle|mix|alloc) echo "local-cluster: up, node $(hostname -s) with $(nproc) CPUs; export SLURM_CONF=$CONF" ;;
    *) die "the node did not come up (state '$state'): see $DIR/log/" ;;
  esac
}

stop() {
  for d in slurmd slurmctld; do
    if pid_alive "$DIR/$d.pid"; then
      kill "$(cat "$DIR/$d.pid")"
      for i in $(seq 50); do pid_alive "$DIR/$d.pid" || break; sleep 0.1; done
    fi
  done
  echo "local-cluster: stopped"
}

status() {
  if pid_alive "$DIR/slurmctld.pid" && pid_alive "$DIR/slurmd.pid"; then
    echo "local-cluster: running; export SLURM_CONF=$CONF"
    sinfo
  else
    echo "local-cluster: not running"; return 1
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) die "usage: $0 start|stop|status" ;;
esac
