#!/usr/bin/env bash
# Eight `mavg sweep collect` processes at once on one database: none fails (no "database is
# locked"), nothing is lost, and the result equals one collect alone.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 1000 200
small_base base.yaml 16 3
for s in a b; do
cat > $s.yaml <<YAML
name: conc-$s
base: base.yaml
grid: {seed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], schedule.lr: [0.004, 0.002]}
set: {model.hidden_dim: $([ $s = a ] && echo 16 || echo 24)}
YAML
"$MAVG" -q sweep run $s.yaml --results res --jobs 2 >/dev/null
done
dump() { python3 -c 'import sqlite3,sys; print("\n".join(sqlite3.connect(sys.argv[1]).iterdump()))' res/mavg.db; }
dump > before.sql
# Wipe what collect writes, so the concurrent collects really write.
python3 -c 'import sqlite3; db=sqlite3.connect("res/mavg.db"); db.execute("DELETE FROM epochs"); db.execute("DELETE FROM results"); db.execute("DELETE FROM env"); db.execute("UPDATE runs SET status=\"new\""); db.commit()'
for round in 1 2 3; do
  pids=()
  for i in 1 2 3 4 5 6 7 8; do
    s=$([ $((i % 2)) = 0 ] && echo a || echo b)
    "$MAVG" sweep collect conc-$s --results res > "collect-$round-$i.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fail "a concurrent collect failed: $(cat collect-$round-*.log)"; done
done
if grep -l "locked" collect-*.log; then fail "database is locked"; fi
grep -h "ingested" collect-1-*.log | head -2
dump > after.sql
diff <(grep -v "^INSERT INTO \"attempts\"" before.sql | sort) <(grep -v "^INSERT INTO \"attempts\"" after.sql | sort) > /dev/null \
  || fail "concurrent collects lost or changed rows"
python3 - <<'PY'
import sqlite3
db = sqlite3.connect("res/mavg.db")
n = db.execute("SELECT COUNT(*) FROM epochs").fetchone()[0]
assert n == 2 * 24 * 3, n   # 48 runs x 3 epochs
assert db.execute("SELECT COUNT(*) FROM runs WHERE status = 'completed'").fetchone()[0] == 48
PY
echo PASS
