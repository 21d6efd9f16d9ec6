#!/usr/bin/python3
"""PyTorch peer of a mavg Fashion-MNIST run: the same data dirs (mavg's Kaldi archives, read
here with numpy), the same global mean/variance normalisation (variances floored at 1e-4 of
their mean, as mavg's `cmvn: global`), network, minibatch, momentum and per-epoch exponential
learning rate; PyTorch's own initialisation and data order. Prints one JSON line: the final
test accuracy, the training seconds and the settings.

Needs Debian's python3-torch (scripts/setup.sh --bench); run with /usr/bin/python3.
"""
import argparse
import json
import time

import numpy as np
import torch


def read_feats(path):
    """A binary Kaldi archive of float matrices (FM) -> (keys, [N x D] float32)."""
    data = open(path, "rb").read()
    keys, rows, pos = [], [], 0
    while pos < len(data):
        space = data.index(b" ", pos)
        key = data[pos:space].decode()
        pos = space + 1
        if data[pos:pos + 5] != b"\0BFM ":
            raise SystemExit(f"{path}: entry {key}: not a binary float matrix")
        pos += 5
        n_rows = int(np.frombuffer(data, "<i4", 1, pos + 1)[0])
        n_cols = int(np.frombuffer(data, "<i4", 1, pos + 6)[0])
        pos += 10
        rows.append(np.frombuffer(data, "<f4", n_rows * n_cols, pos).reshape(n_rows, n_cols))
        keys.append(key)
        pos += 4 * n_rows * n_cols
    return keys, np.concatenate(rows)


def read_labels(path):
    """A binary Kaldi archive of int32 vectors (one label per one-frame utterance)."""
    data = open(path, "rb").read()
    labels, pos = {}, 0
    while pos < len(data):
        space = data.index(b" ", pos)
        key = data[pos:space].decode()
        pos = space + 3  # " \0B"
        n = int(np.frombuffer(data, "<i4", 1, pos + 1)[0])
        pos += 5
        values = [int(np.frombuffer(data, "<i4", 1, pos + 5 * i + 1)[0]) for i in range(n)]
        pos += 5 * n
        labels[key] = values
    return labels


def load(dir_):
    keys, x = read_feats(f"{dir_}/feats.ark")
    lab = read_labels(f"{dir_}/ali.ark")
    y = np.array([lab[k][0] for k in keys], dtype=np.int64)
    return x, y


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default="data/fmnist")
    p.add_argument("--hidden-layers", type=int, default=2)
    p.add_argument("--hidden-dim", type=int, default=512)
    p.add_argument("--minibatch", type=int, default=128)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--lr", type=float, default=0.05, help="on the mean minibatch loss")
    p.add_argument("--final-ratio", type=float, default=0.01)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--threads", type=int, default=0, help="0: all cores")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    x, y = load(f"{a.data}/train")
    xt, yt = load(f"{a.data}/test")
    mean = x.mean(0, dtype=np.float64)
    var = np.maximum(x.astype(np.float64).var(0), 0.0)
    scale = 1.0 / np.sqrt(np.maximum(var, 1e-4 * var.mean() + 1e-10))
    norm = lambda v: torch.from_numpy(((v - mean) * scale).astype(np.float32))
    x, xt = norm(x), norm(xt)
    y, yt = torch.from_numpy(y), torch.from_numpy(yt)
    layers, dim = [], x.shape[1]
    for _ in range(a.hidden_layers):
        layers += [torch.nn.Linear(dim, a.hidden_dim), torch.nn.ReLU()]
        dim = a.hidden_dim
    layers.append(torch.nn.Linear(dim, int(y.max()) + 1))
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.SGD(net.parameters(), lr=a.lr, momentum=a.momentum)
    loss_fn = torch.nn.CrossEntropyLoss()
    start = time.perf_counter()
    for epoch in range(a.epochs):
        lr = a.lr * a.final_ratio ** (epoch / max(1, a.epochs - 1))
        for g in opt.param_groups:
            g["lr"] = lr
        order = torch.randperm(len(y))
        net.train()
        for i in range(0, len(y) - a.minibatch + 1, a.minibatch):  # full minibatches, as mavg
            idx = order[i:i + a.minibatch]
            opt.zero_grad()
            loss_fn(net(x[idx]), y[idx]).backward()
            opt.step()
    train_s = time.perf_counter() - start
    net.eval()
    with torch.no_grad():
        acc = float((net(xt).argmax(1) == yt).float().mean())
    print(json.dumps({"framework": f"pytorch {torch.__version__}", "test_acc": acc,
                      "train_s": train_s, "threads": torch.get_num_threads(),
                      "train_frames": len(y), "epochs": a.epochs, "lr_mean_loss": a.lr,
                      "minibatch": a.minibatch, "seed": a.seed}))


if __name__ == "__main__":
    main()
