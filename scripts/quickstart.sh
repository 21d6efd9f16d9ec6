#!/usr/bin/env bash
# One command from a fresh machine to the demo sweep's tables and figures: dependencies,
# build, the small digits speech corpus (synthesised with flite and espeak-ng), the sweep
# sweeps/quickstart.yaml (simulated workers x averaging interval), then the tables and plots.
# Running it again reuses the data and every finished run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
mavg=build/bin/mavg

if [ ! -f data/digits-small/corpus.json ]; then
  "$mavg" data digits --out data/digits-small --train-utts 1200 --dev-utts 200 \
    --test-utts 400 --test-seen-utts 100 --force
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
echo "[quickstart] figures:"
/usr/bin/python3 analysis/plot.py results/mavg.db --sweep quickstart --kind metric \
  --metric wer --out results/figures
/usr/bin/python3 analysis/plot.py results/mavg.db --sweep quickstart --kind speedup \
  --out results/figures
/usr/bin/python3 analysis/plot.py results/mavg.db --sweep quickstart --kind breakdown \
  --where parallel.average_every=10 --out results/figures
/usr/bin/python3 analysis/plot.py results/mavg.db --sweep quickstart --kind curves \
  --where parallel.average_every=10 --out results/figures
echo "[quickstart] database: results/mavg.db (views sweep_results, sweep_axes, sweep_epochs, sweep_pretrain)"
