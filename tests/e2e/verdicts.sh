#!/usr/bin/env bash
# `mavg report compare SWEEP --a AXIS=V --b AXIS=V` pairs the arms' runs by replicate from the
# store (the same numbers as the values pasted by hand, in replicate order), and `report
# verdicts CRITERIA` judges a criteria file's effects on them: the JSON keys the reproduction
# page reads, collapsed runs counted, a cell never run said `no runs`, one-line errors.
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
# Each arm's test_error (100 (1 - test_acc), as the reports derive it) in replicate order.
read -r A B < <(python3 - <<'PY'
import json, sqlite3
db = sqlite3.connect("res/mavg.db")
arms = {}
for workers, lr, rep, acc in db.execute("""
    SELECT json_extract(r.config_json, '$.parallel.workers'),
           json_extract(r.config_json, '$.schedule.lr'), s.replicate, x.value
    FROM sweep_runs s JOIN runs r USING (run_id) JOIN results x USING (run_id)
    WHERE s.sweep = 'small' AND x.key = 'test_acc' AND r.status = 'completed'"""):
    if lr == 0.004:
        arms.setdefault(workers, {})[rep] = 100.0 * (1.0 - acc)
assert sorted(arms) == [1, 2] and all(sorted(v) == [0, 1, 2] for v in arms.values()), arms
print(",".join(repr(arms[1][r]) for r in range(3)), ",".join(repr(arms[2][r]) for r in range(3)))
PY
)
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
echo "verdicts: all passed"
