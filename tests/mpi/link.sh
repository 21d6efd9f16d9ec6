#!/usr/bin/env bash
# Opt-in (MAVG_LINK_TEST=1; root, iproute2): scripts/bench/link.sh end to end on a toy network
# at 100 Mbit/s: two MPI ranks in two network namespaces joined by a shaped veth link train
# every arm; the report has a row per arm with the measured and modelled epoch, the bytes on
# the wire are at least the bytes the runs recorded (and close to them where the exchanges
# dominate: data parallel), the model is within a factor of two of every measured epoch, and
# the namespaces are gone afterwards.
source "$(dirname "$0")/lib.bash"
[ "${MAVG_LINK_TEST:-0}" = 1 ] || { echo "SKIP: opt-in, set MAVG_LINK_TEST=1 (root, ip, tc)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
unset OMPI_MCA_btl OMPI_MCA_btl_tcp_if_include OMPI_MCA_oob_tcp_if_include
before=$(ip netns list | grep -c '^mavg-link-' || true)
RATES=100mbit EPOCHS=1 DATA="$WORK/data" RESULTS="$WORK/res" OUT="$WORK/link.md" \
  SET="model.hidden_dim=64" MAVG="$MAVG" bash "$MAVG_SOURCE_DIR/scripts/bench/link.sh" > run.txt 2>&1 ||
  fail "link.sh failed: $(tail -5 run.txt)"
[ "$(ip netns list | grep -c '^mavg-link-' || true)" = "$before" ] || fail "namespaces left behind: $(ip netns list)"
cat "$WORK/link.md"
python3 - "$WORK/link.md" <<'PY'
import sys
rows = [l.split("|")[1:-1] for l in open(sys.argv[1]) if l.startswith("| average_every")]
assert len(rows) == 5, rows
for arm, measured, model, ratio, fitted, fitted_ratio, recorded, wire, wire_ratio in rows:
    ratio = float(ratio.split()[0])
    assert 0.5 < ratio < 2.0, (arm, measured, model)
    assert 0.5 < float(fitted_ratio.split()[0]) < 2.0, (arm, measured, fitted)
    sent = float(wire.split(",")[0])
    assert sent >= float(recorded), (arm, sent, recorded)
    if "average_every 1," in arm:
        assert float(wire_ratio) < 1.1, (arm, wire_ratio)
print("link: every arm measured, modelled and counted on the wire")
PY
echo PASS
