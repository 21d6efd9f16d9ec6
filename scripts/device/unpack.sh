#!/usr/bin/env bash
# unpack.sh [BUNDLE [DEST [BINDEST]]] | unpack.sh --clean [BUNDLE] -- restore the xz-compressed
# files of a device bundle (bundle.sh stores libraries of 256 KiB and more as lib/NAME.xz, and
# the test executables as bin/NAME.xz, to stay under the 60 MiB copy limit) and print the folder
# to put first on LD_LIBRARY_PATH.
#
#   unpack.sh BUNDLE          in place, into BUNDLE/lib and BUNDLE/bin (the bundle grows to
#                             ~160 MiB: too big to copy to the GPU machine again; --clean or
#                             bundle.sh undoes it)
#   unpack.sh BUNDLE DEST [BINDEST]
#                             into DEST (libraries) and BINDEST (test executables; default
#                             DEST/bin), leaving the bundle as it is: each gets links to the
#                             bundle's uncompressed files and the decompressed others (check.sh
#                             does this, into its scratch folder)
#   unpack.sh --clean BUNDLE  remove the uncompressed copies of lib/*.xz and bin/*.xz
# e.g. export LD_LIBRARY_PATH=$(device-bundle/scripts/device/unpack.sh device-bundle /tmp/l):/usr/local/cuda/lib64
# Runs on either machine. Idempotent: a file already there is left alone (each is written under a
# temporary name and renamed, so one that exists is complete). In place on a read-only bundle
# falls back to a fresh ${TMPDIR:-/tmp}/mavg-lib.XXXXXX (executables in its bin/). Needs xz, or
# else python3 (its lzma module). BUNDLE defaults to this script's ../..
set -euo pipefail

clean=""
if [ "${1:-}" = "--clean" ]; then clean=1; shift; fi
BUNDLE=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
LIB="$BUNDLE/lib"
BIN="$BUNDLE/bin"
[ -d "$LIB" ] || { echo "unpack.sh: error: '$LIB' not found (not a device bundle?)" >&2; exit 1; }

if [ -n "$clean" ]; then
  for f in "$LIB"/*.xz "$BIN"/*.xz; do
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

# unpack_dir SRC DEST [x]: DEST gets SRC's uncompressed files (links, unless DEST is SRC) and
# its NAME.xz decompressed as NAME (executable with x).
unpack_dir() {
  local src=$1 dst=$2 exe=${3:-} f name
  [ -d "$src" ] || return 0
  mkdir -p "$dst"
  dst=$(cd "$dst" && pwd)
  src=$(cd "$src" && pwd)
  if [ "$dst" != "$src" ]; then
    for f in "$src"/*; do
      case "$f" in *.xz | *.tmp.*) continue ;; esac
      [ -e "$f" ] && [ ! -e "$dst/$(basename "$f")" ] && ln -s "$f" "$dst/$(basename "$f")"
    done
  fi
  for f in "$src"/*.xz; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .xz)
    [ -e "$dst/$name" ] && continue
    unxz_to "$f" "$dst/$name"
    [ -z "$exe" ] || chmod +x "$dst/$name"
  done
}

dest=${2:-$LIB}
bindest=${3:-}
if [ "$dest" = "$LIB" ] && [ ! -w "$LIB" ]; then
  dest=$(mktemp -d "${TMPDIR:-/tmp}/mavg-lib.XXXXXX")
fi
if [ -z "$bindest" ]; then
  if [ "$dest" = "$LIB" ] && [ -w "$BIN" ]; then bindest=$BIN; else bindest=$dest/bin; fi
fi
unpack_dir "$LIB" "$dest"
unpack_dir "$BIN" "$bindest" x
(cd "$dest" && pwd)
