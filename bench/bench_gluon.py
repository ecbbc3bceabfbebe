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
  backward, update), with ``ratio_hybrid_vs_module`` from the same run (the ratio of
  the bests) and ``ratio_median``/``ratio_range`` (per round, the hybridized time over
  the Module time of that round: the two run back to back, so they share its load).
* gluon_convnet_step_hybrid_ms / module_convnet_step_ms: the same for a small convnet
  (conv 5x5x20, relu, max-pool, conv 5x5x50, relu, max-pool, dense 10) on 1x28x28
  inputs at batch 32.
Each line also gives ``main_thread_us``: the median over rounds of the calling thread's
CPU time per step (it feeds the engine; on two cores it competes with the workers).
Nothing here asserts on time; each variant's loss after its steps is checked to have
fallen.
"""
import os
import sys
import time
from collections import namedtuple

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (emit, interleaved_times, load, paired_median_ratio,  # noqa: E402
                     parse)

FIGURES = ('gluon_mlp_step', 'gluon_convnet_step')
BENCH = 'gluon'
STEPS = 30


def data(mx, shape=(100, 784)):
    rng = np.random.default_rng(0)
    return (mx.nd.array(rng.random(shape, dtype=np.float32)),
            mx.nd.array(rng.integers(0, 10, shape[0]).astype(np.float32)))


def gluon_net(mx, hybrid, conv=False):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    with net.name_scope():
        if conv:
            net.add(nn.Conv2D(20, 5, activation='relu'), nn.MaxPool2D(2, 2),
                    nn.Conv2D(50, 5, activation='relu'), nn.MaxPool2D(2, 2), nn.Dense(10))
        else:
            net.add(nn.Dense(128, activation='relu'), nn.Dense(64, activation='relu'),
                    nn.Dense(10))
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize()
    return net


def conv_symbol(mx):
    d = mx.sym.Variable('data')
    h = mx.sym.Activation(mx.sym.Convolution(d, kernel=(5, 5), num_filter=20),
                          act_type='relu')
    h = mx.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type='max')
    h = mx.sym.Activation(mx.sym.Convolution(h, kernel=(5, 5), num_filter=50),
                          act_type='relu')
    h = mx.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type='max')
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10), name='softmax')


def mlp_symbol(mx):
    d = mx.sym.Variable('data')
    h = mx.sym.Activation(mx.sym.FullyConnected(d, num_hidden=128), act_type='relu')
    h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=64), act_type='relu')
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10), name='softmax')


def gluon_steps(mx, hybrid, shape=(100, 784), conv=False):
    x, y = data(mx, shape)
    batch = shape[0]
    net = gluon_net(mx, hybrid, conv)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd',
                               {'learning_rate': 0.05, 'momentum': 0.9})
    losses = []

    def run(n=STEPS):
        for _ in range(n):
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(batch)
        losses.append(loss.mean().asscalar())
    return run, losses


def module_steps(mx, shape=(100, 784), conv=False):
    x, y = data(mx, shape)
    batch = shape[0]
    out = conv_symbol(mx) if conv else mlp_symbol(mx)
    mod = mx.mod.Module(out, context=mx.cpu())
    mod.bind(data_shapes=[('data', shape)], label_shapes=[('softmax_label', (batch,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.05,
                                                          'momentum': 0.9})
    data_batch = namedtuple('Batch', ['data', 'label'])([x], [y])
    losses = []

    def run(n=STEPS):
        for _ in range(n):
            mod.forward(data_batch, is_train=True)
            mod.backward()
            mod.update()
        p = mod.get_outputs()[0].asnumpy()
        losses.append(-np.log(p[np.arange(batch), y.asnumpy().astype(int)] + 1e-12).mean())
    return run, losses


MAIN = {}      # variant -> [CPU seconds of the calling thread per round]


def _on_main_thread(name, run):
    """`run`, also noting the CPU time of the thread that calls it (the thread that
    feeds the engine; the kernels run on the workers): ``main_thread_us``."""
    def timed(n=STEPS):
        t = time.thread_time()
        run(n)
        MAIN.setdefault(name, []).append(time.thread_time() - t)
    return timed


def _main_us(name):
    return round(float(np.median(MAIN[name][1:])) / STEPS * 1e6, 1)


def _steps(mx, reps, builders):
    """{name: ms per step (best round)}, {name: [seconds per round]}; checks each
    variant's loss fell."""
    variants, losses = {}, {}
    MAIN.clear()
    for name, (run, lost) in builders:
        variants[name], losses[name] = _on_main_thread(name, run), lost
    times = interleaved_times(variants, reps, rotate=True)
    for name, lost in losses.items():
        if not lost[-1] < lost[0]:
            raise SystemExit(f"{name}: the loss did not fall ({lost[0]} -> {lost[-1]})")
    return {k: round(min(v) / STEPS * 1e3, 4) for k, v in times.items()}, times


def _ratios(ms, times):
    per_round = sorted(a / b for a, b in zip(times['hybrid'], times['module']))
    return dict(ratio_hybrid_vs_module=round(ms['hybrid'] / ms['module'], 3),
                ratio_median=round(paired_median_ratio(times, 'hybrid', 'module'), 3),
                ratio_range=[round(per_round[0], 3), round(per_round[-1], 3)])


def gluon_mlp_step(mx, lib, reps):
    ms, times = _steps(mx, reps, (('imperative', gluon_steps(mx, False)),
                                  ('hybrid', gluon_steps(mx, True)),
                                  ('module', module_steps(mx))))
    emit(BENCH, 'gluon_mlp_step_ms', lib, ms['imperative'], 'ms', better='lower', batch=100,
         main_thread_us=_main_us('imperative'))
    emit(BENCH, 'gluon_mlp_step_hybrid_ms', lib, ms['hybrid'], 'ms', better='lower',
         batch=100, main_thread_us=_main_us('hybrid'), **_ratios(ms, times))
    emit(BENCH, 'module_mlp_step_ms', lib, ms['module'], 'ms', better='lower', batch=100,
         main_thread_us=_main_us('module'))


def gluon_convnet_step(mx, lib, reps):
    shape = (32, 1, 28, 28)
    ms, times = _steps(mx, reps, (('hybrid', gluon_steps(mx, True, shape, True)),
                                  ('module', module_steps(mx, shape, True))))
    emit(BENCH, 'gluon_convnet_step_hybrid_ms', lib, ms['hybrid'], 'ms', better='lower',
         batch=32, main_thread_us=_main_us('hybrid'), **_ratios(ms, times))
    emit(BENCH, 'module_convnet_step_ms', lib, ms['module'], 'ms', better='lower', batch=32,
         main_thread_us=_main_us('module'))


def main():
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    for name in FIGURES:
        if args.only in (None, name):
            globals()[name](mx, args.lib, args.reps)


if __name__ == '__main__':
    main()
