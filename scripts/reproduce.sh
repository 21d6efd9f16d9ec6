#!/usr/bin/env bash
# Su & Chen 2015's six tables, the design checks and the scale study on the digits task, and
# docs/reproduction.md from them. Long (round 2: about 50 CPU-hours, `--plan` says): it runs in
# parts, on whichever machine a part runs on, and resumes from an archive of the finished runs
# kept in git.
#   scripts/reproduce.sh [PART...]          build the corpora the parts need, run what is
#                                           missing (finished runs are kept), then write the page
#   scripts/reproduce.sh --plan [PART...]   only print what would run and how long it should take
#   scripts/reproduce.sh --report           only rewrite the page from the results there are
#   scripts/reproduce.sh --save             only archive the results (see ARCHIVE)
# PARTS (default: tables design scale): tables (sweeps/paper/table*.yaml, on the x4t corpus: x4's
# training set with dev and test sets of 4,000 utterances), design (design-*.yaml, the design
# checks, on x4t), scale (the scale study on x1t, x2t and x4t); cut for time, each runnable on its
# own: rbm-lr (extra-rbm-lr.yaml: Table 2's arm at a quarter of the RBM lr), workers-2-4
# (extra-workers-2-4.yaml: Table 1's 2 and 4 workers), x8 (the scale study's x8t point).
# The criteria the page's verdicts follow, fixed before the runs: sweeps/paper/criteria.yaml.
# Environment: RESULTS (default results/paper), JOBS (runs at once, each of one thread; default
# 1), OUT (the page, default docs/reproduction.md), SWEEPS (default sweeps/paper), DATA (the dir
# holding the digits-xK[t] corpora, default data), MAVG (the binary, default build/bin/mavg: a
# copy keeps a long reproduction on one build while the tree is rebuilt), UNTIL (a time `date -d`
# reads: start no run expected to end after it, so a part ends with every run it began
# finished), ARCHIVE (default archive/paper when RESULTS is the default, else none; empty: none):
# the finished runs as SQL and light files (scripts/reproduce.py), restored into RESULTS when it
# has no database and brought up to date after every run. Round 1's runs are archive/paper-round1.
# One build and one kernel family per round: ARCHIVE/pin.json (below).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=run
parts=()
for a in "$@"; do
  case "$a" in
    --plan | --report | --save) mode="$a" ;;
    tables | design | scale | rbm-lr | workers-2-4 | x8) parts+=("$a") ;;
    *) echo "usage: $0 [--plan|--report|--save] [tables|design|scale|rbm-lr|workers-2-4|x8 ...]" >&2; exit 2 ;;
  esac
done
[ "${#parts[@]}" -gt 0 ] || parts=(tables design scale)
results="${RESULTS:-results/paper}"
jobs="${JOBS:-1}"
out="${OUT:-docs/reproduction.md}"
sweeps="${SWEEPS:-sweeps/paper}"
data="${DATA:-data}"
mavg="${MAVG:-build/bin/mavg}"
if [ -n "${RESULTS+x}" ]; then archive="${ARCHIVE-}"; else archive="${ARCHIVE-archive/paper}"; fi
deadline=
if [ -n "${UNTIL:-}" ]; then
  deadline=$(date -d "$UNTIL" +%s 2>/dev/null) || { echo "UNTIL: '$UNTIL' is not a time date reads" >&2; exit 2; }
  # a bare clock time reads as today's: one given before midnight for after it is already past,
  # and the part would start nothing yet rewrite the page (UNTIL=now, to start nothing, is fine)
  [ "$deadline" -ge "$(($(date +%s) - 60))" ] || {
    echo "UNTIL: '$UNTIL' is $(date -d "@$deadline" '+%F %H:%M'), already past (give a date, e.g. 'tomorrow $UNTIL')" >&2
    exit 2
  }
fi
[ -x "$mavg" ] || { echo "$mavg: not built (scripts/setup.sh)" >&2; exit 1; }
case "$jobs" in '' | *[!0-9]* | 0) echo "JOBS must be a positive integer, not '$jobs'" >&2; exit 2 ;; esac
save() {  # two queues may end runs at once: one save at a time
  [ -z "$archive" ] && return
  mkdir -p "$results"
  flock "$results/.archive.lock" /usr/bin/python3 scripts/reproduce.py save "$results" "$archive"
}
if [ "$mode" = --save ]; then
  [ -n "$archive" ] || { echo "reproduce.sh --save: no archive (ARCHIVE is empty, RESULTS not the default)" >&2; exit 2; }
  save; exit
fi
[ -z "$archive" ] || /usr/bin/python3 scripts/reproduce.py restore "$results" "$archive"

# One build and one GEMM kernel family for the whole round, whichever machine a part runs on:
# ARCHIVE/pin.json, written by the round's first run, names the build's commit and code version
# and the OPENBLAS_CORETYPE every part sets. A part whose build/bin/mavg has another code version
# builds the pinned commit in build-round/ (a worktree of this repository; MAVG, if given, must be
# of the pinned version). The page is laid out by this tree's build (the reports do not change
# what a run computes).
report_mavg="$mavg"
if [ -n "$archive" ] && [ "$mode" != --report ]; then
  pin_line=$(/usr/bin/python3 scripts/reproduce.py pin "$archive" "$mavg" \
    $([ "$mode" = run ] && echo --write)) || exit 1
  pin_code=
  [ -z "$pin_line" ] || read -r pin_commit pin_code pin_core <<< "$pin_line"
  if [ -n "$pin_code" ]; then
    have=$(/usr/bin/python3 scripts/reproduce.py code-version "$mavg") || exit 1
    if [ "$have" != "$pin_code" ]; then
      if [ -n "${MAVG:-}" ]; then
        echo "reproduce.sh: MAVG=$MAVG has code version $have, this round's is $pin_code ($archive/pin.json, commit $pin_commit): unset MAVG to have that commit built" >&2
        exit 1
      fi
      if [ -x build-round/build/bin/mavg ] &&
        [ "$(/usr/bin/python3 scripts/reproduce.py code-version build-round/build/bin/mavg)" = "$pin_code" ]; then
        have=$pin_code
        mavg=build-round/build/bin/mavg
      elif [ "$mode" = --plan ]; then
        echo "reproduce.sh --plan: this round's build (commit $pin_commit, $archive/pin.json) is not built here, and $mavg (code version $have) would count every run of the round as stale: \`scripts/reproduce.sh\` builds it in build-round/ first" >&2
        exit 1
      fi
    fi
    if [ "$have" != "$pin_code" ]; then
      commit=${pin_commit%-dirty}
      git rev-parse -q --verify "$commit^{commit}" > /dev/null || {
        echo "reproduce.sh: this round's commit $pin_commit ($archive/pin.json) is not in this repository" >&2
        exit 1
      }
      echo "[reproduce] building this round's commit $commit in build-round/ (build/bin/mavg has code version $have, the round $pin_code)" >&2
      if [ -d build-round/src/.git ] || [ -f build-round/src/.git ]; then
        git -C build-round/src checkout -q --detach "$commit"
      else
        git worktree prune  # (a build-round/ removed by hand stays listed until pruned)
        git worktree add -q --detach build-round/src "$commit"
      fi
      # shellcheck disable=SC2086  # (MAVG_CMAKE_ARGS: words, as scripts/setup.sh takes them)
      { cmake -S build-round/src -B build-round/build -DCMAKE_BUILD_TYPE=Release ${MAVG_CMAKE_ARGS:-} &&
        cmake --build build-round/build -j "$(nproc)" --target mavg; } > build-round/build.log 2>&1 || {
        echo "reproduce.sh: building commit $commit failed (build-round/build.log)" >&2
        exit 1
      }
      mavg=build-round/build/bin/mavg
      have=$(/usr/bin/python3 scripts/reproduce.py code-version "$mavg") || exit 1
      [ "$have" = "$pin_code" ] || {
        echo "reproduce.sh: commit $pin_commit built with code version $have, not the round's $pin_code" >&2
        exit 1
      }
    fi
    # (the compiler too: another one gives other bits from the same sources)
    /usr/bin/python3 scripts/reproduce.py same-build "$archive" "$mavg" || exit 1
    if [ "$pin_core" != - ]; then
      if [ -n "${OPENBLAS_CORETYPE:-}" ] && [ "$OPENBLAS_CORETYPE" != "$pin_core" ]; then
        echo "reproduce.sh: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE, but this round runs $pin_core kernels ($archive/pin.json): unset it" >&2
        exit 1
      fi
      export OPENBLAS_CORETYPE="$pin_core"
    fi
  fi
fi

# The specs of each part, in the order they run, and the corpora they read (named as
# `reproduce.py corpus-args` builds them: xKt is the xK preset with 4,000-utterance dev and test
# sets, the same in every member).
specs=() corpora=()
for p in "${parts[@]}"; do
  case "$p" in
    tables)
      for s in "$sweeps"/table*.yaml; do specs+=("$s"); done
      corpora+=(x4t) ;;
    design)
      for s in "$sweeps"/design-*.yaml; do specs+=("$s"); done
      corpora+=(x4t) ;;
    scale) specs+=("$sweeps/scale.yaml"); corpora+=(x1t x2t x4t) ;;
    rbm-lr) specs+=("$sweeps/extra-rbm-lr.yaml"); corpora+=(x4t) ;;
    workers-2-4) specs+=("$sweeps/extra-workers-2-4.yaml"); corpora+=(x4t) ;;
    x8) specs+=("$sweeps/scale-x8.yaml"); corpora+=(x8t) ;;
  esac
done
corpora=($(printf '%s\n' "${corpora[@]}" | sort -u))
for s in "${specs[@]}"; do [ -f "$s" ] || { echo "reproduce.sh: $s: no such spec" >&2; exit 1; }; done

if [ "$mode" != --report ]; then
  # Expected time: the runs still to do (new, interrupted, or running but dead; a run shared by
  # two specs counts once), each at its own training frames (its corpus's train frames x the
  # epochs) times the training seconds per trained frame of the completed runs of the same
  # minibatch size, plus its CV passes and decoding by its dev and test sets, plus an RBM
  # stack per replicate, corpus and pretrain settings no ended run made, plus the corpora not
  # built yet; from round 1's runs until a run of this round has completed. Runs that `sweep
  # run` keeps are not to do: done, failed, diverged, collapsed, and stale ones (done by
  # another build; counted apart).
  plans=$(mktemp -d)
  trap 'rm -rf "$plans"' EXIT
  for s in "${specs[@]}"; do
    "$mavg" sweep plan "$s" --results "$results" > "$plans/$(basename "$s" .yaml).plan" ||
      { echo "reproduce.sh: mavg sweep plan $s failed" >&2; exit 1; }
  done
  /usr/bin/python3 scripts/reproduce.py estimate "$results/mavg.db" "$plans" "$jobs" "$data" \
    "$(IFS=,; echo "${corpora[*]}")" "${specs[@]}"
  [ "$mode" = --plan ] && exit 0
  # The corpora first (measured on 2 cores: x1 5 minutes, x2 9, x4 15 on a shared machine; x4 in
  # 3.3 minutes on an idle AMD EPYC; x4t, with 6,600 more dev and test utterances: see --plan).
  for k in "${corpora[@]}"; do
    if [ ! -s "$data/digits-$k/train/feats.scp" ]; then
      echo "[reproduce] building $data/digits-$k" >&2
      # shellcheck disable=SC2046  # (the arguments are words)
      "$mavg" -q data digits $(/usr/bin/python3 scripts/reproduce.py corpus-args "$k") \
        --out "$data/digits-$k" --force
    fi
  done
  [ -z "$archive" ] || /usr/bin/python3 scripts/reproduce.py corpora "$archive"
  # JOBS queues side by side (the sweeps share the database; a run two specs share is made once),
  # each run of one thread: the same per-frame compute for every run whatever JOBS is. Every
  # queue goes through the specs in order, starting the next run no queue has started (`sweep
  # run` claims it), so one spec keeps JOBS runs going. One run at a time per queue, so the
  # archive is brought up to date after each and UNTIL is checked before each.
  run_queue() {
    for s in "${specs[@]}"; do
      echo "[reproduce] $s" >&2
      while :; do
        # The run it would start next, as sweep run itself chooses it.
        "$mavg" sweep run "$s" --results "$results" --jobs 1 --threads 1 --max-runs 1 --dry-run \
          > "$plans/next$1.txt" || { echo "reproduce.sh: mavg sweep run $s --dry-run failed" >&2; return 1; }
        read -r id seconds < <(/usr/bin/python3 scripts/reproduce.py next "$results/mavg.db" \
          "$plans/next$1.txt" "$s"; echo) || true
        [ -n "$id" ] || break
        if [ -n "$deadline" ] && [ $(($(date +%s) + seconds)) -gt "$deadline" ]; then
          # (a shorter run of a later spec may still fit)
          echo "[reproduce] queue $1: stopping before $s's run $id (about $((seconds / 60)) min): it would end after UNTIL" >&2
          break
        fi
        # (the dry run's pick: two queues asking at once see the same one; the second is told
        # it is claimed, and asks again below)
        echo "[reproduce] queue $1: run (about $((seconds / 60)) min; next in line: $id)" >&2
        # A failed, diverged or collapsed run is a result, not an error of this script.
        out=$("$mavg" -q sweep run "$s" --results "$results" --jobs 1 --threads 1 --max-runs 1 2>&1) || true
        printf '%s\n' "$out"
        save
        # The run it picked was claimed by another queue a moment before (both asked at once):
        # ask again, once per run, for the one after it; nothing launchable otherwise (the next
        # run is another queue's, still running): the next spec.
        case "$out" in
          *"being launched by another controller"*": launched 0"*)
            [ "$id" = "${skipped:-}" ] && break
            skipped=$id
            continue ;;
          *": launched 0"*) break ;;
        esac
      done
    done
  }
  for ((q = 0; q < jobs; q++)); do run_queue "$q" & done
  wait
fi
if [ ! -f "$results/mavg.db" ]; then
  echo "[reproduce] no runs yet ($results/mavg.db): $out left as it is" >&2
  [ "$mode" = --report ] && exit 1
  exit 0
fi
/usr/bin/python3 analysis/reproduction.py "$results/mavg.db" --out "$out" \
  --figures "$(dirname "$out")/reproduction" --mavg "$report_mavg"
