#!/usr/bin/env bash
# mavg's OpenBLAS kernel family: a user's OPENBLAS_CORETYPE wins (recorded as the user's, with a
# warning when slower than the CPU allows) unless the CPU cannot run it (one error line, not an
# illegal instruction); a wrong choice by OpenBLAS (simulated with MAVG_TEST_OPENBLAS_START) is
# corrected in the process and in every process a sweep starts, without OPENBLAS_CORETYPE
# leaking into them; runs and benchmarks record the family.
source "$(dirname "$0")/lib.bash"
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: not an x86-64 machine"; exit 77; }
cpu() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cpu"][sys.argv[2]])' "$@"; }

make_small_fmnist data 600 100
small_base base.yaml 16 1
"$MAVG" devices --json own.json >/dev/null
isa=$(cpu own.json isa)
echo "this CPU: $isa; mavg runs $(cpu own.json blas_kernels) ($(cpu own.json chosen_by))"

# The user's choice wins, and says so.
OPENBLAS_CORETYPE=Prescott "$MAVG" train base.yaml --out user --no-progress 2> user.log
[ "$(json_get user/result.json blas_kernels)" = "OpenBLAS Prescott" ] || fail "user's Prescott not run"
python3 - user/result.json <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["build"]
assert b["blas_kernels_by"] == "user", b
assert "Prescott" in b["device"], b
PY
if [ "$isa" != SSE3 ]; then
  grep -q 'warn.*\[blas\] OpenBLAS Prescott kernels: as OPENBLAS_CORETYPE=Prescott (set by the user) asks, slower' user.log ||
    fail "no warning that the user's kernels are slower: $(grep blas user.log)"
fi
echo "ok: OPENBLAS_CORETYPE=Prescott is run and recorded as the user's"

# A family above the CPU: refused with one line, before any GEMM.
if [ "$isa" != AVX-512 ]; then
  expect_error "OPENBLAS_CORETYPE=SkylakeX" env OPENBLAS_CORETYPE=SkylakeX "$MAVG" train base.yaml --out refused --no-progress
  expect_error "need AVX-512" env OPENBLAS_CORETYPE=SkylakeX "$MAVG" bench train --config base.yaml --set model.num_outputs=10 --raw-dim 784
else
  echo "(this CPU has AVX-512: no family above it to refuse)"
fi

# OpenBLAS choosing Prescott on a better CPU (as Debian's 0.3.21 does on CPUs newer than itself).
if [ "$isa" = SSE3 ] || [ "$isa" = SSE2 ]; then
  echo "PASS (this CPU has nothing above Prescott: the correction is not tested here)"
  exit 0
fi
MAVG_TEST_OPENBLAS_START=Prescott "$MAVG" devices --json started.json >/dev/null
[ "$(cpu started.json openblas_choice)" = Prescott ] || fail "the hook did not start at Prescott"
[ "$(cpu started.json chosen_by)" = mavg ] || fail "not corrected: $(cpu started.json note)"
fixed=$(cpu started.json blas_kernels)
[ "$(cpu started.json blas_kernels_isa)" = "$isa" ] ||
  fail "corrected to $fixed ($(cpu started.json blas_kernels_isa)), not to the CPU's $isa"
echo "ok: Prescott corrected to $fixed"

# In the processes a sweep starts: each corrects its own OpenBLAS (the hook is inherited), and
# none inherits an OPENBLAS_CORETYPE from its parent (it would count as the user's).
cat > sweep.yaml <<'YAML'
name: kernels
base: base.yaml
grid: {seed: [1, 2]}
YAML
MAVG_TEST_OPENBLAS_START=Prescott "$MAVG" sweep run sweep.yaml --results res --jobs 2 --threads 1 > sweep.log 2>&1 ||
  { cat sweep.log; fail "sweep run failed"; }
n=0
for r in res/runs/kernels/*/result.json; do
  python3 - "$r" "$fixed" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["blas_kernels"] == "OpenBLAS " + sys.argv[2], r["blas_kernels"]
assert r["build"]["blas_kernels_by"] == "mavg", r["build"]
PY
  n=$((n + 1))
done
[ "$n" -eq 2 ] || fail "expected 2 runs, found $n"
echo "ok: sweep workers ran $fixed, chosen by mavg"

# The benchmark says which kernels it measured.
MAVG_TEST_OPENBLAS_START=Prescott "$MAVG" -q bench train --config base.yaml --set model.num_outputs=10 \
  --raw-dim 784 --repeats 1 --warmup 0 --json bench.json >/dev/null
[ "$(json_get bench.json blas_kernels)" = "OpenBLAS $fixed" ] || fail "bench: $(json_get bench.json blas_kernels)"
echo PASS
