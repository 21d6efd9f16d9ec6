#!/usr/bin/python3
"""PyTorch peer of `mavg bench train`: the same feed-forward network, minibatch and thread count,
one SGD step (forward, summed cross-entropy, backward, update) on random data. Prints JSON.

Needs Debian's python3-torch (scripts/setup.sh --bench); run with /usr/bin/python3.
"""
import argparse
import json
import statistics
import time

import torch


def blas_kernels():
    """The BLAS this process loaded with torch, and its kernel family when it is OpenBLAS
    (asked from the library itself, as mavg does), e.g. "OpenBLAS Zen"."""
    import ctypes
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and "blas" in fields[-1]:
                paths.add(fields[-1])
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return "OpenBLAS " + lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return "not OpenBLAS: " + ", ".join(sorted(paths))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--input-dim", type=int, default=440)
    p.add_argument("--hidden-layers", type=int, default=6)
    p.add_argument("--hidden-dim", type=int, default=2048)
    p.add_argument("--outputs", type=int, default=8806)
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--activation", choices=["sigmoid", "relu"], default="sigmoid")
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--threads", type=int, default=0, help="0: all cores")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    layers, dim = [], a.input_dim
    for _ in range(a.hidden_layers):
        act = torch.nn.Sigmoid() if a.activation == "sigmoid" else torch.nn.ReLU()
        layers += [torch.nn.Linear(dim, a.hidden_dim), act]
        dim = a.hidden_dim
    layers.append(torch.nn.Linear(dim, a.outputs))
    net = torch.nn.Sequential(*layers)
    params = sum(t.numel() for t in net.parameters())
    opt = torch.optim.SGD(net.parameters(), lr=1e-4, momentum=a.momentum)
    loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")  # summed gradient, as mavg/Kaldi
    x = torch.randn(a.minibatch, a.input_dim)
    y = torch.randint(0, a.outputs, (a.minibatch,))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    times = []
    for _ in range(a.repeats):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    print(json.dumps({
        "framework": f"pytorch {torch.__version__}",
        "blas_kernels": blas_kernels(),
        "threads": torch.get_num_threads(),
        "num_params": params,
        "minibatch": a.minibatch,
        "step_s_median": med,
        "step_s_mean": statistics.mean(times),
        "frames_per_s": a.minibatch / med,
        "model_gflops_per_s": 6.0 * params * a.minibatch / med / 1e9,
    }))


if __name__ == "__main__":
    main()
