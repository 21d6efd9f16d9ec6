#!/usr/bin/env bash
# mpirun -np N against N simulated workers: the same model (within 1e-5 relative after two
# epochs; bit for bit with parallel.deterministic), with SGD, NG-SGD and AdamW, plain averaging
# and outer optimizers, compressed deltas and streamed fragments.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 3000 500
cat > eq.yaml <<YAML
data: {train: data/train, dev: data/dev, test: data/test}
model: {hidden_layers: 2, hidden_dim: 64}
optimizer: {minibatch: 32, momentum: 0.5}
schedule: {type: exponential, lr: 0.004, final_ratio: 0.5, epochs: 2}
parallel: {average_every: 4}
device_options: {threads: 1}
YAML
for n in 2 4; do
  for det in false true; do
    sets=(--set parallel.workers=$n --set parallel.deterministic=$det)
    "$MAVG" -q train eq.yaml "${sets[@]}" --out sim-$n-$det --no-progress
    "${MPIRUN[@]}" -np $n "$MAVG" -q train eq.yaml "${sets[@]}" --set parallel.mode=mpi \
      --out mpi-$n-$det --no-progress
    echo "np $n deterministic $det: $("$MAVG" model diff sim-$n-$det/model.bin mpi-$n-$det/model.bin)"
    if [ "$det" = true ]; then
      "$MAVG" model diff sim-$n-$det/model.bin mpi-$n-$det/model.bin --max-rel 0
    else
      "$MAVG" model diff sim-$n-$det/model.bin mpi-$n-$det/model.bin --max-rel 1e-5
    fi
    # The CV numbers agree too (reduced over ranks in MPI, one pass in simulated mode).
    python3 - sim-$n-$det mpi-$n-$det <<'PY'
import json, sys
a, b = (json.load(open(f"{d}/result.json")) for d in sys.argv[1:])
assert abs(a["cv_loss"] - b["cv_loss"]) < 1e-4 * a["cv_loss"], (a["cv_loss"], b["cv_loss"])
assert a["world_size"] == b["world_size"]
PY
  done
done
# A model larger than the sum's pipelined piece (784 x 512 + ... = 0.43 M floats > 262,144): the
# ranks sum it in pipelined pieces, deterministic or not, bit for bit the simulated workers' sum.
big=(--set parallel.workers=2 --set model.hidden_dim=512 --set schedule.epochs=1)
"$MAVG" -q train eq.yaml "${big[@]}" --out sim-big --no-progress
for det in false true; do
  "${MPIRUN[@]}" -np 2 "$MAVG" -q train eq.yaml "${big[@]}" --set parallel.deterministic=$det \
    --set parallel.mode=mpi --out mpi-big-$det --no-progress
  "$MAVG" model diff sim-big/model.bin mpi-big-$det/model.bin --max-rel 0 ||
    fail "pipelined sums (deterministic $det): MPI differs from simulated"
done
# NG-SGD: every rank keeps its own preconditioners; bit for bit with deterministic averaging.
ng=(--set parallel.workers=2 --set parallel.deterministic=true --set optimizer.type=ngsgd
    --set optimizer.momentum=0)
"$MAVG" -q train eq.yaml "${ng[@]}" --out sim-ng --no-progress
"${MPIRUN[@]}" -np 2 "$MAVG" -q train eq.yaml "${ng[@]}" --set parallel.mode=mpi --out mpi-ng --no-progress
"$MAVG" model diff sim-ng/model.bin mpi-ng/model.bin --max-rel 0 || fail "ngsgd: MPI differs from simulated"
# ... and with the statistics cleared at every combine (parallel.optimizer_state reset).
"$MAVG" -q train eq.yaml "${ng[@]}" --set parallel.optimizer_state=reset --out sim-ng-reset --no-progress
"${MPIRUN[@]}" -np 2 "$MAVG" -q train eq.yaml "${ng[@]}" --set parallel.optimizer_state=reset \
  --set parallel.mode=mpi --out mpi-ng-reset --no-progress
"$MAVG" model diff sim-ng-reset/model.bin mpi-ng-reset/model.bin --max-rel 0 ||
  fail "ngsgd, state reset at every combine: MPI differs from simulated"
"$MAVG" model diff sim-ng/model.bin sim-ng-reset/model.bin --max-rel 0 >/dev/null 2>&1 &&
  fail "ngsgd: clearing the statistics at every combine changed nothing"
# AdamW inside (its moments kept by every rank, averaged with the parameters) and DiLoCo's outer
# Nesterov and an outer Adam step: bit for bit with deterministic averaging.
adam=(--set parallel.workers=2 --set parallel.deterministic=true --set optimizer.type=adam
      --set optimizer.momentum=0 --set schedule.lr=0.001 --set optimizer.adam.weight_decay=0.1
      --set parallel.optimizer_state=average --set parallel.lr_scaling=none)
for outer in nesterov adam; do
  o=(--set parallel.outer.type=$outer)
  [ $outer = adam ] && o+=(--set parallel.outer.lr=0.002)
  "$MAVG" -q train eq.yaml "${adam[@]}" "${o[@]}" --out sim-adam-$outer --no-progress
  "${MPIRUN[@]}" -np 2 "$MAVG" -q train eq.yaml "${adam[@]}" "${o[@]}" --set parallel.mode=mpi \
    --out mpi-adam-$outer --no-progress
  "$MAVG" model diff sim-adam-$outer/model.bin mpi-adam-$outer/model.bin --max-rel 0 ||
    fail "adam, outer $outer: MPI differs from simulated"
done
# Post-local SGD (every step for 20 steps, then every 4): MPI ranks plan the same points.
post=(--set parallel.workers=2 --set parallel.deterministic=true --set parallel.combine.policy=post_local
      --set parallel.combine.warmup_steps=20)
"$MAVG" -q train eq.yaml "${post[@]}" --out sim-post --no-progress
"${MPIRUN[@]}" -np 2 "$MAVG" -q train eq.yaml "${post[@]}" --set parallel.mode=mpi --out mpi-post --no-progress
"$MAVG" model diff sim-post/model.bin mpi-post/model.bin --max-rel 0 || fail "post-local: MPI differs from simulated"
# The max-change statistics pool every rank's updates as simulated workers pool theirs (also
# under a limit that binds, where the scale factors spread below 1; the collapse check is off
# for its slow start).
mc=(--set optimizer.max_change_per_sample=0.002 --set schedule.collapse.chance_fraction=0)
"$MAVG" -q train eq.yaml "${ng[@]}" "${mc[@]}" --out sim-ngmc --no-progress
"${MPIRUN[@]}" -np 2 "$MAVG" -q train eq.yaml "${ng[@]}" "${mc[@]}" --set parallel.mode=mpi \
  --out mpi-ngmc --no-progress
for run in ng ngmc; do
  python3 - "$run" <<'PY' || fail "ngsgd: MPI's max-change statistics differ from simulated"
import json, sys
keys = ("max_change_limited", "max_change_scale_p50", "max_change_scale_p10")
sim = [[json.loads(l)[k] for k in keys] for l in open("sim-%s/metrics.jsonl" % sys.argv[1])]
mpi = [[json.loads(l)[k] for k in keys] for l in open("mpi-%s/metrics.jsonl" % sys.argv[1])]
print(sys.argv[1], "max-change statistics per epoch:", sim)
assert sim == mpi, (sim, mpi)
PY
done
# Compressed outer deltas (parallel.compress): the ranks all-gather the packed bytes that
# simulated workers decode too, and both sum the decoded deltas in rank order: bit for bit even
# without parallel.deterministic. Each worker's bytes per combine are the packed size, counted
# here from the model's tensors.
for c in "int4 16 true" "fp8 0 false" "bf16 0 true"; do
  read -r f b ef <<<"$c"
  z=(--set parallel.workers=2 --set parallel.outer.type=nesterov --set parallel.average_every=8
     --set parallel.compress.format=$f --set parallel.compress.error_feedback=$ef)
  [ "$f" = bf16 ] || z+=(--set parallel.compress.block=$b)
  "$MAVG" -q train eq.yaml "${z[@]}" --out sim-z-$f --no-progress
  "${MPIRUN[@]}" -np 2 "$MAVG" -q train eq.yaml "${z[@]}" --set parallel.mode=mpi \
    --out mpi-z-$f --no-progress
  "$MAVG" model diff sim-z-$f/model.bin mpi-z-$f/model.bin --max-rel 0 ||
    fail "compressed $f: MPI differs from simulated"
  python3 - "$f" "$b" <<'PY' || fail "compressed $f: bytes per combine are not the packed size"
import json, math, sys
fmt, block = sys.argv[1], int(sys.argv[2])
dims = [784, 64, 64, 10]  # the data's features, two hidden layers, its classes
tensors = []
for i, o in zip(dims, dims[1:]):
    tensors += [i * o, o]
n = sum(tensors)
scales = sum(math.ceil(t / block) if block else 1 for t in tensors)
packed = {"int4": 4 * scales + (n + 1) // 2, "fp8": 4 * scales + n, "bf16": 2 * n}[fmt]
for run in ("sim", "mpi"):
    for line in open(f"{run}-z-{fmt}/metrics.jsonl"):
        row = json.loads(line)
        assert row["comm_bytes"] == row["averagings"] * packed, (run, row["comm_bytes"], row["averagings"], packed)
print(fmt, "bytes per combine", packed, "of", 4 * n, "uncompressed")
PY
done
"$MAVG" model diff sim-z-int4/model.bin sim-z-fp8/model.bin --max-rel 0 >/dev/null 2>&1 &&
  fail "int4 and fp8 deltas gave the same model"
# Three ranks: a sum of three decoded deltas depends on its order, so this fails if the ranks'
# blocks were gathered out of place or summed out of rank order.
z3=(--set parallel.workers=3 --set parallel.average_every=8 --set parallel.compress.format=int4
    --set parallel.compress.error_feedback=true)
"$MAVG" -q train eq.yaml "${z3[@]}" --out sim-z3 --no-progress
"${MPIRUN[@]}" -np 3 "$MAVG" -q train eq.yaml "${z3[@]}" --set parallel.mode=mpi --out mpi-z3 --no-progress
"$MAVG" model diff sim-z3/model.bin mpi-z3/model.bin --max-rel 0 ||
  fail "compressed int4, 3 ranks: MPI differs from simulated"
# Streaming (parallel.stream): three fragments of one layer each, every one combined at its own
# point of each period of 8 minibatches, merged one step later and mixed half and half, with an
# outer Nesterov step per fragment: an MPI non-blocking all-reduce of each fragment (rank order
# with parallel.deterministic) against the simulated workers' sum; then 4-bit deltas of two
# contiguous fragments at 3 ranks. Bit for bit. The bytes: every period carries each fragment
# once, and an epoch's end all of them.
s1=(--set parallel.workers=2 --set parallel.deterministic=true --set parallel.average_every=8
    --set parallel.outer.type=nesterov --set parallel.stream.fragments=3
    --set parallel.stream.overlap_steps=1 --set parallel.stream.mix=0.5)
s3=(--set parallel.workers=3 --set parallel.average_every=8 --set parallel.stream.fragments=2
    --set parallel.stream.pattern=contiguous --set parallel.stream.overlap_steps=2
    --set parallel.compress.format=int4 --set parallel.compress.error_feedback=true)
for c in 2 3; do
  if [ $c = 2 ]; then sets=("${s1[@]}"); else sets=("${s3[@]}"); fi
  "$MAVG" -q train eq.yaml "${sets[@]}" --out sim-s$c --no-progress
  "${MPIRUN[@]}" -np $c "$MAVG" -q train eq.yaml "${sets[@]}" --set parallel.mode=mpi \
    --out mpi-s$c --no-progress
  "$MAVG" model diff sim-s$c/model.bin mpi-s$c/model.bin --max-rel 0 ||
    fail "streaming at $c ranks: MPI differs from simulated"
done
python3 - <<'PY' || fail "streaming: the exchanges or bytes are not each fragment's"
import json
dims = [784, 64, 64, 10]
layers = [i * o + o for i, o in zip(dims, dims[1:])]  # 50240, 4160, 650
n = sum(layers)
for run in ("sim-s2", "mpi-s2"):
    for line in open(f"{run}/metrics.jsonl"):
        row = json.loads(line)
        f = 3
        periods = (row["averagings"] - f + 1) // f  # (periods - 1) f + (f - 1) + f exchanges
        assert (periods - 1) * f + (f - 1) + f == row["averagings"], row["averagings"]
        # each period all three fragments; the last period's last is the epoch's end (all)
        want = 4 * (periods * n + (n - layers[2]))
        assert row["comm_bytes"] == want, (run, row["comm_bytes"], want)
print("streaming: bytes per epoch are each fragment's floats")
# What every worker received: the means (as many bytes as it sent), or with compressed deltas
# the other N - 1 workers' packed deltas; the run's totals are the epochs' sums.
for run, others in (("sim-s2", 1), ("mpi-s2", 1), ("sim-s3", 2), ("mpi-s3", 2), ("mpi-z3", 2)):
    rows = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
    for row in rows:
        assert row["comm_bytes_received"] == others * row["comm_bytes"], (run, row)
    result = json.load(open(f"{run}/result.json"))
    assert result["comm_bytes_received"] == sum(r["comm_bytes_received"] for r in rows), run
print("bytes received: the means, or the other workers' packed deltas")
PY
# A rank count that does not match parallel.workers is a clear error on every rank.
rc=0
out=$("${MPIRUN[@]}" -np 2 "$MAVG" train eq.yaml --set parallel.workers=3 --set parallel.mode=mpi \
  --out bad --no-progress 2>&1) || rc=$?
[ "$rc" -ne 0 ] || fail "mismatched rank count should fail"
echo "$out" | contains "parallel.workers is 3 but 2 MPI rank(s) were started" || fail "no clear message: $out"
echo PASS
