#!/usr/bin/env python3
"""Autograd costs: recording an op, and an imperative MLP training step.

Runs unchanged against mxcy (default) or MXNet 1.x:

    python bench/bench_autograd.py
    /work/peers/mxnet/bin/python bench/bench_autograd.py --lib mxnet
    /work/peers/torch/bin/python bench/peer_torch_autograd.py     # the PyTorch peer

Figures (one JSON line each):
* record_overhead_<op>: µs per op of a 20-op chain on 16 floats inside
  ``autograd.record()`` over the same chain unrecorded, in the same run (the ratio is the
  cost of recording; the target is at most 2);
* mlp_step_ms: one training step of the 784-128-64-10 MLP at batch 100 — forward under
  ``record()``, softmax cross-entropy, ``backward()``, an SGD update of every weight —
  with NumPy doing the same arithmetic by hand as the floor.
Nothing here asserts on time; the MLP's loss is checked against NumPy's.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import best_interleaved, check_close, emit, load, parse  # noqa: E402

FIGURES = ('record_overhead', 'mlp_step')
BENCH = 'autograd'
CHAIN = 20


def record_overhead(mx, lib, reps):
    autograd = mx.autograd
    x = mx.nd.ones((16,))
    x.attach_grad()
    ops = {'relu': lambda y: mx.nd.relu(y), 'mul_scalar': lambda y: y * 1.0001}
    for name, op in ops.items():
        def chain(n=200):
            for _ in range(n):
                y = x
                for _ in range(CHAIN):
                    y = op(y)
            mx.nd.waitall()

        def recorded(n=200):
            for _ in range(n):
                with autograd.record():
                    y = x
                    for _ in range(CHAIN):
                        y = op(y)
            mx.nd.waitall()
        best = best_interleaved({'plain': chain, 'recorded': recorded}, reps, rotate=True)
        per_op = {k: v / (200 * CHAIN) * 1e6 for k, v in best.items()}
        emit(BENCH, f'record_overhead_{name}', lib, round(per_op['recorded'], 3), 'us/op',
             better='lower', unrecorded_us=round(per_op['plain'], 3),
             ratio_vs_unrecorded=round(per_op['recorded'] / per_op['plain'], 3))


def mlp_data():
    rng = np.random.default_rng(0)
    sizes = [(128, 784), (64, 128), (10, 64)]
    weights = [rng.standard_normal(s).astype(np.float32) * 0.05 for s in sizes]
    x = rng.random((100, 784), dtype=np.float32)
    y = rng.integers(0, 10, 100)
    return weights, x, y


def numpy_step(weights, x, y, lr=0.1):
    """The same step by hand (the floor): returns the loss."""
    acts = [x]
    for i, w in enumerate(weights):
        z = acts[-1] @ w.T
        acts.append(np.maximum(z, 0) if i < len(weights) - 1 else z)
    z = acts[-1]
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    loss = -np.log(p[np.arange(len(y)), y]).mean()
    dz = p
    dz[np.arange(len(y)), y] -= 1
    dz /= len(y)
    for i in range(len(weights) - 1, -1, -1):
        gw = dz.T @ acts[i]
        if i:
            dz = (dz @ weights[i]) * (acts[i] > 0)
        weights[i] -= lr * gw
    return loss


def mlp_step(mx, lib, reps):
    autograd = mx.autograd
    weights0, x0, y0 = mlp_data()
    ws = [mx.nd.array(w) for w in weights0]
    for w in ws:
        w.attach_grad()
    x, y = mx.nd.array(x0), mx.nd.array(y0.astype(np.float32))

    def step():
        with autograd.record():
            h = x
            for i, w in enumerate(ws):
                h = mx.nd.FullyConnected(h, w, num_hidden=w.shape[0], no_bias=True)
                if i < len(ws) - 1:
                    h = mx.nd.relu(h)
            loss = mx.nd.softmax_cross_entropy(h, y) / len(y0)
        loss.backward()
        for w in ws:
            w -= 0.1 * w.grad
        return loss

    first = step().asnumpy()
    check_close('mlp loss', first, numpy_step([w.copy() for w in weights0], x0, y0),
                rtol=1e-4)
    np_weights = [w.copy() for w in weights0]

    def run_lib(n=50):
        for _ in range(n):
            step()
        mx.nd.waitall()

    def numpy_floor(n=50):
        for _ in range(n):
            numpy_step(np_weights, x0, y0)
    best = best_interleaved({lib: run_lib, 'numpy': numpy_floor}, reps)
    emit(BENCH, 'mlp_step_ms', lib, round(best[lib] / 50 * 1e3, 4), 'ms',
         numpy_value=round(best['numpy'] / 50 * 1e3, 4), better='lower', batch=100)


def main():
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    for name in FIGURES:
        if args.only in (None, name):
            globals()[name](mx, args.lib, args.reps)


if __name__ == '__main__':
    main()
