#!/usr/bin/env bash
# fuzz.replay: every fuzz target once on each of its seeds and recorded regressions (inputs that
# once crashed a reader: tests/fuzz/regressions/<target>/), without libFuzzer, in any build.
#   replay.sh FUZZ_TOOL WORK_DIR
set -euo pipefail
tool=$1 work=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
mkdir -p "$work"
"$tool" seeds "$work/seeds"
targets=$("$tool" list)
[ -n "$targets" ] || { echo "replay.sh: fuzz_tool lists no targets" >&2; exit 1; }
for t in $targets; do
  [ -n "$(ls -A "$work/seeds/$t")" ] || { echo "replay.sh: no seeds for $t" >&2; exit 1; }
  "$tool" replay-valid "$t" "$work/seeds/$t"  # seeds are valid inputs
  if [ -d "$here/regressions/$t" ]; then "$tool" replay "$t" "$here/regressions/$t"; fi
done
