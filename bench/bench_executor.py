#!/usr/bin/env python3
"""Executor overhead and memory (issue "Symbols and executors").

    python bench/bench_executor.py
    /work/peers/mxnet/bin/python bench/bench_executor.py --lib mxnet

Figures: forward+backward of the 784-128-64-10 MLP at batch 100 through a bound
executor vs NumPy doing the same arithmetic (target <= 1.3x); the planned memory of a
bound LeNet (intermediates and gradients) vs one buffer per value.
"""
import numpy as np

from _common import best_interleaved, check_close, emit, load, parse

FIGURES = ('mlp_overhead', 'lenet_memory')
BENCH = 'executor'


def mlp(mx):
    data = mx.sym.Variable('data')
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=128, name='fc1'),
                          act_type='relu')
    h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=64, name='fc2'),
                          act_type='relu')
    out = mx.sym.FullyConnected(h, num_hidden=10, name='fc3')
    return mx.sym.SoftmaxOutput(out, name='softmax')


def numpy_mlp(params, x, label):
    """The same forward and backward in NumPy (float32)."""
    w1, b1, w2, b2, w3, b3 = params
    a1 = x @ w1.T + b1
    h1 = np.maximum(a1, 0)
    a2 = h1 @ w2.T + b2
    h2 = np.maximum(a2, 0)
    z = h2 @ w3.T + b3
    e = np.exp(z - z.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    d3 = p.copy()
    d3[np.arange(len(label)), label] -= 1
    gw3, gb3 = d3.T @ h2, d3.sum(0)
    d2 = (d3 @ w3) * (a2 > 0)
    gw2, gb2 = d2.T @ h1, d2.sum(0)
    d1 = (d2 @ w2) * (a1 > 0)
    gw1, gb1 = d1.T @ x, d1.sum(0)
    return p, (gw1, gb1, gw2, gb2, gw3, gb3)


def fig_mlp_overhead(mx, lib, reps):
    batch = 100
    sym = mlp(mx)
    exe = sym.simple_bind(mx.cpu(), data=(batch, 784), grad_req={
        n: ('null' if n in ('data', 'softmax_label') else 'write')
        for n in sym.list_arguments()})
    rng = np.random.default_rng(0)
    names = ['fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias', 'fc3_weight', 'fc3_bias']
    for n in names:
        exe.arg_dict[n][:] = rng.uniform(-0.1, 0.1, exe.arg_dict[n].shape).astype(np.float32)
    x = rng.random((batch, 784), np.float32)
    label = rng.integers(0, 10, batch)
    exe.arg_dict['data'][:] = x
    exe.arg_dict['softmax_label'][:] = label.astype(np.float32)
    params = [exe.arg_dict[n].asnumpy() for n in names]
    grads = [exe.grad_dict[n] for n in names]

    def run_mx():
        exe.forward(is_train=True)
        exe.backward()
        for g in grads:
            g.wait_to_read()
        exe.outputs[0].wait_to_read()
    t = best_interleaved({'mx': run_mx, 'np': lambda: numpy_mlp(params, x, label)},
                         reps * 20)
    _, ref = numpy_mlp(params, x, label)
    check_close('mlp fc1_weight grad', grads[0].asnumpy(), ref[0], rtol=1e-3, atol=1e-4)
    emit(BENCH, 'mlp_fwd_bwd_ms', lib, round(t['mx'] * 1e3, 4), 'ms',
         round(t['np'] * 1e3, 4), batch=batch, net='784-128-64-10')


def fig_lenet_memory(mx, lib, reps):
    if lib != 'mxcy':
        emit(BENCH, 'lenet_planned_bytes', lib, None, 'bytes',
             note='MXNet reports its plan only in debug_str text; not parsed here')
        return
    from bench_ops import lenet
    sym = lenet(mx)
    exe = sym.simple_bind(mx.cpu(), data=(100, 1, 28, 28))
    arrays = sum(a.size * 4 for a in exe.arg_arrays) + \
        sum(g.size * 4 for g in exe.grad_arrays if g is not None)
    emit(BENCH, 'lenet_planned_bytes', lib, exe.peak_bytes, 'bytes',
         naive_bytes=exe.naive_bytes, plan_over_naive=round(exe.peak_bytes / exe.naive_bytes, 3),
         argument_and_gradient_bytes=arrays, batch=100)


def main():
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    for name in FIGURES:
        if args.only in (None, name):
            globals()[f'fig_{name}'](mx, args.lib, args.reps)


if __name__ == '__main__':
    main()
