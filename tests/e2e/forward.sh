#!/usr/bin/env bash
# mavg forward: the network's outputs as Kaldi archives, read back here by an independent
# Python parser of Kaldi's binary and text formats. Log-likelihoods plus the log priors counted
# here from the training alignments are log posteriors (each row's logsumexp is 0); the four
# output kinds agree with each other; binary, text and ark,scp hold the same numbers; bad
# specifiers fail with one line and leave nothing behind.
source "$(dirname "$0")/lib.bash"
small=(--train-utts 60 --dev-utts 12 --test-utts 10 --test-seen-utts 4 --speakers-per-voice 3
       --voices flite:kal16 espeak:en-us)
"$MAVG" -q data digits --out d "${small[@]}" > /dev/null
cat > c.yaml <<YAML
data: {train: d/train, dev: d/dev, test: d/test, context: 2, cmvn: global}
model: {hidden_layers: 1, hidden_dim: 32}
optimizer: {minibatch: 64}
schedule: {type: constant, lr: 0.004, epochs: 1, collapse: {chance_fraction: 0}}
decode: {tune: false}
device_options: {threads: 1}
YAML
"$MAVG" -q train c.yaml --out run --no-progress > /dev/null
for k in loglikes logposteriors posteriors logits; do
  "$MAVG" forward run/model.bin --data d/test --out "ark:$k.ark" --output "$k" --threads 1 | contains "10 utterances" ||
    fail "forward --output $k"
done
"$MAVG" forward run/model.bin --data d/test --out "ark,t:loglikes.txt" --threads 1 > /dev/null
"$MAVG" forward run/model.bin --data d/test --out "ark,scp:ll2.ark,ll2.scp" --threads 1 > /dev/null
MAVG_SOURCE_DIR="$MAVG_SOURCE_DIR" python3 - <<'PY'
import math, os, sys
sys.path.insert(0, os.path.join(os.environ["MAVG_SOURCE_DIR"], "tests", "e2e"))
from kaldi_read import alignment_counts, binary_matrices as read_binary, text_matrices as read_text

ll, lp, po, lg = (read_binary(f"{k}.ark") for k in ("loglikes", "logposteriors", "posteriors", "logits"))
utts = [l.split()[0] for l in open("d/test/feats.scp")]
assert sorted(ll) == sorted(utts), (sorted(ll)[:3], sorted(utts)[:3])
counts = alignment_counts("d/train/ali.ark")
pdfs = len(next(iter(ll.values()))[0])
total = sum(counts.values())
worst = 0.0
for u in utts:
    for t, row in enumerate(ll[u]):
        # Log posterior = log-likelihood + log prior (pdfs with training frames only).
        lse = math.log(sum(math.exp(row[j] + math.log(counts[j] / total)) for j in range(pdfs) if counts.get(j)))
        unseen = sum(po[u][t][j] for j in range(pdfs) if not counts.get(j))
        worst = max(worst, abs(lse - math.log(max(1e-30, 1 - unseen))))
        for j in range(pdfs):
            assert abs(math.exp(lp[u][t][j]) - po[u][t][j]) <= 1e-5 + 1e-4 * po[u][t][j], (u, t, j)
            if counts.get(j):
                assert abs(row[j] - (lp[u][t][j] - math.log(counts[j] / total))) < 1e-3, (u, t, j)
        # softmax(logits) = posteriors
        m = max(lg[u][t])
        z = sum(math.exp(v - m) for v in lg[u][t])
        for j in range(pdfs):
            assert abs(math.exp(lg[u][t][j] - m) / z - po[u][t][j]) < 1e-5, (u, t, j)
        assert abs(sum(po[u][t]) - 1) < 1e-4, (u, t)
assert worst < 1e-3, worst
txt = read_text("loglikes.txt")
for u in utts:
    for a, b in zip(txt[u], ll[u]):
        assert all(abs(x - y) <= 1e-6 * max(1, abs(y)) for x, y in zip(a, b)), u
assert read_binary("ll2.ark") == ll
for line in open("ll2.scp"):
    key, spec = line.split()
    path, off = spec.rsplit(":", 1)
    assert path.endswith("ll2.ark"), spec
    data = open("ll2.ark", "rb").read()
    assert data[int(off):int(off) + 2] == b"\0B", (key, off)
print(f"ok: {len(utts)} utterances x {pdfs} pdfs; max |logsumexp(loglike + log prior)| {worst:.2e}")
PY
# Every utterance of feats.scp, whether it has an alignment or not.
mkdir -p partial
cp d/test/feats.scp partial/
python3 -c 'import sys; d=open("d/test/ali.ark","rb").read(); sp=d.index(b" "); n=int.from_bytes(d[sp+4:sp+8],"little"); open("partial/ali.ark","wb").write(d[:sp+8+5*n])'
"$MAVG" forward run/model.bin --data partial --out ark:partial.ark --threads 1 | contains "10 utterances" ||
  fail "forward skipped utterances without an alignment"
expect_error "not a wspecifier" "$MAVG" forward run/model.bin --data d/test --out "scp:x.scp"
expect_error "writing to a pipe" "$MAVG" forward run/model.bin --data d/test --out "ark:-"
expect_error "d/nothing" "$MAVG" forward run/model.bin --data d/nothing --out ark:none.ark
[ ! -e none.ark ] || fail "a failed forward left an archive"
echo PASS
