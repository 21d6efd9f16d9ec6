#!/usr/bin/env bash
# scripts/reproduce.sh end to end at toy scale, every part (tables, design, scale, and the parts cut
# for time: rbm-lr, workers-2-4, x8): the paper sweeps with their axes scaled down (workers
# 8/16/32 -> 2, Table 1's 1, 8, 16, 32 -> 1..4, minibatch 64/256 -> 8/16, intervals 10/20 ->
# 1/2, epochs 15/30 -> 3/6, 2 replicates) on toy members of the digits family, and the criteria
# scaled alike; the page opens with the verdicts (or says this mavg has none), then the
# criteria, the runs and every table's measured cells, the scale study, the speedup tables and a
# PNG figure per table; its layout is checked against a `report verdicts` JSON fixture (the
# verdict table first, one sign, trails and counts where they belong, the decoder fix's table
# from the toy's archive, the README's summary); --plan counts nothing left; a rerun launches
# nothing.
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
# The criteria the page's verdicts follow (where this tree has them), scaled as the specs are.
if [ -f "$MAVG_SOURCE_DIR/sweeps/paper/criteria.yaml" ]; then
  sed -e "s|data/digits-x|$PWD/digits-x|g" -e 's/parallel\.workers: \(8\|16\|32\)\b/parallel.workers: 2/g' \
      -e 's/optimizer\.minibatch: 256\b/optimizer.minibatch: 16/g' -e 's/optimizer\.minibatch: 64\b/optimizer.minibatch: 8/g' \
      -e 's/parallel\.average_every: 10\b/parallel.average_every: 1/g' -e 's/parallel\.average_every: 20\b/parallel.average_every: 2/g' \
      -e 's/schedule\.epochs: 15\b/schedule.epochs: 3/g' -e 's/schedule\.epochs: 30\b/schedule.epochs: 6/g' \
      "$MAVG_SOURCE_DIR/sweeps/paper/criteria.yaml" > sw/criteria.yaml
fi
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
# The estimate counts CPU time: the same runs with every epoch on a whole core, and on half a
# core (sharing it with other work), cost the same wall time, and half the CPU-seconds a frame.
/usr/bin/python3 - << 'PY' || fail "the estimate's rates do not follow the epochs' CPU use"
import sqlite3, sys
sys.path.insert(0, "scripts")
import reproduce
def at(share):  # the results with every epoch at this CPU use
    path = f"cpu{share}.db"
    db = sqlite3.connect(path)
    sqlite3.connect("res/mavg.db").backup(db)
    db.execute("UPDATE epochs SET cpu_util = ?", (share,))
    db.commit()
    return reproduce.Rates(path)
whole, half = at(1), at(0.5)
assert whole.train and whole.cv, "no measured rates"
for mb in whole.train:
    assert abs(half.per_frame(mb) / whole.per_frame(mb) - 0.5) < 1e-9, (mb, whole.train, half.train)
assert abs(half.cv_per_frame() / whole.cv_per_frame() - 0.5) < 1e-9, (whole.cv, half.cv)
PY
# One build and one kernel family for the round: the first run pinned $MAVG's code version and
# the kernels (Haswell where the CPU has AVX2 and FMA); another build or other kernels are
# refused with one line, before anything runs.
read -r _ pin_code pin_core < <(python3 scripts/reproduce.py pin arch "$MAVG"; echo)
[ "$pin_code" = "$("$MAVG" --version | sed -n 's/^code_version //p')" ] ||
  fail "the pin is not this build's: $(cat arch/pin.json)"
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  [ "$pin_core" = Haswell ] || fail "the pin's kernels: $(cat arch/pin.json)"
fi
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "mavg 0abc"; echo "code_version 0123456789abcdef"; exit 0; }\nexec "%s" "$@"\n' \
  "$MAVG" > other-mavg
chmod +x other-mavg
MAVG=$PWD/other-mavg scripts/reproduce.sh --plan > /dev/null 2> pin.err && fail "another build was taken for the round"
contains "has code version 0123456789abcdef, this round's is $pin_code" < pin.err || fail "other build: $(cat pin.err)"
# The pin's build line (type and compiler): another is refused; a pin that cannot be read stops
# the part (it never runs unpinned).
cp arch/pin.json pin.keep
python3 - <<'PY'
import json
p = json.load(open("arch/pin.json"))
assert p["build"] == [l for l in __import__("subprocess").run(
    [__import__("os").environ["MAVG"], "--version"], capture_output=True, text=True).stdout.splitlines()
    if l.startswith("build ")][0][len("build "):], p
p["build"] = "Release (GNU 1.0, with CUDA)"
json.dump(p, open("arch/pin.json", "w"))
PY
scripts/reproduce.sh --plan > /dev/null 2> pin.err && fail "another compiler's build was taken"
contains "this round's is 'Release (GNU 1.0, with CUDA)'" < pin.err || fail "other build line: $(cat pin.err)"
echo '{"commit": "x"' > arch/pin.json
scripts/reproduce.sh --plan > /dev/null 2> pin.err && fail "an unreadable pin was taken"
cp pin.keep arch/pin.json
if [ "$pin_core" != - ]; then
  OPENBLAS_CORETYPE=Sandybridge scripts/reproduce.sh --plan > /dev/null 2> pin.err && fail "other kernels were taken"
  contains "OPENBLAS_CORETYPE=Sandybridge, but this round runs $pin_core kernels" < pin.err || fail "kernels: $(cat pin.err)"
fi
# The page: the verdicts first (`mavg report verdicts` where this mavg has it, else one line that
# says so), then the criteria, the runs, the decoder fix's table and the details per table.
has_verdicts=0
if "$MAVG" report --help | grep -q '^  verdicts ' && [ -f sw/criteria.yaml ]; then has_verdicts=1; fi
HAS_VERDICTS=$has_verdicts python3 - <<'PY'
import os, re
md = open("doc/reproduction.md").read()
head, verdicts = md.split("\n## ")[0].split("<!-- verdicts:begin -->\n")
assert head.startswith("# ") and "|" not in head, head
if os.environ["HAS_VERDICTS"] == "1":
    assert verdicts.startswith("| table | the paper's claim |"), verdicts
else:
    assert verdicts.startswith("verdicts: this mavg has no `report verdicts`") or \
        verdicts.startswith("verdicts: no criteria file"), verdicts
sections = re.findall(r"^## (.*)$", md, re.M)
want = (["The criteria", "The runs", "What the decoder fix changed on Table 1"] +
        [s for s in sections if s.startswith("Table ") or s == "The design checks"] +
        ["The scale study", "The test set's share of the noise", "Why ours may differ", "Speedup"])
assert sections == want, sections
assert [s.split(":")[0] for s in sections if s.startswith("Table ")] == [f"Table {t}" for t in range(1, 7)], sections
# round 1's archive is not in this toy tree: the decoder fix's table says so in one line
assert "(round 1's archive is not here: archive/paper-round1)" in md
tables = md.split("## The scale study")[0]
# Cells: n, test WER mean ± sd, its t interval (or the range where the runs are too spread for
# one, – where they agree exactly), dev WER (decode.tune: the dev set is decoded).
cells = re.findall(r"^\| [^|]+ \| 2 \| \d+\.\d\d ± \d+\.\d\d \| (\[[\d.]+, [\d.]+\]|range [\d.]+–[\d.]+|–) \| \d+\.\d\d \|",
                   tables, re.M)
# Table 1: 4 cells, 2: 4 + 4 (the rbm.lr part: 0.1 and 0.4 at 1 and 2 workers), 3: 3, 4: 4,
# 5: 4, 6: 7 (NG-SGD, SGD, SGD + max-change at 1 and 2 workers, and the tuned lr at 2), the
# design checks: 5 (the toy's max-change 0.0125 arms collapse: counts, not cells)
assert len(cells) == 35, f"{len(cells)} measured cells"
runs = md.split("## The runs")[1].split("\n## ")[0]
assert re.search(r"^- Test set: 30 utterances, \d+ words", runs, re.M) or os.environ["HAS_VERDICTS"] == "0", runs
assert re.search(r"^- Seeds \(per replicate", runs, re.M) and re.search(r"^- CPU-hours: \d", runs, re.M)
assert re.search(r"^- GEMM kernels: ", runs, re.M)
assert re.search(r"^- CPUs \(`build.cpu`\): `[^`]+` \d+\.$", runs, re.M), runs
speed = md.split("## Speedup")[1]
assert "projected from simulated workers, no network" in speed
assert "| GPUs | averagings/epoch | one averaging (s)" in speed, "no performance model"
assert re.search(r"the paper's 16 GPUs by the model 0\.0\d\d; ", speed) and "Table 1): 2 workers 0." in speed, speed
# Time to target first; the paper's measured and the model's speedups (the paper's setup) beside.
assert "| workers | time to target s (projected from simulated workers, no network) |" in speed
# ("not reached": no replicate reached the 1-worker runs' CV loss, which toy runs may not)
assert re.search(r"^\| 2 \| ([\d.]+( ± [\d.]+)?|not reached) \| \d of 2 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| 1.39 \| 1.92 \|$",
                 speed, re.M), speed
# Table 3's many-worker speedup per averaging interval, beside the paper's measured ones.
t3 = speed.split("Table 3's 2 workers by averaging interval")[1].split("\n\n", 2)[1]
for k, paper in (("1", "9.32"), ("2", "10.07")):
    assert re.search(rf"^\| every {k} \| ([\d.]+( ± [\d.]+)?|not reached) \| \d of 2 \| [\d.]+ \| [\d.]+ \| {paper} \|$", t3, re.M), t3
figs = re.findall(r"!\[([^]]*)\]\(([^)]+)\)", md)
assert sorted(n for n, _ in figs if n != "scale-effects") == sorted(
    [f"table{t}-curves" for t in range(1, 7)] + ["design-curves", "table1-speedup"]), figs
for _, f in figs:
    p = os.path.join("doc", f)
    assert p.endswith(".png") and os.path.getsize(p) > 1000, p
print("ok:", len(cells), "cells,", len(figs), "figures")
PY
grep -q '^- \*\*Complete\*\*: every run of the 11 sweeps run has ended' doc/reproduction.md ||
  fail "a finished reproduction is not marked complete: $(grep -m1 '^- \*\*' doc/reproduction.md)"
# The layout against `report verdicts`' JSON without the C++: the spec's shape
# (tests/fixtures/verdicts-example.json), its arms scaled as the specs are (Table 1's 8 and 32
# workers to 3 and 4, the rest to 2, so that only t1-16 is the scale study's), round 1's Table 1
# recomputed from this toy's own archive, and a README whose summary the page writes.
sed -e '/"id": "t1-/ s/"parallel.workers": 8\b/"parallel.workers": 3/g' \
    -e '/"id": "t1-/ s/"parallel.workers": 32\b/"parallel.workers": 4/g' \
    -e 's/"parallel.workers": \(8\|16\|32\)\b/"parallel.workers": 2/g' \
    -e 's/"optimizer.minibatch": 256\b/"optimizer.minibatch": 16/g' -e 's/"optimizer.minibatch": 64\b/"optimizer.minibatch": 8/g' \
    -e 's/"parallel.average_every": 10\b/"parallel.average_every": 1/g' -e 's/"parallel.average_every": 20\b/"parallel.average_every": 2/g' \
    -e "s|data/digits-x\([0-9]\)t/|$PWD/digits-x\1/|g" "$MAVG_SOURCE_DIR/tests/fixtures/verdicts-example.json" > verdicts.json
printf '# A README\n\n<!-- reproduction-summary:begin (do not edit) -->\nold\n<!-- reproduction-summary:end -->\nafter\n' > readme.md
/usr/bin/python3 analysis/reproduction.py res/mavg.db --out fix/reproduction.md --figures fix/reproduction \
  --mavg "$MAVG" --verdicts-json verdicts.json --round1 arch --readme readme.md > /dev/null ||
  fail "the page from a verdicts fixture failed"
python3 - <<'PY'
import json, re
md = open("fix/reproduction.md").read()
V = json.load(open("verdicts.json"))
# The title and one paragraph, then the verdicts: the page's first table.
head, rest = md.split("<!-- verdicts:begin -->\n", 1)
assert head.startswith("# ") and "|" not in head and "\n## " not in head, head
block, after = rest.split("\n<!-- verdicts:end -->\n", 1)
lines = block.split("\n")
assert lines[0] == ("| table | the paper's claim | paper Δ SWB / CH | ours scaled: effect / margin | "
                    "Δ = b − a [95 % CI] (pairs) | verdict | why |"), lines[0]
rows = [l for l in lines[2:] if l.startswith("| ")]
assert len(rows) == len(V["effects"]) == 20, rows
cells = [[c.strip() for c in r.strip("|").split(" | ")] for r in rows]
# confirmatory first, in the criteria's order, then the exploratory ones marked so
conf = [e for e in V["effects"] if e["confirmatory"]]
assert [c[1] for c in cells[:len(conf)]] == [e["claim"] for e in conf], cells
assert all("(expl.)" not in c[0] for c in cells[:len(conf)]) and all(c[0].endswith("(expl.)") for c in cells[len(conf):])
by = {c[1]: c for c in cells}
t1 = by["averaging over 16 workers loses little against 1 worker"]
assert t1[2:6] == ["+0.4 / +0.2", "+0.10 / +0.12", "+0.17 [+0.06, +0.27] (10)", "inconclusive"], t1
assert by["averaging over 32 workers loses little against 1 worker"][5] == "**contradicted** (pending 7/10)"
# collapses: counts, no interval
col = by["SGD with NG-SGD's max-change at its lr collapses more often than NG-SGD (16 workers)"]
assert col[4] == "b 3 of 3, a 0 of 10 collapsed" and col[5] == "**agrees**", col
# then pending k/n, the multiplicity, and the criteria with their date
assert re.search(r"^\*\*Pending 94/107\*\* \(pairs ended of planned, over the effects\): t1-32 7/10, ", block, re.M), block
assert "Not run (planned 0): t2-rbm-lr-1." in block
assert re.search(r"^Multiplicity: 10 confirmatory and 10 exploratory effects tested, each at 2\.5 % one-sided "
                 r"without correction; 5 confirmatory agree, 4 after Holm's correction", block, re.M), block
assert after.startswith("\n## The criteria\n\nFixed 2026-12-07 (round 2), before the round's first run"), after[:200]
# One sign everywhere: b - a; the scale study's trail only beside the effects it ran; no rank
# test on 2 pairs.
trails = re.findall(r"^\| (t\d-\d+|[a-z0-9-]+): [^\n]* \| (x\d[^|]*→[^|]*) \|$", md, re.M)
assert sorted(i for i, _ in trails) == ["t1-16", "t3-16", "t4-16"], trails
assert all(t.startswith("x1 ") and " → x2 " in t for _, t in trails), trails
assert "rank test" not in md
scale = md.split("## The scale study")[1].split("\n## ")[0]
assert len(re.findall(r"^\| x[124]t? \| (t\d|scale)", scale, re.M)) == 9, scale  # x4t: the tables' own runs
assert "![scale-effects](reproduction/scale-effects.png)" in scale
# the test set's share of the noise: each confirmatory effect with paired runs (the collapse
# test and Table 5's still-pending effect have their runs here too)
boot = md.split("## The test set's share of the noise")[1].split("\n## ")[0]
brows = re.findall(r"^\| (t[0-9-]+): .* \| 2 \| \d+\.\d\d \| [-\d.–]+ \| \d / \d \|$", boot, re.M)
assert brows == ["t1-8", "t1-16", "t1-32", "t2-1", "t2-32", "t3-16", "t4-16", "t5-16", "t6-16"], boot
assert re.search(r"^- Test set: 30 utterances, \d+ words", md, re.M)
# What the decoder fix changed, recomputed from the archive's files (this toy's own archive)
fix = md.split("## What the decoder fix changed on Table 1")[1].split("\n## ")[0]
assert "Recomputed from the files of round 1's archive (`arch`" in fix, fix
# (a toy's two pairs may differ alike: no spread, no interval)
frows = re.findall(r"^\| 1 → (\d) \| [\d.]+ / [\d.]+ \([\d.]+ / [\d.]+\) \| [-+]\d\.\d\d( \[[-+\d.]+, [-+\d.]+\])? \(2\) \| "
                   r"[-+]\d\.\d\d(?: \[[-+\d.]+, [-+\d.]+\])? \(2\) \| ([^|]+) \|$", fix, re.M)
assert [w for w, _, _ in frows] == ["2", "3", "4"], fix
assert all(r != "not in this round" for _, _, r in frows), frows  # t1-16, t1-8, t1-32
# The README's summary is the page's verdicts block, word for word.
readme = open("readme.md").read()
assert readme == "# A README\n\n<!-- reproduction-summary:begin (do not edit) -->\n" + block.strip("\n") + \
    "\n<!-- reproduction-summary:end -->\nafter\n", readme
print("ok: fixture,", len(rows), "verdicts")
PY
# A page made while a run is still going says so; a collapsed run is counted in its cell, not
# averaged; runs from two CPUs are flagged.
cp res/mavg.db partial.db
/usr/bin/python3 - <<'PY'
import sqlite3
db = sqlite3.connect("partial.db")
for status, sweep, like in (("running", "table3", '%average_every","2"%'),
                            ("collapsed", "table6", '%workers","2"%"sgd"%')):
    n = db.execute("UPDATE runs SET status = ? WHERE run_id = (SELECT run_id FROM sweep_runs "
                   "WHERE sweep = ? AND axes_json LIKE ? LIMIT 1)", (status, sweep, like)).rowcount
    assert n == 1, (status, sweep, like)
# One finished run made on another CPU.
n = db.execute("UPDATE env SET value = 'Another CPU' WHERE key = 'build.cpu' AND run_id = "
               "(SELECT run_id FROM sweep_runs WHERE sweep = 'table5' LIMIT 1)").rowcount
assert n == 1, "table5's runs name no CPU"
db.commit()
PY
/usr/bin/python3 analysis/reproduction.py partial.db --out partial/reproduction.md \
  --figures partial/reproduction --mavg "$MAVG" > /dev/null
# The running run is table3's and the scale study's (its x4 points are the tables' own runs).
grep -q '^- \*\*Not finished\*\*: 9 of 11 sweeps have every run ended (design-max-change, design-steps, scale-x8, table1, table2, table2-rbm-lr, table4, table5, table6)' \
  partial/reproduction.md ||
  fail "an unfinished sweep is not reported: $(grep -m1 finished partial/reproduction.md)"
grep -q '^| every 2, 2 w | 1 + 1 running |' partial/reproduction.md ||
  fail "the running run is not shown: $(grep 'every 2, 2 w |' partial/reproduction.md)"
grep -Eq '^- CPUs .*`Another CPU` 1 — \*\*more than one CPU' partial/reproduction.md ||
  fail "runs from two CPUs are not flagged: $(grep '^- CPUs' partial/reproduction.md)"
grep -Eq '^\| sgd( \+ max-change)?, lr [0-9.]+, 2 w \| 1 \(1 of 2 collapsed\) \| [0-9.]+ \| – \|' partial/reproduction.md ||
  fail "a collapsed run is not counted in its cell: $(grep '^| sgd' partial/reproduction.md)"
# The x8 point cut (its part never run, as the default parts leave it): the page is complete
# without it.
cp res/mavg.db cut.db
/usr/bin/python3 -c "import sqlite3; db = sqlite3.connect('cut.db')
db.execute(\"DELETE FROM sweep_runs WHERE sweep = 'scale-x8'\"); db.execute(\"DELETE FROM sweeps WHERE name = 'scale-x8'\")
db.commit()"
/usr/bin/python3 analysis/reproduction.py cut.db --out cut/reproduction.md \
  --figures cut/reproduction --mavg "$MAVG" > /dev/null || fail "the page without x8 failed"
grep -q '^- \*\*Complete\*\*: every run of the 10 sweeps run has ended' cut/reproduction.md ||
  fail "a cut x8 point is not reported as complete: $(grep -m1 '^- \*\*' cut/reproduction.md)"
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
# The scale study's trail goes only beside the effects it ran (the same contrast within the
# table's settings): on the fixture's own arms, Table 1's 16 workers, Table 3 and Table 4 at 16
# workers, not 1 → 8 or 1 → 32 workers or Table 4 at 1 worker.
MAVG_SOURCE_DIR="$MAVG_SOURCE_DIR" /usr/bin/python3 - <<'PY' || fail "scale_family"
import argparse, json, os, sys
sys.path.insert(0, os.path.join(os.environ["MAVG_SOURCE_DIR"], "analysis"))
from reproduction import Page, scale_family
pg = Page.__new__(Page)
pg.verdicts = json.load(open(os.path.join(os.environ["MAVG_SOURCE_DIR"], "tests/fixtures/verdicts-example.json")))
pg.effects, pg.a = pg.verdicts["effects"], argparse.Namespace(criteria="/nonexistent")
pg.spec = pg.load_arms()
fams = {e["id"]: sorted(s["id"] for s in scale_family(pg, e)) for e in pg.effects}
assert {k: v for k, v in fams.items() if v} == {
    "t1-16": ["scale-x1t-workers", "scale-x2t-workers"],
    "t3-16": ["scale-x1t-interval", "scale-x2t-interval"],
    "t4-16": ["scale-x1t-minibatch", "scale-x2t-minibatch"]}, fams
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
# (each queue started runs of it; whether two ran at once is up to the scheduler: toy runs take
# about as long as a queue's start)
grep -q '^\[reproduce\] queue 0: run ' one.txt && grep -q '^\[reproduce\] queue 1: run ' one.txt ||
  fail "a queue started no run of the one spec: $(cat one.txt)"
# A corpus rebuilt unlike the one the archived runs were made on is named.
contains "digits-x8t is not the corpus" < run3.txt && fail "an unchanged corpus was flagged: $(cat run3.txt)"
echo 1 >> digits-x8t/train/text
scripts/reproduce.sh x8 > run4.txt 2>&1 || fail "the x8 rerun failed: $(tail -5 run4.txt)"
contains "digits-x8t is not the corpus the archived runs were made on" < run4.txt ||
  fail "a changed corpus was not flagged: $(cat run4.txt)"
echo PASS
