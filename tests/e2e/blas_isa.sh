#!/usr/bin/env bash
# On this machine, mavg runs OpenBLAS kernels at the CPU's best vector ISA, judged independently
# of mavg: the ISA from /proc/cpuinfo's flags (what the kernel lets programs use), the families
# from the kernel tables the linked OpenBLAS exports (nm). Skipped (exit 77), with the reason,
# where this OpenBLAS has no family at that ISA, or on a CPU that is not x86-64.
source "$(dirname "$0")/lib.bash"

[ "$(uname -m)" = x86_64 ] || { echo "SKIP: not an x86-64 machine ($(uname -m))"; exit 77; }
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
has() { for f in "$@"; do [[ "$flags" == *" $f "* ]] || return 1; done; }
if has avx512f avx512cd avx512bw avx512dq avx512vl avx2 fma; then
  isa=AVX-512 families="SkylakeX Cooperlake SapphireRapids"
elif has avx2 fma avx; then
  isa=AVX2 families="Haswell Zen Excavator"
elif has avx; then
  isa=AVX families="Sandybridge Bulldozer Piledriver Steamroller"
elif has sse4_2; then
  isa=SSE4.2 families="Nehalem"
else
  echo "SKIP: a CPU below SSE4.2, where OpenBLAS's own choice is as good as any"; exit 77
fi
echo "this CPU: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2-) -> best ISA $isa"

lib=$(ldd "$MAVG" | awk '/libopenblas/ && !found {print $3; found = 1}')
[ -n "$lib" ] || fail "mavg is not linked with OpenBLAS: $(ldd "$MAVG")"
lib=$(readlink -f "$lib")
nm -D --defined-only "$lib" > symbols.txt
built=""
for f in $families; do
  upper=$(echo "$f" | tr '[:lower:]' '[:upper:]')
  if grep -q " gotoblas_${upper}\$" symbols.txt; then built="$built $f"; fi
done
if [ -z "$built" ]; then
  echo "SKIP: $lib has no kernel family for $isa (none of: $families); nothing better to choose"
  exit 77
fi
echo "$lib has for $isa:$built"

"$MAVG" devices --json devices.json > devices.txt
cat devices.txt
read -r chosen by isa_reported < <(python3 -c '
import json; c = json.load(open("devices.json"))["cpu"]
print(c["blas_kernels"], c["chosen_by"], c["isa"])')
[ "$isa_reported" = "$isa" ] || fail "mavg says the CPU supports $isa_reported; /proc/cpuinfo says $isa"
if [ "$by" = user ]; then
  echo "SKIP: OPENBLAS_CORETYPE is set in this environment ($OPENBLAS_CORETYPE): the user's choice wins"
  exit 77
fi
[[ " $built " == *" $chosen "* ]] ||
  fail "mavg runs OpenBLAS's $chosen kernels, not one of the $isa families this OpenBLAS has:$built"
echo "ok: mavg runs $chosen kernels ($isa; chosen by $by)"

# A training run records the same kernels, and logs them once.
make_small_fmnist data 600 100
small_base base.yaml 16 1
"$MAVG" train base.yaml --out run --no-progress 2> train.log
[ "$(grep -c '\[blas\]' train.log)" -eq 1 ] || fail "expected one [blas] log line: $(grep blas train.log)"
[ "$(json_get run/result.json blas_kernels)" = "OpenBLAS $chosen" ] ||
  fail "result.json: $(json_get run/result.json blas_kernels), expected OpenBLAS $chosen"
echo PASS
