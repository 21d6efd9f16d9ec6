#!/usr/bin/env python3
"""Writes a tiny synthetic frame-classification corpus as Kaldi data dirs, for the GPU checks.

Why not `mavg data digits` / `mavg data fmnist` (what tests/e2e uses)? They need the TTS
voices (flite, espeak-ng and its data files) or Debian's Fashion-MNIST package, and the GPU
machine has none of our Debian packages. This needs python3's standard library only (no numpy)
and is deterministic for a given --seed.

The task: utterances are runs of "states" (4..12 frames each, like forced alignments); a frame
is its state's mean plus AR(1)-correlated Gaussian noise, so classes overlap (the CV loss stays
well above 0) and the spliced context helps. Output:
  OUT/train/{feats.ark,ali.ark}  OUT/dev/{feats.ark,ali.ark}
feats.ark: Kaldi binary float matrices ("FM"); ali.ark: Kaldi text int32 vectors.

Usage: tiny_data.py OUT [--train-utts 400] [--dev-utts 80] [--dim 40] [--states 24] [--seed 1]
"""

import argparse
import array
import os
import random
import struct
import sys


def write_set(path, utts, means, rng, dim, states):
    os.makedirs(path, exist_ok=True)
    frames = 0
    with open(os.path.join(path, "feats.ark.tmp"), "wb") as feats, \
            open(os.path.join(path, "ali.ark.tmp"), "w") as ali:
        for u in range(utts):
            key = "utt%05d" % u
            labels = []
            n = rng.randint(60, 140)
            while len(labels) < n:
                labels += [rng.randrange(states)] * rng.randint(4, 12)
            labels = labels[:n]
            data = array.array("f")
            noise = [0.0] * dim
            for s in labels:
                m = means[s]
                for d in range(dim):
                    noise[d] = 0.6 * noise[d] + 2.4 * rng.gauss(0.0, 1.0)
                    data.append(m[d] + noise[d])
            if sys.byteorder != "little":
                data.byteswap()
            feats.write(key.encode() + b" \0BFM " + struct.pack("<bibi", 4, n, 4, dim))
            feats.write(data.tobytes())
            ali.write(key + " " + " ".join(map(str, labels)) + "\n")
            frames += n
    for f in ("feats.ark", "ali.ark"):
        os.replace(os.path.join(path, f + ".tmp"), os.path.join(path, f))
    return frames


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--train-utts", type=int, default=400)
    p.add_argument("--dev-utts", type=int, default=80)
    p.add_argument("--dim", type=int, default=40)
    p.add_argument("--states", type=int, default=24)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    means = [[rng.gauss(0.0, 1.0) for _ in range(a.dim)] for _ in range(a.states)]
    tr = write_set(os.path.join(a.out, "train"), a.train_utts, means, rng, a.dim, a.states)
    dv = write_set(os.path.join(a.out, "dev"), a.dev_utts, means, rng, a.dim, a.states)
    print("tiny data: %s train %d utts / %d frames, dev %d utts / %d frames, %d dims, %d states"
          % (a.out, a.train_utts, tr, a.dev_utts, dv, a.dim, a.states))


if __name__ == "__main__":
    main()
