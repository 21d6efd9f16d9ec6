#!/usr/bin/env bash
# `mavg report compare` and `report bootstrap` as the reproduction page calls them: the JSON keys
# it reads, and one error line naming the flag, file and line or utterance for bad input.
source "$(dirname "$0")/lib.bash"

# ---- compare: two arms, paired by seed, with a margin ----
"$MAVG" report compare --a 7.0,6.9,7.2 --b 7.5,7.4,7.6 --paired --margin 0.7 --format json > c.json
python3 - c.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["kind"] == "compare" and j["paired"] is True and j["level"] == 0.95, j
for arm in ("a", "b"):
    assert set(j[arm]) == {"n", "collapsed", "mean", "sd"}, j[arm]
d = j["difference"]
assert set(d) == {"estimate", "se", "df", "t", "p", "ci_low", "ci_high", "mdd", "n", "left_out",
                  "seeds_needed"}, d
assert d["seeds_needed"] is None, d  # nothing to detect given
assert abs(d["estimate"] - 7 / 15) < 1e-9 and d["df"] == 2 and abs(d["t"] - 14) < 1e-6, d
e = j["equivalence"]
assert e["equivalent"] is True and abs(e["ci_level"] - 0.9) < 1e-12, e
assert 0 < e["smallest_margin_upper"] < e["smallest_margin"] and e["seeds_needed"] >= 2, e
r = j["rank_test"]
assert r["method"] == "wilcoxon_signed_rank" and r["statistic"] == 6 and r["p"] == 0.25, r
assert r["min_p"] == 0.25, r  # 3 seeds cannot go below 2 / 2^3
PY
echo "ok: compare json"
# --detect: the seeds a difference needs at this spread (sd 1: 10 seeds for 1, 34 for 0.5).
"$MAVG" report compare --a 0,0,0 --b 0,1,2 --paired --detect 0.5 --format json > d.json
python3 -c "import json; j = json.load(open('d.json')); assert j['detect'] == 0.5 and \
j['difference']['seeds_needed'] == 34, j"
"$MAVG" report compare --a 0,0,0 --b 0,1,2 --paired --detect 1 | contains "1 needs 10 seeds" ||
  fail "the text lacks the seeds needed: $("$MAVG" report compare --a 0,0,0 --b 0,1,2 --paired --detect 1)"
expect_error "--detect must be a non-zero number" "$MAVG" report compare --a 1,2 --b 1,2 --detect 0
expect_error "--detect needs --paired" "$MAVG" report compare --a 1,2 --b 1,2 --detect 1
expect_error "--power must lie in [0.5, 1)" "$MAVG" report compare --a 1,2 --b 1,2 --power 0.3

# A collapsed run: left out of the t part, kept by the rank test (3 against 3, p = 0.1).
"$MAVG" report compare --a 9.2,9.3,9.4 --b 11.4,31.5,collapsed --format json > x.json
python3 - x.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["b"]["collapsed"] == 1 and j["difference"]["left_out"] == 1, j
assert abs(j["rank_test"]["p"] - 0.1) < 1e-12 and j["equivalence"] is None, j
PY
"$MAVG" report compare --a 9.2,9.3,9.4 --b 11.4,31.5,x | contains "mann_whitney_u" ||
  fail "text output lacks the rank test"
echo "ok: collapsed"

# The interaction: the same command with four arms.
"$MAVG" report compare --a1 1,2,3 --b1 2,4,6 --a2 1,3,5 --b2 5,6,7 --format json > i.json
python3 - i.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["kind"] == "interaction", j
assert abs(j["interaction"]["estimate"] - 1) < 1e-12, j
assert abs(j["interaction"]["df"] - 100 / 17) < 1e-9, j
assert j["first"]["rank_test"]["method"] == "mann_whitney_u", j
assert "rank_test" not in j, j  # unpaired: no rank test on the interaction
PY
# Paired, with Table 2's collapse at 32 workers: the interval sees 2 seeds, the rank test 3.
"$MAVG" report compare --paired --a1 15.6,15.7,15.5 --b1 14.7,14.8,14.6 --a2 11.4,31.5,x \
  --b2 9.2,9.3,9.4 --format json > ip.json
python3 - ip.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["interaction"]["n"] == 2 and j["interaction"]["left_out"] == 1, j
r = j["rank_test"]
assert r["method"] == "wilcoxon_signed_rank" and r["n"] == 3 and r["statistic"] == 0, r
assert r["p"] == 0.25 and r["min_p"] == 0.25, r
PY
echo "ok: interaction"

expect_error "--b: value 2 'abc' is not a number" "$MAVG" report compare --a 1,2 --b 1,abc
expect_error "--a: no values" "$MAVG" report compare --b 1,2
expect_error "--paired: --a has 2 values but --b 3" "$MAVG" report compare --a 1,2 --b 1,2,3 --paired
expect_error "--margin must be positive" "$MAVG" report compare --a 1,2 --b 1,2 --margin 0
expect_error "--level must lie between 0 and 1" "$MAVG" report compare --a 1,2 --b 1,2 --level 95
expect_error "cannot be combined" "$MAVG" report compare --a 1,2 --b 1,2 --a1 1,2
expect_error "--b2: no values" "$MAVG" report compare --a1 1,2 --b1 1,2 --a2 1,2
expect_error "--format" "$MAVG" report compare --a 1,2 --b 1,2 --format yaml

# ---- bootstrap: two runs' decode_test.txt ----
block() {  # block ID C S D I
  printf 'id: (%s)\nScores: (#C #S #D #I) %s %s %s %s\nREF:  w\nHYP:  w\nEval:\n' "$@"
}
mkdir -p runA runB runC
for i in $(seq 1 40); do block "u$i" 9 0 0 0; done > runA/decode_test.txt
for i in $(seq 1 40); do block "u$i" 8 1 0 0; done > runB/decode_test.txt
"$MAVG" report bootstrap --a runA --b runB --samples 500 --seed 3 --format json > b.json
"$MAVG" report bootstrap --a runA --b runB/decode_test.txt --samples 500 --seed 3 --format json > b2.json
python3 - b.json b2.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
keys = {"kind", "a", "b", "utterances", "ref_words", "wer_a", "wer_b", "diff", "level", "ci_low",
        "ci_high", "fraction_b_better", "samples", "seed"}
assert set(j) == keys, j
assert j["utterances"] == 40 and j["ref_words"] == 360 and j["wer_a"] == 0, j
assert j["ci_low"] > 0 and j["fraction_b_better"] == 0, j
k = json.load(open(sys.argv[2]))
assert (k["ci_low"], k["ci_high"]) == (j["ci_low"], j["ci_high"]), (j, k)  # the same seed
PY
echo "ok: bootstrap json"

for i in $(seq 1 39); do block "u$i" 9 0 0 0; done > runC/decode_test.txt
expect_error "utterance 'u40' of runA is not in runC" "$MAVG" report bootstrap --a runA --b runC
{ block u1 9 0 0 0; printf 'id: (u2)\nScores: (#C #S #D #I) 9 0 zero 0\n'; } > runC/decode_test.txt
expect_error "runC/decode_test.txt:7: expected four counts" "$MAVG" report bootstrap --a runA --b runC
expect_error "--b: nowhere: no such run directory or file" "$MAVG" report bootstrap --a runA --b nowhere
mkdir -p empty
expect_error "--b: empty/decode_test.txt does not exist" "$MAVG" report bootstrap --a runA --b empty
expect_error "--samples must be positive" "$MAVG" report bootstrap --a runA --b runB --samples 0
echo "report_stats: all passed"
