#!/usr/bin/env bash
# scripts/bench/allreduce_algorithms.sh on a small buffer: every OpenMPI all-reduce algorithm and
# mavg's rank-order sum (in one piece, pipelined, as it runs) run and sum correctly (the
# benchmark's own check, element by element against the closed form), and the table has a row
# for each with its ratios (no timing is asserted: this machine is shared). The pipelined sum
# with pieces smaller than the buffer (and not dividing it), at 2 and 3 ranks, deterministic
# or not, passes the same check.
source "$(dirname "$0")/lib.bash"
out=$(cd "$MAVG_SOURCE_DIR" && MAVG="$MAVG" NP=2 FLOATS=10001 ROUNDS=1 REPEATS=1 OUT="$WORK/table.md" \
  scripts/bench/allreduce_algorithms.sh 2>&1) || fail "allreduce_algorithms.sh failed: $out"
rows=$(grep -c '^| [0-9dm]' "$WORK/table.md" || true)
[ "$rows" = 12 ] || fail "expected 12 algorithm rows, got $rows: $(cat "$WORK/table.md")"
for np in 2 3; do
  for det in "" --deterministic; do
    "${MPIRUN[@]}" -np $np "$MAVG" -q bench allreduce --floats 100003 --repeats 1 --piece 997 \
      $det > sum.json 2> sum.log || fail "pipelined sum, $np ranks $det: $(tail -2 sum.log)"
    grep -q '"piece": 997' sum.json || fail "the bench did not run in pieces: $(cat sum.json)"
  done
done
grep -q "^Fastest here: " "$WORK/table.md" || fail "no verdict line: $(cat "$WORK/table.md")"
# A bad setting is refused with one line before anything runs.
rc=0
msg=$(cd "$MAVG_SOURCE_DIR" && MAVG="$MAVG" ROUNDS=0 scripts/bench/allreduce_algorithms.sh 2>&1) || rc=$?
[ "$rc" = 2 ] && echo "$msg" | contains "ROUNDS must be a positive integer" || fail "ROUNDS=0: rc $rc: $msg"
echo PASS
