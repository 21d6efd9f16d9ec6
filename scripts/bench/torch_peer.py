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


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--input-dim", type=int, default=440)
    p.add_argument("--hidden-layers", type=int, default=6)
    p.add_argument("--hidden-dim", type=int, default=2048)
    p.add_argument("--outputs", type=int, default=8806)
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--threads", type=int, default=0, help="0: all cores")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    layers, dim = [], a.input_dim
    for _ in range(a.hidden_layers):
        layers += [torch.nn.Linear(dim, a.hidden_dim), torch.nn.Sigmoid()]
        dim = a.hidden_dim
    layers.append(torch.nn.Linear(dim, a.outputs))
    net = torch.nn.Sequential(*layers)
    params = sum(t.numel() for t in net.parameters())
    opt = torch.optim.SGD(net.parameters(), lr=1e-4)
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
        "threads": torch.get_num_threads(),
        "num_params": params,
        "minibatch": a.minibatch,
        "step_s_median": med,
        "frames_per_s": a.minibatch / med,
        "model_gflops_per_s": 6.0 * params * a.minibatch / med / 1e9,
    }))


if __name__ == "__main__":
    main()
