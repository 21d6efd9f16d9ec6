#!/usr/bin/env bash
# Files a colleague could plant or a user could mistype: links in run and results directories
# (the append-mode writers, lock files and report html never follow them out), one command's
# two outputs naming one file, mavg train --out on a directory that is not a run's, names of
# mavg's own results given to run metric, a data dir whose path holds a space.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 800 100
small_base base.yaml 8 2
echo precious > victim.txt
untouched() { [ "$(cat victim.txt)" = precious ] || fail "$1 wrote through a link: $(cat victim.txt)"; }

# A run's log.txt, metrics.jsonl and .lock planted as links out of the run directory.
rc=0
MAVG_TEST_STOP_AT=2:3 "$MAVG" -q train base.yaml --out run --no-progress || rc=$?
[ "$rc" -eq 75 ] || fail "expected a preempted run, got exit $rc"
for f in log.txt .lock; do
  cp -a run "run-$f"
  rm -f "run-$f/$f"
  ln -s "$WORK/victim.txt" "run-$f/$f"
  expect_error "$f: is a symbolic link" "$MAVG" -q train --resume "run-$f" --no-progress
  untouched "$f"
done
# metrics.jsonl is rewritten on resume (atomically: the link is replaced, not followed).
cp -a run run-metrics
rm run-metrics/metrics.jsonl && ln -s "$WORK/victim.txt" run-metrics/metrics.jsonl
"$MAVG" -q train --resume run-metrics --no-progress > /dev/null 2>&1 || true
untouched "metrics.jsonl"
[ ! -L run-metrics/metrics.jsonl ] || fail "metrics.jsonl is still a link"
mkdir fresh
ln -s "$WORK/victim.txt" fresh/.lock
expect_error ".lock: is a symbolic link" "$MAVG" -q train base.yaml --out fresh --no-progress
untouched "a fresh run's lock"
echo "ok: a run's writers refuse links"

# The local launcher's launcher.log planted in a run directory of a sweep.
printf 'name: planted\nbase: base.yaml\ngrid: {schedule.lr: [0.004]}\n' > planted.yaml
run_id=$("$MAVG" sweep plan planted.yaml --results res | awk '$1 ~ /^[0-9a-f]+$/ && length($1) == 16 && !found {print $1; found = 1}')
[ -n "$run_id" ] || { "$MAVG" sweep plan planted.yaml --results res; fail "no run id in the plan"; }
mkdir -p "res/runs/planted/$run_id"
ln -s "$WORK/victim.txt" "res/runs/planted/$run_id/launcher.log"
rc=0
"$MAVG" sweep run planted.yaml --results res > planted.txt 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "the sweep should fail"
"$MAVG" sweep status planted --results res | contains "symbolic link" || fail "no reason: $("$MAVG" sweep status planted --results res)"
untouched "launcher.log"
echo "ok: the launcher refuses a planted launcher.log"
# A sweep's runs folder planted as a link by another user: the runs would land where it points.
# The user's own link (runs moved to a scratch disk) is followed.
mkdir -p elsewhere res3/runs scratch res4/runs
ln -s "$WORK/elsewhere" res3/runs/planted
if [ "$(id -u)" = 0 ] && chown -h nobody res3/runs/planted 2> /dev/null; then
  expect_error "res3/runs/planted: is a symbolic link made by another user" \
    "$MAVG" sweep run planted.yaml --results res3
  [ -z "$(ls elsewhere)" ] || fail "runs were written through a planted link: $(ls elsewhere)"
  echo "ok: another user's link in the results directory is refused"
else
  echo "skip: another user's link (needs root to plant one)"
fi
ln -s "$WORK/scratch" res4/runs/planted
"$MAVG" -q sweep run planted.yaml --results res4 > own.txt 2>&1 || fail "own link: $(cat own.txt)"
[ -f "scratch/$run_id/result.json" ] || fail "the run did not land through the user's own link: $(ls -R scratch)"
echo "ok: the user's own link is followed"

# report html copies a run's config and log beside the page, never through a link leaving the
# run directory (a page is made to be shared).
printf 'name: page\nbase: base.yaml\ngrid: {schedule.lr: [0.004, 0.008]}\n' > page.yaml
"$MAVG" -q sweep run page.yaml --results res2 > /dev/null
echo "secret-token" > secret.txt
first=$(ls -d res2/runs/page/*/ | head -1)
rm "$first/config.yaml" && ln -s "$WORK/secret.txt" "$first/config.yaml"
"$MAVG" -q report html page --results res2 --out html > /dev/null 2> html.err ||
  fail "report html: $(cat html.err)"
! grep -rq "secret-token" html || fail "report html copied a file reached through a link"
echo "ok: report html leaves linked files out"

# One command, two outputs, one file: refused before anything is written; a failed command
# never replaces an existing output.
echo keep > same.ark
expect_error "the same file" "$MAVG" forward run/model.bin --data data/test --out "ark,scp:same.ark,./same.ark"
expect_error "the same file" "$MAVG" forward run/model.bin --data data/test --out "ark,scp:same.ark,$WORK/same.ark"
[ "$(cat same.ark)" = keep ] || fail "a refused forward changed its output"
rc=0
"$MAVG" forward run/model.bin --data nosuch --out "ark:same.ark" 2> /dev/null || rc=$?
[ "$rc" -ne 0 ] && [ "$(cat same.ark)" = keep ] || fail "a failed forward replaced its output"
[ -z "$(ls same.ark.tmp* 2> /dev/null)" ] || fail "a failed forward left a temporary file"
echo "ok: outputs"

# mavg train --out on a directory that is not a run's: refused, nothing in it changed.
mkdir -p notes && echo "my notes" > notes/config.yaml && echo data > notes/model.bin
expect_error "notes: exists and is not a mavg run directory (it holds config.yaml and 1 more)" \
  "$MAVG" train base.yaml --out notes --no-progress
[ "$(cat notes/config.yaml)" = "my notes" ] && [ ! -e notes/log.txt ] || fail "train wrote into notes/"
# ...but one a killed run left before its first state.json (a sweep's files, a write's
# temporary) is taken: a retry must not be refused by its own leftovers.
mkdir -p crashed && echo "x" > crashed/sweep-config.yaml && echo "partial" > crashed/state.json.tmp.4242
: > crashed/.lock && echo "half" > crashed/config.yaml.tmp.17
"$MAVG" -q train base.yaml --set schedule.epochs=1 --out crashed --no-progress ||
  fail "a directory holding only a killed run's leftovers was refused"
mkdir -p crashed2 && echo "x" > crashed2/state.json.tmp.12ab
expect_error "crashed2: exists and is not a mavg run directory (it holds state.json.tmp.12ab)" \
  "$MAVG" train base.yaml --out crashed2 --no-progress
echo "ok: --out on another directory"

# run metric refuses mavg's own names, whether or not the run has them (this run has no test
# decode, so no wer in its result.json).
"$MAVG" -q train base.yaml --set schedule.epochs=1 --out done --no-progress
expect_error "'wer' is the name of a result mavg measures itself" "$MAVG" run metric done --set wer=5
expect_error "'epoch_s' is the name of a result mavg measures itself" "$MAVG" run metric done --set epoch_s=5
"$MAVG" run metric done --set wer_kaldi=5 > /dev/null || fail "an outside name was refused"
echo "ok: run metric"

# A data dir whose path holds a space (and glob characters): its ali.ark is one file.
mkdir -p "sp ace[1]"
cp -r data/train data/dev data/test "sp ace[1]/"
printf 'data: {train: "sp ace[1]/train", dev: "sp ace[1]/dev", test: "sp ace[1]/test"}\nmodel: {hidden_layers: 1, hidden_dim: 8}\noptimizer: {minibatch: 32}\nschedule: {type: constant, lr: 0.004, epochs: 1}\n' > space.yaml
"$MAVG" -q train space.yaml --out space --no-progress || fail "a data dir with a space in its path"
echo PASS
