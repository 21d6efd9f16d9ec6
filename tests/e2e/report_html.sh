#!/usr/bin/env bash
# `mavg report html`: the page of a small sweep, opened in headless Chromium (report_browser.py:
# tables and their rows, figures loaded, sorting by a click, a screenshot), the same numbers as
# the terminal reports, nothing fetched from a network; a second report replaces the first, a
# directory that is not a report is refused, and a renderer that fails leaves the old page.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 2000 500
small_base base.yaml 32 2
cat > s.yaml <<YAML
name: small
base: base.yaml
set: {parallel.mode: simulated}
grid: {parallel.workers: [1, 2], parallel.average_every: [1, 5]}
replicates: 2
YAML
R=(--results res)
"$MAVG" -q sweep run s.yaml "${R[@]}" --jobs 2 | contains "launched 8, completed 8" || fail "sweep"

"$MAVG" report html small "${R[@]}" --out page > out.txt 2> err.txt || fail "report html: $(cat err.txt)"
[ "$(tail -1 out.txt)" = "page/index.html" ] || fail "the page's path is not printed: $(cat out.txt)"
for f in index.html report.json runs.csv runs.json .mavg-report assets/jquery.min.js \
         assets/jquery.dataTables.min.js assets/css/jquery.dataTables.min.css assets/images/sort_both.png \
         figures/small-test_error.png figures/small-test_error.pdf figures/small-speedup.png \
         figures/small-curves.png figures/small-breakdown.png; do
  [ -s "page/$f" ] || fail "page/$f missing or empty"
done
[ "$(ls page/runs | wc -l)" = 8 ] || fail "run files: $(ls page/runs)"
for d in page/runs/*; do [ -s "$d/log.txt" ] && [ -s "$d/config.yaml" ] || fail "$d lacks its log or config"; done
! grep -Eq "(src|href)=\"(https?:)?//" page/index.html || fail "the page loads something from a network"
ls -d page.tmp-* page.old-* 2>/dev/null && fail "temporary directories left"

# The page's tables are the terminal reports' own (report.json holds what the page shows).
"$MAVG" report table small "${R[@]}" --rows parallel.workers --cols parallel.average_every \
  --value test_error --format json > table.json
"$MAVG" report speedup small "${R[@]}" --baseline parallel.workers=1 --interconnect ib-fdr --format json > speedup.json
python3 - <<'PY' || fail "the page's tables differ from report table/speedup"
import json
doc = json.load(open("page/report.json"))
t = next(x for x in doc["tables"] if x["metric"] == "test_error")
ref = json.load(open("table.json"))
assert (t["header"], t["rows"]) == (ref["header"], ref["rows"]), (t, ref)
s, ref = doc["speedup"], json.load(open("speedup.json"))
assert (s["header"], s["rows"]) == (ref["header"], ref["rows"]), (s, ref)
assert [m for m in doc["tables"] if "error" in m] == [], doc["tables"]
assert s["header"][-1] == "notes", s["header"]  # efficiencies within the baseline's noise
PY
grep -qi "frames trained per epoch" page/index.html || fail "the page does not show the frames per epoch"

# A note every table has is on the page once, above the tables: each table's notes (report
# table's) warn that the cells trained unequal frames (workers=2, every 5 drops some), naming
# the table's metric; the page warns once, naming them all.
python3 - <<'PY' || fail "the tables' shared warning is not on the page exactly once"
import json, re
doc = json.load(open("page/report.json"))
tables = [t for t in doc["tables"] if "error" not in t]
WARN = "Warning: frames trained per epoch differ"
assert len(tables) > 1, doc["tables"]
assert all(sum(n.startswith(WARN) for n in t["notes"]) == 1 for t in tables), tables
page = open("page/index.html").read()
assert page.count(WARN) == 1, f"the warning is on the page {page.count(WARN)} times"
shared = page[page.index(WARN):]
shared = shared[:shared.index("</p>")]
assert page.index(WARN) < page.index('<table class="report metric"'), "not above the tables"
for t in tables:
    assert re.search(rf"\b{re.escape(t['metric'])}\b", shared), (t["metric"], shared)
PY
# A note only one table has stays under that table, the shared ones above all of them.
python3 - <<'PY' || fail "report.json with a note of one table"
import json
doc = json.load(open("page/report.json"))
doc["tables"][1]["notes"].append("A note of this table alone.")
json.dump(doc, open("own.json", "w"))
PY
/usr/bin/python3 "$MAVG_SOURCE_DIR/analysis/report_html.py" --data own.json --out own > own.txt 2>&1 ||
  fail "report_html.py on own.json: $(cat own.txt)"
python3 - <<'PY' || fail "a note of one table is not under it alone"
import json
doc = json.load(open("own.json"))
page = open("own/index.html").read()
WARN = "Warning: frames trained per epoch differ"
assert page.count(WARN) == 1, page.count(WARN)
assert page.count("A note of this table alone.") == 1, page.count("A note of this table alone.")
at = [page.index(f'<table class="report metric" data-metric="{t["metric"]}"') for t in doc["tables"][:3]]
assert at[0] < at[1] < page.index("A note of this table alone.") < at[2], at
PY
grep -q "± " page/index.html || fail "no mean ± std on the page"

/usr/bin/python3 "$MAVG_SOURCE_DIR/tests/e2e/report_browser.py" page/index.html \
  --screenshot "$MAVG_TEST_TMP/report_html.png" --runs 8 --metric-rows 2 --speedup-rows 4 \
  --figures 4 || fail "the page in Chromium"

# Again: the page is replaced whole. A directory that is not a report is not touched.
"$MAVG" -q report html small "${R[@]}" --out page/ --metric test_acc > /dev/null || fail "second report"
python3 -c 'import json; t = json.load(open("page/report.json"))["tables"]; assert [x["metric"] for x in t] == ["test_acc"], t' ||
  fail "the second report did not replace the first"
mkdir -p notreport && echo keep > notreport/x
expect_error "notreport: exists and is not a report mavg wrote" "$MAVG" report html small "${R[@]}" --out notreport
[ "$(cat notreport/x)" = keep ] && [ "$(ls -A notreport)" = x ] || fail "the other directory was changed"
expect_error "no sweep named 'nosuch'" "$MAVG" report html nosuch "${R[@]}" --out page2
[ ! -e page2 ] || fail "a failed report left page2"
expect_error "no run of sweep 'small' has the metric 'wer'" "$MAVG" report html small "${R[@]}" --out page --metric wer

# A renderer that fails: one line with its message; the previous page stays as it was.
mkdir -p broken
printf 'import sys, os\nos.makedirs(sys.argv[sys.argv.index("--out") + 1], exist_ok=True)\nopen(os.path.join(sys.argv[sys.argv.index("--out") + 1], "index.html"), "w").write("half")\nsys.exit("report_html.py: error: boom")\n' > broken/report_html.py
cp page/index.html before.html
MAVG_ANALYSIS_DIR="$PWD/broken" expect_error "report_html.py failed (exit 1): report_html.py: error: boom" \
  "$MAVG" report html small "${R[@]}" --out page
cmp -s before.html page/index.html || fail "a failed render changed the page"
ls -d page.tmp-* 2>/dev/null && fail "a failed render left its temporary directory"
echo PASS
