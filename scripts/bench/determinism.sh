#!/usr/bin/env bash
# The price of thread-count-independent bits: a training step (`mavg bench train`: random data,
# SGD) of four networks at 1 and 2 threads, this build against another one (e.g. the build
# before GEMMs were cut into fixed tiles, copied aside), the two alternated ROUNDS times in one
# run; prints each build's median frames/s and the ratio to --before.
#
#   scripts/bench/determinism.sh --before BIN [--mavg BIN] [--rounds N] [--nets small,digits,...]
#
# Networks: small (the quickstart's 440-2x256-63), digits (440-4x512-63), fmnist
# (784-2x1024-10), paper (440-6x2048-8806, minibatch 1024: slow). Not a test: the numbers depend
# on the machine and on what else runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mavg=build/bin/mavg
before=""
rounds=3
nets=small,digits,fmnist
while [ $# -gt 0 ]; do
  case "$1" in
    --mavg) mavg=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --nets) nets=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "determinism.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$before" ] || { echo "determinism.sh: --before BIN is required (see --help)" >&2; exit 2; }
for b in "$mavg" "$before"; do
  [ -x "$b" ] || { echo "determinism.sh: no mavg at $b" >&2; exit 1; }
done
python3 - "$before" "$mavg" "$nets" "$rounds" "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" <<'PY'
import json, statistics, subprocess, sys
before, after, nets, rounds, cpu = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4]), sys.argv[5]
configs = {
    "small": ("configs/digits.yaml", ["model.hidden_layers=2", "model.hidden_dim=256", "model.num_outputs=63"]),
    "digits": ("configs/digits.yaml", ["model.num_outputs=63"]),
    "fmnist": ("configs/fmnist.yaml", ["model.num_outputs=10"]),
    "paper": ("configs/paper-net.yaml", []),
}
rates = {}
for net in nets:
    if net not in configs:
        sys.exit(f"determinism.sh: unknown network '{net}' (small, digits, fmnist, paper)")
    config, sets = configs[net]
    for threads in (1, 2):
        for r in range(rounds):
            for name, binary in (("before", before), ("after", after)):
                cmd = [binary, "-q", "bench", "train", "--config", config,
                       "--repeats", "3" if net == "paper" else "5"]
                for s in sets + [f"device_options.threads={threads}"]:
                    cmd += ["--set", s]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                rates.setdefault((net, threads, name), []).append(json.loads(out)["frames_per_s"])
        print(f"[determinism] {net} at {threads} thread(s) done", file=sys.stderr, flush=True)
print(f"Training step, frames/s (median of {rounds} rounds, alternated); {cpu}")
print(f"{'network':8s} {'threads':>7s} {'before':>10s} {'after':>10s} {'after/before':>13s}")
for net in nets:
    for threads in (1, 2):
        b = statistics.median(rates[(net, threads, "before")])
        a = statistics.median(rates[(net, threads, "after")])
        print(f"{net:8s} {threads:7d} {b:10.0f} {a:10.0f} {a / b:13.2f}")
PY
