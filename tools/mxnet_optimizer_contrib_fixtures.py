#!/usr/bin/env python3
"""Record MXNet 1.9.1's contrib optimizer updates (AdamW, LAMB, group AdaGrad, LARS).

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_optimizer_contrib_fixtures.py

writes tests/operator/mxnet_files/optimizer_contrib.json: per case the inputs, the
parameters and MXNet's updated weight(s) and states, as nested lists of floats. The
inputs come from a fixed RandomState, so the file is the same on every run.
"""
import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'operator',
                   'mxnet_files', 'optimizer_contrib.json')


def arr(rs, shape, low=-1.0, high=1.0):
    return rs.uniform(low, high, shape).astype(np.float32)


def lst(a):
    return np.asarray(a, dtype=np.float64).round(7).tolist()


def adamw_cases(rs):
    cases = []
    for kw, rescale in (({'lr': 0.1, 'eta': 0.5, 'wd': 0.1}, 0.5),
                        ({'lr': 0.01, 'eta': 1.0, 'clip_gradient': 0.3, 'beta1': 0.8,
                          'beta2': 0.9, 'epsilon': 1e-3}, 2.0),
                        ({'lr': 0.1, 'eta': 1.0}, 0.0)):
        w, g, m, v = arr(rs, (3, 4)), arr(rs, (3, 4)), arr(rs, (3, 4)), arr(rs, (3, 4), 0, 1)
        ins = [lst(w), lst(g), lst(m), lst(v)]
        w, g, m, v = (mx.nd.array(x) for x in (w, g, m, v))
        mx.nd.contrib.adamw_update(w, g, m, v, rescale, out=w, **kw)
        cases.append({'op': 'adamw_update', 'ins': ins, 'rescale_grad': rescale,
                      'params': kw, 'weight': lst(w.asnumpy()), 'mean': lst(m.asnumpy()),
                      'var': lst(v.asnumpy())})
    # mixed precision
    w32, g, m, v = arr(rs, (5,)), arr(rs, (5,)), arr(rs, (5,)), arr(rs, (5,), 0, 1)
    ins = [lst(w32), lst(g.astype(np.float16)), lst(m), lst(v)]
    kw = {'lr': 0.1, 'eta': 0.5, 'wd': 0.01}
    w16, g16 = mx.nd.array(w32, dtype='float16'), mx.nd.array(g, dtype='float16')
    m, v, w32 = mx.nd.array(m), mx.nd.array(v), mx.nd.array(w32)
    mx.nd.contrib.mp_adamw_update(w16, g16, m, v, w32, 0.5, out=w16, **kw)
    cases.append({'op': 'mp_adamw_update', 'ins': ins, 'rescale_grad': 0.5, 'params': kw,
                  'weight': lst(w16.asnumpy()), 'weight32': lst(w32.asnumpy()),
                  'mean': lst(m.asnumpy()), 'var': lst(v.asnumpy())})
    return cases


def multi_cases(rs):
    shapes = [(2, 3), (4,)]
    cases = []
    for mp in (False, True):
        ws = [arr(rs, s) for s in shapes]
        gs = [arr(rs, s) for s in shapes]
        ms = [arr(rs, s) for s in shapes]
        vs = [arr(rs, s, 0, 1) for s in shapes]
        ins = {'weights': [lst(x) for x in ws], 'grads': [lst(x) for x in gs],
               'mean': [lst(x) for x in ms], 'var': [lst(x) for x in vs]}
        kw = {'lrs': (0.1, 0.2), 'wds': (0.01, 0.0), 'etas': (1.0, 0.5)}
        nd = [[mx.nd.array(x) for x in group] for group in (ws, gs, ms, vs)]
        if mp:
            w32 = nd[0]
            nd[0] = [x.astype('float16') for x in w32]
            nd[1] = [x.astype('float16') for x in nd[1]]
            mx.nd.contrib.multi_mp_adamw_update(nd[0], nd[1], nd[2], nd[3], w32, 0.5,
                                                out=nd[0], clip_gradient=0.4, **kw)
            extra = {'weights32': [lst(x.asnumpy()) for x in w32]}
        else:
            mx.nd.contrib.multi_adamw_update(nd[0], nd[1], nd[2], nd[3], 0.5, out=nd[0],
                                             clip_gradient=0.4, **kw)
            extra = {}
        cases.append(dict({'op': 'multi_mp_adamw_update' if mp else 'multi_adamw_update',
                           'ins': ins, 'rescale_grad': 0.5,
                           'params': dict(kw, clip_gradient=0.4),
                           'weights': [lst(x.asnumpy()) for x in nd[0]],
                           'mean': [lst(x.asnumpy()) for x in nd[2]],
                           'var': [lst(x.asnumpy()) for x in nd[3]]}, **extra))
        # LAMB over the same kind of inputs
        ws = [arr(rs, s) for s in shapes]
        gs = [arr(rs, s) for s in shapes]
        ms = [arr(rs, s) for s in shapes]
        vs = [arr(rs, s, 0, 1) for s in shapes]
        ins = {'weights': [lst(x) for x in ws], 'grads': [lst(x) for x in gs],
               'mean': [lst(x) for x in ms], 'var': [lst(x) for x in vs]}
        kw = {'lrs': (0.1, 0.2), 'wds': (0.01, 0.0), 'step_count': (1, 3)}
        extra_kw = ({'rescale_grad': 0.5, 'clip_gradient': 0.4, 'lower_bound': 0.1,
                     'upper_bound': 1.2} if mp else {'bias_correction': False,
                                                     'epsilon': 1e-4})
        nd = [[mx.nd.array(x) for x in group] for group in (ws, gs, ms, vs)]
        if mp:
            w32 = nd[0]
            nd[0] = [x.astype('float16') for x in w32]
            nd[1] = [x.astype('float16') for x in nd[1]]
            mx.nd.contrib.multi_mp_lamb_update(nd[0], nd[1], nd[2], nd[3], w32, out=nd[0],
                                               **kw, **extra_kw)
            extra = {'weights32': [lst(x.asnumpy()) for x in w32]}
        else:
            mx.nd.contrib.multi_lamb_update(nd[0], nd[1], nd[2], nd[3], out=nd[0], **kw,
                                            **extra_kw)
            extra = {}
        cases.append(dict({'op': 'multi_mp_lamb_update' if mp else 'multi_lamb_update',
                           'ins': ins, 'params': dict(kw, **extra_kw),
                           'weights': [lst(x.asnumpy()) for x in nd[0]],
                           'mean': [lst(x.asnumpy()) for x in nd[2]],
                           'var': [lst(x.asnumpy()) for x in nd[3]]}, **extra))
    return cases


def other_cases(rs):
    cases = []
    for shape in ((3, 4), (2, 3, 2)):
        w, g = arr(rs, shape), arr(rs, shape)
        h = arr(rs, (shape[0], 1), 0, 1)
        ins = [lst(w), lst(g), lst(h)]
        kw = {'lr': 0.1, 'rescale_grad': 0.5, 'clip_gradient': 0.2}
        # NOTE: MXNet's CPU build implements only a row_sparse grad (every row given
        # here, so it is the dense rule); a dense grad raises 'not implemented for CPU'
        w, h = mx.nd.array(w), mx.nd.array(h)
        g = mx.nd.array(g).tostype('row_sparse')
        mx.nd.contrib.group_adagrad_update(w, g, h, out=w, **kw)
        cases.append({'op': 'group_adagrad_update', 'ins': ins, 'params': kw,
                      'weight': lst(w.asnumpy()), 'history': lst(h.asnumpy())})
    lrs = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    wsq = np.array([4.0, 0.0, 2.0, 9.0], np.float32)
    gsq = np.array([1.0, 3.0, 0.0, 0.25], np.float32)
    wds = np.array([0.01, 0.1, 0.0, 0.5], np.float32)
    kw = {'eta': 0.01, 'eps': 1e-3, 'rescale_grad': 0.5}
    out = mx.nd.multi_lars(*(mx.nd.array(x) for x in (lrs, wsq, gsq, wds)), **kw)
    cases.append({'op': 'multi_lars', 'ins': [lst(x) for x in (lrs, wsq, gsq, wds)],
                  'params': kw, 'out': lst(out.asnumpy())})
    return cases


def main():
    rs = np.random.RandomState(0)
    cases = adamw_cases(rs) + multi_cases(rs) + other_cases(rs)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w') as f:
        json.dump({'mxnet_version': mx.__version__, 'cases': cases}, f, indent=0)
    print('wrote', OUT, len(cases), 'cases')


if __name__ == '__main__':
    main()
