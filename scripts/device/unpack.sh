#!/usr/bin/env bash
# unpack.sh [BUNDLE [DEST]] | unpack.sh --clean [BUNDLE] -- restore the xz-compressed libraries
# of a device bundle (bundle.sh stores libraries of 256 KiB and more as lib/NAME.xz to stay
# under the 60 MiB copy limit) and print the folder to put first on LD_LIBRARY_PATH.
#
#   unpack.sh BUNDLE          in place, into BUNDLE/lib (the bundle grows to ~140 MiB: too big
#                             to copy to the GPU machine again; --clean or bundle.sh undoes it)
#   unpack.sh BUNDLE DEST     into DEST, leaving the bundle as it is: DEST gets links to the
#                             uncompressed libraries and the decompressed others (check.sh does
#                             this, into its scratch folder)
#   unpack.sh --clean BUNDLE  remove the uncompressed copies of lib/*.xz from BUNDLE/lib
# e.g. export LD_LIBRARY_PATH=$(device-bundle/scripts/device/unpack.sh device-bundle /tmp/l):/usr/local/cuda/lib64
# Runs on either machine. Idempotent: a library already there is left alone (each is written
# under a temporary name and renamed, so one that exists is complete). In place on a read-only
# bundle falls back to a fresh ${TMPDIR:-/tmp}/mavg-lib.XXXXXX. Needs xz, or else python3 (its
# lzma module). BUNDLE defaults to this script's ../..
set -euo pipefail

clean=""
if [ "${1:-}" = "--clean" ]; then clean=1; shift; fi
BUNDLE=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
LIB="$BUNDLE/lib"
[ -d "$LIB" ] || { echo "unpack.sh: error: '$LIB' not found (not a device bundle?)" >&2; exit 1; }

if [ -n "$clean" ]; then
  for f in "$LIB"/*.xz; do
    [ -e "$f" ] || continue
    rm -f "${f%.xz}"
  done
  exit 0
fi

unxz_to() {  # unxz_to SRC.xz DEST
  if command -v xz >/dev/null; then
    xz -dc "$1" > "$2.tmp.$$"
  else
    python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as i, open(sys.argv[2], "wb") as o: shutil.copyfileobj(i, o)' "$1" "$2.tmp.$$"
  fi
  mv -f "$2.tmp.$$" "$2"
}

dest=${2:-$LIB}
if [ "$dest" = "$LIB" ] && [ ! -w "$LIB" ]; then
  dest=$(mktemp -d "${TMPDIR:-/tmp}/mavg-lib.XXXXXX")
fi
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
LIB=$(cd "$LIB" && pwd)
if [ "$dest" != "$LIB" ]; then
  for f in "$LIB"/*; do
    case "$f" in *.xz | *.tmp.*) continue ;; esac
    [ -e "$f" ] && [ ! -e "$dest/$(basename "$f")" ] && ln -s "$f" "$dest/$(basename "$f")"
  done
fi
for f in "$LIB"/*.xz; do
  [ -e "$f" ] || continue
  name=$(basename "$f" .xz)
  [ -e "$dest/$name" ] && continue
  unxz_to "$f" "$dest/$name"
done
echo "$dest"
