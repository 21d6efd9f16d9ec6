#!/usr/bin/env bash
# Training across a real, shaped link: two MPI ranks in two network namespaces of this machine
# joined by a veth pair whose ends tc shapes to each RATE (tbf; with DELAY, netem adds that
# latency each way where the kernel has sch_netem). Each rate runs a small sweep of arms on the
# digits task's small corpus (data parallel, local SGD every H, DiLoCo, streaming DiLoCo, DiLoCo
# with int4 deltas; 2 workers, one thread each, and a 1-worker baseline), and writes, per arm:
# the measured epoch time beside the performance model's for the same link (`mavg report speedup
# --interconnect RATE[@DELAY]`), and the bytes rank 0 put on the wire (the veth's counters)
# beside the bytes the run recorded. A model more than 20 % off is marked.
#   scripts/bench/link.sh                  RATES="1gbit 100mbit", one epoch per run
# Environment: RATES (tc rates, e.g. "1gbit 100mbit 10mbit"), DELAY (e.g. 1ms: netem, one way),
# EPOCHS (default 1), MAVG (default build/bin/mavg), DATA (default data), RESULTS (default
# results/link; a store per link in it: arms done by an earlier call are not run again, and
# their bytes on the wire are kept with the store), OUT (a Markdown file; default: standard
# output only), SET (KEY=VALUE ..., set on every run).
# Needs root, ip and tc (iproute2) and mpirun. The namespaces and the link are removed on exit.
# Bytes on the wire count TCP/IP headers and MPI's and PMIx's own messages too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rates="${RATES:-1gbit 100mbit}"
delay="${DELAY:-}"
epochs="${EPOCHS:-1}"
mavg="${MAVG:-build/bin/mavg}"
data="${DATA:-data}"
results="${RESULTS:-results/link}"
out="${OUT:-}"
fail() { echo "link.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces and tc)"
for c in ip tc mpirun python3; do command -v "$c" > /dev/null || fail "$c not found (iproute2, OpenMPI)"; done
[ -x "$mavg" ] || fail "$mavg: not built (scripts/setup.sh)"
case "$epochs" in '' | *[!0-9]* | 0) fail "EPOCHS must be a positive integer, not '$epochs'" ;; esac
mavg=$(readlink -f "$mavg")
sets=()
for kv in ${SET:-}; do sets+=(--set "$kv"); done
real_mpirun=$(command -v mpirun)

# A rate as tc writes it, in bytes per second (checked here, before anything is set up).
rate_bytes() {
  python3 - "$1" <<'PY'
import re, sys
m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(kbit|mbit|gbit)", sys.argv[1])
if not m or float(m.group(1)) <= 0:
    sys.exit(f"link.sh: RATES: '{sys.argv[1]}' is not a rate such as 100mbit or 1gbit")
print(int(float(m.group(1)) * {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[m.group(2)] / 8))
PY
}
for r in $rates; do rate_bytes "$r" > /dev/null; done
[ -z "$delay" ] || [[ "$delay" =~ ^[0-9]+(\.[0-9]+)?(us|ms)$ ]] || fail "DELAY: '$delay' is not a latency such as 1ms or 200us"

work=$(mktemp -d)
ns0="mavg-link-$$-0" ns1="mavg-link-$$-1" if0="mlk$$a" if1="mlk$$b"
cleanup() {
  ip link del "$if0" 2> /dev/null || true  # where setup stopped before moving it
  ip netns del "$ns0" 2> /dev/null || true
  ip netns del "$ns1" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns0"
ip netns add "$ns1"
ip link add "$if0" type veth peer name "$if1"
ip link set "$if0" netns "$ns0"
ip link set "$if1" netns "$ns1"
ip -n "$ns0" addr add 10.253.7.1/24 dev "$if0"
ip -n "$ns1" addr add 10.253.7.2/24 dev "$if1"
for n in "$ns0" "$ns1"; do ip -n "$n" link set lo up; done
ip -n "$ns0" link set "$if0" up
ip -n "$ns1" link set "$if1" up
if [ -n "$delay" ]; then
  ip netns exec "$ns0" tc qdisc add dev "$if0" root netem delay "$delay" 2> /dev/null ||
    fail "DELAY needs tc's netem (sch_netem), which this kernel does not have"
  ip netns exec "$ns0" tc qdisc del dev "$if0" root
fi

# shape RATE: both ends of the link, tbf with 1 ms of burst (a larger bucket, refilled while
# the workers compute, lets a whole exchange through at memory speed; netem's own rate with
# DELAY).
shape() {
  local bytes burst
  bytes=$(rate_bytes "$1")
  burst=$((bytes / 1000 > 16384 ? bytes / 1000 : 16384))
  for end in "$ns0:$if0" "$ns1:$if1"; do
    if [ -n "$delay" ]; then
      ip netns exec "${end%%:*}" tc qdisc replace dev "${end#*:}" root netem delay "$delay" rate "$1"
    else
      ip netns exec "${end%%:*}" tc qdisc replace dev "${end#*:}" root tbf rate "$1" burst "$burst" latency 100ms
    fi
  done
}

# The sweep's launcher starts `mpirun -np N --bind-to none CMD...`: this mpirun starts rank 0
# in one namespace and rank 1 in the other (MPI over TCP on the link; PMIx reaches rank 1 over
# it too), and logs the bytes rank 0's end of the link sent and received during the run.
mkdir -p "$work/bin"
cat > "$work/bin/mpirun" <<EOF
#!/usr/bin/env bash
set -u
[ "\$1" = -np ] || { echo "link.sh mpirun: expected -np N first, got \$*" >&2; exit 2; }
np=\$2; shift 2
[ "\$1" = --bind-to ] && shift 2
out=; prev=
for a in "\$@"; do [ "\$prev" = --out ] && out=\$a; prev=\$a; done
counters() { ip netns exec $ns0 sh -c 'echo \$(cat /sys/class/net/$if0/statistics/tx_bytes) \$(cat /sys/class/net/$if0/statistics/rx_bytes)'; }
read -r tx0 rx0 < <(counters)
export PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=10.253.7.0/24
mpi=("$real_mpirun" --allow-run-as-root --bind-to none -x PMIX_MCA_ptl_tcp_remote_connections
     -x PMIX_MCA_ptl_tcp_if_include --mca btl tcp,self --mca btl_tcp_if_include 10.253.7.0/24
     --mca oob_tcp_if_include 10.253.7.0/24)
rc=0
case \$np in
  1) ip netns exec $ns0 "\${mpi[@]}" -np 1 "\$@" || rc=\$? ;;
  2) ip netns exec $ns0 "\${mpi[@]}" -np 1 "\$@" : -np 1 ip netns exec $ns1 "\$@" || rc=\$? ;;
  *) echo "link.sh mpirun: the link joins 2 ranks, not \$np" >&2; exit 2 ;;
esac
read -r tx1 rx1 < <(counters)
[ -z "\$out" ] || echo "\$out \$((tx1 - tx0)) \$((rx1 - rx0))" >> "$work/wire.txt"
exit \$rc
EOF
chmod +x "$work/bin/mpirun"

if [ ! -f "$data/digits-small/train/feats.scp" ]; then
  "$mavg" data digits --size small --out "$data/digits-small"
fi
report="$work/report.md"
for rate in $rates; do
  link="$rate${delay:+@$delay}"
  name="link-$rate${delay:+-$delay}"
  name=${name//./_}
  # A store per link: the runs' configs (and so their ids) are the same at every rate.
  store="$results/$name"
  mkdir -p "$store"
  touch "$store/wire.txt"  # a run made again adds a line; its last line counts
  cat > "$work/$name.yaml" <<YAML
# scripts/bench/link.sh: 2 MPI ranks across a veth link shaped to $link.
name: $name
base: $(pwd)/configs/digits.yaml
set:
  data.train: $(readlink -f "$data")/digits-small/train
  data.dev: $(readlink -f "$data")/digits-small/dev
  data.test: $(readlink -f "$data")/digits-small/test
  model.hidden_layers: 2
  model.hidden_dim: 256
  optimizer.type: adam
  optimizer.minibatch: 128
  schedule.lr: 0.003
  schedule.epochs: $epochs
  parallel.mode: mpi
  parallel.lr_scaling: none
zip:
  - parallel.workers:                 [1, 2, 2, 2, 2, 2]
    parallel.average_every:           [1, 1, 46, 46, 46, 46]
    parallel.outer.type:              [average, average, average, nesterov, nesterov, nesterov]
    parallel.stream.fragments:        [1, 1, 1, 1, 3, 1]
    parallel.stream.overlap_steps:    [0, 0, 0, 0, 5, 0]
    parallel.stream.mix:              [0, 0, 0, 0, 0.5, 0]
    parallel.compress.format:         [fp32, fp32, fp32, fp32, fp32, int4]
resources: {threads: 1}
YAML
  shape "$rate"
  : > "$work/wire.txt"
  PATH="$work/bin:$PATH" "$mavg" sweep run "$work/$name.yaml" --results "$store" --jobs 1 \
    --threads 1 "${sets[@]}"
  cat "$work/wire.txt" >> "$store/wire.txt"
  sweep=$("$mavg" sweep plan "$work/$name.yaml" --results "$store" "${sets[@]}" |
    sed -n '1s/^sweep \([^ ]*\) .*/\1/p')
  "$mavg" report speedup "$sweep" --results "$store" --interconnect "$link" --format json \
    > "$work/$name.json"
  # The link as it carries one exchange of the model: a measured all-reduce of its parameters
  # between the two namespaces, the model's link fitted to it (report speedup --fit).
  params=$(/usr/bin/python3 -c 'import json, os, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
dirs = [r[0] for r in c.execute("select r.run_dir from runs r join sweep_runs s on "
        "s.run_id = r.run_id where s.sweep = ? and r.status = ?", (sys.argv[2], "completed"))]
sizes = {json.load(open(os.path.join(d, "result.json")))["num_params"] for d in dirs}
if len(sizes) != 1:
    sys.exit(f"link.sh: the completed runs of {sys.argv[2]} have {len(sizes)} model sizes")
print(sizes.pop())' "$store/mavg.db" "$sweep")
  "$work/bin/mpirun" -np 2 --bind-to none "$mavg" -q bench allreduce --floats "$params" \
    --repeats 20 --json "$store/allreduce.json" > /dev/null
  "$mavg" report speedup "$sweep" --results "$store" --fit "$store/allreduce.json" \
    --format json > "$work/$name-fit.json"
  /usr/bin/python3 - "$store/mavg.db" "$sweep" "$work/$name.json" "$store/wire.txt" "$link" \
    "$work/$name-fit.json" "$store/allreduce.json" >> "$report" <<'PY'
import json, os, sqlite3, sys
db, sweep, speedup, wire, link, fitted, bench = sys.argv[1:]
doc = json.load(open(speedup))
rows = [dict(zip(doc["header"], row)) for row in doc["rows"]]
fit = json.load(open(fitted))
fit_rows = [dict(zip(fit["header"], row)) for row in fit["rows"]]
fit_col = next(h for h in fit["header"] if h.startswith("model epoch s"))
ar = json.load(open(bench))
sent = {}
for line in open(wire):
    out, tx, rx = line.split()
    sent[os.path.realpath(out)] = (int(tx), int(rx))
con = sqlite3.connect(db)
runs = [(dict(json.loads(axes)), run_dir, result) for axes, run_dir, result in con.execute(
    "select s.axes_json, r.run_dir, r.run_dir from sweep_runs s join runs r on r.run_id = s.run_id "
    "where s.sweep = ?", (sweep,))]
print(f"\n### {link}\n")
print(f"An all-reduce of the model's {ar['floats']:,} floats across the link took "
      f"{ar['allreduce_s_median'] * 1e3:.1f} ms (median of {ar['repeats']}): "
      f"{ar['allreduce_busbw_gb_per_s'] * 8:.3f} Gbit/s of bus bandwidth, the fitted link.\n")
print("| arm | measured epoch s | model epoch s (nominal link) | model / measured | "
      "model epoch s (fitted link) | fitted / measured | recorded MB sent | "
      "MB on the wire (rank 0 sent, received) | wire / recorded |")
print("|---|---|---|---|---|---|---|---|---|")
col = f"model epoch s ({link})"
def num(v):
    """A cell as a number; None where the report has none ('–', empty)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
fmt = lambda v, d=2: "–" if num(v) is None else f"{num(v):.{d}f}"
for r in rows:
    axes = {k: str(v) for k, v in r.items() if k.startswith("parallel.")}
    if axes.get("parallel.workers") == "1":
        continue
    arm = ", ".join(f"{k.split('.', 1)[1]} {v}" for k, v in axes.items() if k != "parallel.workers")
    measured, model = num(r.get("measured epoch s")), num(r.get(col))
    ratio = model / measured if measured and model else None
    mark = "" if ratio is None or abs(ratio - 1) <= 0.2 else " **(off by more than 20 %)**"
    same = [f for f in fit_rows if all(str(f.get(k)) == v for k, v in axes.items())]
    fitted_s = num(same[0].get(fit_col)) if len(same) == 1 else None
    fit_ratio = fitted_s / measured if measured and fitted_s else None
    fit_mark = "" if fit_ratio is None or abs(fit_ratio - 1) <= 0.2 else " **(off by more than 20 %)**"
    match = [d for a, d, _ in runs if all(str(a.get(k)) == v for k, v in axes.items())]
    recorded = wire_tx = wire_rx = None
    if len(match) == 1 and os.path.exists(f"{match[0]}/result.json"):
        recorded = json.load(open(f"{match[0]}/result.json")).get("comm_bytes")
        wire_tx, wire_rx = sent.get(os.path.realpath(match[0]), (None, None))
    print(f"| {arm} | {fmt(measured)} | {fmt(model)} | {fmt(ratio)}{mark} | "
          f"{fmt(fitted_s)} | {fmt(fit_ratio)}{fit_mark} | "
          f"{fmt(recorded and recorded / 1e6)} | {fmt(wire_tx and wire_tx / 1e6)}, "
          f"{fmt(wire_rx and wire_rx / 1e6)} | "
          f"{fmt(wire_tx / recorded if wire_tx and recorded else None)} |")
PY
done
{
  echo "# Training across a shaped veth link ($(date -u +%Y-%m-%d), $("$mavg" --version | head -1))"
  echo
  echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; rates: $rates; one-way delay: ${delay:-none (tbf only)}; $epochs epoch(s) per run."
  cat "$report"
} | if [ -n "$out" ]; then tee "$out"; else cat; fi
