#!/usr/bin/env bash
# Every shipped config and sweep spec loads and validates (plan never creates a database).
source "$(dirname "$0")/lib.bash"
cd "$MAVG_SOURCE_DIR"
for c in configs/*.yaml; do "$MAVG" config check "$c" >/dev/null || fail "$c"; done
for s in sweeps/*.yaml sweeps/paper/table*.yaml sweeps/paper/scale*.yaml sweeps/paper/design-*.yaml \
         sweeps/paper/extra-*.yaml sweeps/extensions/*.yaml; do
  "$MAVG" sweep plan "$s" --results "$WORK/none" >/dev/null || fail "$s"
done
[ ! -e "$WORK/none/mavg.db" ] || fail "plan created a database"
echo PASS
