#!/usr/bin/env bash
# Training beside other work: one worker of the digits-small network (2 x 256, the quickstart's)
# trains one epoch on 1 and on 2 threads, with the machine quiet and beside one and two busy
# processes (a busy loop each: a second run or a build does the same to a core), in turn,
# ROUNDS times. Prints training frames per second (frames over the epoch's training time, CV
# excluded; median of the rounds), the ratio of 2 threads to 1 thread under the same load (goal:
# >= 0.9 beside one busy process, i.e. a run never trains much slower than one thread would),
# and what each epoch recorded: its CPU use (cpu_util: process CPU time / (wall time x
# threads)), the share of its time its threads waited for a core (cpu_wait) and its contended
# flag. With --before BIN the same runs of another build are interleaved, side by
# side (e.g. the build before the change, copied aside); --build 'NAME=[VAR=VALUE ...] BIN'
# adds any other command, e.g. --build 'passive=OMP_WAIT_POLICY=passive /tmp/mavg-old' (the
# earlier build with OpenMP's threads sleeping instead of spinning at its barriers).
#
#   scripts/bench/contention.sh [--mavg BIN] [--before BIN] [--build 'NAME=CMD'] ... [--rounds N]
#                               [--data DIR]
#
# Needs the digits-small corpus (built into DATA if missing: ~20 s). Not a test: its numbers
# depend on the machine and on what else runs; nothing here asserts a time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mavg=build/bin/mavg
before=""
extra=()
rounds=3
data=data/digits-small
while [ $# -gt 0 ]; do
  case "$1" in
    --mavg) mavg=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    --build) extra+=("$2"); shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "contention.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$mavg" ] || { echo "contention.sh: no mavg at $mavg (build first: scripts/setup.sh)" >&2; exit 1; }
[ -d "$data/train" ] || "$mavg" -q data digits --size small --out "$data" >/dev/null
out=$(mktemp -d)
busy=()
cleanup() {
  for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$out"
}
trap cleanup EXIT
start_busy() {  # start_busy N: N busy loops, each a process of its own
  for _ in $(seq "$1"); do
    bash -c 'while :; do :; done' &
    busy+=($!)
  done
}
stop_busy() {
  for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
  wait "${busy[@]}" 2>/dev/null || true
  busy=()
}
builds=("after=$mavg")
[ -n "$before" ] && builds=("before=$before" "${builds[@]}")
builds+=("${extra[@]}")
config=(configs/digits.yaml --set data.train="$data/train" --set data.dev="$data/dev"
        --set data.test= --set model.hidden_layers=2 --set model.hidden_dim=256
        --set schedule.epochs=1 --no-progress)
for r in $(seq "$rounds"); do
  for load in 0 1 2; do
    start_busy "$load"
    sleep 0.5
    for b in "${builds[@]}"; do
      name=${b%%=*}
      read -ra cmd <<< "${b#*=}"
      for t in 1 2; do
        env "${cmd[@]}" -q train "${config[@]}" --set device_options.threads=$t \
          --out "$out/$name-load$load-t$t-r$r" >/dev/null 2>&1 ||
          { echo "contention.sh: $name failed (load $load, $t threads)" >&2; exit 1; }
      done
    done
    stop_busy
  done
  echo "[contention] round $r/$rounds done" >&2
done
python3 - "$out" "$rounds" "$(nproc)" "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" "${builds[@]}" <<'PY'
import json, statistics, sys
out, rounds, cores, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
builds = [b.split("=", 1)[0] for b in sys.argv[5:]]
def epoch(run):
    return json.loads(open(f"{out}/{run}/metrics.jsonl").readline())
def rate(e):
    return e["frames"] / (e["wall_s"] - e.get("cv_s", 0.0))
print(f"One worker, digits-small (2 x 256), one epoch; {cores} cores ({cpu}); median of {rounds} rounds")
print("training frames/s (CPU use of the threads, share of the time waiting for a core, contended epochs)")
print(f"{'build':7s} {'busy':>4s} {'1 thread':>30s} {'2 threads':>30s} {'2t / 1t':>8s}")
for b in builds:
    for load in (0, 1, 2):
        cells, med = [], []
        for t in (1, 2):
            es = [epoch(f"{b}-load{load}-t{t}-r{r}") for r in range(1, rounds + 1)]
            m = statistics.median(rate(e) for e in es)
            med.append(m)
            util = [e["cpu_util"] for e in es if "cpu_util" in e]
            wait = [e["cpu_wait"] for e in es if "cpu_wait" in e]
            flag = sum(1 for e in es if e.get("contended"))
            extra = ""
            if util:
                extra = f" ({statistics.median(util):.2f}, " + \
                    (f"{statistics.median(wait):.2f}, " if wait else "") + f"{flag}/{len(es)})"
            cells.append(f"{m:10.0f}{extra}")
        print(f"{b:7s} {load:4d} {cells[0]:>30s} {cells[1]:>30s} {med[1] / med[0]:8.2f}")
PY
