#!/usr/bin/env bash
# Every kind of bad input gives one clear error line naming the file, key or utterance, and a
# non-zero exit; nothing is left half-written.
source "$(dirname "$0")/lib.bash"
make_small_fmnist data 300 100

good() {  # good EXTRA_YAML > file: a valid small config plus extra lines
  cat <<YAML
data: {train: data/train, dev: data/dev, context: 0}
model: {hidden_layers: 1, hidden_dim: 16}
optimizer: {minibatch: 32}
schedule: {type: constant, lr: 0.01, epochs: 1}
device_options: {threads: 1}
$1
YAML
}

# ---- command line ----
# A misspelt command is named, with the nearest one, at any depth; exit 2 (a bad command line).
expect_error "unknown command 'mavg trian' (did you mean 'mavg train'?" "$MAVG" trian ok.yaml
expect_error "unknown command 'mavg sweep rnu' (did you mean 'mavg sweep run'?" "$MAVG" sweep rnu x.yaml
expect_error "unknown command 'mavg report tabel' (did you mean 'mavg report table'?" "$MAVG" -q report tabel s
rc=0; "$MAVG" trian > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "mavg trian exits $rc, not 2"
# No command at all is still "a subcommand is required".
expect_error "A subcommand is required" "$MAVG" sweep

# ---- config ----
expect_error "missing.yaml: config file not found" "$MAVG" train missing.yaml
printf 'data:\n  train: [a, b\n' > garbled.yaml
expect_error "garbled.yaml:" "$MAVG" train garbled.yaml
good "seed: 1" > unknown.yaml && sed -i 's/minibatch/minibach/' unknown.yaml
expect_error "did you mean 'optimizer.minibatch'" "$MAVG" train unknown.yaml
good "seed: many" > type.yaml
expect_error "key 'seed' expects an integer" "$MAVG" train type.yaml
good "" > ok.yaml
expect_error "optimizer.minibatch: 0 is out of range" "$MAVG" train ok.yaml --set optimizer.minibatch=0
# SGD's max-change: plain SGD only, without momentum.
expect_error "optimizer.sgd_max_change: true needs optimizer.type sgd" \
  "$MAVG" train ok.yaml --set optimizer.type=ngsgd --set optimizer.sgd_max_change=true
expect_error "optimizer.sgd_max_change: true needs optimizer.momentum 0, not 0.5" \
  "$MAVG" train ok.yaml --set optimizer.type=sgd --set optimizer.sgd_max_change=true --set optimizer.momentum=0.5
expect_error "schedule.lr: -0.1 is out of range" "$MAVG" train ok.yaml --set schedule.lr=-0.1
expect_error "data.context: -1 is out of range" "$MAVG" train ok.yaml --set data.context=-1
expect_error "did you mean 'schedule.lr'" "$MAVG" train ok.yaml --set schedule.lrate=1
# A value out of range is blamed on the --set that gave it, not on the file.
expect_error "mavg: error: --set schedule.lr=-2: schedule.lr: -2 is out of range" "$MAVG" train ok.yaml --set schedule.lr=-2

# ---- data ----
# Data that cannot be read refuses the run before its directory is made (the default one
# too); in a directory that exists already (a sweep's) the failure is recorded there.
expect_error "data.train: nowhere/train: not found" "$MAVG" train ok.yaml --set data.train=nowhere/train --out r1 --no-progress
[ ! -e r1 ] || fail "a run refused for its data left a run directory"
expect_error "2 data paths cannot be read: data.train: nowhere/train: not found; data.dev: data/train/feats.ark: not a directory" \
  "$MAVG" train ok.yaml --set data.train=nowhere/train --set data.dev=data/train/feats.ark --no-progress
[ ! -e results ] || fail "a run refused for its data left $(find results -maxdepth 3)"
# A built-in corpus that is not built yet: the command that builds it.
expect_error "data.train: data/digits-small/train: not found (build it: mavg data digits --size small --out data/digits-small)" \
  "$MAVG" train ok.yaml --set data.train=data/digits-small/train --no-progress
expect_error "data.dev: fmnist/dev: not found (build it: mavg data fmnist --out fmnist)" \
  "$MAVG" train ok.yaml --set data.dev=fmnist/dev --no-progress
# A quoted number or boolean is text in YAML: refused as `ten` is, in a config, a --set and a
# sweep's axis; a quoted string stays a string.
good 'parallel: {workers: "2"}' > quoted.yaml
expect_error "line 6: key 'parallel.workers' expects an integer, got the quoted string '2'" "$MAVG" train quoted.yaml --no-progress
expect_error "key 'parallel.deterministic' expects a boolean, got the quoted string 'true'" "$MAVG" train ok.yaml --set "parallel.deterministic='true'" --no-progress
printf 'base: ok.yaml\ngrid: {schedule.lr: ["0.01", 0.02]}\n' > quoted-sweep.yaml
expect_error "quoted-sweep.yaml: line 2: key 'schedule.lr' expects a number, got the quoted string '0.01'" "$MAVG" sweep plan quoted-sweep.yaml --results qres
good 'parallel: {workers: 2, mode: "simulated"}' > quoted-ok.yaml
"$MAVG" config check quoted-ok.yaml > /dev/null || fail "a quoted string value was refused"
mkdir r1b
expect_error "nowhere/train" "$MAVG" train ok.yaml --set data.train=nowhere/train --out r1b --no-progress
grep -qs '"status": "failed"' r1b/state.json || fail "failed run not marked failed"

# A label outside the output layer (10 classes, 5 outputs).
expect_error "outside the output layer" "$MAVG" train ok.yaml --set model.num_outputs=5 --out r2 --no-progress

# Corrupt copies of the training dir.
corrupt() {  # corrupt NAME: copy data/train to NAME with self-contained scp
  rm -rf "$1"; cp -r data/train "$1"
  sed -i "s#[^ ]*/feats.ark:#$PWD/$1/feats.ark:#" "$1/feats.scp"
}
corrupt trunc
truncate -s 1000 trunc/feats.ark
expect_error "trunc/feats.ark" "$MAVG" train ok.yaml --set data.train=trunc --out r3 --no-progress

corrupt header
python3 - <<'PY'
data = bytearray(open("header/feats.ark", "rb").read())
i = data.index(b"BFM ")
data[i:i+4] = b"BXM "
open("header/feats.ark", "wb").write(bytes(data))
PY
expect_error "header/feats.ark" "$MAVG" train ok.yaml --set data.train=header --out r4 --no-progress

# An archive whose key is not UTF-8 (as random bytes give): whatever the error quotes, the run
# ends failed with a readable (valid UTF-8) message in its state and result files.
rm -rf random && cp -r data/train random && rm -f random/feats.scp
printf 'u\xff\xfe\x80 \0BXM \x04\x02\x00\x00\x00' > random/feats.ark
expect_error "utterance 'u\\xFF\\xFE\\x80'" "$MAVG" train ok.yaml --set data.train=random --out r4b --no-progress
python3 - <<'PY' || fail "random bytes: the failure was not recorded readably"
import json
for f in ("r4b/state.json", "r4b/result.json"):
    d = json.load(open(f, encoding="utf-8"))  # valid UTF-8 JSON
    assert d["status"] == "failed", (f, d["status"])
    assert "random/feats.ark" in d["error"], d["error"]
print("ok: random bytes recorded as failed")
PY

# NaN in a feature, and a feature/alignment length mismatch, written as binary Kaldi archives.
mkdir -p nan mismatch biglabel
python3 - <<'PY'
import struct
def mat(key, rows):
    out = key.encode() + b" \0BFM " + b"\4" + struct.pack("<i", len(rows)) + b"\4" + struct.pack("<i", len(rows[0]))
    for r in rows: out += struct.pack("<%df" % len(r), *r)
    return out
def ali(key, ids):
    out = key.encode() + b" \0B" + b"\4" + struct.pack("<i", len(ids))
    for i in ids: out += b"\4" + struct.pack("<i", i)
    return out
open("nan/feats.ark", "wb").write(mat("u1", [[0.0, 1.0]]) + mat("u2", [[0.5, float("nan")]]))
open("nan/ali.ark", "wb").write(ali("u1", [0]) + ali("u2", [1]))
open("mismatch/feats.ark", "wb").write(mat("u1", [[0.0, 1.0], [1.0, 2.0], [3.0, 4.0]]))
open("mismatch/ali.ark", "wb").write(ali("u1", [0, 1]))
open("biglabel/feats.ark", "wb").write(mat("u1", [[0.0, 1.0]]) + mat("u2", [[0.5, 1.0], [1.0, 0.5]]))
open("biglabel/ali.ark", "wb").write(ali("u1", [0]) + ali("u2", [1, 2147483647]))
PY
expect_error "u2" "$MAVG" train ok.yaml --set data.train=nan --out r5 --no-progress
# The largest possible label: "1 + largest" must not overflow and blame another utterance.
expect_error "utterance 'u2': label 2147483647 at frame 1 is not a pdf id" "$MAVG" train ok.yaml --set data.train=biglabel --set data.dev=biglabel --set model.num_outputs=0 --out r5b --no-progress
expect_error "u1" "$MAVG" train ok.yaml --set data.train=mismatch --out r6 --no-progress

# A bad compressed-matrix header (CM with an absurd row count).
mkdir -p cm
python3 - <<'PY'
import struct
hdr = struct.pack("<ffii", 0.0, 1.0, -5, 2)
open("cm/feats.ark", "wb").write(b"u1 \0BCM " + hdr)
open("cm/ali.ark", "wb").write(b"u1 \0B\4" + struct.pack("<i", 1) + b"\4" + struct.pack("<i", 0))
PY
expect_error "cm/feats.ark" "$MAVG" train ok.yaml --set data.train=cm --out r7 --no-progress

# ---- run directory ----
"$MAVG" -q train ok.yaml --out done --no-progress >/dev/null
expect_error "already holds a completed run" "$MAVG" train ok.yaml --out done --no-progress
"$MAVG" -q train ok.yaml --out done --no-progress --force >/dev/null
[ "$(json_get done/state.json attempt)" = 2 ] || fail "forced rerun should be attempt 2"

# ---- model files ----
head -c 100 done/model.bin > short.bin
expect_error "short.bin" "$MAVG" export kaldi-nnet1 short.bin
# Output that cannot be written is an error; devices are written in place, never replaced.
out=$("$MAVG" config reference 2>&1 >/dev/full) && fail "stdout to /dev/full: exit 0"
case "$out" in *"mavg: error: writing to standard output failed: No space left on device"*) echo "ok: stdout full" ;; *) fail "stdout to /dev/full: $out" ;; esac
out=$("$MAVG" config reference 2>&1 >&-) && fail "closed stdout: exit 0"
case "$out" in *"writing to standard output failed"*) echo "ok: stdout closed" ;; *) fail "closed stdout: $out" ;; esac
printf 'data: {train: x, dev: y, context: 1}\nmodel: {hidden_layers: 1, hidden_dim: 8, num_outputs: 4}\noptimizer: {minibatch: 8}\n' > tiny-bench.yaml
expect_error "/dev/full: write failed: No space left on device" "$MAVG" bench train --config tiny-bench.yaml --raw-dim 4 --repeats 1 --json /dev/full
[ -c /dev/full ] || fail "/dev/full was replaced by a regular file"
"$MAVG" -q bench train --config tiny-bench.yaml --raw-dim 4 --repeats 1 --json /dev/null > /dev/null
[ -c /dev/null ] || fail "/dev/null was replaced by a regular file"

echo PASS
