#!/usr/bin/env bash
# check.sh [--out DIR] [--budget-s 300] [--build BUILD_DIR] [--only STEP,...] [--work DIR]
#          [--no-device-ok] [--rehearse] -- mavg's GPU checks, in one go, on the GPU machine.
#
# Where: a machine with an NVIDIA GPU, its driver and the CUDA toolkit (/usr/local/cuda), and
# python3 -- but none of our Debian libraries. Either
#   * from a device bundle (scripts/device/bundle.sh made it; copied over):
#       device-bundle/check.sh --out DIR         (or device-bundle/scripts/device/check.sh)
#     uses the bundle's bin/ and lib/ (its xz-compressed libraries and test executables are
#     unpacked into the scratch folder, see unpack.sh; the bundle is not changed);
#   * or from a repository checkout with a built tree:  scripts/device/check.sh --out DIR
#     uses build/bin/mavg and build/tests/unit_* and gpu_backend (or --build BUILD_DIR).
# Only mavg and the test executables run with <bundle's libs>:<CUDA's lib dirs>:$LD_LIBRARY_PATH;
# python3, nvidia-smi and compute-sanitizer keep the caller's (the bundle's libstdc++ and the
# others are Debian's, and would replace the target's own under them).
#
# Steps, in order. Each has a limit of its own, and the limits add up to less than the budget
# (--budget-s, default 300 s: the whole run stays within 5 minutes; the plan and an estimate of
# the time on an H200 are printed at the start). A step that would outlive the budget gets what
# is left of it, and one with under 5 s left is not run.
#   device_query  nvidia-smi, mavg devices --json, the CUDA runtime, cuBLAS and driver versions
#   unit_gpu      gtest filter "tests" of gpu_tests.filter over gpu_backend first (its own
#                 limit), then over every unit_* (their /cuda instances; own limit)
#   gpu_epoch     gpu_epoch.sh: one epoch on cuda vs cpu, CV loss / accuracy compared
#   memcheck      compute-sanitizer --tool memcheck over a short digits.yaml run on cuda, then
#                 --tool initcheck over gpu_backend with filter "initcheck" of gpu_tests.filter
#   bench_train_sgd, bench_train_ngsgd, bench_train_tf32   mavg bench train, paper-net.yaml
#   bench_replicas    mavg bench replicas --workers 16
#   bench_average     mavg bench average
# Verdicts (summarize.py decides them; `status` in summary.json):
#   pass, fail, skip (no device with --no-device-ok, not selected, no compute-sanitizer), and
#   inconclusive: a step cut by the budget or not run for want of it, a sanitizer that ran out of
#   its own time (it is slow, not wrong), a check interrupted by a signal.
#   A step that ran out of its own limit otherwise fails. With a CUDA device visible, a skipped
#   test in unit_gpu, gpu_backend running no test, or no `/cuda` test instance run, fails; so does
#   a GPU step that skips. Without a visible device device_query fails unless --no-device-ok
#   (then every GPU step is skipped), so a machine whose GPU is hidden cannot pass.
# Exit status: 0 nothing failed or was inconclusive; 1 a step failed; 3 inconclusive (nothing
# failed); 2 bad arguments.
# DIR (default ./device-check-out) receives three files, all a device runner can bring back:
#   summary.json  the device (name, driver, CUDA runtime, cuBLAS), every step's verdict, seconds,
#                 limit and note, the tests' counts, failed and skipped names and each failing
#                 executable's first error, the benchmarks' figures beside their references
#                 (SGEMM rate of the same GEMMs, one worker's frames/s) and their whole JSON;
#                 rewritten after every step
#   summary.txt   the same on one page
#   logs.txt      every step's command output: short logs whole; long ones their first lines,
#                 their first error with its context, and their last lines
# --only STEP,... runs just those steps (device_query always runs; the others are recorded as
# skip), e.g. to rerun the benchmarks alone. Scratch files go to a temporary folder (--work DIR
# to keep them there instead: run dirs, data, the benchmarks' JSON files, every log whole).
# --rehearse runs every step's commands on the CPU instead (no device needed): each mavg line that
# names device=cuda is first accepted by `mavg config check` as written, then run with device=cpu,
# no TF32, a small network and one repeat; the sanitizers' targets run bare; the tests run with
# the same filters. tests/e2e/device_scripts.sh rehearses so a typo costs CI time, not GPU time.
set -euo pipefail
T0=$(date +%s.%N)  # the budget counts from here

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUTDIR=./device-check-out
BUDGET=300
BUILD=""
WORK=""
ONLY=""
NO_DEVICE_OK=""
REHEARSE=""
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
    --no-device-ok) NO_DEVICE_OK=1; shift ;;
    --rehearse) REHEARSE=1; NO_DEVICE_OK=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$BUDGET" =~ ^[0-9]+$ ]] || die "--budget-s must be a whole number of seconds"
command -v python3 >/dev/null || die "python3 is needed (summary, tiny data)"
command -v timeout >/dev/null || die "timeout (coreutils) is needed"

# ---- the plan: each step's own limit and its expected seconds on an H200 ----------------------
# unit_gpu's and memcheck's limits are their parts' added: gpu_backend 40 + unit_* 45, and
# memcheck 50 + initcheck 25. The expectations: CUDA start-up ~1 s per process (15 test
# executables), the paper network's step ~5 ms (so the benchmarks are mostly start-up and the
# host's parameter initialisation), the sanitizer ~10-50x slower on the kernels it instruments.
STEPS=(device_query unit_gpu gpu_epoch memcheck bench_train_sgd bench_train_ngsgd bench_train_tf32 bench_replicas bench_average)
declare -A LIMIT=([device_query]=15 [unit_gpu]=85 [gpu_epoch]=35 [memcheck]=75 [bench_train_sgd]=15
                  [bench_train_ngsgd]=15 [bench_train_tf32]=15 [bench_replicas]=20 [bench_average]=12)
declare -A EXPECT=([device_query]=4 [unit_gpu]=25 [gpu_epoch]=12 [memcheck]=45 [bench_train_sgd]=5
                   [bench_train_ngsgd]=6 [bench_train_tf32]=5 [bench_replicas]=8 [bench_average]=4)
PART_BACKEND_S=40 PART_UNIT_S=45 PART_MEMCHECK_S=50 PART_INITCHECK_S=25
SETUP_EXPECT_S=5  # unpacking the bundle's libraries, the summaries
SETUP_RESERVE_S=10
LIMITS_S=0 EXPECT_S=$SETUP_EXPECT_S
for s in "${STEPS[@]}"; do LIMITS_S=$((LIMITS_S + LIMIT[$s])) EXPECT_S=$((EXPECT_S + EXPECT[$s])); done

if [ -n "$WORK" ]; then
  mkdir -p "$WORK"
  WORK=$(cd "$WORK" && pwd)
  rm -rf "${WORK:?}/logs" "$WORK/tests" "$WORK/steps.tsv" "$WORK/parts.tsv" "$WORK/meta.txt" \
         "$WORK"/bench_*.json "$WORK/devices.json" "$WORK/nvidia_smi.csv" "$WORK/versions.json" "$WORK/ldd.txt" \
         "$WORK/gpu_epoch" "$WORK/memcheck" "${WORK:?}/lib" "${WORK:?}/bin" "${WORK:?}/tests-bin"
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/mavg-check.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK/logs" "$WORK/tests" "$WORK/bin"

PAPER="$ROOT/configs/paper-net.yaml"

# ---- what to run: a bundle or a built tree ---------------------------------------------------
shopt -s nullglob
GPU_BACKEND=""
UNIT_TESTS=()
if [ -z "$BUILD" ] && [ -f "$ROOT/bin/mavg" ]; then
  MODE=bundle
  for b in "$ROOT"/bin/*; do [ -x "$b" ] || chmod u+x "$b" 2>/dev/null || true; done  # copies may drop the x bit
  MAVG="$ROOT/bin/mavg"
  # The compressed libraries and test executables are unpacked into the scratch folder: the
  # bundle itself stays as it came (and small enough to copy again).
  LIBDIR=$(bash "$HERE/unpack.sh" "$ROOT" "$WORK/lib" "$WORK/tests-bin") || die "could not unpack $ROOT/lib and $ROOT/bin"
  [ -f "$WORK/tests-bin/gpu_backend" ] && GPU_BACKEND="$WORK/tests-bin/gpu_backend"
  UNIT_TESTS=("$WORK"/tests-bin/unit_*)
else
  MODE=build
  BUILD=${BUILD:-$ROOT/build}
  [ -d "$BUILD" ] || die "no bundle here ($ROOT/bin/mavg) and no build dir '$BUILD'"
  BUILD=$(cd "$BUILD" && pwd)
  MAVG="$BUILD/bin/mavg"
  [ -f "$BUILD/tests/gpu_backend" ] && GPU_BACKEND="$BUILD/tests/gpu_backend"
  if [ -d "$BUILD/tests" ]; then
    while IFS= read -r t; do UNIT_TESTS+=("$t"); done \
      < <(find "$BUILD/tests" -maxdepth 1 -type f -executable -name 'unit_*' | LC_ALL=C sort)
  fi
  LIBDIR=""
fi
[ -x "$MAVG" ] || die "'$MAVG' not found"

# RUN_LIBS: the library path of mavg and the test executables only.
cuda_dirs=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] || continue
  case ":$cuda_dirs:" in *":$(readlink -f "$d"):"*) continue ;; esac
  cuda_dirs="${cuda_dirs:+$cuda_dirs:}$(readlink -f "$d")"
done
RUN_LIBS="${LIBDIR:+$LIBDIR:}${cuda_dirs:-/usr/local/cuda/lib64}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
# CUDA libraries (libcudart, libcublas, ...) the loader still cannot find: look for them where
# else a CUDA install keeps them (other /usr/local/cuda-* trees, the system lib dir, Python's
# nvidia-* wheels) and add the folders that hold them.
EXTRA_LIB_DIRS=""
missing_libs=$(LD_LIBRARY_PATH=$RUN_LIBS ldd "$MAVG" 2>/dev/null | awk '$2 == "=>" && $3 == "not" {print $1}' | sort -u || true)
# cuBLAS is not in ldd's list: mavg loads it when it makes a CUDA backend. `mavg devices` names
# the soname and whether the loader finds it (when mavg itself starts: else ldd's list above).
if [ -z "$missing_libs" ]; then
  probe=$(mktemp)
  LD_LIBRARY_PATH=$RUN_LIBS timeout 120 "$MAVG" devices --json "$probe" > /dev/null 2>&1 || true
  missing_libs=$(python3 -c 'import json, sys
c = json.load(open(sys.argv[1])).get("cublas") or {}
print(c.get("soname", "") if c.get("error") else "")' "$probe" 2>/dev/null || true)
  rm -f "$probe"
fi
if [ -n "$missing_libs" ]; then
  search=(/usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib /usr/lib/x86_64-linux-gnu /usr/local/lib)
  while IFS= read -r sp; do [ -d "$sp/nvidia" ] && search+=("$sp/nvidia"); done \
    < <(python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null || true)
  for lib in $missing_libs; do
    hit=$(find "${search[@]}" -maxdepth 4 -name "$lib" 2>/dev/null | head -1 || true)
    [ -n "$hit" ] || continue
    d=$(dirname "$hit")
    case ":$RUN_LIBS:" in *":$d:"*) ;; *) RUN_LIBS="$RUN_LIBS:$d"; EXTRA_LIB_DIRS="$EXTRA_LIB_DIRS $d" ;; esac
  done
fi
# mavg as the steps (and gpu_epoch.sh, and compute-sanitizer) call it: with RUN_LIBS.
MAVG_RUN="$WORK/bin/mavg"
printf '#!/usr/bin/env bash\nexport LD_LIBRARY_PATH=%q\nexec %q "$@"\n' "$RUN_LIBS" "$MAVG" > "$MAVG_RUN"
chmod +x "$MAVG_RUN"
with_libs() { env LD_LIBRARY_PATH="$RUN_LIBS" "$@"; }

# gpu_tests.filter: "NAME=gtest filter" lines (see the file).
filter_named() { sed -n "s/^$1=//p" "$HERE/gpu_tests.filter" 2>/dev/null | head -1; }
FILTER=$(filter_named tests)
[ -n "$FILTER" ] || FILTER='*cuda*:*Cuda*:*CUDA*:*GPU*:*Gpu*'
INITCHECK_FILTER=$(filter_named initcheck)

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
rm -f "$OUTDIR/logs.txt" "$OUTDIR/summary.json" "$OUTDIR/summary.txt"
: > "$WORK/steps.tsv"
: > "$WORK/parts.tsv"

# ---- bookkeeping -----------------------------------------------------------------------------
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
budget_left() { awk -v a="$T0" -v b="$(now)" -v B="$BUDGET" 'BEGIN { printf "%d", B - (b - a) }'; }
meta() { printf '%s=%s\n' "$1" "$2" >> "$WORK/meta.txt"; }
summarize() { meta elapsed_s "$(since "$T0")"; python3 "$HERE/summarize.py" "$WORK" "$OUTDIR" "$@"; }
one_line() { tr '\t\r\n' '   ' | sed 's/  */ /g; s/^ //; s/ $//' | cut -c1-400; }

# record NAME RC SECONDS LIMIT OWN_LIMIT NOTE [FLAG]: one finished (or not run) step; FLAG is
# not_selected, budget_spent or interrupted. summarize.py turns it into a verdict, and rewrites
# the summary after every step that ran (the final summary covers the others).
record() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$(printf '%s' "$6" | one_line)" \
    "${7:-}" >> "$WORK/steps.tsv"
  case "${7:-}" in
    not_selected) printf '[%6ss] %-18s %-12s %s\n' "$(since "$T0")" "$1" skip "$6" ;;
    budget_spent) printf '[%6ss] %-18s %-12s %s\n' "$(since "$T0")" "$1" inconclusive "$6" ;;
    *) summarize --print-step "$1" || echo "check.sh: summarize.py failed" >&2 ;;
  esac
}
# part STEP PART RC SECONDS LIMIT OWN_LIMIT LOG NOTE: one part of a step (a test executable, a
# sanitizer run). OWN_LIMIT is what the part would have had without the budget.
part() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7" \
    "$(printf '%s' "$8" | one_line)" >> "$WORK/parts.tsv"
}

# run_step NAME FUNCTION: FUNCTION runs with STEP_TIMEOUT = min(its limit, budget left), its
# output in LOG; it sets NOTE and returns 0 (pass), 77 (skip), 124 (out of time) or other (fail).
# (set -e does not apply inside it: it checks what it runs itself.)
CURRENT=""
STEP_T0=$T0
run_step() {
  local name=$1 fn=$2 left rc=0 max=${LIMIT[$1]}
  if [ -n "$ONLY" ] && [ "$name" != device_query ] && [[ ",$ONLY," != *",$name,"* ]]; then
    record "$name" 77 0.0 0 "$max" "not selected (--only $ONLY)" not_selected
    return 0
  fi
  left=$(budget_left)
  if [ "$left" -lt 5 ]; then
    record "$name" 124 0.0 0 "$max" "not run: $left s of the $BUDGET s budget left" budget_spent
    return 0
  fi
  STEP_TIMEOUT=$((max < left ? max : left))
  STEP_OWN=$max
  LOG="$WORK/logs/$name.log"
  NOTE=""
  CURRENT=$name
  STEP_T0=$(now)
  "$fn" > "$LOG" 2>&1 || rc=$?
  CURRENT=""
  [ -n "$NOTE" ] || NOTE="exit status $rc"
  record "$name" "$rc" "$(since "$STEP_T0")" "$STEP_TIMEOUT" "$max" "$NOTE"
}
on_signal() {
  trap - TERM INT
  [ -n "$CURRENT" ] && record "$CURRENT" 143 "$(since "$STEP_T0")" "${STEP_TIMEOUT:-0}" \
    "${LIMIT[$CURRENT]}" "interrupted by a signal while running" interrupted
  summarize > /dev/null || true
  exit 143
}
trap on_signal TERM INT

# tmo CMD...: CMD under the step's timeout (SIGKILL 5 s after SIGTERM); 124 when it ran out.
tmo() { timeout -k 5 "$STEP_TIMEOUT" "$@"; }
timed_out_note() { NOTE="timed out after $STEP_TIMEOUT s"; }
step_left() { awk -v a="$STEP_T0" -v b="$(now)" -v L="$1" 'BEGIN { printf "%d", L - (b - a) }'; }
need_gpu() {
  if [ -n "$REHEARSE" ] || [ "${DEVICE_VISIBLE:-0}" -gt 0 ]; then return 0; fi
  NOTE="no CUDA device visible"
  return 1
}
# The last error-looking line of a log, else its last lines (for notes of failed commands).
err_tail() {
  local e
  e=$(grep -E 'error|Error|ERROR|FAIL|what\(\)|Aborted|Segmentation' "$1" | tail -2 || true)
  [ -n "$e" ] && printf '%s' "$e" || tail -n 3 "$1"
}
# A repeat count: as given on the GPU, 1 in a rehearsal.
reps() { if [ -n "$REHEARSE" ]; then echo 1; else echo "$1"; fi; }

# device_sets CONFIG SET...: DEV_SETS=(the --set arguments a mavg line runs with). On the GPU:
# as given. In a rehearsal `mavg config check` must first accept CONFIG with them as given
# (device=cuda, TF32 and all); then they run on the CPU: device=cpu, TF32 off, one thread, and a
# small network (the paper network's 40M parameters take seconds per step on a CPU).
device_sets() {
  local config=$1 a out
  shift
  DEV_SETS=("$@")
  [ -n "$REHEARSE" ] || return 0
  echo "--- rehearsal: mavg config check $config $*"
  if ! out=$("$MAVG_RUN" -q config check "$config" "$@" 2>&1); then
    echo "$out"
    NOTE="mavg config check refuses the GPU line: $(tail -1 <<< "$out")"
    return 1
  fi
  echo "$out"
  DEV_SETS=()
  for a in "$@"; do
    case "$a" in
      device=cuda) a=device=cpu ;;
      device_options.tf32=true) a=device_options.tf32=false ;;
    esac
    DEV_SETS+=("$a")
  done
  DEV_SETS+=(--set device_options.threads=1 --set model.hidden_dim=32)
  if [ "$config" = "$PAPER" ]; then
    DEV_SETS+=(--set model.hidden_layers=2 --set model.num_outputs=24 --set optimizer.minibatch=64)
  fi
  echo "--- rehearsal: on the CPU with ${DEV_SETS[*]}"
}

meta mode "$MODE"
meta mavg "$MAVG"
meta root "$ROOT"
meta budget_s "$BUDGET"
meta limits_s "$LIMITS_S"
meta expect_s "$EXPECT_S"
meta started "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
meta host "$(hostname 2>/dev/null || echo unknown)"
meta nproc "$(nproc 2>/dev/null || echo unknown)"
meta run_ld_library_path "$RUN_LIBS"
[ -z "$EXTRA_LIB_DIRS" ] || meta extra_lib_dirs "${EXTRA_LIB_DIRS# }"
meta gtest_filter "$FILTER"
meta initcheck_filter "$INITCHECK_FILTER"
meta rehearsal "${REHEARSE:-0}"
meta no_device_ok "${NO_DEVICE_OK:-0}"
for s in "${STEPS[@]}"; do meta "limit_s.$s" "${LIMIT[$s]}"; meta "expect_s.$s" "${EXPECT[$s]}"; done
echo "check.sh: $MODE mode${REHEARSE:+, REHEARSAL on the CPU}, mavg $MAVG, out $OUTDIR"
echo "check.sh: ${#STEPS[@]} steps; their limits add to $LIMITS_S s of the $BUDGET s budget;" \
     "expected on an H200: ~$EXPECT_S s ($(awk -v s="$EXPECT_S" 'BEGIN { printf "%.1f", s / 60 }') min)"
if [ $((LIMITS_S + SETUP_RESERVE_S)) -gt "$BUDGET" ]; then
  echo "check.sh: the budget is smaller than the limits and $SETUP_RESERVE_S s of set-up: late steps may be cut (inconclusive)"
fi

# ---- a. device query ---------------------------------------------------------------------------
DEVICE_COUNT=0
DEVICE_VISIBLE=0
step_device_query() {
  local notes=() smi_count=0 glibc needed nf help rc=0 cudart
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
  echo "mavg and the tests run with LD_LIBRARY_PATH=$RUN_LIBS"
  echo "--- ldd $MAVG"
  with_libs ldd "$MAVG" > "$WORK/ldd.txt" 2>&1 || true
  cat "$WORK/ldd.txt"
  nf=$(awk '$2 == "=>" && $3 == "not" {print $1}' "$WORK/ldd.txt" | sort -u | tr '\n' ' ' | sed 's/ $//' || true)
  if [ -n "$nf" ]; then meta libs_not_found "$nf"; notes+=("libraries not found: $nf"); fi
  # The CUDA runtime that mavg loads (its file name carries the full version; cuBLAS's comes
  # from `mavg devices` below), and the runtime's and the driver's CUDA versions as the runtime
  # reports them.
  meta cudart_file "$(awk '$1 ~ /^libcudart\.so/ && $2 == "=>" {print $3}' "$WORK/ldd.txt" | head -1 | xargs -r readlink -f)"
  cudart=$(awk '$1 ~ /^libcudart\.so/ && $2 == "=>" {print $3}' "$WORK/ldd.txt" | head -1)
  if [ -n "$cudart" ]; then
    echo "--- versions from $cudart"
    tmo python3 - "$cudart" > "$WORK/versions.json" 2>&1 <<'PY' || true
import ctypes, json, sys
lib, out = ctypes.CDLL(sys.argv[1]), {"library": sys.argv[1]}
for fn, key in (("cudaRuntimeGetVersion", "runtime"), ("cudaDriverGetVersion", "driver_api")):
    v = ctypes.c_int(0)
    rc = getattr(lib, fn)(ctypes.byref(v))
    out[key] = v.value if rc == 0 else None
print(json.dumps(out))
PY
    cat "$WORK/versions.json"
  fi
  [ -r /proc/driver/nvidia/version ] && meta proc_driver "$(head -1 /proc/driver/nvidia/version)"

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
  meta smi_count "$smi_count"
  DEVICE_VISIBLE=$smi_count

  echo "--- $MAVG devices --json"
  help=$(tmo "$MAVG_RUN" --help 2>&1) || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "$help"
    NOTE="mavg does not start (exit $rc): $(tail -1 <<< "$help"); ${notes[*]}"
    return 1
  fi
  tmo "$MAVG_RUN" devices --json "$WORK/devices.json" || rc=$?
  if [ "$rc" -ne 0 ] || [ ! -s "$WORK/devices.json" ]; then
    NOTE="mavg devices --json failed (exit $rc); ${notes[*]}"
    rm -f "$WORK/devices.json"
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
print((d.get("cublas") or {}).get("file", ""))  # the cuBLAS a CUDA backend loads, as mavg resolved it
print(names)
PY
  ); then
    NOTE="mavg devices --json wrote unreadable JSON; ${notes[*]}"
    return 1
  fi
  DEVICE_COUNT=$(head -1 <<< "$parsed")
  meta cublas_file "$(sed -n 2p <<< "$parsed" | xargs -r readlink -f)"
  meta device_count "$DEVICE_COUNT"
  [ "$DEVICE_COUNT" -gt "$DEVICE_VISIBLE" ] && DEVICE_VISIBLE=$DEVICE_COUNT
  local names; names=$(tail -n +3 <<< "$parsed")
  NOTE="mavg devices: count $DEVICE_COUNT${names:+ ($names)}; glibc ${glibc:-?}; ${notes[*]}"
  if [ "$smi_count" -ne "$DEVICE_COUNT" ] && [ -f "$WORK/nvidia_smi.csv" ]; then
    # The driver sees a GPU that mavg (the CUDA runtime) does not: every GPU step would skip.
    NOTE="nvidia-smi lists $smi_count GPUs but mavg sees $DEVICE_COUNT: $NOTE"
    return 1
  fi
  if [ "$DEVICE_VISIBLE" -eq 0 ] && [ -z "$NO_DEVICE_OK" ]; then
    NOTE="no CUDA device visible (--no-device-ok to try the checks where there is none): $NOTE"
    return 1
  fi
  return 0
}
step_device_query_noted() {
  local rc=0
  step_device_query || rc=$?
  meta device_visible "$DEVICE_VISIBLE"
  return "$rc"
}
run_step device_query step_device_query_noted

# ---- b. GPU tests, then one epoch cuda vs cpu --------------------------------------------------
# list_count EXE FILTER: how many tests FILTER selects in EXE (the listing goes to the log).
list_count() {
  local out rc=0
  out=$(with_libs "$1" --gtest_list_tests --gtest_filter="$2" 2>&1) || rc=$?
  echo "--- $(basename "$1") --gtest_list_tests --gtest_filter=$2 (exit $rc)" >&2
  printf '%s\n' "$out" >&2
  printf '%s\n' "$out" | grep -c '^  ' || true
}
# run_tests STEP GROUP PART_LIMIT FILTER EXE...: the executables one after another, each with
# what is left of PART_LIMIT (and of the step), its log and gtest JSON in WORK/tests/STEP/.
# Returns 124 if one ran out of time or was not run for want of it, 1 if one failed.
run_tests() {
  local step=$1 group=$2 part_limit=$3 filter=$4 dir="$WORK/tests/$1" t0 exe name rc worst=0
  local left own lim
  shift 4
  mkdir -p "$dir"
  t0=$(now)
  for exe in "$@"; do
    name=$(basename "$exe")
    left=$(awk -v a="$t0" -v b="$(now)" -v L="$part_limit" 'BEGIN { printf "%d", L - (b - a) }')
    own=$(step_left "$STEP_OWN")
    [ "$own" -lt "$left" ] || own=$left
    lim=$(step_left "$STEP_TIMEOUT")
    [ "$lim" -lt "$left" ] || lim=$left
    if [ "$lim" -lt 2 ]; then
      part "$step" "$name" notrun 0.0 "$lim" "$own" "" "$group"
      worst=124
      continue
    fi
    echo "=== $name --gtest_filter=$filter (limit $lim s)"
    local p0; p0=$(now)
    rc=0
    timeout -k 5 "$lim" env LD_LIBRARY_PATH="$RUN_LIBS" "$exe" --gtest_filter="$filter" \
      --gtest_output="json:$dir/$name.json" > "$dir/$name.log" 2>&1 || rc=$?
    tail -n 3 "$dir/$name.log"
    part "$step" "$name" "$rc" "$(since "$p0")" "$lim" "$own" "$dir/$name.log" "$group"
    case "$rc" in
      0) ;;
      124 | 137) worst=124 ;;
      *) [ "$worst" -eq 124 ] || worst=1 ;;
    esac
  done
  return "$worst"
}
step_unit_gpu() {
  need_gpu || return 77
  local n rc=0 r
  if [ -z "$GPU_BACKEND" ]; then NOTE="no gpu_backend test executable"; return 1; fi
  n=$(list_count "$GPU_BACKEND" "$FILTER")
  if [ "$n" -eq 0 ]; then NOTE="gpu_tests.filter's tests= selects no test in gpu_backend: $FILTER"; return 1; fi
  run_tests unit_gpu gpu_backend "$PART_BACKEND_S" "$FILTER" "$GPU_BACKEND" || rc=$?
  r=0
  local units=("${UNIT_TESTS[@]}")
  # A rehearsal runs the loop's command once: each executable takes ~1 s here to load CUDA's
  # libraries, and on the CPU the filter selects host tests only.
  [ -z "$REHEARSE" ] || units=("${UNIT_TESTS[@]:0:1}")
  run_tests unit_gpu unit "$PART_UNIT_S" "$FILTER" "${units[@]}" || r=$?
  [ "$rc" -eq 124 ] || [ "$r" -eq 0 ] || rc=$r
  NOTE="gpu_backend ($n tests) and ${#UNIT_TESTS[@]} unit executables"
  return "$rc"
}
run_step unit_gpu step_unit_gpu

step_gpu_epoch() {
  need_gpu || return 77
  local rc=0
  tmo bash "$HERE/gpu_epoch.sh" ${REHEARSE:+--rehearse} "$MAVG_RUN" "$WORK/gpu_epoch" || rc=$?
  case "$rc" in
    0) NOTE=$(grep -E '^PASS' "$LOG" | tail -1) ;;
    77) NOTE=$(grep '^skipped' "$LOG" | tail -1) ;;
    124 | 137) timed_out_note ;;
    *) NOTE=$(grep -E '^FAIL' "$LOG" | tail -1); [ -n "$NOTE" ] || NOTE=$(err_tail "$LOG") ;;
  esac
  return "$rc"
}
run_step gpu_epoch step_gpu_epoch

# ---- c. compute-sanitizer: memcheck over a short training run, initcheck over chosen tests ------
# sanitized TOOL CMD...: SAN_CMD=(CMD under compute-sanitizer --tool TOOL, exit 9 when it finds
# errors); in a rehearsal CMD alone. The sanitizer keeps the caller's library path: CMD is mavg's
# wrapper, or goes through env, which execs it in the same (tracked) process.
sanitized() {
  local tool=$1
  shift
  if [ -n "$REHEARSE" ]; then SAN_CMD=("$@"); else SAN_CMD=("$CS" --tool "$tool" --error-exitcode 9 "$@"); fi
}
sanitizer_note() {  # sanitizer_note RC LOG TOOL
  local summary
  summary=$(grep -E 'ERROR SUMMARY' "$2" | tail -1 | sed 's/^=* *//')
  case "$1" in
    0) echo "$3: ${summary:-${REHEARSE:+rehearsed without the sanitizer}}" ;;
    9) echo "$3 found errors: $summary; $(grep -m1 -E '^========= (Invalid|Program hit|Uninitialized|Leaked|Unused|Host API)' "$2" || true)" ;;
    124 | 137) echo "$3: out of time" ;;
    *) echo "$3: exit $1: $(err_tail "$2")" ;;
  esac
}
# part_limits OWN_SECONDS: LIM (what the part may take) and OWN (what it could without the budget).
part_limits() {
  LIM=$(step_left "$STEP_TIMEOUT"); [ "$LIM" -lt "$1" ] || LIM=$1
  OWN=$(step_left "$STEP_OWN"); [ "$OWN" -lt "$1" ] || OWN=$1
}
CS=""
step_memcheck() {
  need_gpu || return 77
  local rc=0 ic=0 c p0 dir="$WORK/memcheck"
  if [ -z "$REHEARSE" ]; then
    CS=$(command -v compute-sanitizer || true)
    for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
      [ -n "$CS" ] || { [ -x "$c" ] && CS=$c; }
    done
    if [ -z "$CS" ]; then NOTE="compute-sanitizer not found (PATH, /usr/local/cuda/bin)"; return 77; fi
  fi
  mkdir -p "$dir"
  # Short: digits.yaml's network (4 x 512 sigmoid, minibatch 256) for one epoch of a ~4k-frame
  # synthetic corpus (about 16 minibatches), no test set, hence no decoding. So little training
  # stays at chance, which would end the run `collapsed` (exit 4): no collapse check.
  python3 "$HERE/tiny_data.py" "$dir/data" --train-utts 40 --dev-utts 10 --seed 2 ||
    { NOTE="tiny_data.py failed"; return 1; }
  device_sets "$ROOT/configs/digits.yaml" --set device=cuda --set schedule.epochs=1 \
    --set data.train="$dir/data/train" --set data.dev="$dir/data/dev" --set data.test= \
    --set schedule.collapse.chance_fraction=0 || return 1
  part_limits "$PART_MEMCHECK_S"
  sanitized memcheck "$MAVG_RUN" train "$ROOT/configs/digits.yaml" "${DEV_SETS[@]}" \
    --out "$dir/run" --no-progress --cache-dir ''
  echo "--- ${SAN_CMD[*]}"
  p0=$(now)
  timeout -k 5 "$LIM" "${SAN_CMD[@]}" > "$dir/memcheck.log" 2>&1 || rc=$?
  tail -n 5 "$dir/memcheck.log"
  # Where the sanitizer cannot instrument this GPU (seen under gVisor: "Device not supported",
  # then error 999 at the first allocation) the run fails for that reason alone: skip, not fail.
  if [ "$rc" -ne 0 ] && grep -qiE 'Unable to attach|not supported' "$dir/memcheck.log"; then
    NOTE="compute-sanitizer cannot run here: $(grep -iE 'Unable to attach|not supported' "$dir/memcheck.log" | head -1 | sed 's/^=* *//')"
    part memcheck memcheck 77 "$(since "$p0")" "$LIM" "$OWN" "$dir/memcheck.log" "$NOTE"
    return 77
  fi
  part memcheck memcheck "$rc" "$(since "$p0")" "$LIM" "$OWN" "$dir/memcheck.log" \
    "$(sanitizer_note "$rc" "$dir/memcheck.log" memcheck)"
  NOTE="$(sanitizer_note "$rc" "$dir/memcheck.log" memcheck)"

  # initcheck: uninitialised device memory read by the tests gpu_tests.filter names (the launch
  # limits' grid-stride loops, among others).
  if [ -z "$INITCHECK_FILTER" ]; then
    part memcheck initcheck 77 0.0 0 0 "" "gpu_tests.filter names no initcheck tests"
  elif [ -z "$GPU_BACKEND" ]; then
    part memcheck initcheck 1 0.0 0 0 "" "no gpu_backend test executable"; ic=1
  elif [ "$(list_count "$GPU_BACKEND" "$INITCHECK_FILTER")" -eq 0 ]; then
    part memcheck initcheck 1 0.0 0 0 "" "gpu_tests.filter's initcheck= selects no test in gpu_backend: $INITCHECK_FILTER"; ic=1
  else
    part_limits "$PART_INITCHECK_S"
    if [ "$LIM" -lt 2 ]; then
      part memcheck initcheck notrun 0.0 "$LIM" "$OWN" "" "initcheck: not run, the time was spent"; ic=124
    else
      sanitized initcheck env LD_LIBRARY_PATH="$RUN_LIBS" "$GPU_BACKEND" --gtest_filter="$INITCHECK_FILTER"
      echo "--- ${SAN_CMD[*]}"
      p0=$(now)
      timeout -k 5 "$LIM" "${SAN_CMD[@]}" > "$dir/initcheck.log" 2>&1 || ic=$?
      tail -n 5 "$dir/initcheck.log"
      part memcheck initcheck "$ic" "$(since "$p0")" "$LIM" "$OWN" "$dir/initcheck.log" \
        "$(sanitizer_note "$ic" "$dir/initcheck.log" initcheck)"
    fi
  fi
  case "$rc:$ic" in
    0:0 | 0:77) return 0 ;;
    124:* | 137:* | *:124 | *:137) return 124 ;;
    *) return 1 ;;
  esac
}
run_step memcheck step_memcheck

# ---- d. GPU benchmarks -------------------------------------------------------------------------
# bench NAME SUBCOMMAND CONFIG SET... -- ARGS...: mavg bench SUBCOMMAND --config CONFIG SET...
# ARGS --json WORK/bench_NAME.json
bench() {
  need_gpu || return 77
  local name=$1 sub=$2 config=$3 rc=0 json="$WORK/bench_$1.json" sets=()
  shift 3
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sets+=("$1"); shift; done
  [ $# -eq 0 ] || shift
  device_sets "$config" "${sets[@]}" || return 1
  tmo "$MAVG_RUN" bench "$sub" --config "$config" "${DEV_SETS[@]}" "$@" --json "$json" || rc=$?
  case "$rc" in
    0) NOTE="$(python3 "$HERE/summarize.py" --bench-line "$json" "$name")${REHEARSE:+ (rehearsal on the CPU, small network)}" ;;
    124 | 137) timed_out_note ;;
    *) NOTE="exit $rc: $(err_tail "$LOG")" ;;
  esac
  return "$rc"
}
step_bench_train_sgd() { bench train_sgd train "$PAPER" --set device=cuda --set optimizer.type=sgd -- --repeats "$(reps 10)"; }
step_bench_train_ngsgd() { bench train_ngsgd train "$PAPER" --set device=cuda --set optimizer.type=ngsgd -- --repeats "$(reps 10)"; }
step_bench_train_tf32() { bench train_tf32 train "$PAPER" --set device=cuda --set optimizer.type=sgd --set device_options.tf32=true -- --repeats "$(reps 10)"; }
step_bench_replicas() { bench replicas replicas "$PAPER" --set device=cuda -- --workers 16 --every "$(reps 10)" --repeats "$(reps 3)"; }
step_bench_average() { bench average average "$PAPER" --set device=cuda -- --repeats "$(reps 3)"; }
run_step bench_train_sgd step_bench_train_sgd
run_step bench_train_ngsgd step_bench_train_ngsgd
run_step bench_train_tf32 step_bench_train_tf32
run_step bench_replicas step_bench_replicas
run_step bench_average step_bench_average

# ---- summary: its result is the exit status ------------------------------------------------------
echo
rc=0
summarize --final || rc=$?
exit "$rc"
