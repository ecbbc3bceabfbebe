#!/usr/bin/env python3
"""Operator speed (issue "Operators"), against NumPy doing the same arithmetic.

    python bench/bench_ops.py                       # mxcy
    /work/peers/mxnet/bin/python bench/bench_ops.py --lib mxnet

Figures: FullyConnected forward+backward GFLOP/s (batch 128, 784 -> 1024); LeNet layers
forward+backward images/s (batch 100); elementwise add/exp and softmax over 1M floats;
unrolled vs fused LSTM (hidden 256, batch 32, 32 steps) forward+backward.
"""
import numpy as np

from _common import best_interleaved, check_close, emit, load, parse

FIGURES = ('fc', 'lenet', 'elementwise', 'softmax', 'lstm')
BENCH = 'ops'


def bind(mx, sym, shapes, grad_req='write'):
    exe = sym.simple_bind(mx.cpu(), grad_req=grad_req, **shapes)
    rng = np.random.default_rng(0)
    for name, arr in exe.arg_dict.items():
        arr[:] = rng.uniform(-0.1, 0.1, arr.shape).astype(np.float32)
    return exe


def fig_fc(mx, lib, reps):
    n, k, h = 128, 784, 1024
    data = mx.sym.Variable('data')
    fc = mx.sym.FullyConnected(data=data, num_hidden=h, name='fc')
    exe = bind(mx, fc, {'data': (n, k)})
    dy = mx.nd.array(np.random.default_rng(1).uniform(-1, 1, (n, h)))
    x, w = exe.arg_dict['data'].asnumpy(), exe.arg_dict['fc_weight'].asnumpy()
    dyn = dy.asnumpy()

    def run_mx():
        exe.forward(is_train=True)
        exe.backward([dy])
        exe.grad_dict['fc_weight'].wait_to_read()
        exe.grad_dict['data'].wait_to_read()
        exe.outputs[0].wait_to_read()

    def run_np():
        y = x @ w.T
        y += 0.0
        dx = dyn @ w
        dw = dyn.T @ x
        db = dyn.sum(0)
        return y, dx, dw, db
    t = best_interleaved({'mx': run_mx, 'np': run_np}, reps)
    check_close('fc dW', exe.grad_dict['fc_weight'].asnumpy(), dyn.T @ x, rtol=1e-3, atol=1e-3)
    flops = 3 * 2 * n * k * h
    emit(BENCH, 'fc_fwd_bwd_gflops', lib, round(flops / t['mx'] / 1e9, 2), 'GFLOP/s',
         round(flops / t['np'] / 1e9, 2), better='higher', batch=n, shape=[k, h])


def lenet(mx):
    data = mx.sym.Variable('data')
    c1 = mx.sym.Convolution(data=data, kernel=(5, 5), num_filter=20)
    p1 = mx.sym.Pooling(data=mx.sym.Activation(c1, act_type='tanh'), pool_type='max',
                        kernel=(2, 2), stride=(2, 2))
    c2 = mx.sym.Convolution(data=p1, kernel=(5, 5), num_filter=50)
    p2 = mx.sym.Pooling(data=mx.sym.Activation(c2, act_type='tanh'), pool_type='max',
                        kernel=(2, 2), stride=(2, 2))
    f1 = mx.sym.FullyConnected(data=mx.sym.Flatten(p2), num_hidden=500)
    f2 = mx.sym.FullyConnected(data=mx.sym.Activation(f1, act_type='tanh'), num_hidden=10)
    return mx.sym.SoftmaxOutput(data=f2, name='softmax')


def fig_lenet(mx, lib, reps):
    batch = 100
    net = lenet(mx)
    exe = bind(mx, net, {'data': (batch, 1, 28, 28)},
               grad_req={n: ('null' if n in ('data', 'softmax_label') else 'write')
                         for n in net.list_arguments()})
    exe.arg_dict['softmax_label'][:] = np.arange(batch) % 10
    grads = [g for g in exe.grad_arrays if g is not None]

    def run_mx():
        exe.forward(is_train=True)
        exe.backward()
        for g in grads:
            g.wait_to_read()
    # floor: the GEMMs an im2col convolution does, in NumPy (forward + two backward)
    rng = np.random.default_rng(0)
    mats = [(rng.random((20, 25), np.float32), rng.random((25, 576 * batch), np.float32)),
            (rng.random((50, 500), np.float32), rng.random((500, 64 * batch), np.float32)),
            (rng.random((batch, 800), np.float32), rng.random((800, 500), np.float32))]

    def run_np():
        for a, b in mats:
            c = a @ b
            a.T @ c
            c @ b.T
    t = best_interleaved({'mx': run_mx, 'np': run_np}, reps)
    emit(BENCH, 'lenet_fwd_bwd_images_per_s', lib, round(batch / t['mx'], 1), 'images/s',
         round(batch / t['np'], 1), better='higher', batch=batch,
         numpy_is='the im2col GEMMs alone (a lower bound on work, not a full LeNet)')


def fig_elementwise(mx, lib, reps):
    n = 1 << 20
    rng = np.random.default_rng(0)
    an, bn = rng.random(n, np.float32), rng.random(n, np.float32)
    a, b = mx.nd.array(an), mx.nd.array(bn)
    out = {}

    def add_mx():
        out['add'] = a + b
        out['add'].wait_to_read()

    def exp_mx():
        out['exp'] = mx.nd.exp(a)
        out['exp'].wait_to_read()
    t = best_interleaved({'add': add_mx, 'add_np': lambda: an + bn, 'exp': exp_mx,
                          'exp_np': lambda: np.exp(an)}, reps)
    check_close('add', out['add'].asnumpy(), an + bn)
    check_close('exp', out['exp'].asnumpy(), np.exp(an))
    for k in ('add', 'exp'):
        emit(BENCH, f'{k}_1M', lib, round(t[k] * 1e3, 4), 'ms', round(t[k + '_np'] * 1e3, 4),
             elements=n)


def fig_softmax(mx, lib, reps):
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((1024, 1024)).astype(np.float32)
    x = mx.nd.array(xn)
    out = {}

    def run_mx():
        out['y'] = mx.nd.softmax(x, axis=-1)
        out['y'].wait_to_read()

    def run_np():
        e = np.exp(xn - xn.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    t = best_interleaved({'mx': run_mx, 'np': run_np}, reps)
    check_close('softmax', out['y'].asnumpy(), run_np())
    emit(BENCH, 'softmax_1M', lib, round(t['mx'] * 1e3, 4), 'ms', round(t['np'] * 1e3, 4),
         shape=[1024, 1024])


def lstm_unrolled(mx, seq, hidden):
    data = mx.sym.Variable('data')
    h = mx.sym.Variable('h0')
    c = mx.sym.Variable('c0')
    wx, wh = mx.sym.Variable('wx'), mx.sym.Variable('wh')
    bx, bh = mx.sym.Variable('bx'), mx.sym.Variable('bh')
    steps = mx.sym.SliceChannel(data, num_outputs=seq, axis=0, squeeze_axis=True)
    outs = []
    for t in range(seq):
        g = mx.sym.FullyConnected(steps[t], wx, bx, num_hidden=4 * hidden) + \
            mx.sym.FullyConnected(h, wh, bh, num_hidden=4 * hidden)
        i, f, gg, o = mx.sym.SliceChannel(g, num_outputs=4, axis=1)
        c = mx.sym.Activation(f, act_type='sigmoid') * c + \
            mx.sym.Activation(i, act_type='sigmoid') * mx.sym.Activation(gg, act_type='tanh')
        h = mx.sym.Activation(o, act_type='sigmoid') * mx.sym.Activation(c, act_type='tanh')
        outs.append(mx.sym.expand_dims(h, axis=0))
    return mx.sym.MakeLoss(mx.sym.sum(mx.sym.Concat(*outs, dim=0)))


def lstm_fused(mx, seq, hidden):
    data = mx.sym.Variable('data')
    params = mx.sym.Variable('rnn_parameters', init=mx.init.Uniform(0.1))
    out = mx.sym.RNN(data=data, parameters=params, state_size=hidden, num_layers=1,
                     mode='lstm', name='rnn', state=mx.sym.Variable('rnn_state'),
                     state_cell=mx.sym.Variable('rnn_state_cell'))
    return mx.sym.MakeLoss(mx.sym.sum(out))


def fig_lstm(mx, lib, reps):
    seq, batch, hidden = 32, 32, 256
    shapes = {'data': (seq, batch, hidden)}
    unrolled = lstm_unrolled(mx, seq, hidden)
    exe_u = bind(mx, unrolled, dict(shapes, h0=(batch, hidden), c0=(batch, hidden)))
    exe_f = bind(mx, lstm_fused(mx, seq, hidden), shapes)

    def run(exe):
        def once():
            exe.forward(is_train=True)
            exe.backward()
            for g in exe.grad_arrays:
                if g is not None:
                    g.wait_to_read()
        return once
    t = best_interleaved({'u': run(exe_u), 'f': run(exe_f)}, reps)
    emit(BENCH, 'lstm_unrolled_ms', lib, round(t['u'] * 1e3, 3), 'ms', seq=seq, batch=batch,
         hidden=hidden)
    emit(BENCH, 'lstm_fused_ms', lib, round(t['f'] * 1e3, 3), 'ms', seq=seq, batch=batch,
         hidden=hidden)
    emit(BENCH, 'lstm_fused_speedup', lib, round(t['u'] / t['f'], 3), 'x', better='higher')


def main():
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    for name in FIGURES:
        if args.only in (None, name):
            globals()[f'fig_{name}'](mx, args.lib, args.reps)


if __name__ == '__main__':
    main()
