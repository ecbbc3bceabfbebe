#!/usr/bin/env python3
"""Gluon training steps: imperative, hybridized, and the same network through Module.

Runs unchanged against mxcy (default) or MXNet 1.x:

    python bench/bench_gluon.py
    OMP_NUM_THREADS=2 /work/peers/mxnet/bin/python bench/bench_gluon.py --lib mxnet
    /work/peers/torch/bin/python bench/peer_torch_autograd.py    # PyTorch's eager loop

Figures (one JSON line each; ms per training step of the 784-128-64-10 MLP at batch
100, SGD with momentum, softmax cross-entropy):
* gluon_mlp_step_ms: ``autograd.record()`` + ``backward()`` + ``trainer.step()``;
* gluon_mlp_step_hybrid_ms: the same after ``hybridize()``;
* module_mlp_step_ms: the same network as a Symbol through ``Module`` (forward,
  backward, update), with ``ratio_hybrid_vs_module`` from the same run.
Nothing here asserts on time; each variant's loss after its steps is checked to have
fallen.
"""
import os
import sys
from collections import namedtuple

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import best_interleaved, emit, load, parse  # noqa: E402

FIGURES = ('gluon_mlp_step',)
BENCH = 'gluon'
STEPS = 30


def data(mx):
    rng = np.random.default_rng(0)
    return (mx.nd.array(rng.random((100, 784), dtype=np.float32)),
            mx.nd.array(rng.integers(0, 10, 100).astype(np.float32)))


def gluon_net(mx, hybrid):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(128, activation='relu'), nn.Dense(64, activation='relu'),
                nn.Dense(10))
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize()
    return net


def gluon_steps(mx, hybrid):
    x, y = data(mx)
    net = gluon_net(mx, hybrid)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd',
                               {'learning_rate': 0.05, 'momentum': 0.9})
    losses = []

    def run(n=STEPS):
        for _ in range(n):
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(100)
        losses.append(loss.mean().asscalar())
    return run, losses


def module_steps(mx):
    x, y = data(mx)
    d = mx.sym.Variable('data')
    h = mx.sym.Activation(mx.sym.FullyConnected(d, num_hidden=128), act_type='relu')
    h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=64), act_type='relu')
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10), name='softmax')
    mod = mx.mod.Module(out, context=mx.cpu())
    mod.bind(data_shapes=[('data', (100, 784))], label_shapes=[('softmax_label', (100,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.05,
                                                          'momentum': 0.9})
    batch = namedtuple('Batch', ['data', 'label'])([x], [y])
    losses = []

    def run(n=STEPS):
        for _ in range(n):
            mod.forward(batch, is_train=True)
            mod.backward()
            mod.update()
        p = mod.get_outputs()[0].asnumpy()
        losses.append(-np.log(p[np.arange(100), y.asnumpy().astype(int)] + 1e-12).mean())
    return run, losses


def gluon_mlp_step(mx, lib, reps):
    variants, losses = {}, {}
    for name, (run, lost) in (('imperative', gluon_steps(mx, False)),
                              ('hybrid', gluon_steps(mx, True)),
                              ('module', module_steps(mx))):
        variants[name], losses[name] = run, lost
    best = best_interleaved(variants, reps, rotate=True)
    for name, lost in losses.items():
        if not lost[-1] < lost[0]:
            raise SystemExit(f"{name}: the loss did not fall ({lost[0]} -> {lost[-1]})")
    ms = {k: round(v / STEPS * 1e3, 4) for k, v in best.items()}
    emit(BENCH, 'gluon_mlp_step_ms', lib, ms['imperative'], 'ms', better='lower', batch=100)
    emit(BENCH, 'gluon_mlp_step_hybrid_ms', lib, ms['hybrid'], 'ms', better='lower',
         batch=100, ratio_hybrid_vs_module=round(ms['hybrid'] / ms['module'], 3))
    emit(BENCH, 'module_mlp_step_ms', lib, ms['module'], 'ms', better='lower', batch=100)


def main():
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    for name in FIGURES:
        if args.only in (None, name):
            globals()[name](mx, args.lib, args.reps)


if __name__ == '__main__':
    main()
