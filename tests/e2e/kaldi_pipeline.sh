#!/usr/bin/env bash
# A Kaldi recipe's inputs, end to end, against references computed here in numpy:
#  1. Kaldi-written features (tests/fixtures/kaldi/feats.ark) with per-speaker statistics
#     written by numpy: `mavg data features --cmvn speaker [--norm-vars] --deltas 2` equals
#     apply-cmvn | add-deltas computed in numpy; `mavg data cmvn` writes the statistics numpy
#     computes; a speaker without statistics is skipped.
#  2. Training from alignments given as data.ali -- gzip'd archives by glob, and the same
#     through a pipe -- with speaker CMVN and deltas: both give the same model bit for bit;
#     `mavg export kaldi-dir` writes cmvn_opts/delta_opts, and numpy running the exported files
#     on features normalised and delta'd in numpy gives `mavg forward`'s posteriors.
source "$(dirname "$0")/lib.bash"
export PYTHONPATH="$MAVG_SOURCE_DIR/tests/e2e"

# ---- 1. The pipeline on Kaldi's own features --------------------------------------------
mkdir -p k
cp "$MAVG_SOURCE_DIR/tests/fixtures/kaldi/feats.ark" k/feats.ark
/usr/bin/python3 - <<'PY'
import struct
import numpy as np
from kaldi_read import binary_matrices
feats = binary_matrices("k/feats.ark")
keys = list(feats)
# Three speakers by position; the last utterance's speaker has no statistics.
spk = {k: (f"spk{i % 3}" if i < len(keys) - 1 else "spk_none") for i, k in enumerate(keys)}
open("k/utt2spk", "w").write("".join(f"{k} {spk[k]}\n" for k in keys))
# compute-cmvn-stats, written byte by byte as Kaldi's double matrices (DM).
ark, scp = bytearray(), []
for s in ("spk0", "spk1", "spk2"):
    x = np.concatenate([np.array(feats[k], dtype=np.float64) for k in keys if spk[k] == s])
    st = np.zeros((2, x.shape[1] + 1))
    st[0, :-1], st[0, -1], st[1, :-1] = x.sum(0), len(x), (x * x).sum(0)
    ark += f"{s} ".encode()
    scp.append(f"{s} k/cmvn_np.ark:{len(ark)}\n")
    ark += b"\0BDM " + b"\x04" + struct.pack("<i", 2) + b"\x04" + struct.pack("<i", st.shape[1])
    ark += st.astype("<f8").tobytes()
open("k/cmvn_np.ark", "wb").write(ark)
open("k/cmvn.scp", "w").write("".join(scp))
PY
"$MAVG" -q data features k --cmvn speaker --deltas 2 --out ark:k/means.ark > /dev/null
"$MAVG" -q data features k --cmvn speaker --norm-vars --deltas 2 --out ark,t:k/both.txt > /dev/null
"$MAVG" -q data features k --deltas 2 --out ark:k/raw.ark > /dev/null
cp -r k k2
rm k2/cmvn.scp k2/cmvn_np.ark
"$MAVG" -q data cmvn k2 | contains "statistics of 4 speakers" || fail "mavg data cmvn k2"
/usr/bin/python3 - <<'PY'
import numpy as np
from kaldi_read import binary_matrices, text_matrices
feats = {k: np.array(v, dtype=np.float64) for k, v in binary_matrices("k/feats.ark").items()}
spk = dict(l.split() for l in open("k/utt2spk"))
stats = {k: np.array(v) for k, v in binary_matrices("k/cmvn_np.ark").items()}

def deltas(x, order=2, window=2):
    """add-deltas: filter i = filter i-1 convolved with j/sum(j^2), j=-window..window."""
    w = np.arange(-window, window + 1) / (2 * sum(j * j for j in range(1, window + 1)))
    filters, out = [np.array([1.0])], []
    for i in range(order):
        filters.append(np.convolve(filters[-1], w))
    T = len(x)
    for f in filters:
        h = (len(f) - 1) // 2
        out.append(sum(f[j + h] * x[np.clip(np.arange(T) + j, 0, T - 1)] for j in range(-h, h + 1)))
    return np.concatenate(out, axis=1)

def cmvn(x, st, norm_vars):
    n = st[0, -1]
    mean = st[0, :-1] / n
    if not norm_vars:
        return x - mean
    var = np.maximum(st[1, :-1] / n - mean ** 2, 1e-20)
    return (x - mean) / np.sqrt(var)

for name, read, norm_vars in (("means", binary_matrices("k/means.ark"), False),
                              ("both", text_matrices("k/both.txt"), True)):
    got = {k: np.array(v) for k, v in read.items()}
    assert sorted(got) == sorted(k for k in feats if spk[k] != "spk_none"), (name, sorted(got))
    worst = max(np.abs(got[k] - deltas(cmvn(feats[k], stats[spk[k]], norm_vars))).max() for k in got)
    assert worst < 2e-4, (name, worst)
    print(f"ok: speaker CMVN ({name}) + deltas = numpy on {len(got)} Kaldi utterances, max |diff| {worst:.1e}")
raw = {k: np.array(v) for k, v in binary_matrices("k/raw.ark").items()}
assert len(raw) == 10 and max(np.abs(raw[k] - deltas(feats[k])).max() for k in raw) < 1e-4
# mavg data cmvn: the statistics numpy computes (spk_none too: it has features).
mine = {k: np.array(v) for k, v in binary_matrices("k2/cmvn.ark").items()}
assert sorted(mine) == ["spk0", "spk1", "spk2", "spk_none"], sorted(mine)
for s in ("spk0", "spk1", "spk2"):
    rel = np.abs(mine[s] - stats[s]).max() / np.abs(stats[s]).max()
    assert rel < 1e-6, (s, rel)
print("ok: mavg data cmvn = numpy statistics")
PY
rm k/cmvn.scp
expect_error "k/cmvn.scp: not found" "$MAVG" data features k --cmvn speaker --out ark:x.ark

# ---- 2. Training from a Kaldi-style alignment dir -----------------------------------------
small=(--train-utts 60 --dev-utts 12 --test-utts 10 --test-seen-utts 4 --speakers-per-voice 3
       --voices flite:kal16 espeak:en-us)
"$MAVG" -q data digits --out d "${small[@]}" > /dev/null
for set in train dev test; do "$MAVG" -q data cmvn d/$set > /dev/null; done
# The alignments of train and dev in one gzip'd, split "exp/tri_ali" dir; the dirs keep none.
mkdir -p exp
/usr/bin/python3 - <<'PY'
import gzip
def entries(path):
    """The raw entries of a binary int32-vector archive."""
    data, pos, out = open(path, "rb").read(), 0, []
    while pos < len(data):
        start = pos
        pos = data.index(b" ", pos) + 3
        n = int.from_bytes(data[pos + 1:pos + 5], "little", signed=True)
        pos += 5 + 5 * n
        out.append(data[start:pos])
    return out
all_entries = entries("d/train/ali.ark") + entries("d/dev/ali.ark")
for j in range(3):
    with gzip.open(f"exp/ali.{j + 1}.gz", "wb") as f:
        f.write(b"".join(all_entries[j::3]))
PY
mv d/train/ali.ark d/train_ali.ark
mv d/dev/ali.ark d/dev_ali.ark
cat > k.yaml <<YAML
data: {train: d/train, dev: d/dev, test: d/test, context: 2, cmvn: speaker, deltas: 2,
       ali: "exp/ali.*.gz"}
model: {hidden_layers: 2, hidden_dim: 24}
optimizer: {minibatch: 64}
schedule: {type: constant, lr: 0.004, epochs: 1, collapse: {chance_fraction: 0}}
decode: {tune: false}
device_options: {threads: 1}
YAML
"$MAVG" -q train k.yaml --out run-glob --no-progress > /dev/null
"$MAVG" -q train k.yaml --set 'data.ali=ark:gunzip -c exp/ali.*.gz |' --out run-pipe \
  --no-progress > /dev/null
"$MAVG" model diff run-glob/model.bin run-pipe/model.bin --max-rel 0 > /dev/null ||
  fail "the pipe and the glob read different alignments"
[ "$(json_get run-glob/result.json status)" = completed ] || fail "run-glob did not complete"
# A failing pipe: one error line naming the command.
expect_error "command 'gunzip -c exp/nothing.gz'" "$MAVG" train k.yaml \
  --set 'data.ali=ark:gunzip -c exp/nothing.gz |' --out run-bad --no-progress

"$MAVG" export kaldi-dir run-glob/model.bin --out exp-k | contains "cmvn_opts, delta_opts" ||
  fail "export lists no cmvn_opts/delta_opts"
[ "$(cat exp-k/cmvn_opts)" = "--norm-means=true --norm-vars=false" ] || fail "cmvn_opts: $(cat exp-k/cmvn_opts)"
[ "$(cat exp-k/delta_opts)" = "--delta-order=2" ] || fail "delta_opts: $(cat exp-k/delta_opts)"
"$MAVG" forward run-glob/model.bin --data d/test --out ark,t:post.txt --output posteriors \
  --threads 1 > /dev/null
/usr/bin/python3 - <<'PY'
import re
import numpy as np
from kaldi_read import binary_matrices, text_matrices

def tokens(path):
    return re.findall(r"\[|\]|[^\s\[\]]+", open(path).read())

def components(path):
    """Kaldi nnet1 text components: [(name, fields)] with their vectors/matrices."""
    t, i, out = tokens(path), 1, []
    while t[i] != "</Nnet>":
        name, n_out, n_in = t[i], int(t[i + 1]), int(t[i + 2])
        i += 3
        while t[i] != "[" and t[i] != "<!EndOfComponent>":
            i += 2
        vs = []
        while t[i] == "[":
            j = t.index("]", i)
            vs.append(np.array([float(x) for x in t[i + 1:j]]))
            i = j + 1
        assert t[i] == "<!EndOfComponent>", (path, name, t[i])
        i += 1
        if name == "<AffineTransform>":
            vs[0] = vs[0].reshape(n_out, n_in)
        out.append((name, vs))
    return out

opts = open("exp-k/cmvn_opts").read().split()
norm_vars = "--norm-vars=true" in opts
order = int(open("exp-k/delta_opts").read().split("=")[1])
spk = dict(l.split() for l in open("d/test/utt2spk"))
stats = {k: np.array(v) for k, v in binary_matrices("d/test/cmvn.ark").items()}
tf = components("exp-k/final.feature_transform")
net = components("exp-k/final.nnet")
# 40 dims x 3 (deltas) x 5 (context 2) network inputs.
assert net[0][0] == "<AffineTransform>" and net[0][1][0].shape[1] == 600, net[0][1][0].shape
post = {k: np.array(v) for k, v in text_matrices("post.txt").items()}
feats = binary_matrices("d/test/feats.ark")
assert sorted(post) == sorted(feats), "forward must write every test utterance"
w = np.arange(-2, 3) / 10.0
filters = [np.array([1.0])]
for _ in range(order):
    filters.append(np.convolve(filters[-1], w))
worst = 0.0
for key, x in feats.items():
    x = np.array(x, dtype=np.float64)
    st = stats[spk[key]]
    x = x - st[0, :-1] / st[0, -1]
    T = len(x)
    x = np.concatenate([sum(f[j + (len(f) - 1) // 2] * x[np.clip(np.arange(T) + j, 0, T - 1)]
                            for j in range(-(len(f) - 1) // 2, (len(f) - 1) // 2 + 1))
                        for f in filters], axis=1)
    for name, vs in tf + net:
        if name == "<Splice>":
            x = np.concatenate([x[np.clip(np.arange(T) + int(o), 0, T - 1)] for o in vs[0]], axis=1)
        elif name == "<AddShift>":
            x = x + vs[0]
        elif name == "<Rescale>":
            x = x * vs[0]
        elif name == "<AffineTransform>":
            x = x @ vs[0].T + vs[1]
        elif name == "<Sigmoid>":
            x = 1 / (1 + np.exp(-x))
        elif name == "<Softmax>":
            e = np.exp(x - x.max(axis=1, keepdims=True))
            x = e / e.sum(axis=1, keepdims=True)
        else:
            raise SystemExit(f"unexpected component {name}")
    worst = max(worst, float(np.abs(x - post[key]).max()))
assert not norm_vars and order == 2, (norm_vars, order)
assert worst < 1e-4, worst
print(f"ok: numpy from cmvn.scp + exported cmvn_opts/delta_opts/transform/nnet = mavg forward (max |diff| {worst:.1e})")
PY
echo PASS
