#!/usr/bin/env bash
# The GPU-machine scripts (scripts/device/) on this machine: bundle.sh packs the build this test
# runs from, under the 60 MiB copy limit; the bundle's own libraries suffice (mavg starts under
# env -i with only the bundle's lib/ on LD_LIBRARY_PATH, and ldd resolves every library that is
# neither glibc nor CUDA into that lib/); check.sh run from the bundle on a machine without a
# CUDA device records the device query as passed with count 0 and every GPU step as skipped, and
# leaves at most 4 files in its output folder; packing again gives the same files. ~25 s,
# most of it xz.
source "$(dirname "$0")/lib.bash"
DEV="$MAVG_SOURCE_DIR/scripts/device"
BUILD=$(dirname "$(dirname "$MAVG")")
B="$WORK/bundle"

# xz -3 instead of the default -6 halves the packing time; its bundle is larger, so one that fits
# at -3 fits at -6.
MAVG_BUNDLE_XZ_LEVEL=3 bash "$DEV/bundle.sh" "$BUILD" "$B" > bundle.txt 2>&1 || fail "bundle.sh: $(cat bundle.txt)"
cat bundle.txt
for f in MANIFEST.txt TESTS.txt check.sh bin/mavg configs/digits.yaml configs/paper-net.yaml \
         scripts/device/check.sh scripts/device/gpu_epoch.sh scripts/device/unpack.sh; do
  [ -s "$B/$f" ] || fail "bundle lacks $f"
done
[ -n "$(find "$B/bin" -name 'unit_*')" ] || fail "no unit test executables in the bundle"
size=$(du -sb "$B" | cut -f1)
[ "$size" -le $((60 * 1024 * 1024)) ] || fail "bundle is $size bytes, over 60 MiB"
bad=$(find "$B/lib" -printf '%f\n' | grep -E '^(libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|ld-linux|libcuda\.so|libcudart|libcublas)' || true)
[ -z "$bad" ] || fail "glibc, driver or CUDA libraries bundled: $bad"
grep -q 'bin/mavg' "$B/MANIFEST.txt" || fail "MANIFEST.txt does not list bin/mavg"

libdir=$(bash "$B/scripts/device/unpack.sh" "$B")
[ "$libdir" = "$B/lib" ] || fail "unpack.sh unpacked into '$libdir', not the bundle's lib/"
[ -z "$(find "$B/lib" -name '*.xz' | while read -r x; do [ -e "${x%.xz}" ] || echo "$x"; done)" ] ||
  fail "unpack.sh left compressed libraries unpacked"
bash "$B/scripts/device/unpack.sh" "$B" > /dev/null || fail "unpack.sh is not idempotent"

env -i LD_LIBRARY_PATH="$B/lib" "$B/bin/mavg" --help > help.txt 2>&1 || fail "bundled mavg does not start: $(cat help.txt)"
grep -q 'Subcommands:' help.txt || fail "unexpected --help output: $(cat help.txt)"
# The proof: apart from glibc and CUDA, every library resolves into the bundle's lib/.
for exe in "$B"/bin/*; do
  env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$B/lib" ldd "$exe" > ldd.txt 2>&1 || fail "ldd $exe: $(cat ldd.txt)"
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    case "$name" in
      libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.*) continue ;;
      libcuda.so* | libnvidia-* | libcudart.so* | libcublas* | libcurand* | libcusolver* | libcusparse* | libcufft* | libnccl*) continue ;;
    esac
    case "$path" in /usr/local/cuda*) continue ;; esac
    [ "$path" != "not" ] || fail "$(basename "$exe"): $name not found with the bundle's lib/"
    [ "$(dirname "$(readlink -f "$path")")" = "$(readlink -f "$B/lib")" ] ||
      fail "$(basename "$exe"): $name resolves to $path, outside the bundle"
  done < ldd.txt
done
env -i LD_LIBRARY_PATH="$B/lib" "$B/bin/unit_core" --gtest_list_tests > /dev/null 2>&1 ||
  fail "a bundled unit test executable does not start"
echo "ok: bundled mavg and tests load only the bundle's libraries (besides glibc and CUDA)"

# check.sh from the bundle, here (no CUDA device): device query passes with count 0, the GPU
# steps are skipped, not failed.
rc=0
bash "$B/check.sh" --out "$WORK/out" --budget-s 60 > check.txt 2>&1 || rc=$?
cat check.txt
[ "$rc" -eq 0 ] || fail "check.sh exited $rc"
[ -s "$WORK/out/summary.json" ] || fail "no summary.json"
[ "$(find "$WORK/out" -type f | wc -l)" -le 4 ] || fail "more than 4 files in check.sh's output: $(ls "$WORK/out")"
python3 - "$WORK/out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
steps = {x["name"]: x for x in s["steps"]}
order = [x["name"] for x in s["steps"]]
assert order == ["device_query", "unit_gpu", "gpu_epoch", "memcheck", "bench_train_sgd",
                 "bench_train_ngsgd", "bench_train_tf32", "bench_replicas", "bench_average"], order
dq = steps["device_query"]
assert dq["status"] == "pass", dq
assert s["device_query"]["mavg_devices"]["count"] == 0, s["device_query"]
for name in order[1:]:
    assert steps[name]["status"] == "skip", steps[name]
    assert "no CUDA device visible" in steps[name]["note"], steps[name]
assert s["result"] == "pass", s["result"]
print("ok: device query count 0, GPU steps skipped")
PY
# Idempotent: packing again over the used bundle (unpacked libraries, check.sh's leftovers) gives
# exactly the files its MANIFEST.txt lists (uncompressed this time, to save time: hence the limit).
MAVG_BUNDLE_XZ_MIN_KIB=1000000 MAVG_BUNDLE_LIMIT_MIB=1000 bash "$DEV/bundle.sh" "$BUILD" "$B" > bundle2.txt 2>&1 || fail "bundle.sh again: $(cat bundle2.txt)"
(cd "$B" && find . -type f ! -name MANIFEST.txt -printf '%P\n' | LC_ALL=C sort) > files.txt
awk '/^# size  path/ {on = 1; next} on && NF == 0 {exit} on {print $2}' "$B/MANIFEST.txt" | LC_ALL=C sort > manifest.txt
cmp -s files.txt manifest.txt || fail "bundle files and MANIFEST.txt differ: $(diff files.txt manifest.txt | head -5)"
rm -rf "$B"  # ~140 MiB once unpacked
echo PASS
