#!/usr/bin/env bash
# The local-SGD table (sweeps/local-sgd/local-sgd.yaml: 1 worker, data parallel, local SGD every
# H, post-local SGD, DiLoCo and QSR on the digits task's small corpus, 3 paired seeds) and its
# page, docs/local-sgd.md. About 20 minutes of one core per replicate.
#   scripts/local_sgd.sh            build the corpus if it is missing, run the runs that are
#                                   missing (finished runs are kept), then write the page
#   scripts/local_sgd.sh --report   only rewrite the page from the runs there are
# Environment: RESULTS (default results/local-sgd), JOBS (runs at once, each on one thread;
# default 1), MAVG (default build/bin/mavg), DATA (default data), OUT (default docs/local-sgd.md),
# SET (KEY=VALUE ..., set on every run; the tests' toy corpus needs a smaller minibatch),
# FORCE=1 (the spec changed since its runs were made, e.g. arms added: replace the stored spec;
# runs whose configs did not change are kept and not run again).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=run
case "${1:-}" in
  '') ;;
  --report) mode=report ;;
  *) echo "usage: $0 [--report]" >&2; exit 2 ;;
esac
results="${RESULTS:-results/local-sgd}"
jobs="${JOBS:-1}"
mavg="${MAVG:-build/bin/mavg}"
data="${DATA:-data}"
out="${OUT:-docs/local-sgd.md}"
spec=sweeps/local-sgd/local-sgd.yaml
[ -x "$mavg" ] || { echo "$mavg: not built (scripts/setup.sh)" >&2; exit 1; }
case "$jobs" in '' | *[!0-9]* | 0) echo "JOBS must be a positive integer, not '$jobs'" >&2; exit 2 ;; esac
# The spec names data/digits-small: another DATA is given to the runs by --set, as SET is (a
# sweep with sets of its own is named apart: its name, as sweep plan says it, goes to the page).
sets=()
[ "$data" = data ] || for s in train dev test; do sets+=(--set "data.$s=$data/digits-small/$s"); done
for kv in ${SET:-}; do sets+=(--set "$kv"); done
if [ "$mode" = run ]; then
  if [ ! -f "$data/digits-small/train/feats.scp" ]; then
    "$mavg" data digits --size small --out "$data/digits-small"
  fi
  force=()
  [ "${FORCE:-0}" = 1 ] && force=(--force)
  "$mavg" sweep run "$spec" --results "$results" --jobs "$jobs" --threads 1 "${sets[@]}" "${force[@]}"
fi
[ -f "$results/mavg.db" ] || { echo "local_sgd.sh: no runs yet ($results/mavg.db)" >&2; exit 1; }
name=$("$mavg" sweep plan "$spec" --results "$results" "${sets[@]}" | sed -n '1s/^sweep \([^ ]*\) .*/\1/p')
[ -n "$name" ] || { echo "local_sgd.sh: mavg sweep plan $spec named no sweep" >&2; exit 1; }
/usr/bin/python3 analysis/local_sgd.py "$results/mavg.db" --mavg "$mavg" --spec "$spec" \
  --sweep "$name" --out "$out"
