#!/usr/bin/env bash
# One command from a fresh machine to the demo sweep's tables, figures and report page:
# dependencies, build, the small digits speech corpus (synthesised with flite and espeak-ng),
# the sweep sweeps/quickstart.yaml (simulated workers x averaging interval), then the tables
# and the HTML page (mavg report html), whose path it prints last.
# Running it again reuses the data and every finished run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
mavg=build/bin/mavg

if [ ! -f data/digits-small/corpus.json ]; then
  "$mavg" data digits --size small --out data/digits-small --force
fi

# One run at a time: each run gets the whole machine, so its timings are not disturbed by
# another run (the speedup table depends on them). Runs made by older code are redone, so that
# rerunning the quickstart after an update shows the current code's results.
"$mavg" sweep run sweeps/quickstart.yaml --jobs 1 --rerun-stale

echo
"$mavg" report table quickstart --rows parallel.workers --cols parallel.average_every \
  --value wer
echo
"$mavg" report table quickstart --rows parallel.workers --cols parallel.average_every \
  --value cv_error
echo
"$mavg" report speedup quickstart --baseline parallel.workers=1 \
  --where parallel.average_every=10 --interconnect ib-fdr
echo
"$mavg" report paper quickstart --where parallel.average_every=10 --metric wer
echo
# The page: the spec, status, these tables, the figures (WER and speedup against workers, CV
# curves, time breakdown at K = 10) and every run, sortable; open it in any browser, offline.
page=$("$mavg" report html quickstart --out results/report/quickstart \
  --figure-where parallel.average_every=10)
echo "[quickstart] figures: results/report/quickstart/figures/"
echo "[quickstart] database: results/mavg.db (views sweep_results, sweep_axes, sweep_epochs, sweep_pretrain)"
echo "[quickstart] every run as one row: build/bin/mavg report runs quickstart --format csv"
echo "[quickstart] the report page: $page"
