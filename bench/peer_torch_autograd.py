#!/usr/bin/env python3
"""The PyTorch peer of bench_autograd.py and bench_gluon.py: the same MLP training step
(784-128-64-10, batch 100) as a bare eager loop (no biases, SGD by hand: mlp_step_ms) and
as PyTorch users write bench_gluon's step (nn.Linear, CrossEntropyLoss, optim.SGD with
momentum: gluon_like_step_ms), and the cost of recording a 20-op relu chain (grad on vs
torch.no_grad), one JSON line each.

    /work/peers/torch/bin/python bench/peer_torch_autograd.py
"""
import json
import os
import time

import numpy as np
import torch


def emit(figure, value, unit, **extra):
    line = {'bench': 'autograd', 'figure': figure, 'lib': 'torch', 'value': value,
            'unit': unit, 'torch_version': torch.__version__,
            'threads': torch.get_num_threads(), 'cpus': len(os.sched_getaffinity(0)),
            'loadavg_1m': round(os.getloadavg()[0], 2)}
    line.update(extra)
    print(json.dumps(line), flush=True)


def best_of(fn, reps=5):
    fn()
    best = float('inf')
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def record_overhead():
    x = torch.ones(16, requires_grad=True)

    def chain(n=200):
        for _ in range(n):
            y = x
            for _ in range(20):
                y = torch.relu(y)

    def plain(n=200):
        with torch.no_grad():
            chain(n)
    rec, unrec = best_of(chain) / 4000 * 1e6, best_of(plain) / 4000 * 1e6
    emit('record_overhead_relu', round(rec, 3), 'us/op', better='lower',
         unrecorded_us=round(unrec, 3), ratio_vs_unrecorded=round(rec / unrec, 3))


def mlp_step():
    rng = np.random.default_rng(0)
    sizes = [(128, 784), (64, 128), (10, 64)]
    ws = [torch.tensor(rng.standard_normal(s).astype(np.float32) * 0.05, requires_grad=True)
          for s in sizes]
    x = torch.from_numpy(rng.random((100, 784), dtype=np.float32))
    y = torch.from_numpy(rng.integers(0, 10, 100))
    loss_fn = torch.nn.CrossEntropyLoss()

    def steps(n=50):
        for _ in range(n):
            h = x
            for i, w in enumerate(ws):
                h = h @ w.t()
                if i < len(ws) - 1:
                    h = torch.relu(h)
            loss = loss_fn(h, y)
            for w in ws:
                w.grad = None
            loss.backward()
            with torch.no_grad():
                for w in ws:
                    w -= 0.1 * w.grad
    emit('mlp_step_ms', round(best_of(steps) / 50 * 1e3, 4), 'ms', better='lower', batch=100)


def gluon_like_step():
    """The step of bench_gluon.py as PyTorch users write it: nn.Linear layers (with
    biases), CrossEntropyLoss, torch.optim.SGD with momentum 0.9, zero_grad + step."""
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 64), torch.nn.ReLU(),
                              torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    x = torch.from_numpy(rng.random((100, 784), dtype=np.float32))
    y = torch.from_numpy(rng.integers(0, 10, 100))
    loss_fn = torch.nn.CrossEntropyLoss()

    def steps(n=50):
        for _ in range(n):
            opt.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            opt.step()
    emit('gluon_like_step_ms', round(best_of(steps) / 50 * 1e3, 4), 'ms', better='lower',
         batch=100)


if __name__ == '__main__':
    record_overhead()
    mlp_step()
    gluon_like_step()
