#!/usr/bin/env bash
# scripts/reproduce.sh end to end at toy scale: the six paper sweeps with their axes scaled
# down (workers 16/32 -> 2, minibatch 256/1024 -> 16/64, intervals 10/20 -> 1/2, 2 replicates)
# on a tiny digits corpus; the page has every table with measured cells, the effects table,
# the speedup table and PNG figures; --plan counts nothing left; a rerun launches nothing.
source "$(dirname "$0")/lib.bash"
small=(--train-utts 120 --dev-utts 24 --test-utts 30 --test-seen-utts 12 --speakers-per-voice 3
       --voices flite:kal16 flite:kal espeak:en-us espeak:en-gb-x-rp)
"$MAVG" -q data digits --out digits "${small[@]}" > /dev/null
sed -e "s|data/digits/|$PWD/digits/|" -e 's/hidden_layers: 4/hidden_layers: 1/' \
    -e 's/hidden_dim: 512/hidden_dim: 32/' -e 's/epochs: 8/epochs: 2/' \
    -e 's/minibatch: 256/minibatch: 16/' -e 's/rank_in: 40/rank_in: 8/' -e 's/rank_out: 40/rank_out: 8/' \
    "$MAVG_SOURCE_DIR/configs/paper-fork.yaml" > base.yaml
cat >> base.yaml <<'YAML'
pretrain: {rbm: {epochs: 1, epochs_gaussian: 1}}
decode: {tune: false}
device_options: {threads: 1}
YAML
mkdir -p sw
for t in 1 2 3 4 5 6; do
  sed -e "s|^base: .*|base: $PWD/base.yaml|" -e 's/replicates: 3/replicates: 2/' \
      -e 's/\[1, 2, 4, 8, 16, 32\]/[1, 2]/' -e 's/\[1, 32\]/[1, 2]/' -e 's/\[1, 16\]/[1, 2]/' \
      -e 's/parallel.workers: 16/parallel.workers: 2/' -e 's/\[256, 1024\]/[16, 64]/' \
      -e 's/average_every: 10/average_every: 1/g' -e 's/average_every: 20/average_every: 2/' \
      -e 's/\[10, 20\]/[1, 2]/' \
      -e 's/schedule.epochs: 12/schedule.epochs: 3/' \
      "$MAVG_SOURCE_DIR/sweeps/paper/table$t.yaml" > "sw/table$t.yaml"
done
grep -q "parallel.average_every: 2}" sw/table3.yaml || fail "table3's exclude was not scaled: $(cat sw/table3.yaml)"
cp -r "$MAVG_SOURCE_DIR/scripts" "$MAVG_SOURCE_DIR/analysis" "$MAVG_SOURCE_DIR/sweeps" .
mkdir -p build/bin && ln -sf "$MAVG" build/bin/mavg
export RESULTS=res SWEEPS=sw OUT=doc/reproduction.md DATA=digits
scripts/reproduce.sh --plan > plan.txt
grep -q "runs to do" plan.txt || fail "no plan: $(cat plan.txt)"
scripts/reproduce.sh > run.txt 2> run.err || fail "reproduce.sh failed: $(tail -5 run.err)"
scripts/reproduce.sh --plan | grep -q "^\[reproduce\] 0 runs to do" || fail "runs left after a full run"
python3 - <<'PY'
import os, re
md = open("doc/reproduction.md").read()
for t in range(1, 7):
    assert f"## Table {t}:" in md, f"table {t} missing"
assert "## The effects, side by side" in md and "## Speedup" in md and "## Why ours may differ" in md
cells = re.findall(r"\(n=(\d+)", md)
assert len(cells) >= 20, f"only {len(cells)} measured cells"
assert "not run" not in md.split("## The effects")[0], "a table cell was not run"
effects = md.split("## The effects, side by side")[1].split("##")[0]
rows = [l for l in effects.splitlines() if l.startswith("| ") and "effect" not in l]
assert len(rows) == 7, rows
for r in rows:
    assert re.search(r"\| (yes|no[^|]*|too few runs[^|]*) \|$", r), r
disagree = [r for r in rows if re.search(r"\| no[ |][^|]*\|$", r)]
listed = re.findall(r"^- Table (\d), ", md.split("## Why ours may differ")[0], re.M)
assert sorted(listed) == sorted(r.split("|")[1].strip() for r in disagree), (listed, disagree)
assert "projected speedup" in md, "no speedup table"
figs = re.findall(r"!\[[^]]*\]\(([^)]+)\)", md)
assert len(figs) >= 4, figs
for f in figs:
    p = os.path.join("doc", f)
    assert p.endswith(".png") and os.path.getsize(p) > 1000, p
print("ok:", len(cells), "cells,", len(figs), "figures")
PY
grep -q '^\*\*Complete\*\*: every run of the six tables (2 replicates a cell) has ended' \
  doc/reproduction.md || fail "a finished reproduction is not marked complete: $(sed -n 11p doc/reproduction.md)"
# A page made while a run is still going says so, and judges that table's effects provisionally.
cp res/mavg.db partial.db
/usr/bin/python3 - <<'PY'
import sqlite3
db = sqlite3.connect("partial.db")
for status, sweep, like in (("running", "table3", '%average_every","2"%'),
                            ("collapsed", "table6", '%workers","2"%"sgd"%')):
    n = db.execute("UPDATE runs SET status = ? WHERE run_id = (SELECT run_id FROM sweep_runs "
                   "WHERE sweep = ? AND axes_json LIKE ? LIMIT 1)", (status, sweep, like)).rowcount
    assert n == 1, (status, sweep, like)
db.commit()
PY
/usr/bin/python3 analysis/reproduction.py partial.db --out partial/reproduction.md \
  --figures partial/reproduction --mavg "$MAVG" > /dev/null
grep -q '^\*\*Not finished\*\*: 5 of 6 tables have' partial/reproduction.md ||
  fail "an unfinished table is not reported: $(grep -m1 finished partial/reproduction.md)"
grep -Eq '^\| 3 \| .*\| (too few runs|[^|]*provisional)[^|]*\|$' partial/reproduction.md ||
  fail "table 3's effect is judged as final: $(grep '^| 3 |' partial/reproduction.md)"
grep -q '^| 16 workers, every 2 | .*1 running' partial/reproduction.md ||
  grep -q '^| 2 workers, every 2 | .*1 running' partial/reproduction.md ||
  fail "the running run is not shown: $(grep 'every 2 |' partial/reproduction.md)"
grep -q '^| 1 | .*provisional' partial/reproduction.md && fail "a finished table is provisional"
grep -q '^| 6 | .*(not in Δ: sgd 1 collapsed)' partial/reproduction.md ||
  fail "a collapsed run is not named beside its effect: $(grep '^| 6 |' partial/reproduction.md)"
# Resumable: a second run launches nothing and rewrites the same page.
cp doc/reproduction.md first.md
scripts/reproduce.sh > run2.txt 2>&1
grep -q "launched [1-9]" run2.txt && fail "the rerun launched runs: $(cat run2.txt)"
cmp -s first.md doc/reproduction.md || fail "the rerun wrote a different page"
echo PASS
