#!/usr/bin/env bash
# Shard-only loading: under mpirun -np N each rank holds the training frames of its own shard
# (together exactly the corpus, each about 1/N), where --whole (every rank reads everything,
# as before) holds the whole corpus per rank; and training from shards gives the model of N
# simulated workers holding everything, bit for bit (deterministic sums), with speaker CMVN,
# deltas and the global normalisation summed over the ranks.
source "$(dirname "$0")/lib.bash"
small=(--train-utts 80 --dev-utts 12 --test-utts 8 --test-seen-utts 4 --speakers-per-voice 3
       --voices flite:kal16 espeak:en-us)
"$MAVG" -q data digits --out d "${small[@]}" > /dev/null
for set in train dev test; do "$MAVG" -q data cmvn d/$set > /dev/null; done
cat > s.yaml <<YAML
data: {train: d/train, dev: d/dev, test: d/test, context: 2, cmvn: speaker, deltas: 1}
model: {hidden_layers: 1, hidden_dim: 16}
optimizer: {minibatch: 32}
schedule: {type: constant, lr: 0.004, epochs: 1, collapse: {chance_fraction: 0}}
parallel: {average_every: 4, deterministic: true}
decode: {tune: false}
device_options: {threads: 1}
YAML
for n in 1 3; do
  "${MPIRUN[@]}" -np $n "$MAVG" -q bench data --config s.yaml --json own-$n.json > /dev/null
  "${MPIRUN[@]}" -np $n "$MAVG" -q bench data --config s.yaml --whole --json whole-$n.json > /dev/null
done
/usr/bin/python3 - <<'PY'
import json
total = json.load(open("own-1.json"))["train_frames_total"]
for n in (1, 3):
    own, whole = (json.load(open(f"{k}-{n}.json")) for k in ("own", "whole"))
    held = [r["train_frames"] for r in own["per_rank"]]
    assert len(held) == n and sum(held) == total, (n, held, total)
    # Shards are balanced by frames: each within one long utterance of total / n.
    assert all(abs(h - total / n) < 0.1 * total / n + 400 for h in held), (n, held)
    assert all(r["train_frames"] == total for r in whole["per_rank"]), whole["per_rank"]
    mib = [r["train_features_mib"] for r in own["per_rank"]]
    whole_mib = whole["per_rank"][0]["train_features_mib"]
    assert abs(sum(mib) - whole_mib) < 1e-6 * whole_mib, (mib, whole_mib)
    print(f"ok: np {n}: ranks hold {held} of {total} frames ({[round(m, 2) for m in mib]} MiB); "
          f"--whole: {whole_mib:.2f} MiB each")
PY
"$MAVG" -q train s.yaml --set parallel.workers=3 --out sim --no-progress > /dev/null
"${MPIRUN[@]}" -np 3 "$MAVG" train s.yaml --set parallel.workers=3 --set parallel.mode=mpi \
  --out mpi --no-progress > /dev/null 2>&1
"$MAVG" model diff sim/model.bin mpi/model.bin --max-rel 0 ||
  fail "shard-loaded MPI ranks differ from simulated workers holding everything"
grep -q "1 of 3 shards" mpi/log.txt || fail "rank 0 did not load one shard: $(grep loading mpi/log.txt)"
# The global normalisation has the same bits for any number of workers and either mode, also
# with plain (non-deterministic) MPI sums: 1 and 3 simulated workers, 3 ranks.
"$MAVG" -q train s.yaml --set parallel.workers=1 --out sim1 --no-progress > /dev/null
"${MPIRUN[@]}" -np 3 "$MAVG" -q train s.yaml --set parallel.workers=3 --set parallel.mode=mpi \
  --set parallel.deterministic=false --out mpi-nd --no-progress > /dev/null
/usr/bin/python3 - <<'PY'
import json, struct
def transform(path):
    b = open(path, "rb").read()
    n = struct.unpack_from("<Q", b, 12)[0]
    return json.loads(b[20:20 + n])["feature_transform"]
t = {k: transform(f"{k}/model.bin") for k in ("sim1", "sim", "mpi", "mpi-nd")}
for k in t:
    assert t[k]["shift"] == t["sim1"]["shift"] and t[k]["scale"] == t["sim1"]["scale"], k
    assert t[k]["pipeline"] == {"speaker_cmvn": True, "norm_vars": False, "delta_order": 1}, t[k]
print(f"ok: the same normalisation bits for 1 and 3 workers, simulated and MPI ({len(t['sim1']['shift'])} dims)")
PY
echo PASS
