#!/usr/bin/env bash
# scripts/bench/allreduce_algorithms.sh on a small buffer: every OpenMPI all-reduce algorithm and
# mavg's rank-order sum run and sum correctly (the benchmark's own check), and the table has a
# row for each with its ratios (no timing is asserted: this machine is shared).
source "$(dirname "$0")/lib.bash"
out=$(cd "$MAVG_SOURCE_DIR" && MAVG="$MAVG" NP=2 FLOATS=10001 ROUNDS=1 REPEATS=1 OUT="$WORK/table.md" \
  scripts/bench/allreduce_algorithms.sh 2>&1) || fail "allreduce_algorithms.sh failed: $out"
rows=$(grep -c '^| [0-9d]' "$WORK/table.md" || true)
[ "$rows" = 8 ] || fail "expected 8 algorithm rows, got $rows: $(cat "$WORK/table.md")"
grep -q "^Fastest here: " "$WORK/table.md" || fail "no verdict line: $(cat "$WORK/table.md")"
# A bad setting is refused with one line before anything runs.
rc=0
msg=$(cd "$MAVG_SOURCE_DIR" && MAVG="$MAVG" ROUNDS=0 scripts/bench/allreduce_algorithms.sh 2>&1) || rc=$?
[ "$rc" = 2 ] && echo "$msg" | contains "ROUNDS must be a positive integer" || fail "ROUNDS=0: rc $rc: $msg"
echo PASS
