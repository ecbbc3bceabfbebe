#!/usr/bin/env python3
"""BatchNorm and depthwise convolution speed (issue 16), against NumPy doing the same
arithmetic.

    python bench/bench_bnconv.py                                  # mxcy
    OMP_NUM_THREADS=2 /work/mxnet_venv/bin/python bench/bench_bnconv.py --lib mxnet

Figures (executor forward + backward, float32, ms per step):
- batchnorm: BatchNorm(fix_gamma=False) in training on (16, 64, 56, 56);
- depthwise_s1 / depthwise_s2: a 3×3 depthwise convolution (num_group = channels = 128,
  pad 1, no bias) on (16, 128, 56, 56), stride 1 and 2.
"""
import numpy as np

from _common import best_interleaved, check_close, emit, load, parse

FIGURES = ('batchnorm', 'depthwise_s1', 'depthwise_s2')
BENCH = 'bnconv'


def bind(mx, sym, shapes, seed=0):
    exe = sym.simple_bind(mx.cpu(), grad_req='write', **shapes)
    rng = np.random.default_rng(seed)
    for arr in exe.arg_arrays:
        arr[:] = rng.uniform(-1, 1, arr.shape).astype(np.float32)
    return exe


def step(exe, dy):
    def run():
        exe.forward(is_train=True)
        exe.backward([dy])
        for g in exe.grad_arrays:
            if g is not None:
                g.wait_to_read()
        exe.outputs[0].wait_to_read()
    return run


def fig_batchnorm(mx, lib, reps):
    shape = (16, 64, 56, 56)
    sym = mx.sym.BatchNorm(mx.sym.Variable('data'), fix_gamma=False, name='bn')
    exe = bind(mx, sym, {'data': shape})
    rng = np.random.default_rng(1)
    dyn = rng.standard_normal(shape).astype(np.float32)
    dy = mx.nd.array(dyn)
    x = exe.arg_dict['data'].asnumpy()
    gamma = exe.arg_dict['bn_gamma'].asnumpy().reshape(1, -1, 1, 1)

    def run_np():
        mean = x.mean(axis=(0, 2, 3), keepdims=True)
        xc = x - mean
        invstd = 1 / np.sqrt((xc * xc).mean(axis=(0, 2, 3), keepdims=True) + 1e-3)
        xhat = xc * invstd
        y = xhat * gamma
        dbeta = dyn.sum(axis=(0, 2, 3), keepdims=True)
        dgamma = (dyn * xhat).sum(axis=(0, 2, 3), keepdims=True)
        m = x.size // x.shape[1]
        dx = gamma * invstd * (dyn - dbeta / m - xhat * dgamma / m)
        return y, dx
    t = best_interleaved({'mx': step(exe, dy), 'np': run_np}, reps)
    check_close('batchnorm dx', exe.grad_dict['data'].asnumpy(), run_np()[1],
                rtol=1e-2, atol=1e-3)
    emit(BENCH, 'batchnorm_fwd_bwd', lib, round(t['mx'] * 1e3, 3), 'ms',
         round(t['np'] * 1e3, 3), shape=list(shape))


def depthwise(mx, lib, reps, stride):
    shape, c = (16, 128, 56, 56), 128
    sym = mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), pad=(1, 1),
                             stride=(stride, stride), num_filter=c, num_group=c,
                             no_bias=True, name='dw')
    exe = bind(mx, sym, {'data': shape})
    oh = (56 + 2 - 3) // stride + 1
    rng = np.random.default_rng(1)
    dyn = rng.standard_normal((16, c, oh, oh)).astype(np.float32)
    dy = mx.nd.array(dyn)
    x = exe.arg_dict['data'].asnumpy()
    w = exe.arg_dict['dw_weight'].asnumpy()[:, 0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    s = stride

    def window(i, j):
        return xp[:, :, i:i + s * (oh - 1) + 1:s, j:j + s * (oh - 1) + 1:s]

    def run_np():       # nine shifted multiply-adds forward, nine for dx, nine dots for dw
        y = np.zeros((16, c, oh, oh), np.float32)
        dxp = np.zeros_like(xp)
        dw = np.empty((c, 3, 3), np.float32)
        for i in range(3):
            for j in range(3):
                win = window(i, j)
                y += win * w[:, i, j].reshape(1, c, 1, 1)
                dxp[:, :, i:i + s * (oh - 1) + 1:s, j:j + s * (oh - 1) + 1:s] += \
                    dyn * w[:, i, j].reshape(1, c, 1, 1)
                dw[:, i, j] = np.einsum('nchw,nchw->c', win, dyn)
        return y, dxp[:, :, 1:-1, 1:-1], dw
    t = best_interleaved({'mx': step(exe, dy), 'np': run_np}, reps)
    _, dx_ref, dw_ref = run_np()
    check_close('depthwise dx', exe.grad_dict['data'].asnumpy(), dx_ref, rtol=1e-3,
                atol=1e-3)
    check_close('depthwise dw', exe.grad_dict['dw_weight'].asnumpy()[:, 0], dw_ref,
                rtol=1e-3, atol=1e-2)
    emit(BENCH, f'depthwise3x3_s{stride}_fwd_bwd', lib, round(t['mx'] * 1e3, 3), 'ms',
         round(t['np'] * 1e3, 3), shape=list(shape), stride=stride)


def main():
    args = parse(__doc__, FIGURES)
    mx = load(args.lib)
    figs = {'batchnorm': fig_batchnorm,
            'depthwise_s1': lambda m, lib, r: depthwise(m, lib, r, 1),
            'depthwise_s2': lambda m, lib, r: depthwise(m, lib, r, 2)}
    for name in FIGURES:
        if args.only in (None, name):
            figs[name](mx, args.lib, args.reps)


if __name__ == '__main__':
    main()
