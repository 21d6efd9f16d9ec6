#!/usr/bin/env bash
# bundle.sh [BUILD_DIR] [OUT_DIR] -- pack a built tree into a self-contained folder that runs the
# GPU checks (check.sh) on a GPU machine that has the CUDA toolkit and driver but none of our
# Debian libraries (OpenBLAS, OpenMPI, sqlite, yaml-cpp, spdlog, fmt, flite, ...).
#
# Run on the BUILD machine (Debian 12, the one that built BUILD_DIR), from the repository root:
#   scripts/device/bundle.sh                    # build -> device-bundle
#   scripts/device/bundle.sh build /tmp/bundle
# Then copy OUT_DIR to the GPU machine and run  OUT_DIR/check.sh --out DIR  there.
#
# OUT_DIR (removed and rebuilt on every run) holds:
#   bin/       mavg and every test executable (BUILD_DIR/tests/unit_* and gpu_*), stripped copies;
#              the test executables are stored xz-compressed (bin/NAME.xz: ~34 MiB raw, ~10 MiB
#              packed) and mavg is not (so the bundle's mavg runs as it comes)
#   lib/       the shared libraries they load (ldd, recursively), except those the GPU machine
#              has itself: glibc (libc, libm, libpthread, libdl, librt, libresolv, ld-linux, ...),
#              the driver (libcuda, libnvidia-*) and the CUDA toolkit (anything resolved under
#              /usr/local/cuda*, or named libcudart, libcublas*, libnccl, ...; check.sh puts
#              /usr/local/cuda/lib64 on LD_LIBRARY_PATH). libstdc++, libgcc_s and libgomp ARE
#              bundled (the target's may be older). Libraries of 256 KiB and more are stored
#              xz-compressed (lib/NAME.xz): OpenBLAS alone is 35 MiB, the raw bundle ~100 MiB;
#              scripts/device/unpack.sh (run by check.sh) restores them, and the test
#              executables, in place or into a scratch folder.
#   configs/   the repository's configs
#   scripts/device/  check.sh, gpu_epoch.sh, unpack.sh, tiny_data.py, summarize.py, filter
#   check.sh   a forwarder to scripts/device/check.sh
#   MANIFEST.txt  every file with its size and where it came from; what is expected on the target
#   TESTS.txt  the tests the GPU filter (gpu_tests.filter's tests=) selects, per executable
#              (check.sh runs them without CTest)
# Fails (non-zero, one clear message) if a needed library is not found here (CUDA ones excepted:
# libcuda.so.1 is missing on a machine without a driver), or if OUT_DIR exceeds 60 MiB
# (MAVG_BUNDLE_LIMIT_MIB): the device machine is reached only by copying a folder that small.
# Env: MAVG_BUNDLE_XZ_LEVEL (default 6), MAVG_BUNDLE_XZ_MIN_KIB (default 256).
set -euo pipefail

die() { echo "bundle.sh: error: $*" >&2; exit 1; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD_ARG=${1:-build}
OUT_ARG=${2:-device-bundle}
LIMIT_MIB=${MAVG_BUNDLE_LIMIT_MIB:-60}
XZ_LEVEL=${MAVG_BUNDLE_XZ_LEVEL:-6}
XZ_MIN_KIB=${MAVG_BUNDLE_XZ_MIN_KIB:-256}

for tool in ldd strip xz find; do
  command -v "$tool" >/dev/null || die "'$tool' is needed on the build machine"
done
[ -d "$BUILD_ARG" ] || die "build directory '$BUILD_ARG' not found (run from the repository root or pass BUILD_DIR)"
BUILD=$(cd "$BUILD_ARG" && pwd)
[ -x "$BUILD/bin/mavg" ] || die "'$BUILD/bin/mavg' not found: build the mavg target first"

# ---- OUT_DIR: refuse paths whose removal would hurt, then start from scratch --------------------
mkdir -p "$(dirname "$OUT_ARG")"
OUT=$(cd "$(dirname "$OUT_ARG")" && pwd)/$(basename "$OUT_ARG")
case "$OUT" in
  / | "$ROOT" | "$BUILD" | "${HOME:-/nonexistent}" | */. | */..) die "refusing to use '$OUT' as OUT_DIR" ;;
esac
case "$ROOT/" in "$OUT"/*) die "refusing to use '$OUT' as OUT_DIR: it contains the repository" ;; esac
if [ -e "$OUT" ]; then
  [ -d "$OUT" ] || die "'$OUT' exists and is not a directory"
  if [ -n "$(ls -A "$OUT")" ] && [ ! -f "$OUT/MANIFEST.txt" ]; then
    die "'$OUT' is a non-empty directory that is not a bundle (no MANIFEST.txt); remove it yourself"
  fi
  rm -rf "$OUT"
fi
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/scripts/device"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/mavg-bundle.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

# ---- binaries ---------------------------------------------------------------------------------
bins=("$BUILD/bin/mavg")
if [ -d "$BUILD/tests" ]; then
  while IFS= read -r t; do bins+=("$t"); done \
    < <(find "$BUILD/tests" -maxdepth 1 -type f -executable \( -name 'unit_*' -o -name 'gpu_*' \) | LC_ALL=C sort)
fi
[ "${#bins[@]}" -gt 1 ] || echo "bundle.sh: warning: no unit test executables in $BUILD/tests (MAVG_BUILD_TESTS=OFF?)" >&2

: > "$STAGE/manifest-src"   # "relative-path<TAB>source" lines
for b in "${bins[@]}"; do
  dest="$OUT/bin/$(basename "$b")"
  cp "$b" "$dest"
  chmod u+w "$dest"
  strip --strip-unneeded "$dest" 2>/dev/null || echo "bundle.sh: warning: could not strip $(basename "$b")" >&2
  printf 'bin/%s\t%s\n' "$(basename "$b")" "$b" >> "$STAGE/manifest-src"
done

# ---- libraries: classify everything ldd resolves ------------------------------------------------
# glibc's own libraries must come from the target (they go with its ld-linux and kernel).
is_glibc() {
  case "$1" in
    linux-vdso.so* | linux-gate.so* | ld-linux*.so* | ld64.so*) return 0 ;;
    libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.*) return 0 ;;
    libresolv.so.* | libutil.so.* | libanl.so.* | libBrokenLocale.so.* | libthread_db.so.*) return 0 ;;
    libnss_*.so.* | libnsl.so.* | libc_malloc_debug.so.*) return 0 ;;
  esac
  return 1
}
is_driver() {
  case "$1" in libcuda.so* | libnvidia-*.so* | libnvcuvid.so* | libcudadebugger.so*) return 0 ;; esac
  return 1
}
# The CUDA toolkit's libraries: by location, or by name (for those ldd could not find here).
is_cuda_toolkit() {  # NAME PATH
  case "$2" in /usr/local/cuda*) return 0 ;; esac
  case "$(readlink -f "$2" 2>/dev/null || true)" in /usr/local/cuda*) return 0 ;; esac
  case "$1" in
    libcudart.so* | libcublas.so* | libcublasLt.so* | libcurand.so* | libcusolver*.so* | \
    libcusparse*.so* | libcufft*.so* | libnccl.so* | libnvrtc*.so* | libnvJitLink.so* | \
    libcupti.so* | libnvToolsExt.so* | libcudnn*.so* | libnpp*.so* | libnvjpeg.so* | libcufile*.so*)
      return 0 ;;
  esac
  return 1
}

: > "$STAGE/libs"      # "name<TAB>path" of libraries to bundle (first binary that needs it wins)
: > "$STAGE/external"  # "name<TAB>kind<TAB>path" of libraries expected on the GPU machine
missing=()
for b in "${bins[@]}"; do
  ldd_out=$(ldd "$b" 2>&1) || die "ldd failed on $b: $ldd_out"
  # ldd lines: "name => /path (0x..)", "name => not found", "/path/ld-linux.so (0x..)", "linux-vdso.so.1 (0x..)"
  while IFS=$'\t' read -r name path; do
    [ -n "$name" ] || continue
    if is_glibc "$name"; then
      printf '%s\t%s\t%s\n' "$name" "glibc" "$path" >> "$STAGE/external"
    elif is_driver "$name"; then
      printf '%s\t%s\t%s\n' "$name" "driver" "$path" >> "$STAGE/external"
    elif is_cuda_toolkit "$name" "$path"; then
      printf '%s\t%s\t%s\n' "$name" "CUDA toolkit" "$path" >> "$STAGE/external"
    elif [ "$path" = "not found" ]; then
      missing+=("$(basename "$b") needs $name: not found")
    else
      printf '%s\t%s\n' "$name" "$path" >> "$STAGE/libs"
    fi
  done < <(printf '%s\n' "$ldd_out" | awk '
    $2 == "=>" && $3 == "not" { printf "%s\tnot found\n", $1; next }
    $2 == "=>"               { printf "%s\t%s\n", $1, $3; next }
    $1 ~ /^\// || $1 ~ /^linux-(vdso|gate)/ { n = $1; sub(/.*\//, "", n); printf "%s\t%s\n", n, $1 }')
done
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'bundle.sh: error: %s\n' "${missing[@]}" >&2
  exit 1
fi

declare -A seen=()
while IFS=$'\t' read -r name path; do
  if [ -n "${seen[$name]:-}" ]; then
    [ "$(readlink -f "${seen[$name]}")" = "$(readlink -f "$path")" ] ||
      echo "bundle.sh: warning: $name resolves to both ${seen[$name]} and $path; bundling the first" >&2
    continue
  fi
  seen[$name]=$path
  cp -L "$path" "$OUT/lib/$name"
  chmod u+w "$OUT/lib/$name"
done < "$STAGE/libs"

# The newest glibc symbol version anything in the bundle needs (the target's glibc must be at
# least that; check.sh reports the target's).
glibc_needed=unknown
if command -v objdump >/dev/null; then
  glibc_needed=$(find "$OUT/bin" "$OUT/lib" -type f -exec objdump -T {} + 2>/dev/null |
                 grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -k3,3n -u | tail -1 || true)
  [ -n "$glibc_needed" ] || glibc_needed=unknown
fi

# Unpacked sizes, before compressing.
declare -A raw_size=()
for f in "$OUT"/lib/*; do [ -e "$f" ] && raw_size[$(basename "$f")]=$(stat -c %s "$f"); done
if [ -n "$(ls -A "$OUT/lib")" ]; then
  find "$OUT/lib" -type f -size +"$((XZ_MIN_KIB - 1))"k -print0 |
    xargs -0 -r -P "$(nproc)" -n 1 xz "-$XZ_LEVEL" -T1 -f
fi

# ---- configs, scripts, test list ---------------------------------------------------------------
cp -r "$ROOT/configs" "$OUT/configs"
for f in check.sh gpu_epoch.sh unpack.sh tiny_data.py summarize.py gpu_tests.filter; do
  [ -f "$HERE/$f" ] || die "scripts/device/$f is missing"
  cp "$HERE/$f" "$OUT/scripts/device/$f"
done
chmod +x "$OUT"/scripts/device/*.sh "$OUT"/scripts/device/*.py
cat > "$OUT/check.sh" <<'SH'
#!/usr/bin/env bash
# Runs the GPU checks of this bundle: see scripts/device/check.sh (e.g. ./check.sh --out DIR).
exec bash "$(dirname "${BASH_SOURCE[0]}")/scripts/device/check.sh" "$@"
SH
chmod +x "$OUT/check.sh"

filter=$(sed -n 's/^tests=//p' "$HERE/gpu_tests.filter" | head -1)
[ -n "$filter" ] || die "scripts/device/gpu_tests.filter has no tests= line"
{
  echo "# Tests that check.sh runs on the GPU machine (no CTest there): bin/gpu_backend, then each"
  echo "# bin/unit_*, with --gtest_filter=$filter"
  echo "# Listed on the build machine ($(hostname)) from $BUILD."
  for b in "$OUT"/bin/unit_* "$OUT"/bin/gpu_*; do
    [ -e "$b" ] || continue
    echo "$(basename "$b"):"
    # Only listing: with the system libraries of this machine.
    timeout 30 "$b" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null |
      awk '/^Running main/ {next} /^[^ ]/ {suite=$1; next} /^  / {sub(/^  /, ""); sub(/ +#.*/, ""); print "  " suite $0}' || true
  done
} > "$OUT/TESTS.txt"

# The test executables, once listed, are stored compressed too: as raw copies they are over half
# the bundle.
declare -A bin_raw_size=()
for b in "$OUT"/bin/unit_* "$OUT"/bin/gpu_*; do
  [ -f "$b" ] || continue
  [ "$(stat -c %s "$b")" -ge $((XZ_MIN_KIB * 1024)) ] || continue
  printf '%s\0' "$b"
done | xargs -0 -r -P "$(nproc)" -n 1 xz "-$XZ_LEVEL" -T1 -f
for b in "$OUT"/bin/*.xz; do
  [ -e "$b" ] || continue
  name=$(basename "$b" .xz)
  bin_raw_size[$name]=$(xz --robot --list "$b" | awk '$1 == "totals" {print $5}')
  sed -i "s|^bin/$name\t\(.*\)\$|bin/$name.xz\t\1 (xz of ${bin_raw_size[$name]} bytes)|" "$STAGE/manifest-src"
done

# ---- manifest and size --------------------------------------------------------------------------
for name in "${!seen[@]}"; do
  if [ -f "$OUT/lib/$name.xz" ]; then
    printf 'lib/%s.xz\t%s (xz of %s bytes)\n' "$name" "${seen[$name]}" "${raw_size[$name]}"
  else
    printf 'lib/%s\t%s\n' "$name" "${seen[$name]}"
  fi
done >> "$STAGE/manifest-src"
git_rev=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git_dirty=""
[ -z "$(git -C "$ROOT" status --porcelain 2>/dev/null | head -1)" ] || git_dirty=" (uncommitted changes)"
raw_total=0
for n in "${!raw_size[@]}"; do raw_total=$((raw_total + raw_size[$n])); done
for n in "${!bin_raw_size[@]}"; do raw_total=$((raw_total + bin_raw_size[$n])); done
raw_total=$((raw_total + $(du -sb --exclude=lib --exclude='*.xz' "$OUT" | cut -f1)))
{
  echo "mavg device bundle"
  echo "built:    $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname) from $BUILD"
  echo "source:   $ROOT at $git_rev$git_dirty"
  echo "needs on the GPU machine: x86-64 Linux, glibc >= $glibc_needed, the NVIDIA driver, the CUDA"
  echo "          toolkit's libraries in /usr/local/cuda/lib64 (or on LD_LIBRARY_PATH), python3"
  echo "unpacked: $raw_total bytes after scripts/device/unpack.sh"
  echo
  echo "# size  path  <- source"
  find "$OUT" -type f ! -name MANIFEST.txt -printf '%P\n' | LC_ALL=C sort | while IFS= read -r rel; do
    src=$(awk -F'\t' -v p="$rel" '$1 == p {print $2; exit}' "$STAGE/manifest-src")
    [ -n "$src" ] || case "$rel" in
      configs/*) src="$ROOT/$rel" ;;
      scripts/device/*) src="$ROOT/$rel" ;;
      *) src="(generated)" ;;
    esac
    printf '%10s  %s  <- %s\n' "$(stat -c %s "$OUT/$rel")" "$rel" "$src"
  done
  echo
  echo "# Not bundled: expected on the GPU machine (name, kind, where it resolved here)"
  LC_ALL=C sort -u "$STAGE/external" | awk -F'\t' '{printf "  %-28s %-13s %s\n", $1, $2, $3}'
} > "$OUT/MANIFEST.txt"

total=$(du -sb "$OUT" | cut -f1)
nfiles=$(find "$OUT" -type f | wc -l)
limit=$((LIMIT_MIB * 1024 * 1024))
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
echo "bundle: $OUT"
echo "  $(find "$OUT/bin" -type f | wc -l) executables ($(find "$OUT/bin" -name '*.xz' | wc -l) xz-compressed), ${#seen[@]} libraries ($(find "$OUT/lib" -name '*.xz' | wc -l) xz-compressed), $nfiles files"
echo "  size $(mib "$total") ($total bytes; limit $LIMIT_MIB MiB), $(mib "$raw_total") once unpacked"
echo "  needs glibc >= $glibc_needed on the target"
if [ "$total" -gt "$limit" ]; then
  echo "bundle.sh: error: the bundle is $(mib "$total"), over the $LIMIT_MIB MiB that can be copied to the GPU machine (see $OUT/MANIFEST.txt for the largest files)" >&2
  exit 1
fi
