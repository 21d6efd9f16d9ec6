#!/usr/bin/env bash
# scripts/reproduce.sh end to end at toy scale, every part (tables, design, scale, and the parts cut
# for time: rbm-lr, workers-2-4, x8): the paper sweeps with their axes scaled down (workers
# 8/16/32 -> 2, Table 1's 1, 8, 16, 32 -> 1..4, minibatch 64/256 -> 8/16, intervals 10/20 ->
# 1/2, epochs 15/30 -> 3/6, 2 replicates) on toy members of the digits family; the page has
# every section with measured cells, the effects table (its disagreement list matching the rows
# marked no), the scale study, the speedup tables and a PNG figure per table; --plan counts
# nothing left; a rerun launches nothing.
source "$(dirname "$0")/lib.bash"
# The scaled family at toy sizes: x1t < x2t < x4t < x8t training sets, one dev and test set (the
# names the parts build; reproduce.sh builds none that exists).
toy=(--dev-utts 24 --test-utts 30 --test-seen-utts 6 --speakers-per-voice 3 --threads 2
     --voices flite:kal16 flite:kal espeak:en-us espeak:en-gb-x-rp)
for s in x1:60 x2:90 x4:120 x8:150; do
  "$MAVG" -q data digits --size "${s%%:*}" --train-utts "${s#*:}" --out "digits-${s%%:*}t" \
    "${toy[@]}" > /dev/null
done
sed -e "s|data/digits-x4t/|$PWD/digits-x4t/|" "$MAVG_SOURCE_DIR/configs/paper-fork.yaml" > fork.yaml
/usr/bin/python3 - <<'PY'
import yaml
c = yaml.safe_load(open("fork.yaml"))
def merge(d, o):
    for k, v in o.items():
        if isinstance(v, dict):
            merge(d.setdefault(k, {}), v)
        else:
            d[k] = v
merge(c, {"model": {"hidden_layers": 1, "hidden_dim": 32}, "schedule": {"epochs": 3},
          "optimizer": {"minibatch": 16, "ngsgd": {"rank_in": 8, "rank_out": 8}},
          "pretrain": {"rbm": {"epochs": 1, "epochs_gaussian": 1}}, "decode": {"tune": True},
          "device_options": {"threads": 1}})
yaml.safe_dump(c, open("base.yaml", "w"))
PY
mkdir -p sw
specs=(table1 table2 table3 table4 table5 table6 design-steps design-max-change extra-rbm-lr
       extra-workers-2-4 scale scale-x8)
for t in "${specs[@]}"; do
  sed -e "s|^base: .*|base: $PWD/base.yaml|" -e 's/replicates: [0-9]*/replicates: 2/' \
      -e "s|data/digits-x|$PWD/digits-x|g" -e 's/\[1, 8, 16, 32\]/[1, 2, 3, 4]/' \
      -e '/workers/ s/\b\(8\|16\|32\)\b/2/g' \
      -e '/minibatch/ s/\b256\b/16/g' -e '/minibatch/ s/\b64\b/8/g' \
      -e '/average_every/ s/\b10\b/1/g' -e '/average_every/ s/\b20\b/2/g' \
      -e '/schedule.epochs/ s/\b15\b/3/g' -e '/schedule.epochs/ s/\b30\b/6/g' \
      "$MAVG_SOURCE_DIR/sweeps/paper/$t.yaml" > "sw/$t.yaml"
done
grep -q "parallel.workers: \[1, 2, 2, 2\]" sw/scale.yaml || fail "scale's workers not scaled: $(cat sw/scale.yaml)"
grep -q "optimizer.minibatch: \[16, 16, 16, 8\]" sw/scale-x8.yaml || fail "scale's minibatches not scaled"
grep -q "parallel.average_every: \[1, 1, 2, 1\]" sw/scale.yaml || fail "scale's intervals not scaled"
grep -q "optimizer.minibatch: \[8, 16\]" sw/table4.yaml || fail "table4's minibatches not scaled"
grep -q "{parallel.workers: 2, optimizer.type: sgd" sw/table6.yaml || fail "table6's include not scaled"
grep -q "parallel.average_every: 2}" sw/table3.yaml || fail "table3's exclude was not scaled: $(cat sw/table3.yaml)"
grep -q "schedule.epochs: \[3, 6\]" sw/design-steps.yaml || fail "design-steps' epochs not scaled"
grep -q "parallel.workers: 1, schedule.epochs: 6}" sw/design-steps.yaml || fail "design-steps' exclude not scaled"
cp -r "$MAVG_SOURCE_DIR/scripts" "$MAVG_SOURCE_DIR/analysis" "$MAVG_SOURCE_DIR/sweeps" .
mkdir -p build/bin && ln -sf "$MAVG" build/bin/mavg
export RESULTS=res SWEEPS=sw OUT=doc/reproduction.md DATA=. JOBS=2 ARCHIVE=arch
parts=(tables design scale rbm-lr workers-2-4 x8)
# UNTIL: no run starts that would end after it (here: none at all); no database, no page.
UNTIL=now scripts/reproduce.sh "${parts[@]}" > until.txt 2>&1 || fail "UNTIL=now failed: $(cat until.txt)"
grep -q "^\[reproduce\] queue 0: stopping before .* it would end after UNTIL" until.txt ||
  fail "UNTIL did not stop queue 0: $(cat until.txt)"
[ ! -e res/mavg.db ] && [ ! -e doc ] || fail "UNTIL=now made runs or a page: $(ls res doc)"
UNTIL=never scripts/reproduce.sh --plan > /dev/null 2> until.err && fail "a bad UNTIL was taken"
contains "UNTIL: 'never' is not a time" < until.err || fail "bad UNTIL: $(cat until.err)"
UNTIL="2 hours ago" scripts/reproduce.sh --plan > /dev/null 2> until.err && fail "a past UNTIL was taken"
contains "UNTIL: '2 hours ago' is $(date -d '2 hours ago' +%F) " < until.err || fail "past UNTIL: $(cat until.err)"
contains "already past" < until.err || fail "past UNTIL: $(cat until.err)"
scripts/reproduce.sh --plan "${parts[@]}" > plan.txt
grep -q "^\[reproduce\] [1-9][0-9]* runs to do" plan.txt || fail "no plan: $(cat plan.txt)"
for t in "${specs[@]}"; do grep -q "^\[reproduce\] $t: " plan.txt || fail "$t not planned: $(cat plan.txt)"; done
scripts/reproduce.sh "${parts[@]}" > run.txt 2> run.err || fail "reproduce.sh failed: $(tail -5 run.err)"
scripts/reproduce.sh --plan "${parts[@]}" > replan.txt || fail "--plan failed after a full run"
grep -q "^\[reproduce\] 0 runs to do" replan.txt || fail "runs left after a full run: $(cat replan.txt)"
python3 - <<'PY'
import os, re
md = open("doc/reproduction.md").read()
for t in range(1, 7):
    assert f"## Table {t}:" in md, f"table {t} missing"
for h in ("The criteria, fixed before the runs", "The effects, side by side", "Where ours disagrees",
          "Paired bootstrap over the test utterances", "The scale study", "Why ours may differ",
          "Speedup"):
    assert f"## {h}\n" in md, f"section {h} missing"
tables = md.split("## The effects, side by side")[0]
# Cells: n, test WER mean ± sd, its t interval, dev WER (decode.tune: the dev set is decoded).
cells = re.findall(r"^\| [^|]+ \| 2 \| \d+\.\d\d ± \d+\.\d\d \| \[[-\d.]+, [-\d.]+\] \| \d+\.\d\d \|",
                   tables, re.M)
# Table 1: 4 cells, 2: 4 + 2 (the rbm.lr arm), 3: 3, 4: 6, 5: 4, 6: 6 (SGD with and without max-change)
assert len(cells) == 29, f"{len(cells)} measured cells"
not_run = [l for l in tables.splitlines() if "| not run |" in l]
assert not not_run, not_run
effects = md.split("## The effects, side by side")[1].split("\n## ")[0]
rows = [l for l in effects.splitlines() if l.startswith("| ") and "| effect |" not in l]
assert len(rows) == 19, rows  # Table 1 at 3 worker counts, 2: 5, 3: 1, 4: 3, 5: 2, 6: 4 + tuned SGD
verdict = r"(yes( \(rank test\))?|no \([^|]*\)|too few runs[^|]*|not judged[^|]*|reported[^|]*)"
for r in rows:
    assert re.search(r"\| " + verdict + r" \|$", r), r
    if (r.endswith("| yes |") or "| no (" in r) and "rank test" not in r:  # judged by t: an interval
        assert re.search(r"\| [-+]\d+\.\d\d \[[-+]\d+\.\d\d, [-+]\d+\.\d\d\] \(n=2", r), r
assert any("NG-SGD beats tuned SGD (lr " in r for r in rows), "no tuned SGD effect"
assert sum("interaction:" in r for r in rows) == 5, rows
disagree = sorted((r.split("|")[1].strip(), r.split("|")[2].strip()) for r in rows
                  if re.search(r"\| no \([^|]*\) \|$", r))
where = md.split("## Where ours disagrees")[1].split("\n## ")[0]
listed = sorted(re.findall(r"^- Table (\d), (.*?): Δ ", where, re.M))
assert listed == disagree, (listed, disagree)
assert re.search(r"^Test set: 30 utterances, \d+ words", md, re.M), "no test set size"
assert re.search(r"^Seeds \(`seed` per replicate", md, re.M) and re.search(r"^CPU-hours: \d", md, re.M)
assert "Finished runs by GEMM kernels" in md
assert re.search(r"^Finished runs by CPU \(`build.cpu` in result.json\): `[^`]+` \d+\.$", md, re.M), md
boot = md.split("## Paired bootstrap")[1].split("\n## ")[0]
assert len(re.findall(r"^\| \d \| .* \| [01] \| [-+]\d+\.\d\d \| \[", boot, re.M)) >= 20, boot
scale = md.split("## The scale study")[1].split("\n## ")[0]
srows = re.findall(r"^\| (x\d) \| ([^|]+) \| (\d+) \| [-+]\d", scale, re.M)
assert sorted({c for c, _, _ in srows}) == ["x1", "x2", "x4", "x8"], srows
assert len(srows) == 16, srows
why = md.split("## Why ours may differ")[1].split("\n## ")[0]
# The toy's minibatch (16) and K (1) read back from the runs' epochs.
assert re.search(r"^\| table1 \| x4 \| 2 \| 16 \| 1\.0 \| \d+ \| \d+ \| \d+ \|$", why, re.M), why
speed = md.split("## Speedup")[1]
assert "projected from simulated workers, no network" in speed
assert "| GPUs | averagings/epoch | one averaging (s)" in speed, "no performance model"
assert "| the paper, 16 GPUs (model) | 0.0" in speed and "| ours, 2 workers (Table 1) |" in speed
# Time to target first; the paper's measured and the model's speedups (the paper's setup) beside.
assert "| workers | time to target s (projected from simulated workers, no network) |" in speed
# ("not reached": no replicate reached the 1-worker runs' CV loss, which toy runs may not)
assert re.search(r"^\| 2 \| ([\d.]+( ± [\d.]+)?|not reached) \| \d of 2 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| 1.39 \| 1.92 \| [^|]+ \|$",
                 speed, re.M), speed
# Table 3's many-worker speedup per averaging interval, beside the paper's measured ones.
t3 = speed.split("Table 3's 2 workers by averaging interval")[1].split("\n\n", 2)[1]
assert re.search(r"^\| every 1 \| ([\d.]+( ± [\d.]+)?|not reached) \| [\d.]+ \| [\d.]+ \| 9.32 \|$", t3, re.M), t3
assert re.search(r"^\| every 2 \| ([\d.]+( ± [\d.]+)?|not reached) \| [\d.]+ \| [\d.]+ \| 10.07 \|$", t3, re.M), t3
figs = re.findall(r"!\[([^]]*)\]\(([^)]+)\)", md)
assert sorted(n for n, _ in figs) == sorted([f"table{t}-curves" for t in range(1, 7)] +
                                            ["scale-effects", "table1-speedup"]), figs
for _, f in figs:
    p = os.path.join("doc", f)
    assert p.endswith(".png") and os.path.getsize(p) > 1000, p
print("ok:", len(cells), "cells,", len(rows), "effects,", len(figs), "figures")
PY
grep -q '^\*\*Complete\*\*: every run of the 10 sweeps run has ended\.$' doc/reproduction.md ||
  fail "a finished reproduction is not marked complete: $(grep -m1 '^\*\*' doc/reproduction.md)"
# A page made while a run is still going says so, and judges that table's effects provisionally;
# a collapsed run is an outcome of its cell, left out of the t interval.
cp res/mavg.db partial.db
/usr/bin/python3 - <<'PY'
import sqlite3
db = sqlite3.connect("partial.db")
for status, sweep, like in (("running", "table3", '%average_every","2"%'),
                            ("collapsed", "table6", '%workers","2"%"sgd"%')):
    n = db.execute("UPDATE runs SET status = ? WHERE run_id = (SELECT run_id FROM sweep_runs "
                   "WHERE sweep = ? AND axes_json LIKE ? LIMIT 1)", (status, sweep, like)).rowcount
    assert n == 1, (status, sweep, like)
# One pair whose runs were pretrained alike but started from different stacks.
n = db.execute("UPDATE results SET value = '00000000deadbeef' WHERE key = 'pretrain_key' AND "
               "run_id = (SELECT run_id FROM sweep_runs WHERE sweep = 'table1' AND replicate = 0 "
               "AND axes_json LIKE '%workers\",\"2\"%')").rowcount
assert n == 1, "table1's 2-worker run of replicate 0 has no pretrain_key"
# One finished run made on another CPU.
n = db.execute("UPDATE env SET value = 'Another CPU' WHERE key = 'build.cpu' AND run_id = "
               "(SELECT run_id FROM sweep_runs WHERE sweep = 'table5' LIMIT 1)").rowcount
assert n == 1, "table5's runs name no CPU"
db.commit()
PY
/usr/bin/python3 analysis/reproduction.py partial.db --out partial/reproduction.md \
  --figures partial/reproduction --mavg "$MAVG" > /dev/null
# The running run is table3's and the scale study's (its x4 points are the tables' own runs).
grep -q '^\*\*Not finished\*\*: 8 of 10 sweeps have every run ended (table1, table2, table2-rbm-lr, table4, table5, table6, table6-sgd-lr, scale-x8)' \
  partial/reproduction.md ||
  fail "an unfinished sweep is not reported: $(grep -m1 finished partial/reproduction.md)"
grep -Eq '^\| 3 \| .*\| (too few runs|[^|]*provisional)[^|]*\|$' partial/reproduction.md ||
  fail "table 3's effect is judged as final: $(grep '^| 3 |' partial/reproduction.md)"
grep -q '^| 2 workers, every 2 | 1 + 1 running |' partial/reproduction.md ||
  fail "the running run is not shown: $(grep 'every 2 |' partial/reproduction.md)"
grep -q '^| 1 | .*provisional' partial/reproduction.md && fail "a finished table is provisional"
grep -Eq '^Finished runs by CPU .*`Another CPU` 1 — \*\*more than one CPU' partial/reproduction.md ||
  fail "runs from two CPUs are not flagged: $(grep '^Finished runs by CPU' partial/reproduction.md)"
# (that run is also the 2-worker baseline of Tables 2 and 4-6, so their effects are flagged too)
grep -q '^| 1 | .* 2 workers) |.* (1 replicate(s) on different RBM stacks' partial/reproduction.md ||
  fail "pairs on different RBM stacks are not flagged: $(grep '^| 1 |' partial/reproduction.md)"
grep -q 'different RBM stacks:' doc/reproduction.md &&
  fail "pairs flagged on different stacks in the full run: $(grep 'different RBM stacks:' doc/reproduction.md)"
grep -Eq '^\| sgd( \+ max-change)?, 2 w \| 1 \+ 1 collapsed \(WER [0-9.]+\) \|' partial/reproduction.md ||
  fail "a collapsed run is not counted in its cell: $(grep '^| sgd' partial/reproduction.md)"
grep -Eq '^\| 6 \| NG-SGD beats sgd( \+ max-change)? \(2 workers\) \| [^|]* \| [^|]*\(n=1, 1 left out\) \|' \
  partial/reproduction.md ||
  fail "a collapsed run's pair is not left out of Δ: $(grep '^| 6 |' partial/reproduction.md)"
# ... and the rank test decides it, or says it cannot: 2 pairs cannot go below p = 0.5.
grep -Eq '^\| 6 \| NG-SGD beats sgd( \+ max-change)? \(2 workers\) \|.*\| [01]\.[05]0 \(floor 0\.50\) \|.*\| too few runs: a collapsed pair, and a rank test on 2 pairs cannot go below p = 0\.50' \
  partial/reproduction.md ||
  fail "a collapsed pair is not left to the rank test: $(grep '^| 6 |' partial/reproduction.md)"
# The x8 point cut (its part never run, as the default parts leave it): the page is complete
# without it and says it was cut, not that it is still to come.
cp res/mavg.db cut.db
/usr/bin/python3 -c "import sqlite3; db = sqlite3.connect('cut.db')
db.execute(\"DELETE FROM sweep_runs WHERE sweep = 'scale-x8'\"); db.execute(\"DELETE FROM sweeps WHERE name = 'scale-x8'\")
db.commit()"
/usr/bin/python3 analysis/reproduction.py cut.db --out cut/reproduction.md \
  --figures cut/reproduction --mavg "$MAVG" > /dev/null || fail "the page without x8 failed"
grep -q '^\*\*Complete\*\*: every run of the 9 sweeps run has ended (scale-x8 not run: cut, see \*The scale study\*)\.$' \
  cut/reproduction.md || fail "a cut x8 point is not reported as cut: $(grep -m1 '^\*\*' cut/reproduction.md)"
grep -q '^The x8 point was not run: ' cut/reproduction.md || fail "the scale study does not say x8 was cut"
grep -q '^| x8 |' cut/reproduction.md && fail "the cut x8 point has rows: $(grep '^| x8 |' cut/reproduction.md)"
grep -q '^The x8 point was not run' doc/reproduction.md && fail "a run x8 point is said to be cut"
# The scale figure's y range follows the effects of a few points: an arm that collapses (+55)
# is drawn at the edge, not let flatten the others; with none, all of every interval shows.
MAVG_SOURCE_DIR="$MAVG_SOURCE_DIR" /usr/bin/python3 - <<'PY' || fail "scale_ylim"
import os, sys
sys.path.insert(0, os.path.join(os.environ["MAVG_SOURCE_DIR"], "analysis"))
from reproduction import scale_ylim
lo, hi = scale_ylim([(8, 0.5, -1.6, 1.6), (4, 55.2, None, None), (8, 36.6, -39, 112)])
assert -2.3 < lo < -1.6 and 1.6 < hi < 2.3, (lo, hi)
assert scale_ylim([(8, 0.1, -0.2, 0.3)]) == (-1.0, 1.0)
lo, hi = scale_ylim([(8, -3.0, -4.5, -1.5), (17, 2.0, 0.5, 3.5)])
assert lo < -4.5 and hi > 3.5, (lo, hi)
PY
# Resumable: a second run launches nothing and rewrites the same page.
cp doc/reproduction.md first.md
scripts/reproduce.sh "${parts[@]}" > run2.txt 2>&1
grep -q "launched [1-9]" run2.txt && fail "the rerun launched runs: $(cat run2.txt)"
cmp -s first.md doc/reproduction.md || fail "the rerun wrote a different page"
# A run left 'running' by a part that was killed (its process gone) is the next part's to resume
# (sweep run resumes it with --resume, not --out), and the part goes on past it.
DEAD_PID=$(sh -c 'echo $$') /usr/bin/python3 - <<'PY'
import json, os, socket, sqlite3
db = sqlite3.connect("res/mavg.db")
(run, run_dir) = db.execute(
    "SELECT r.run_id, r.run_dir FROM sweep_runs s JOIN runs r USING (run_id) WHERE s.sweep = 'table1' "
    "AND s.replicate = 0 AND s.axes_json LIKE '%workers\",\"1\"%'").fetchone()
# As a killed part leaves it: the store says running, claimed by a sweep process that is gone,
# and the run's own state.json says running in a process that is gone.
dead = int(os.environ["DEAD_PID"])
db.execute("UPDATE runs SET status = 'running', reason = ? WHERE run_id = ?",
           (f"claimed by {socket.gethostname()}:{dead}", run))
db.execute("UPDATE attempts SET state = 'running', exit_code = NULL, ended = NULL, job_id = ? "
           "WHERE run_id = ? AND n = (SELECT MAX(n) FROM attempts WHERE run_id = ?)", (dead, run, run))
db.commit()
path = os.path.join(run_dir, "state.json")
state = json.load(open(path))
state.update(status="running", pid=dead, host=socket.gethostname())
json.dump(state, open(path, "w"))
open("killed.txt", "w").write(run_dir)  # (whichever spec's queue made it first)
PY
"$MAVG" sweep run sw/table1.yaml --results res --max-runs 1 --dry-run > dry5.txt
contains -F -- "--resume $(cat killed.txt) " < dry5.txt || fail "no resume planned: $(cat dry5.txt)"
scripts/reproduce.sh tables > run5.txt 2>&1 || fail "the part after a killed one failed: $(tail -5 run5.txt)"
grep -q "sweep table1: launched 1" run5.txt || fail "the interrupted run was not resumed: $(cat run5.txt)"
scripts/reproduce.sh --plan tables > plan5.txt 2>&1
grep -q "^\[reproduce\] 0 runs to do" plan5.txt || fail "runs to do after the resume: $(cat plan5.txt)"
cp doc/reproduction.md first.md  # (the resumed run's times are new)
# The archive (kept in git by the real reproduction) carries the finished runs to another machine:
# restored into a results dir that has none, nothing is left to run and the page is the same.
[ -f arch/mavg.sql ] && [ -z "$(find arch -name model.bin -o -name checkpoint)" ] ||
  fail "the archive lacks its SQL or holds models: $(ls arch)"
[ -n "$(find arch/cache -name dbn.bin)" ] || fail "the archive holds no RBM stack"
# A note written into archive.json by hand is kept when the archive is saved again.
/usr/bin/python3 -c "import json; m = json.load(open('arch/archive.json')); m['notes'] = ['by hand']
json.dump(m, open('arch/archive.json', 'w'))"
scripts/reproduce.sh --save > save.txt 2>&1 || fail "--save failed: $(cat save.txt)"
contains '"by hand"' < arch/archive.json || fail "a save dropped the archive's notes: $(cat arch/archive.json)"
mv res res.first
scripts/reproduce.sh "${parts[@]}" > run3.txt 2>&1 || fail "the restored rerun failed: $(tail -5 run3.txt)"
contains "restored res/mavg.db from arch: " < run3.txt || fail "nothing restored: $(cat run3.txt)"
grep -q "launched [1-9]" run3.txt && fail "the restored rerun launched runs: $(cat run3.txt)"
cmp -s first.md doc/reproduction.md || fail "the restored results give a different page"
# Restored elsewhere: the run directories' paths follow the results dir.
RESULTS=elsewhere/res scripts/reproduce.sh --plan "${parts[@]}" > moved.txt 2>&1 ||
  fail "--plan on a restored copy failed: $(cat moved.txt)"
grep -q "^\[reproduce\] 0 runs to do" moved.txt || fail "runs to do after a restore: $(cat moved.txt)"
[ "$(python3 -c "import sqlite3; print(sqlite3.connect('elsewhere/res/mavg.db').execute(
  \"SELECT COUNT(*) FROM runs WHERE run_dir NOT LIKE 'elsewhere/res/runs/%'\").fetchone()[0])")" = 0 ] ||
  fail "restored run dirs still point at the old results dir"
# A part of one spec (x8) with JOBS=2 keeps two runs going: both queues take that spec's runs
# rather than one of them ending at once.
RESULTS=one ARCHIVE= OUT=one/reproduction.md scripts/reproduce.sh x8 > one.txt 2>&1 ||
  fail "the x8 part alone failed: $(tail -5 one.txt)"
[ "$(grep -c '^\[reproduce\] sw/scale-x8.yaml$' one.txt)" = 2 ] ||
  fail "one spec did not get both queues: $(cat one.txt)"
RESULTS=one ARCHIVE= scripts/reproduce.sh --plan x8 > one-plan.txt 2>&1
grep -q "^\[reproduce\] 0 runs to do" one-plan.txt || fail "runs left after the x8 part alone: $(cat one-plan.txt)"
grep -q '^CPU-hours: .*; up to 2 runs ran at once' one/reproduction.md ||
  fail "the two queues did not overlap: $(grep '^CPU-hours' one/reproduction.md)"
# A corpus rebuilt unlike the one the archived runs were made on is named.
contains "digits-x8 is not the corpus" < run3.txt && fail "an unchanged corpus was flagged: $(cat run3.txt)"
echo 1 >> digits-x8/train/text
scripts/reproduce.sh x8 > run4.txt 2>&1 || fail "the x8 rerun failed: $(tail -5 run4.txt)"
contains "digits-x8 is not the corpus the archived runs were made on" < run4.txt ||
  fail "a changed corpus was not flagged: $(cat run4.txt)"
echo PASS
