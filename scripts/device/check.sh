#!/usr/bin/env bash
# check.sh [--out DIR] [--budget-s 330] [--build BUILD_DIR] [--only STEP,...] [--work DIR] --
# mavg's GPU checks, in one go, on the GPU machine.
#
# Where: a machine with an NVIDIA GPU, its driver and the CUDA toolkit (/usr/local/cuda), and
# python3 -- but none of our Debian libraries. Either
#   * from a device bundle (scripts/device/bundle.sh made it; copied over):
#       device-bundle/check.sh --out DIR         (or device-bundle/scripts/device/check.sh)
#     uses the bundle's bin/ and lib/ (its xz-compressed libraries are unpacked into the
#     scratch folder, see unpack.sh; the bundle is not changed);
#   * or from a repository checkout with a built tree:  scripts/device/check.sh --out DIR
#     uses build/bin/mavg and build/tests/unit_* and gpu_* (or --build BUILD_DIR).
# LD_LIBRARY_PATH becomes <bundle's libs>:/usr/local/cuda/lib64:$LD_LIBRARY_PATH. On a machine
# without a visible CUDA device every GPU step is recorded as "skip" and the script exits 0 (so
# it can be tried on the build machine); it exits 1 if any step FAILED.
#
# Steps, in order, each with status pass/fail/skip, seconds and a note; each has a timeout, and
# a running budget (--budget-s, default 330 s: the whole run stays under 6 minutes) skips the
# remaining steps, with a note, once it is spent:
#   device_query      nvidia-smi --query-gpu=...; mavg devices --json (count 0: GPU steps skip)
#   unit_gpu          every unit_* and gpu_* with --gtest_filter=<gpu_tests.filter> --gtest_brief=1
#   gpu_epoch         gpu_epoch.sh: one epoch on cuda vs cpu, CV loss / accuracy compared
#   memcheck          compute-sanitizer --tool memcheck over a short digits.yaml run on cuda
#                     (skip if compute-sanitizer is absent or cannot attach)
#   bench_train_sgd, bench_train_ngsgd, bench_train_tf32   mavg bench train, paper-net.yaml
#   bench_replicas    mavg bench replicas --workers 16
#   bench_average     mavg bench average
# Step timeouts (s): device_query 20, unit_gpu 60 (all executables together), gpu_epoch 60,
# memcheck 60, bench_train_* 25 each, bench_replicas 35, bench_average 25.
# DIR (default ./device-check-out) receives three files, all a device runner can bring back:
#   summary.json  steps, the device query, the key benchmark numbers ("bench") and every
#                 benchmark's whole JSON ("bench_raw"); rewritten after every step
#   summary.txt   the same on one page
#   logs.txt      every step's command output, the last 200 lines of each
# --only STEP,... runs just those steps (device_query always runs; the others are recorded as
# skip), e.g. to rerun the benchmarks alone. Scratch files go to a temporary folder (--work DIR
# to keep them there instead: run dirs, data, the benchmarks' JSON files).
set -euo pipefail
T0=$(date +%s.%N)  # the budget counts from here

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUTDIR=./device-check-out
BUDGET=330
BUILD=""
WORK=""
ONLY=""
die() { echo "check.sh: error: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || die "--out needs a value"; OUTDIR=$2; shift 2 ;;
    --out=*) OUTDIR=${1#*=}; shift ;;
    --budget-s) [ $# -ge 2 ] || die "--budget-s needs a value"; BUDGET=$2; shift 2 ;;
    --budget-s=*) BUDGET=${1#*=}; shift ;;
    --build) [ $# -ge 2 ] || die "--build needs a value"; BUILD=$2; shift 2 ;;
    --build=*) BUILD=${1#*=}; shift ;;
    --only) [ $# -ge 2 ] || die "--only needs a value"; ONLY=$2; shift 2 ;;
    --only=*) ONLY=${1#*=}; shift ;;
    --work) [ $# -ge 2 ] || die "--work needs a value"; WORK=$2; shift 2 ;;
    --work=*) WORK=${1#*=}; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$BUDGET" =~ ^[0-9]+$ ]] || die "--budget-s must be a whole number of seconds"
command -v python3 >/dev/null || die "python3 is needed (summary, tiny data)"
command -v timeout >/dev/null || die "timeout (coreutils) is needed"

if [ -n "$WORK" ]; then
  mkdir -p "$WORK"
  WORK=$(cd "$WORK" && pwd)
  rm -rf "${WORK:?}/logs" "$WORK/steps.tsv" "$WORK/meta.txt" "$WORK"/bench_*.json "$WORK/unit_gpu.tsv" \
         "$WORK/devices.json" "$WORK/nvidia_smi.csv" "$WORK/gpu_epoch" "$WORK/memcheck" "${WORK:?}/lib"
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/mavg-check.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi

# ---- what to run: a bundle or a built tree ---------------------------------------------------
shopt -s nullglob
if [ -z "$BUILD" ] && [ -f "$ROOT/bin/mavg" ]; then
  MODE=bundle
  for b in "$ROOT"/bin/*; do [ -x "$b" ] || chmod u+x "$b" 2>/dev/null || true; done  # copies may drop the x bit
  MAVG="$ROOT/bin/mavg"
  TESTS=("$ROOT"/bin/unit_* "$ROOT"/bin/gpu_*)
  # The compressed libraries are unpacked into the scratch folder: the bundle itself stays
  # as it came (and small enough to copy again).
  LIBDIR=$(bash "$HERE/unpack.sh" "$ROOT" "$WORK/lib") || die "could not unpack $ROOT/lib"
else
  MODE=build
  BUILD=${BUILD:-$ROOT/build}
  [ -d "$BUILD" ] || die "no bundle here ($ROOT/bin/mavg) and no build dir '$BUILD'"
  BUILD=$(cd "$BUILD" && pwd)
  MAVG="$BUILD/bin/mavg"
  TESTS=()
  if [ -d "$BUILD/tests" ]; then
    while IFS= read -r t; do TESTS+=("$t"); done \
      < <(find "$BUILD/tests" -maxdepth 1 -type f -executable \( -name 'unit_*' -o -name 'gpu_*' \) | LC_ALL=C sort)
  fi
  LIBDIR=""
fi
[ -x "$MAVG" ] || die "'$MAVG' not found"
cuda_dirs=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] || continue
  case ":$cuda_dirs:" in *":$(readlink -f "$d"):"*) continue ;; esac
  cuda_dirs="${cuda_dirs:+$cuda_dirs:}$(readlink -f "$d")"
done
export LD_LIBRARY_PATH="${LIBDIR:+$LIBDIR:}${cuda_dirs:-/usr/local/cuda/lib64}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
# CUDA libraries (libcudart, libcublas, ...) the loader still cannot find: look for them where
# else a CUDA install keeps them (other /usr/local/cuda-* trees, the system lib dir, Python's
# nvidia-* wheels) and add the folders that hold them.
EXTRA_LIB_DIRS=""
missing_libs=$(ldd "$MAVG" 2>/dev/null | awk '$2 == "=>" && $3 == "not" {print $1}' | sort -u || true)
if [ -n "$missing_libs" ]; then
  search=(/usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib /usr/lib/x86_64-linux-gnu /usr/local/lib)
  while IFS= read -r sp; do [ -d "$sp/nvidia" ] && search+=("$sp/nvidia"); done \
    < <(python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null || true)
  for lib in $missing_libs; do
    hit=$(find "${search[@]}" -maxdepth 4 -name "$lib" 2>/dev/null | head -1 || true)
    [ -n "$hit" ] || continue
    d=$(dirname "$hit")
    case ":$LD_LIBRARY_PATH:" in *":$d:"*) ;; *) export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"; EXTRA_LIB_DIRS="$EXTRA_LIB_DIRS $d" ;; esac
  done
fi
FILTER='*cuda*:*Cuda*:*CUDA*:*GPU*:*Gpu*'
if [ -f "$HERE/gpu_tests.filter" ]; then
  f=$(grep -v '^#' "$HERE/gpu_tests.filter" | grep -v '^[[:space:]]*$' | head -1 || true)
  [ -n "$f" ] && FILTER=$f
fi

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
rm -f "$OUTDIR/logs.txt" "$OUTDIR/summary.json" "$OUTDIR/summary.txt"
mkdir -p "$WORK/logs"
: > "$WORK/steps.tsv"
: > "$OUTDIR/logs.txt"

# ---- bookkeeping -----------------------------------------------------------------------------
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
budget_left() { awk -v a="$T0" -v b="$(date +%s.%N)" -v B="$BUDGET" 'BEGIN { printf "%d", B - (b - a) }'; }
meta() { printf '%s=%s\n' "$1" "$2" >> "$WORK/meta.txt"; }
summarize() { meta elapsed_s "$(since "$T0")"; python3 "$HERE/summarize.py" "$WORK" "$OUTDIR" || echo "check.sh: summarize.py failed" >&2; }
one_line() { tr '\t\r\n' '   ' | sed 's/  */ /g; s/^ //; s/ $//' | cut -c1-400; }

# record NAME STATUS SECONDS NOTE [LOG]
record() {
  local note
  note=$(printf '%s' "$4" | one_line)
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$note" >> "$WORK/steps.tsv"
  {
    echo "===== $1: $2 ($3 s) -- $note"
    if [ -n "${5:-}" ] && [ -f "$5" ]; then
      local n; n=$(wc -l < "$5")
      [ "$n" -gt 200 ] && echo "[... $((n - 200)) earlier lines dropped]"
      tail -n 200 "$5"
    fi
    echo
  } >> "$OUTDIR/logs.txt"
  printf '[%6ss] %-18s %-4s (%s s) %s\n' "$(since "$T0")" "$1" "$2" "$3" "$note"
  summarize
}

# run_step NAME MAX_SECONDS FUNCTION: FUNCTION runs with STEP_TIMEOUT = min(MAX, budget left),
# its output in LOG; it sets NOTE and returns 0 (pass), 77 (skip) or anything else (fail).
# (set -e does not apply inside it: it checks what it runs itself.)
CURRENT=""
STEP_T0=$T0
run_step() {
  local name=$1 max=$2 fn=$3 left rc=0 st
  if [ -n "$ONLY" ] && [ "$name" != device_query ] && [[ ",$ONLY," != *",$name,"* ]]; then
    record "$name" skip 0.0 "not selected (--only $ONLY)"
    return 0
  fi
  left=$(budget_left)
  if [ "$left" -lt 5 ]; then
    record "$name" skip 0.0 "budget exhausted ($left s of $BUDGET s left)"
    return 0
  fi
  STEP_TIMEOUT=$((max < left ? max : left))
  LOG="$WORK/logs/$name.log"
  NOTE=""
  CURRENT=$name
  STEP_T0=$(date +%s.%N)
  "$fn" > "$LOG" 2>&1 || rc=$?
  CURRENT=""
  case "$rc" in 0) st=pass ;; 77) st=skip ;; *) st=fail ;; esac
  [ -n "$NOTE" ] || NOTE="exit status $rc"
  record "$name" "$st" "$(since "$STEP_T0")" "$NOTE" "$LOG"
}
on_signal() {
  trap - TERM INT
  [ -n "$CURRENT" ] && record "$CURRENT" fail "$(since "$STEP_T0")" "interrupted (signal) while running" "${LOG:-}"
  summarize
  exit 143
}
trap on_signal TERM INT

# tmo CMD...: CMD under the step's timeout (SIGKILL 5 s after SIGTERM); 124 when it ran out.
tmo() { timeout -k 5 "$STEP_TIMEOUT" "$@"; }
timed_out_note() { NOTE="timed out after $STEP_TIMEOUT s${1:+: $1}"; }
need_gpu() {
  if [ "${DEVICE_COUNT:-0}" -gt 0 ]; then return 0; fi
  NOTE="no CUDA device visible"
  return 1
}
# The last error-looking line of a log, else its last lines (for notes of failed commands).
err_tail() {
  local e
  e=$(grep -E 'error|Error|ERROR|FAIL|what\(\)|Aborted|Segmentation' "$1" | tail -2 || true)
  [ -n "$e" ] && printf '%s' "$e" || tail -n 3 "$1"
}

meta mode "$MODE"
meta mavg "$MAVG"
meta root "$ROOT"
meta budget_s "$BUDGET"
meta started "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
meta host "$(hostname 2>/dev/null || echo unknown)"
meta nproc "$(nproc 2>/dev/null || echo unknown)"
meta ld_library_path "$LD_LIBRARY_PATH"
[ -z "$EXTRA_LIB_DIRS" ] || meta extra_lib_dirs "${EXTRA_LIB_DIRS# }"
meta gtest_filter "$FILTER"
echo "check.sh: $MODE mode, mavg $MAVG, budget $BUDGET s, out $OUTDIR"

# ---- a. device query ---------------------------------------------------------------------------
DEVICE_COUNT=0
step_device_query() {
  local notes=() smi_count=0 glibc needed nf help rc=0
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}' || true)
  meta glibc "${glibc:-unknown}"
  if [ -f "$ROOT/MANIFEST.txt" ]; then
    needed=$(grep -oE 'glibc >= [0-9.]+' "$ROOT/MANIFEST.txt" | head -1 | awk '{print $3}' || true)
    if [ -n "$needed" ]; then
      meta glibc_needed "$needed"
      if [ -n "$glibc" ] && [ "$(printf '%s\n%s\n' "$glibc" "$needed" | sort -V | head -1)" != "$needed" ]; then
        notes+=("target glibc $glibc is older than the $needed the bundle needs")
      fi
    fi
  fi
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "--- ldd $MAVG"
  ldd "$MAVG" 2>&1 || true
  nf=$(ldd "$MAVG" 2>&1 | awk '$2 == "=>" && $3 == "not" {print $1}' | sort -u | tr '\n' ' ' | sed 's/ $//' || true)
  if [ -n "$nf" ]; then meta libs_not_found "$nf"; notes+=("libraries not found: $nf"); fi

  if command -v nvidia-smi >/dev/null; then
    echo "--- nvidia-smi"
    if tmo nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv \
         > "$WORK/nvidia_smi.csv" 2>&1; then
      cat "$WORK/nvidia_smi.csv"
      smi_count=$(($(grep -c . "$WORK/nvidia_smi.csv") - 1))
      notes+=("nvidia-smi: $(tail -n +2 "$WORK/nvidia_smi.csv" | head -1)")
    else
      cat "$WORK/nvidia_smi.csv"
      notes+=("nvidia-smi failed: $(tail -1 "$WORK/nvidia_smi.csv")")
      rm -f "$WORK/nvidia_smi.csv"
    fi
  else
    notes+=("no nvidia-smi")
  fi

  echo "--- $MAVG devices --json"
  help=$(tmo "$MAVG" --help 2>&1) || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "$help"
    DEVICE_COUNT=$smi_count
    NOTE="mavg does not start (exit $rc): $(tail -1 <<< "$help"); ${notes[*]}"
    meta device_count "$DEVICE_COUNT"
    return 1
  fi
  tmo "$MAVG" devices --json "$WORK/devices.json" || rc=$?
  if [ "$rc" -ne 0 ] || [ ! -s "$WORK/devices.json" ]; then
    DEVICE_COUNT=$smi_count
    NOTE="mavg devices --json failed (exit $rc); taking nvidia-smi's count $smi_count; ${notes[*]}"
    rm -f "$WORK/devices.json"
    meta device_count "$DEVICE_COUNT"
    return 1
  fi
  cat "$WORK/devices.json"; echo
  local parsed
  if ! parsed=$(python3 - "$WORK/devices.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(d["count"])
names = "; ".join(f"{x.get('index', i)}: {x.get('name', '?')}, cc {x.get('compute_capability', '?')}, "
                  f"{x.get('memory_bytes', 0) / 2**30:.0f} GiB" for i, x in enumerate(d.get("devices", [])))
print(n)
print(names)
PY
  ); then
    DEVICE_COUNT=$smi_count
    NOTE="mavg devices --json wrote unreadable JSON; ${notes[*]}"
    meta device_count "$DEVICE_COUNT"
    return 1
  fi
  DEVICE_COUNT=$(head -1 <<< "$parsed")
  meta device_count "$DEVICE_COUNT"
  local names; names=$(tail -n +2 <<< "$parsed")
  NOTE="mavg devices: count $DEVICE_COUNT${names:+ ($names)}; glibc ${glibc:-?}; ${notes[*]}"
  if [ -f "$WORK/nvidia_smi.csv" ] && [ "$smi_count" -ne "$DEVICE_COUNT" ]; then
    NOTE="$NOTE; but nvidia-smi lists $smi_count"
  fi
  return 0
}
run_step device_query 20 step_device_query

# ---- b. GPU unit tests, then one epoch cuda vs cpu ---------------------------------------------
step_unit_gpu() {
  need_gpu || return 77
  if [ "${#TESTS[@]}" -eq 0 ]; then NOTE="no unit_*/gpu_* test executables found"; return 1; fi
  local t0 t rc p f s total_p=0 total_f=0 total_s=0 empty=0 bad=() left
  t0=$(date +%s)
  : > "$WORK/unit_gpu.tsv"
  for t in "${TESTS[@]}"; do
    left=$((STEP_TIMEOUT - ($(date +%s) - t0)))
    if [ "$left" -lt 3 ]; then bad+=("$(basename "$t"): not run (step time spent)"); continue; fi
    echo "=== $(basename "$t") --gtest_filter=$FILTER"
    rc=0
    timeout -k 5 "$left" "$t" --gtest_filter="$FILTER" --gtest_brief=1 \
      > "$WORK/unit_one.log" 2>&1 || rc=$?
    cat "$WORK/unit_one.log"
    p=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?\..*/\1/p' "$WORK/unit_one.log" | tail -1)
    f=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) tests?,.*/\1/p' "$WORK/unit_one.log" | tail -1)
    s=$(sed -nE 's/^\[  SKIPPED \] ([0-9]+) tests?,.*/\1/p' "$WORK/unit_one.log" | tail -1)
    p=${p:-0} f=${f:-0} s=${s:-0}
    printf '%s\t%s\t%s\t%s\t%s\n' "$(basename "$t")" "$rc" "$p" "$f" "$s" >> "$WORK/unit_gpu.tsv"
    total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
    [ $((p + f + s)) -eq 0 ] && [ "$rc" -eq 0 ] && empty=$((empty + 1))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then bad+=("$(basename "$t"): timed out")
    elif [ "$f" -gt 0 ]; then bad+=("$(basename "$t"): $f failed")
    elif [ "$rc" -ne 0 ]; then bad+=("$(basename "$t"): exit $rc")
    fi
  done
  NOTE="$total_p passed, $total_f failed, $total_s skipped in ${#TESTS[@]} executables ($empty matched nothing)"
  if [ "${#bad[@]}" -gt 0 ]; then NOTE="$NOTE; ${bad[*]}"; return 1; fi
  return 0
}
run_step unit_gpu 60 step_unit_gpu

step_gpu_epoch() {
  need_gpu || return 77
  local rc=0
  tmo bash "$HERE/gpu_epoch.sh" "$MAVG" "$WORK/gpu_epoch" || rc=$?
  case "$rc" in
    0) NOTE=$(grep -E '^PASS' "$LOG" | tail -1) ;;
    77) NOTE=$(grep '^skipped' "$LOG" | tail -1) ;;
    124 | 137) timed_out_note ;;
    *) NOTE=$(grep -E '^FAIL' "$LOG" | tail -1); [ -n "$NOTE" ] || NOTE=$(err_tail "$LOG") ;;
  esac
  return "$rc"
}
run_step gpu_epoch 60 step_gpu_epoch

# ---- c. compute-sanitizer memcheck over a short training run ------------------------------------
step_memcheck() {
  need_gpu || return 77
  local cs rc=0 summary
  cs=$(command -v compute-sanitizer || true)
  for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [ -n "$cs" ] || { [ -x "$c" ] && cs=$c; }
  done
  if [ -z "$cs" ]; then NOTE="compute-sanitizer not found (PATH, /usr/local/cuda/bin)"; return 77; fi
  # Short: digits.yaml's network (4 x 512 sigmoid, minibatch 256) for one epoch of a ~4k-frame
  # synthetic corpus (about 16 minibatches), no test set, hence no decoding.
  python3 "$HERE/tiny_data.py" "$WORK/memcheck/data" --train-utts 40 --dev-utts 10 --seed 2 ||
    { NOTE="tiny_data.py failed"; return 1; }
  tmo "$cs" --tool memcheck --error-exitcode 9 "$MAVG" train "$ROOT/configs/digits.yaml" \
    --set device=cuda --set schedule.epochs=1 \
    --set data.train="$WORK/memcheck/data/train" --set data.dev="$WORK/memcheck/data/dev" \
    --set data.test= --out "$WORK/memcheck/run" --no-progress --cache-dir '' || rc=$?
  summary=$(grep -E 'ERROR SUMMARY' "$LOG" | tail -1 | sed 's/^=* *//')
  # Where the sanitizer cannot instrument this GPU (seen under gVisor: "Device not supported",
  # then error 999 at the first allocation) the run fails for that reason alone: skip, not fail.
  if [ "$rc" -ne 0 ] && grep -qiE 'Unable to attach|not supported' "$LOG"; then
    NOTE="compute-sanitizer cannot run here: $(grep -iE 'Unable to attach|not supported' "$LOG" | head -1 | sed 's/^=* *//')"
    return 77
  fi
  case "$rc" in
    0) NOTE="${summary:-no ERROR SUMMARY line}" ;;
    9) NOTE="memcheck found errors: $summary; $(grep -m1 -E '^========= (Invalid|Program hit|Uninitialized|Leaked)' "$LOG" || true)" ;;
    124 | 137) timed_out_note "memcheck is slow; inconclusive" ;;
    *) NOTE="exit $rc: $(err_tail "$LOG")" ;;
  esac
  return "$rc"
}
run_step memcheck 60 step_memcheck

# ---- d. GPU benchmarks -------------------------------------------------------------------------
# bench NAME SUBCOMMAND ARGS...: mavg bench SUBCOMMAND ARGS --json WORK/bench_NAME.json
bench() {
  need_gpu || return 77
  local name=$1 sub=$2 rc=0 json="$WORK/bench_$1.json"
  shift 2
  tmo "$MAVG" bench "$sub" "$@" --json "$json" || rc=$?
  case "$rc" in
    0) NOTE=$(python3 - "$json" "$name" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"no JSON: {e}"); sys.exit()
def find(o, k):
    if isinstance(o, dict):
        if k in o: return o[k]
        o = list(o.values())
    if isinstance(o, list):
        for v in o:
            r = find(v, k)
            if r is not None: return r
    return None
keys = {"replicas": ["per_frame_ratio"], "average": ["host_staged_s", "device_s"]}.get(
    sys.argv[2], ["frames_per_s", "fraction_of_sgemm", "sgemm_gflops_per_s"])
print(", ".join(f"{k} {find(d, k):.4g}" if isinstance(find(d, k), (int, float)) else f"{k} ?"
                for k in keys))
PY
) ;;
    124 | 137) timed_out_note ;;
    *) NOTE="exit $rc: $(err_tail "$LOG")" ;;
  esac
  return "$rc"
}
PAPER="$ROOT/configs/paper-net.yaml"
step_bench_train_sgd() { bench train_sgd train --config "$PAPER" --set device=cuda --set optimizer.type=sgd --repeats 10; }
step_bench_train_ngsgd() { bench train_ngsgd train --config "$PAPER" --set device=cuda --set optimizer.type=ngsgd --repeats 10; }
step_bench_train_tf32() { bench train_tf32 train --config "$PAPER" --set device=cuda --set optimizer.type=sgd --set device_options.tf32=true --repeats 10; }
step_bench_replicas() { bench replicas replicas --config "$PAPER" --set device=cuda --workers 16; }
step_bench_average() { bench average average --config "$PAPER" --set device=cuda; }
run_step bench_train_sgd 25 step_bench_train_sgd
run_step bench_train_ngsgd 25 step_bench_train_ngsgd
run_step bench_train_tf32 25 step_bench_train_tf32
run_step bench_replicas 35 step_bench_replicas
run_step bench_average 25 step_bench_average

# ---- summary -----------------------------------------------------------------------------------
summarize
echo
cat "$OUTDIR/summary.txt"
if awk -F'\t' '$2 == "fail" { found = 1 } END { exit !found }' "$WORK/steps.tsv"; then
  exit 1
fi
exit 0
