#!/usr/bin/env bash
# Su & Chen 2015's six tables on the digits task, and docs/reproduction.md from them.
#   scripts/reproduce.sh            run what is missing (resumable: finished runs are kept),
#                                   then write docs/reproduction.md and its figures
#   scripts/reproduce.sh --plan     only print what would run and how long it should take
#   scripts/reproduce.sh --report   only rewrite the page from the results there are
# Environment: RESULTS (default results/paper), JOBS (parallel runs, default 1), OUT (the page,
# default docs/reproduction.md), SWEEPS (default sweeps/paper), DATA (digits data dir,
# default data/digits), MAVG (the binary, default build/bin/mavg: a copy keeps a long
# reproduction on one build while the tree is rebuilt).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode="${1:-run}"
case "$mode" in run | --plan | --report) ;; *) echo "usage: $0 [--plan|--report]" >&2; exit 2 ;; esac
results="${RESULTS:-results/paper}"
jobs="${JOBS:-1}"
out="${OUT:-docs/reproduction.md}"
sweeps="${SWEEPS:-sweeps/paper}"
data="${DATA:-data/digits}"
mavg="${MAVG:-build/bin/mavg}"
[ -x "$mavg" ] || { echo "$mavg: not built (scripts/setup.sh)" >&2; exit 1; }
tables=(table1 table2 table3 table4 table5 table6)

if [ "$mode" != --report ]; then
  [ -s "$data/train/feats.scp" ] || [ "$mode" = --plan ] || "$mavg" -q data digits --out "$data"
  case "$jobs" in '' | *[!0-9]* | 0) echo "JOBS must be a positive integer, not '$jobs'" >&2; exit 2 ;; esac
  # Expected time: the runs still to do (new, interrupted, or running but dead; a run shared by
  # two tables counts once) at the mean wall time of the completed ones, or at a default
  # measured here when none is done. Runs that `sweep run` keeps are not to do: done, failed,
  # diverged, collapsed, and stale ones (done by another build; counted apart).
  declare -A todo=() stale=()
  plan_out=$(mktemp)
  trap 'rm -f "$plan_out"' EXIT
  for t in "${tables[@]}"; do
    "$mavg" sweep plan "$sweeps/$t.yaml" --results "$results" > "$plan_out" ||
      { echo "reproduce.sh: mavg sweep plan $sweeps/$t.yaml failed" >&2; exit 1; }
    while read -r id state; do
      case "$state" in
        new | interrupted | running) todo[$id]=1 ;;
        stale) stale[$id]=1 ;;
      esac
    done < <(awk '$1 ~ /^[0-9a-f]+$/ && length($1) == 16 {print $1, $2}' "$plan_out")
  done
  n=${#todo[@]}
  per=$(/usr/bin/python3 - "$results/mavg.db" <<'PY'
import os, sqlite3, sys
p = sys.argv[1]
rows = []
if os.path.exists(p):
    db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
    rows = [r[0] for r in db.execute(
        "SELECT value FROM results WHERE key = 'wall_s' AND run_id IN "
        "(SELECT run_id FROM runs WHERE status = 'completed')")]
print(round(sum(rows) / len(rows)) if rows else 400)  # measured here: 1 worker ~390 s
PY
)
  echo "[reproduce] $n runs to do, about $((n * per / jobs / 60)) minutes at ${per} s each" \
    "with $jobs at a time (estimate from $( [ -e "$results/mavg.db" ] && echo "completed runs" || echo "a default"))"
  if [ "${#stale[@]}" -gt 0 ]; then
    echo "[reproduce] ${#stale[@]} runs were done by another build (stale): kept; the page says" \
      "which builds made it (rerun them: mavg sweep run SPEC --rerun-stale)"
  fi
  [ "$mode" = --plan ] && exit 0
  for t in "${tables[@]}"; do
    echo "[reproduce] $t" >&2
    # A failed, diverged or collapsed run is a result, not an error of this script.
    "$mavg" -q sweep run "$sweeps/$t.yaml" --results "$results" --jobs "$jobs" || true
  done
fi
/usr/bin/python3 analysis/reproduction.py "$results/mavg.db" --out "$out" \
  --figures "$(dirname "$out")/reproduction" --mavg "$mavg"
