#!/usr/bin/env python3
"""A Gluon training step under ``npx.set_np()`` against the same step in NDArray mode.

Runs unchanged against mxcy (default) or MXNet 1.x:

    python bench/bench_np_gluon.py
    OMP_NUM_THREADS=2 /work/mxnet_venv/bin/python bench/bench_np_gluon.py --lib mxnet

Figures (one JSON line each; ms per training step: ``autograd.record()`` + ``backward()``
+ ``trainer.step()``, SGD with momentum, softmax cross-entropy, batch 100):
* np_gluon_mlp_step_ms: the 784-128-64-10 MLP fed ``mx.np`` arrays in NumPy mode, with
  ``ratio_vs_nd_mode`` (the same network, weights and data in ``mx.nd`` mode, same run;
  the target is <= 1) and ``paired_median_ratio`` (the median of the per-round ratios of
  the two modes run back to back: steadier on a busy machine), imperative and
  (``_hybrid``) hybridized;
* np_gluon_lenet_step_ms: the same for a LeNet-style convnet on (100, 1, 28, 28).
Both modes start from the same weights and data; their losses are checked to agree.
(MXNet's NumPy mode draws initial weights from another generator, hence set_data.)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import emit, interleaved_times, load, paired_median_ratio, parse  # noqa: E402

FIGURES = ('np_gluon_mlp_step', 'np_gluon_lenet_step')
BENCH = 'np_gluon'
STEPS = 20


def build(mx, kind):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    if kind == 'lenet':
        net.add(nn.Conv2D(6, kernel_size=5, padding=2, activation='relu'),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Conv2D(16, kernel_size=5, activation='relu'),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Dense(120, activation='relu'), nn.Dense(84, activation='relu'),
                nn.Dense(10))
    else:
        net.add(nn.Dense(128, activation='relu'), nn.Dense(64, activation='relu'),
                nn.Dense(10))
    return net


def steps(mx, kind, np_mode, hybrid):
    """(run, losses) of one variant; NumPy mode is on only while it runs."""
    rng = np.random.default_rng(0)
    shape = (100, 1, 28, 28) if kind == 'lenet' else (100, 784)
    x_host = rng.random(shape, dtype=np.float32)
    y_host = rng.integers(0, 10, 100).astype(np.float32)
    if np_mode:             # MXNet makes a parameter's arrays np ones at initialize()
        mx.npx.set_np()
    try:
        mx.random.seed(0)
        net = build(mx, kind)
        net.initialize(mx.init.Xavier())
        if hybrid:
            net.hybridize()
        wrap = mx.np.array if np_mode else mx.nd.array
        x, y = wrap(x_host), wrap(y_host)
        net(x)              # shapes known; then both modes get the same weights
        wrng = np.random.default_rng(1)
        for p in net.collect_params().values():
            fan = np.prod(p.shape[1:]) if len(p.shape) > 1 else p.shape[0]
            p.set_data(wrap(wrng.uniform(-1, 1, p.shape).astype(np.float32) / np.sqrt(fan)))
        loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        trainer = mx.gluon.Trainer(net.collect_params(), 'sgd',
                                   {'learning_rate': 0.05, 'momentum': 0.9})
    finally:
        if np_mode:
            mx.npx.reset_np()
    losses = []

    def run(n=STEPS):
        if np_mode:
            mx.npx.set_np()
        try:
            for _ in range(n):
                with mx.autograd.record():
                    loss = loss_fn(net(x), y)
                loss.backward()
                trainer.step(100)
            losses.append(float(loss.mean().asnumpy().reshape(-1)[0]))
        finally:
            if np_mode:
                mx.npx.reset_np()
    return run, losses


def _figure(mx, lib, reps, kind):
    variants, losses = {}, {}
    for hybrid in (False, True):
        for mode in ('ndmode', 'setnp'):
            name = f"{mode}{'_hybrid' if hybrid else ''}"
            variants[name], losses[name] = steps(mx, kind, mode == 'setnp', hybrid)
    times = interleaved_times(variants, reps, rotate=True)
    best = {k: min(ts) for k, ts in times.items()}
    for suffix in ('', '_hybrid'):
        nd_l, np_l = losses['ndmode' + suffix], losses['setnp' + suffix]
        if not np_l[-1] < np_l[0]:
            raise SystemExit(f"{kind}{suffix}: the loss did not fall ({np_l})")
        if not np.allclose(nd_l[0], np_l[0], rtol=1e-4):
            raise SystemExit(f"{kind}{suffix}: NumPy mode's first loss {np_l[0]} differs "
                             f"from NDArray mode's {nd_l[0]}")
        np_ms = round(best['setnp' + suffix] / STEPS * 1e3, 4)
        nd_ms = round(best['ndmode' + suffix] / STEPS * 1e3, 4)
        emit(BENCH, f'np_gluon_{kind}_step{suffix}_ms', lib, np_ms, 'ms', better='lower',
             batch=100, nd_mode_ms=nd_ms, ratio_vs_nd_mode=round(np_ms / nd_ms, 3),
             paired_median_ratio=round(paired_median_ratio(times, 'setnp' + suffix,
                                                           'ndmode' + suffix), 3))


def np_gluon_mlp_step(mx, lib, reps):
    _figure(mx, lib, reps, 'mlp')


def np_gluon_lenet_step(mx, lib, reps):
    _figure(mx, lib, reps, 'lenet')


def main():
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    for name in FIGURES:
        if args.only in (None, name):
            globals()[name](mx, args.lib, args.reps)


if __name__ == '__main__':
    main()
