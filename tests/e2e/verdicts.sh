#!/usr/bin/env bash
# `mavg report compare SWEEP --a AXIS=V --b AXIS=V` pairs the arms' runs by replicate from the
# store (the same numbers as the values pasted by hand, in replicate order), and `report
# verdicts CRITERIA` judges a criteria file's effects on them: the JSON keys the reproduction
# page reads, collapsed runs counted, a cell never run said `no runs`, one-line errors. A spec's
# `compare:` contrasts are checked at plan time and answered by `report compare SWEEP` (the
# interval and verdict recomputed here from the store) and first on the sweep's page.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
# lr 5 on the summed gradient saturates the sigmoids: those runs end `collapsed` (health.sh).
cat > base.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test, context: 0}
model: {hidden_layers: 2, hidden_dim: 64, activation: sigmoid}
optimizer: {minibatch: 32}
schedule: {type: constant, lr: 0.004, epochs: 2}
parallel: {mode: simulated}
device_options: {threads: 1}
YAML
cat > s.yaml <<YAML
name: small
base: base.yaml
grid: {parallel.workers: [1, 2]}
include: [{parallel.workers: 1, schedule.lr: 5}]
replicates: 3
YAML
R=(--results res)
rc=0
"$MAVG" -q sweep run s.yaml "${R[@]}" --jobs 2 > run.txt || rc=$?
grep -q "completed 6, collapsed 3" run.txt || fail "sweep: rc $rc: $(cat run.txt)"

# ---- compare SWEEP: the pairs from the store equal the values given by hand ----
"$MAVG" report compare small "${R[@]}" --a parallel.workers=1 --b parallel.workers=2 \
  --where schedule.lr=0.004 --metric test_error --margin 2 --format json > store.json
# Each arm's test_error (100 (1 - test_acc), as the reports derive it), read from the store
# without mavg: {workers: [replicate 0, 1, 2]} of a sweep's completed lr 0.004 runs, as JSON.
store_errors() {
  python3 - "$1" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect("res/mavg.db")
arms = {}
for workers, lr, rep, acc in db.execute("""
    SELECT json_extract(r.config_json, '$.parallel.workers'),
           json_extract(r.config_json, '$.schedule.lr'), s.replicate, x.value
    FROM sweep_runs s JOIN runs r USING (run_id) JOIN results x USING (run_id)
    WHERE s.sweep = ? AND x.key = 'test_acc' AND r.status = 'completed'""", (sys.argv[1],)):
    if lr == 0.004:
        arms.setdefault(workers, {})[rep] = 100.0 * (1.0 - acc)
assert sorted(arms) == [1, 2] and all(sorted(v) == [0, 1, 2] for v in arms.values()), arms
print(json.dumps({w: [v[r] for r in range(3)] for w, v in arms.items()}))
PY
}
store_errors small > small_errors.json
read -r A B < <(python3 -c "import json; a = json.load(open('small_errors.json')); \
print(','.join(map(repr, a['1'])), ','.join(map(repr, a['2'])))")
"$MAVG" report compare --paired --a "$A" --b "$B" --margin 2 --format json > hand.json
python3 - store.json hand.json <<'PY'
import json, sys
s, h = (json.load(open(f)) for f in sys.argv[1:])
assert s["sweep"] == "small" and s["metric"] == "test_error" and s["replicates"] == [0, 1, 2], s
assert s["where"] == {"schedule.lr": "0.004"}, s["where"]
assert s["arms"]["a"]["selection"] == "parallel.workers=1" and s["arms"]["a"]["ended"] == 3, s
assert s["paired"] is True, s
for key in ("a", "b", "difference", "equivalence", "rank_test"):
    for k, v in h[key].items():
        w = s[key][k]
        same = v == w or (isinstance(v, float) and abs(v - w) <= 1e-12 * max(1, abs(v)))
        assert same, (key, k, v, w)
PY
echo "ok: compare SWEEP pairs by replicate"
# The text names the selection and the pairs.
"$MAVG" report compare small "${R[@]}" --a parallel.workers=1 --b parallel.workers=2 \
  --where schedule.lr=0.004 --metric test_error | contains "paired by replicate: 3 (replicates 0, 1, 2)" ||
  fail "text lacks the pairing"
# A value 4 does not match "4.0": numbers compare as numbers; the interaction takes four arms.
"$MAVG" report compare small "${R[@]}" --a1 parallel.workers=1,schedule.lr=0.004 \
  --b1 parallel.workers=1,schedule.lr=5 --a2 parallel.workers=1,schedule.lr=4e-3 \
  --b2 parallel.workers=2.0 --where model.hidden_dim=64 --metric test_error --format json > i.json
python3 -c "import json; j = json.load(open('i.json')); assert j['kind'] == 'interaction' and \
j['interaction']['left_out'] == 3 and j['rank_test']['n'] == 3, j"
echo "ok: interaction from the store"

expect_error "no sweep named 'smal' (did you mean 'small'?)" \
  "$MAVG" report compare smal "${R[@]}" --a parallel.workers=1 --b parallel.workers=2
expect_error "arm b: no run of sweep small has the key 'parallel.worker' (its axes: parallel.workers, schedule.lr)" \
  "$MAVG" report compare small "${R[@]}" --a parallel.workers=1 --b parallel.worker=2 --metric test_error
expect_error "arm a: 2 runs of replicate 0 (schedule.lr varies: 0.004, 5): give its value too" \
  "$MAVG" report compare small "${R[@]}" --a parallel.workers=1 --b parallel.workers=2 --metric test_error
expect_error "no run of sweep small has parallel.workers=7 (its values: 1, 2)" \
  "$MAVG" report compare small "${R[@]}" --a parallel.workers=1 --b parallel.workers=7 \
  --where schedule.lr=0.004 --metric test_error
# Replicate 0's seed on one side, replicate 1's on the other: nothing to pair.
read -r S0 S1 < <(python3 -c "import sqlite3; d = dict(sqlite3.connect('res/mavg.db').execute(\
\"SELECT s.replicate, json_extract(r.config_json, '\$.seed') FROM sweep_runs s JOIN runs r USING (run_id)\")); \
print(d[0], d[1])")
expect_error "the arms have no replicate in common" \
  "$MAVG" report compare small "${R[@]}" --a parallel.workers=1,seed=$S0 --b parallel.workers=2,seed=$S1 \
  --where schedule.lr=0.004 --metric test_error
expect_error "no run of sweep 'small' has the metric 'bleu'" \
  "$MAVG" report compare small "${R[@]}" --a parallel.workers=1 --b parallel.workers=2 --metric bleu
expect_error "--a 'parallel.workers=1' selects runs: name their sweep first" \
  "$MAVG" report compare --a parallel.workers=1 --b parallel.workers=2
expect_error "with a sweep, an arm selects its runs: AXIS=VALUE" \
  "$MAVG" report compare small "${R[@]}" --a 7.0,6.9 --b parallel.workers=2

# ---- verdicts: a criteria file on the same store ----
cat > criteria.yaml <<YAML
fixed: 2026-12-07
round: e2e
metric: test_error
baseline: {sweep: small, where: {parallel.workers: 1, schedule.lr: 0.004}}
paper_baseline: 20
margin: 40
effects:
  - id: two-workers
    table: "1"
    claim: 2 workers lose little against 1
    kind: small
    confirmatory: true
    sweep: small
    where: {schedule.lr: 0.004}
    a: {parallel.workers: 1}
    b: {parallel.workers: 2}
    paper: {swb: 0.4, ch: 0.2}
    planned: 3
  - id: lr5-collapses
    claim: lr 5 collapses
    kind: collapses
    confirmatory: true
    sweep: small
    where: {parallel.workers: 1}
    a: {schedule.lr: 0.004}
    b: {schedule.lr: 5}
    paper: {direction: more, b: "3/3", a: "0/3"}
  - id: never-run
    claim: 4 workers
    kind: direction
    confirmatory: false
    sweep: small
    where: {schedule.lr: 0.004}
    a: {parallel.workers: 1}
    b: {parallel.workers: 4}
    paper: {swb: 1}
    planned: 3
YAML
"$MAVG" report verdicts criteria.yaml "${R[@]}" --format json > v.json
python3 - v.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for k in ("fixed", "round", "metric", "level", "baseline", "multiplicity", "effects"):
    assert k in j, k
assert j["fixed"] == "2026-12-07" and j["round"] == "e2e" and j["level"] == 0.95, j
b = j["baseline"]
assert b["n"] == 3 and b["paper"] == 20 and abs(b["scale"] - b["value"] / 20) < 1e-12, b
m = j["multiplicity"]
assert (m["confirmatory"], m["exploratory"], m["alpha_one_sided"]) == (2, 0, 0.025), m
assert "holm_agrees" in m, m
e = {x["id"]: x for x in j["effects"]}
keys = {"id", "table", "claim", "kind", "confirmatory", "paper", "scaled_effect", "scaled_margin",
        "pairs", "planned", "pending", "left_out", "collapsed", "arms", "diff", "verdict", "why"}
for x in j["effects"]:
    assert keys <= set(x), keys - set(x)
    assert x["verdict"] in ("agrees", "inconclusive", "contradicted", "pending", "no runs"), x
    assert x["why"] and "\n" not in x["why"], x
t = e["two-workers"]
assert t["pairs"] == 3 and t["pending"] is False and t["left_out"] == 0, t
assert abs(t["scaled_margin"] - 40 * b["scale"]) < 1e-9, t
assert set(t["diff"]) >= {"estimate", "ci", "ci_level", "p_one_sided", "sd", "smallest_margin"}, t
lo, hi = t["diff"]["ci"]
assert lo <= t["diff"]["estimate"] <= hi, t
# The same interval as compare SWEEP's.
s = json.load(open("store.json"))["difference"]
assert abs(lo - s["ci_low"]) < 1e-9 and abs(hi - s["ci_high"]) < 1e-9, (t, s)
c = e["lr5-collapses"]
assert c["collapsed"]["b"] == 3 and c["collapsed"]["a"] == 0 and c["diff"] is None, c
assert c["verdict"] == "inconclusive" and abs(c["p_one_sided"] - 1 / 20) < 1e-12, c  # 1/20
n = e["never-run"]
assert n["verdict"] == "pending" and n["pending"] is True and n["pairs"] == 0, n
assert "parallel.workers=4" in n["why"], n
PY
echo "ok: verdicts json"
"$MAVG" report verdicts criteria.yaml "${R[@]}" --format markdown > v.md
grep -q "^| two-workers | 2 workers lose little against 1 |" v.md || fail "markdown: $(cat v.md)"
grep -q "b 3/3, a 0/3 collapsed" v.md || fail "markdown lacks the counts: $(cat v.md)"
"$MAVG" report verdicts criteria.yaml "${R[@]}" | contains "^lr5-collapses" || fail "text"

sed 's/    kind: collapses/    kind: colapses/' criteria.yaml > bad.yaml
expect_error "bad.yaml: line 21: effect 'lr5-collapses': key 'kind': 'colapses' is not a kind" \
  "$MAVG" report verdicts bad.yaml "${R[@]}"
sed 's/    b: {parallel.workers: 4}/    b: {parallel.worker: 4}/' criteria.yaml > typo.yaml
expect_error "effect 'never-run': arm b: no run of sweep small has the key 'parallel.worker'" \
  "$MAVG" report verdicts typo.yaml "${R[@]}"
expect_error "nope.yaml: no such criteria file" "$MAVG" report verdicts nope.yaml "${R[@]}"
expect_error "--format" "$MAVG" report verdicts criteria.yaml "${R[@]}" --format yaml

# ---- compare: a spec's contrasts, on the same runs (a second sweep reuses them) ----
cat > c.yaml <<YAML
name: contrasts
base: base.yaml
grid: {parallel.workers: [1, 2]}
include: [{parallel.workers: 1, schedule.lr: 5}]
replicates: 3
compare:
  two_beats_one: {a: {parallel.workers: 1}, b: {parallel.workers: 2}, where: {schedule.lr: 0.004}, metric: test_error, claim: beats}
  two_not_worse: {a: {parallel.workers: 1}, b: {parallel.workers: 2}, where: {schedule.lr: 0.004}, metric: test_error, claim: not_worse, margin: 5}
  lr5_equivalent: {a: {schedule.lr: 0.004}, b: {schedule.lr: 5}, where: {parallel.workers: 1}, metric: test_error, claim: equivalent, margin: 1}
YAML
"$MAVG" sweep plan c.yaml "${R[@]}" > plan.txt
grep -q "two_beats_one: b beats a on test_error (lower is better) where schedule.lr=0.004; a parallel.workers=1 (3 runs, 3 ended), b parallel.workers=2 (3 runs, 3 ended): 3 pairs planned" plan.txt ||
  fail "plan lacks the contrast: $(cat plan.txt)"
"$MAVG" -q sweep run c.yaml "${R[@]}" | contains "launched 0" || fail "the runs were not reused"
"$MAVG" report compare contrasts "${R[@]}" --format json > c.json
store_errors contrasts > contrast_errors.json
python3 - c.json <<'PY2'
import json, math, sys
j = json.load(open(sys.argv[1]))
c = {x["name"]: x for x in j["contrasts"]}
assert list(c) == ["two_beats_one", "two_not_worse", "lr5_equivalent"], list(c)
# The pairs from the store, b - a, and the 95 % t interval: t(0.975, 2) = 4.302652729911275.
arms = json.load(open("contrast_errors.json"))
d = [arms["2"][r] - arms["1"][r] for r in range(3)]
mean = sum(d) / 3
sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 2)
half = 4.302652729911275 * sd / math.sqrt(3)
for name in ("two_beats_one", "two_not_worse"):
    x = c[name]
    assert x["pairs"] == 3 and x["replicates"] == [0, 1, 2] and x["planned"] == 3, x
    assert abs(x["diff"]["estimate"] - mean) < 1e-9, (x["diff"], mean)
    lo, hi = x["diff"]["ci"]
    assert abs(lo - (mean - half)) < 1e-6 and abs(hi - (mean + half)) < 1e-6, (lo, hi, mean, half)
    assert x["why"] and "\n" not in x["why"], x
# The rules, applied here: beats (lower is better) agrees below 0, contradicted above.
want = "agrees" if hi < 0 else "contradicted" if lo > 0 else "inconclusive"
assert c["two_beats_one"]["verdict"] == want, (c["two_beats_one"], want)
want = "agrees" if hi < 5 else "contradicted" if lo > 5 else "inconclusive"
assert c["two_not_worse"]["verdict"] == want, (c["two_not_worse"], want)
# lr 5 collapsed in all 3 replicates: no pair is left for the t part.
e = c["lr5_equivalent"]
assert e["verdict"] == "no runs" and e["left_out"] == 3 and e["collapsed"]["b"] == 3, e
m = j["multiplicity"]
assert m["tested"] == 2 and m["untested"] == 1 and m["alpha_one_sided"] == 0.025, m
PY2
echo "ok: compare SWEEP answers the spec's contrasts"
"$MAVG" report compare contrasts "${R[@]}" --contrast two_not_worse > c.txt
grep -q "^two_not_worse: b is not worse than a by 5 or more on test_error" c.txt || fail "$(cat c.txt)"
! grep -q "^two_beats_one" c.txt || fail "--contrast did not select: $(cat c.txt)"
"$MAVG" report html contrasts "${R[@]}" --out page > /dev/null
python3 - page/index.html <<'PY2'
import re, sys
html = open(sys.argv[1]).read()
first = html.index("<section id=")
assert html[first:].startswith('<section id="contrasts">'), html[first:first + 80]
rows = re.findall(r'<tr data-contrast="([a-z0-9_]+)" data-verdict="([a-z ]+)"', html)
assert [r[0] for r in rows] == ["two_beats_one", "two_not_worse", "lr5_equivalent"], rows
PY2
echo "ok: the page opens with the contrasts"
# A changed compare: section is not a new sweep: the same runs, the new question, no --force.
sed -i 's/claim: not_worse, margin: 5/claim: not_worse, margin: 7/' c.yaml
"$MAVG" -q sweep run c.yaml "${R[@]}" | contains "launched 0" || fail "an edited compare: was refused"
"$MAVG" report compare contrasts "${R[@]}" --contrast two_not_worse | contains "by 7 or more" ||
  fail "the stored spec kept the old margin"
expect_error "compare.two_beats_one: arm b selects no run: no point has parallel.workers=4 (its values: 1, 2)" \
  "$MAVG" sweep plan <(sed 's/b: {parallel.workers: 2}, where: {schedule.lr: 0.004}, metric: test_error, claim: beats/b: {parallel.workers: 4}, where: {schedule.lr: 0.004}, metric: test_error, claim: beats/' c.yaml) "${R[@]}"
expect_error "sweep small's spec declares no contrasts" "$MAVG" report compare small "${R[@]}"
expect_error "--contrast nope: the spec of sweep contrasts has no such contrast (its contrasts: two_beats_one, two_not_worse, lr5_equivalent)" \
  "$MAVG" report compare contrasts "${R[@]}" --contrast nope
expect_error "--contrast answers a contrast of a sweep's spec" \
  "$MAVG" report compare contrasts "${R[@]}" --a parallel.workers=1 --b parallel.workers=2 --contrast x
echo "verdicts: all passed"
