#!/usr/bin/env python3
"""The layer front end (issue "Model front end"): a compiled ``mx.nn`` model against the
same network built directly as a symbol and bound by hand, in the same run.

    python bench/bench_frontend.py
    python bench/bench_frontend.py --only mlp --reps 9

Each figure is one training step per batch: forward (training mode), backward of a given
head gradient with the input gradient (both sides bind grad_req='add' for every parameter
and 'write' for the input, as ``mx.nn.compile`` does), and the SGD update
``w -= lr * grad`` with the gradients zeroed. The hand-bound side copies the input in the
same way (``forward(data=x)``) and writes the update with the same in-place NDArray ops,
so the ratio measures what the front end adds (input conversion, output copy,
bookkeeping), not a different update.

The two sides take turns running first after the NumPy floor's pause (``rotate=True``):
the first run after it is slower, and a fixed order charged that to the front end. At
least MIN_REPS rounds run, since the two figures are close and the machine is shared.

``value`` is µs per step of the compiled model, ``symbol_us`` the hand-bound symbol's
(best round each), ``ratio_vs_symbol`` their ratio (target <= 1.1),
``paired_median_ratio`` the median over rounds of the two back-to-back runs' ratio (a
steadier reading on a busy machine), ``numpy`` the same step written in NumPy.

| figure | network | batch |
|---|---|---|
| ``mlp`` | 784-128-64-10 relu MLP, softmax (the MNIST example) | 100 |
| ``small_mlp`` | 32-16-4 tanh MLP, softmax (per-call overhead dominates) | 8 |
| ``convnet`` | conv 8@3x3 relu, max-pool 2, dense 10, softmax | 32 x 1 x 16 x 16 |
"""
import numpy as np
from _common import check_close, emit, interleaved_times, load, paired_median_ratio, parse

FIGURES = ('mlp', 'small_mlp', 'convnet')
BENCH = 'frontend'
STEPS = 20          # training steps per timed repetition
MIN_REPS = 16
LR = 0.01


def networks(mx):
    nn = mx.nn
    mlp = (lambda: nn.Chain(nn.Dense(128, activation='relu'), nn.Dense(64, activation='relu'),
                            nn.Dense(10), nn.softmax), (100, 784))
    small = (lambda: nn.Chain(nn.Dense(16, activation='tanh'), nn.Dense(4), nn.softmax),
             (8, 32))
    conv = (lambda: nn.Chain(nn.Conv2D(8, 3, activation='relu'), nn.MaxPool2D(2),
                             nn.Dense(10), nn.softmax), (32, 1, 16, 16))
    return {'mlp': mlp, 'small_mlp': small, 'convnet': conv}


def hand_symbol(mx, figure):
    """The same graph written with mx.sym, with the front end's parameter names."""
    s = mx.sym
    x = s.var('data')
    if figure == 'mlp':
        h = s.Activation(s.FullyConnected(x, num_hidden=128, name='dense0'), act_type='relu')
        h = s.Activation(s.FullyConnected(h, num_hidden=64, name='dense1'), act_type='relu')
        return s.softmax(s.FullyConnected(h, num_hidden=10, name='dense2'))
    if figure == 'small_mlp':
        h = s.Activation(s.FullyConnected(x, num_hidden=16, name='dense0'), act_type='tanh')
        return s.softmax(s.FullyConnected(h, num_hidden=4, name='dense1'))
    c = s.Activation(s.Convolution(x, kernel=(3, 3), num_filter=8, name='conv0'),
                     act_type='relu')
    p = s.Pooling(c, kernel=(2, 2), stride=(2, 2), pool_type='max')
    return s.softmax(s.FullyConnected(p, num_hidden=10, name='dense0'))


class HandBound:
    """The user-written loop the front end replaces."""

    def __init__(self, mx, symbol, params, input_shape):
        ctx = mx.cpu()
        args = {'data': mx.nd.zeros(input_shape)}
        args.update({n: p.data().copy() for n, p in params.items()})
        grads = {n: mx.nd.zeros(a.shape) for n, a in args.items()}
        reqs = {n: 'add' for n in params}
        reqs['data'] = 'write'
        self.exe = symbol.bind(ctx, args, grads, grad_req=reqs)
        self.pairs = [(self.exe.arg_dict[n], self.exe.grad_dict[n]) for n in params]

    def step(self, x, dy):
        self.exe.forward(is_train=True, data=x)
        self.exe.backward(dy)
        for w, g in self.pairs:
            g *= LR
            w -= g
            g[:] = 0


def numpy_mlp_step(weights, x, dy, act):
    """Forward + backward (with dx) + SGD of a dense/act chain ending in softmax."""
    hs, h = [x], x
    for i, (w, b) in enumerate(weights):
        z = h @ w.T + b
        h = act(z) if i < len(weights) - 1 else z
        hs.append(h)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    g = y * (dy - (dy * y).sum(axis=1, keepdims=True))
    for i in range(len(weights) - 1, -1, -1):
        w, b = weights[i]
        dw, db = g.T @ hs[i], g.sum(0)
        g = g @ w
        if i > 0:
            g *= (hs[i] > 0) if act is relu else (1 - hs[i] ** 2)
        w -= LR * dw
        b -= LR * db
    return g


def relu(z):
    return np.maximum(z, 0)


def fig(mx, lib, figure, reps):
    make, shape = networks(mx)[figure]
    rng = np.random.default_rng(0)
    mx.random.seed(0)
    with mx.name.NameManager():         # names from dense0_ in every figure
        cm = mx.nn.compile(make(), shape)
    hand = HandBound(mx, hand_symbol(mx, figure), cm.params, shape)
    assert hand.exe._symbol.list_arguments() == ['data'] + list(cm.params)
    xs = [mx.nd.array(rng.standard_normal(shape).astype(np.float32)) for _ in range(4)]
    out_shape = cm.executor.outputs[0].shape
    dy = mx.nd.array(rng.standard_normal(out_shape).astype(np.float32))

    def run_front():
        for i in range(STEPS):
            cm(xs[i % 4])
            cm.backward(dy)
            cm.update(LR)
        mx.nd.waitall()

    def run_hand():
        for i in range(STEPS):
            hand.step(xs[i % 4], dy)
        mx.nd.waitall()
    variants = {'front': run_front, 'hand': run_hand}
    if figure != 'convnet':
        act = relu if figure == 'mlp' else np.tanh
        weights = [(cm.params[f'dense{i}_weight'].data().asnumpy(),
                    cm.params[f'dense{i}_bias'].data().asnumpy())
                   for i in range(len(cm.params) // 2)]
        xs_np, dy_np = [x.asnumpy() for x in xs], dy.asnumpy()

        def run_np():
            for i in range(STEPS):
                numpy_mlp_step(weights, xs_np[i % 4], dy_np, act)
        variants['np'] = run_np
    reps = max(reps, MIN_REPS)
    times = interleaved_times(variants, reps, rotate=True)
    t = {k: min(ts) for k, ts in times.items()}
    # same start, same steps -> same weights (a broken front end cannot post a number)
    for name, param in cm.params.items():
        check_close(f'{figure} {name}', param.data().asnumpy(),
                    hand.exe.arg_dict[name].asnumpy(), rtol=1e-4, atol=1e-5)
    us = lambda s: round(s / STEPS * 1e6, 1)
    emit(BENCH, f'{figure}_train_step', lib, us(t['front']), 'us/step',
         us(t['np']) if 'np' in t else None, symbol_us=us(t['hand']),
         ratio_vs_symbol=round(t['front'] / t['hand'], 3), target_ratio=1.1,
         paired_median_ratio=round(paired_median_ratio(times, 'front', 'hand'), 3),
         batch=shape[0], input_shape=list(shape), steps=STEPS, reps=reps,
         lib_version=getattr(mx, '__version__', None), numpy_version=np.__version__)


def main():
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    if not hasattr(mx, 'nn') or not hasattr(mx.nn, 'compile'):
        for figure in FIGURES:
            emit(BENCH, f'{figure}_train_step', args.lib, None, 'us/step',
                 note=f'{args.lib} has no mx.nn.compile front end')
        return
    for figure in FIGURES:
        if args.only in (None, figure):
            fig(mx, args.lib, figure, args.reps)


if __name__ == '__main__':
    main()
