#!/usr/bin/env bash
# Peak resident memory per MPI rank for loading a run's data, np 1, 2 and 4, on one corpus:
# each rank reading only its own shard (what `mavg train` does with parallel.mode mpi) beside
# every rank reading the whole training set (--whole, what it did before). Memory, not time:
# the figures do not depend on the machine's load.
#   scripts/bench/shard_memory.sh [CONFIG] [NP...]      default: configs/digits.yaml 1 2 4
# The config's data must exist (mavg data digits --out data/digits for the default).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
config="${1:-configs/digits.yaml}"
shift || true
nps=("$@")
[ "${#nps[@]}" -gt 0 ] || nps=(1 2 4)
mavg=build/bin/mavg
[ -x "$mavg" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for np in "${nps[@]}"; do
  for mode in own whole; do
    flag=()
    [ "$mode" = whole ] && flag=(--whole)
    mpirun --oversubscribe --bind-to none -np "$np" "$mavg" -q bench data --config "$config" \
      "${flag[@]}" --set device_options.threads=1 --json "$out/$mode-$np.json" > /dev/null
    echo "[shard_memory] np $np ($mode) done" >&2
  done
done
/usr/bin/python3 - "$out" "${nps[@]}" <<'PY'
import json, sys
out, nps = sys.argv[1], [int(x) for x in sys.argv[2:]]
first = json.load(open(f"{out}/own-{nps[0]}.json"))
print(f"training data {first['train']}: {first['train_frames_total']} frames, "
      f"{first['train_features_total_mib']:.1f} MiB of features")
print("| np | ranks read | train features / rank (MiB) | peak RSS / rank (MiB) | "
      "RSS before loading (MiB) | peak RSS vs whole corpus |")
print("|---:|---|---|---|---:|---:|")
for np_ in nps:
    rows = {m: json.load(open(f"{out}/{m}-{np_}.json"))["per_rank"] for m in ("own", "whole")}
    for mode in ("own", "whole"):
        r = rows[mode]
        feats = ", ".join(f"{x['train_features_mib']:.1f}" for x in r)
        peak = ", ".join(f"{x['peak_rss_mib']:.0f}" for x in r)
        before = max(x["rss_before_load_mib"] for x in r)
        ratio = max(x["peak_rss_mib"] for x in r) / max(x["peak_rss_mib"] for x in rows["whole"])
        label = "its own shard" if mode == "own" else "the whole corpus"
        print(f"| {np_} | {label} | {feats} | {peak} | {before:.0f} | {ratio:.2f} |")
PY
