#!/usr/bin/env bash
# mavg export kaldi-dir: every file parsed here by an independent reader of Kaldi nnet1's text
# format, and the network run in numpy from those files alone (splice with edge frames
# repeated, AddShift, Rescale, affine, sigmoid / ParametricRelu, softmax): it must give the
# posteriors `mavg forward` writes, for a sigmoid and a relu model. The counts are the
# training alignments' (counted here), and the README names decode.sh.
source "$(dirname "$0")/lib.bash"
small=(--train-utts 60 --dev-utts 12 --test-utts 10 --test-seen-utts 4 --speakers-per-voice 3
       --voices flite:kal16 espeak:en-us)
"$MAVG" -q data digits --out d "${small[@]}" > /dev/null
for act in sigmoid relu; do
  cat > $act.yaml <<YAML
data: {train: d/train, dev: d/dev, test: d/test, context: 2, cmvn: global}
model: {hidden_layers: 2, hidden_dim: 24, activation: $act}
optimizer: {minibatch: 64}
schedule: {type: constant, lr: 0.004, epochs: 1, collapse: {chance_fraction: 0}}
decode: {tune: false}
device_options: {threads: 1}
YAML
  "$MAVG" -q train $act.yaml --out run-$act --no-progress > /dev/null
  "$MAVG" export kaldi-dir run-$act/model.bin --out exp-$act | contains "final.nnet" || fail "export $act"
  "$MAVG" forward run-$act/model.bin --data d/test --out "ark,t:post-$act.txt" --output posteriors --threads 1 > /dev/null
  for f in final.nnet final.feature_transform ali_train_pdf.counts README; do
    [ -s exp-$act/$f ] || fail "exp-$act/$f missing"
  done
  grep -q "steps/nnet/decode.sh" exp-$act/README || fail "README lacks the decode.sh call"
done
grep -q "<ParametricRelu>" exp-relu/final.nnet || fail "relu not exported as ParametricRelu"
if grep -q "<ReLU>" exp-relu/final.nnet; then fail "<ReLU> is not an nnet1 component"; fi
MAVG_SOURCE_DIR="$MAVG_SOURCE_DIR" /usr/bin/python3 - <<'PY'
import os, re, sys
import numpy as np
sys.path.insert(0, os.path.join(os.environ["MAVG_SOURCE_DIR"], "tests", "e2e"))
from kaldi_read import alignment_counts, binary_matrices, text_matrices

def tokens(path):
    return re.findall(r"\[|\]|[^\s\[\]]+", open(path).read())

def parse_nnet(path):
    """Kaldi nnet1 text: <Nnet> components </Nnet>; returns [(name, out, in, fields)]."""
    t, i, comps = tokens(path), 0, []
    assert t[i] == "<Nnet>", path
    i += 1
    def vector():
        nonlocal i
        assert t[i] == "[", (path, i, t[i])
        j = t.index("]", i)
        v = np.array([float(x) for x in t[i + 1:j]])
        i = j + 1
        return v
    while t[i] != "</Nnet>":
        name, out, inp = t[i], int(t[i + 1]), int(t[i + 2])
        i += 3
        f = {}
        while t[i].startswith("<") and t[i] not in ("<!EndOfComponent>", "</Nnet>"):
            f[t[i]] = float(t[i + 1])
            i += 2
        if name == "<AffineTransform>":
            f["W"] = vector().reshape(out, inp)
            f["b"] = vector()
        elif name in ("<Splice>", "<AddShift>", "<Rescale>"):
            f["v"] = vector()
        elif name == "<ParametricRelu>":
            f["alpha"], f["beta"] = vector(), vector()
            assert "<BiasLearnRateCoef>" in f and "<LearnRateCoef>" in f, f
        assert t[i] == "<!EndOfComponent>", (path, name, t[i])
        i += 1
        comps.append((name, out, inp, f))
    return comps

def run(comps, x):
    for name, out, inp, f in comps:
        if name == "<AffineTransform>":
            x = x @ f["W"].T + f["b"]
        elif name == "<AddShift>":
            x = x + f["v"]
        elif name == "<Rescale>":
            x = x * f["v"]
        elif name == "<Sigmoid>":
            x = 1 / (1 + np.exp(-x))
        elif name == "<Tanh>":
            x = np.tanh(x)
        elif name == "<ParametricRelu>":
            x = np.where(x >= 0, f["alpha"] * x, f["beta"] * x)
        elif name == "<Softmax>":
            e = np.exp(x - x.max(axis=1, keepdims=True))
            x = e / e.sum(axis=1, keepdims=True)
        elif name == "<Splice>":
            continue  # done on the utterance below
        else:
            raise SystemExit(f"unknown component {name}")
        assert x.shape[1] == out, (name, x.shape, out)
    return x

feats = {k: np.array(v) for k, v in binary_matrices("d/test/feats.ark").items()}
train_counts = alignment_counts("d/train/ali.ark")
for act in ("sigmoid", "relu"):
    tf = parse_nnet(f"exp-{act}/final.feature_transform")
    net = parse_nnet(f"exp-{act}/final.nnet")
    assert tf[0][0] == "<Splice>" and [c[0] for c in tf[1:]] == ["<AddShift>", "<Rescale>"], [c[0] for c in tf]
    offsets = [int(v) for v in tf[0][3]["v"]]
    assert net[-1][0] == "<Softmax>" and ("<ParametricRelu>" in [c[0] for c in net]) == (act == "relu")
    # Dimensions chain from the transform through the network.
    dim = tf[-1][1]
    for name, out, inp, f in net:
        assert inp == dim, (act, name, inp, dim)
        dim = out
    counts = [float(x) for x in open(f"exp-{act}/ali_train_pdf.counts").read().split()[1:-1]]
    assert len(counts) == dim, (len(counts), dim)
    assert all(counts[p] == train_counts.get(p, 0) for p in range(dim)), "counts differ from ali.ark"
    post = {k: np.array(v) for k, v in text_matrices(f"post-{act}.txt").items()}
    worst = 0.0
    for key, x in feats.items():
        T = x.shape[0]
        spliced = np.concatenate([x[np.clip(np.arange(T) + o, 0, T - 1)] for o in offsets], axis=1)
        y = run(tf + net, spliced)
        worst = max(worst, float(np.abs(y - post[key]).max()))
    assert worst < 1e-4, (act, worst)
    print(f"ok: {act}: {len(feats)} utterances, numpy from the exported files = mavg forward (max |diff| {worst:.1e})")
PY
expect_error "nothing.bin: cannot open" "$MAVG" export kaldi-dir nothing.bin --out exp-x
[ ! -e exp-x ] || fail "a failed export created its directory"
echo PASS
