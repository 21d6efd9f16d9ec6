#!/usr/bin/env bash
# Fuzzes mavg's readers with libFuzzer under AddressSanitizer + UndefinedBehaviorSanitizer.
#
#   scripts/fuzz.sh                      every target for 10 minutes each
#   scripts/fuzz.sh --seconds 3600 model kaldi_archive
#   scripts/fuzz.sh --jobs 2             two targets at a time
#   scripts/fuzz.sh --list               the targets (tests/fuzz/*_fuzz.cpp)
#
# Builds (Clang, -DMAVG_FUZZ=ON, CPU-only) into MAVG_FUZZ_BUILD_DIR (default build-asan, the
# sanitizer build scripts/test.sh --sanitize uses). The corpus of each target grows in
# BUILD/fuzz/corpus/<target> from run to run; every run also reads the seeds (fuzz_tool seeds:
# the real fixtures) and tests/fuzz/regressions/<target>/. A finding (crash, sanitizer report,
# an exception other than mavg::Error, a multi-line error, an allocation over 2 GB, an input
# taking over 10 s) is saved under BUILD/fuzz/findings/<target>/ and the script exits 1 with
# the command that replays it. Once fixed, copy the input into tests/fuzz/regressions/<target>/:
# the fuzz.replay test then replays it in every build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=600 jobs=1 build=1 list=0
build_dir="${MAVG_FUZZ_BUILD_DIR:-build-asan}"
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --build-dir) build_dir=$2; shift ;;
    --no-build) build=0 ;;
    --list) list=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
case "$seconds" in ''|*[!0-9]*) echo "fuzz.sh: --seconds takes a whole number, got '$seconds'" >&2; exit 2 ;; esac
case "$jobs" in ''|*[!0-9]*|0) echo "fuzz.sh: --jobs takes a number >= 1, got '$jobs'" >&2; exit 2 ;; esac

all=$(ls tests/fuzz/*_fuzz.cpp | sed 's|.*/||; s|_fuzz\.cpp$||')
if [ "$list" = 1 ]; then echo "$all"; exit 0; fi
[ "${#targets[@]}" -gt 0 ] || read -r -a targets <<< "$(echo $all)"
for t in "${targets[@]}"; do
  grep -qx "$t" <<< "$all" || { echo "fuzz.sh: no target '$t' (one of: $(echo $all))" >&2; exit 2; }
done

if [ "$build" = 1 ]; then
  scripts/setup.sh --no-build
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang \
      -DCMAKE_CXX_COMPILER=clang++ -DMAVG_FUZZ=ON -DMAVG_WITH_CUDA=OFF
  fi
  cmake --build "$build_dir" -j "$(nproc)" --target fuzz_tool $(printf 'fuzz_%s ' "${targets[@]}")
fi
bin="$build_dir/fuzz/bin"
tool="$build_dir/tests/fuzz_tool"
[ -x "$tool" ] || { echo "fuzz.sh: $tool missing (configure with -DMAVG_FUZZ=ON)" >&2; exit 1; }
work="$build_dir/fuzz"
seeds="$work/seeds.$$"
rm -rf "$seeds"
"$tool" seeds "$seeds"
trap 'rm -rf "$seeds"' EXIT

# One target: fuzz for `seconds`; 0 when nothing was found.
fuzz_one() {
  local t=$1
  local exe="$bin/fuzz_$t" corpus="$work/corpus/$t" findings="$work/findings/$t"
  [ -x "$exe" ] || { echo "fuzz.sh: $exe missing (built with -DMAVG_FUZZ=ON?)" >&2; return 1; }
  mkdir -p "$corpus" "$findings"
  local log="$work/$t.log" rc=0
  # detect_leaks=0: the readers' error paths are what is fuzzed, and static caches of the
  # libraries (yaml-cpp, spdlog) are reported as leaks by every input.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$findings/" \
      "$corpus" "$seeds/$t" $( [ -d "tests/fuzz/regressions/$t" ] && echo "tests/fuzz/regressions/$t" ) \
      > "$log" 2>&1 || rc=$?
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  if [ "$rc" -ne 0 ]; then
    local input
    input=$(ls -t "$findings" 2>/dev/null | head -1)
    echo "fuzz.sh: $t: FINDING after $runs inputs (exit $rc): $findings/$input"
    grep -E 'ERROR: |fuzz finding|runtime error|SUMMARY' "$log" | head -5 | sed 's/^/  /'
    echo "  replay: $exe $findings/$input   (log: $log)"
    return 1
  fi
  echo "fuzz.sh: $t: no finding in $runs inputs (${seconds}s; corpus $(ls "$corpus" | wc -l) files)"
}

status=0
running=0
pids=()
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  pids+=($!)
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
    running=$((running - 1))
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit "$status"
