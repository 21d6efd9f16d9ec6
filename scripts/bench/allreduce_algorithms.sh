#!/usr/bin/env bash
# OpenMPI's all-reduce algorithms against one another, against mavg's rank-order (deterministic)
# sum and against memcpy, side by side: `mavg bench allreduce` under each, in turn, ROUNDS
# times (so a noisy machine slows them alike), and a table of each one's median bus bandwidth,
# its ratio to this machine's memcpy (measured in the same process) and to OpenMPI's own choice.
#   scripts/bench/allreduce_algorithms.sh            2 ranks, the paper network's 39.9 M floats
# Environment: NP (ranks, default 2), FLOATS (default 39928422), ROUNDS (default 3), REPEATS
# (timed all-reduces per run, default 5), MAVG (default build/bin/mavg), OUT (a Markdown file;
# default: standard output only).
# The algorithms are OpenMPI's coll/tuned component's (coll_tuned_allreduce_algorithm):
# 0 its decision rules, 1 basic linear, 2 non-overlapping (reduce then broadcast), 3 recursive
# doubling, 4 ring, 5 segmented ring, 6 Rabenseifner (reduce-scatter then all-gather). It
# assumes coll/tuned handles the all-reduce (OpenMPI's default on one machine); the table is
# only as true as that. mavg's rank-order sum (alltoallv, the owner adds in rank order,
# allgatherv) runs in one piece and pipelined in pieces of 128 Ki to 1 Mi floats (`--piece`),
# and as mavg runs it by default.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
np="${NP:-2}"
floats="${FLOATS:-39928422}"
rounds="${ROUNDS:-3}"
repeats="${REPEATS:-5}"
mavg="${MAVG:-build/bin/mavg}"
[ -x "$mavg" ] || { echo "$mavg: not built (scripts/setup.sh)" >&2; exit 1; }
for v in np floats rounds repeats; do
  case "${!v}" in '' | *[!0-9]* | 0) echo "${v^^} must be a positive integer, not '${!v}'" >&2; exit 2 ;; esac
done
[ "$np" -ge 2 ] || { echo "NP must be at least 2 (an all-reduce of one rank moves nothing)" >&2; exit 2; }
command -v mpirun > /dev/null || { echo "mpirun not found (scripts/setup.sh installs OpenMPI)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpirun=(mpirun --oversubscribe --bind-to none -np "$np")
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
arms=("0:--piece 0" "1:--piece 0" "2:--piece 0" "3:--piece 0" "4:--piece 0" "5:--piece 0"
      "6:--piece 0" "det:--deterministic --piece 0" "det128k:--piece 131072"
      "det256k:--piece 262144" "det1m:--piece 1048576" "mavg:")
for ((r = 0; r < rounds; r++)); do
  for arm in "${arms[@]}"; do
    name=${arm%%:*}
    flags=${arm#*:}
    mca=()
    if [[ "$name" =~ ^[0-9]$ ]]; then  # one of OpenMPI's algorithms
      mca=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm "$name")
    fi
    # shellcheck disable=SC2086
    "${mpirun[@]}" "${mca[@]}" "$mavg" -q bench allreduce --floats "$floats" --repeats "$repeats" \
      $flags --json "$work/$name-$r.json" > /dev/null 2> "$work/$name-$r.log" ||
      { echo "allreduce_algorithms.sh: algorithm $name failed: $(tail -2 "$work/$name-$r.log")" >&2; exit 1; }
  done
done
/usr/bin/python3 - "$work" "$rounds" "$np" "$floats" "${OUT:-}" <<'PY'
import json, os, statistics, sys
work, rounds, np_, floats, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
names = {"0": "OpenMPI's choice (decision rules)", "1": "basic linear",
         "2": "non-overlapping (reduce + broadcast)", "3": "recursive doubling", "4": "ring",
         "5": "segmented ring", "6": "Rabenseifner (reduce-scatter + all-gather)",
         "det": "mavg's rank-order sum in one piece (parallel.deterministic across nodes)",
         "det128k": "the same, pipelined in pieces of 131,072 floats",
         "det256k": "the same, pipelined in pieces of 262,144 floats",
         "det1m": "the same, pipelined in pieces of 1,048,576 floats",
         "mavg": "mavg's sum as it runs (on one machine: pipelined in its pieces)"}
rows, bus = [], {}
for key, label in names.items():
    runs = [json.load(open(os.path.join(work, f"{key}-{r}.json"))) for r in range(rounds)]
    b = statistics.median(x["allreduce_busbw_gb_per_s"] for x in runs)
    ratio = statistics.median(x["busbw_over_memcpy"] for x in runs)
    bus[key] = b
    rows.append((key, label, b, ratio))
lines = [f"All-reduce of {floats * 4 / 1e6:.1f} MB over {np_} ranks, median of {rounds} rounds "
         "in turn (`mavg bench allreduce`; bus bandwidth 2(p-1)/p x size / time):", "",
         "| algorithm | | bus GB/s | / memcpy | / OpenMPI's choice |", "|---|---|---:|---:|---:|"]
for key, label, b, ratio in rows:
    lines.append(f"| {key} | {label} | {b:.2f} | {ratio:.2f} | {b / bus['0']:.2f} |")
best = max(rows, key=lambda r: r[2])
lines += ["", f"Fastest here: {best[1]} ({best[2] / bus['0']:.2f} x OpenMPI's choice)."]
text = "\n".join(lines)
print(text)
if out:
    with open(out, "w") as f:
        f.write(text + "\n")
PY
