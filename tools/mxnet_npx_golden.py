#!/usr/bin/env python3
"""Record MXNet 1.9.1's outputs and input gradients for the ``mx.npx`` operators.

Run in the MXNet peer venv (never in CI; the files it writes are committed):

    /work/mxnet_venv/bin/python tools/mxnet_npx_golden.py

Under ``npx.set_np()`` each case of `CASES` makes its inputs (a ``RandomState`` seeded by
the case name), runs ``npx.<op>(*inputs, **params)`` inside ``autograd.record()`` (train
mode as the case says), then ``backward`` with fixed uniform head gradients, and writes
``tests/compat/golden/npx.npz`` (``<case>/in<j>``, ``/out<j>``, ``/head<j>``, ``/grad<j>``,
compressed with fixed zip timestamps, so a rerun gives the same bytes) and ``npx.json``
(per case: the op, parameters, which inputs have gradients). Integer inputs (indices,
labels) never get gradients.
"""
import io
import json
import os
import zipfile
import zlib

import numpy as onp
from mxnet import autograd, np, npx

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
OUT = os.path.join(ROOT, 'tests', 'compat', 'golden')


def f(*shape):
    return ('f', shape)


def pos(*shape):
    return ('pos', shape)


def idx(high, *shape):
    return ('i', high, shape)


def given(values, dtype='float32'):
    return ('v', values, dtype)


# name: (npx op, [inputs], params, train_mode)
CASES = {
    'relu': ('relu', [f(3, 4)], {}, True),
    'sigmoid': ('sigmoid', [f(3, 4)], {}, True),
    'softmax': ('softmax', [f(2, 5)], {'axis': -1}, True),
    'softmax_temp': ('softmax', [f(2, 3, 4)], {'axis': 1, 'temperature': 2.0}, True),
    'log_softmax': ('log_softmax', [f(3, 5)], {}, True),
    'activation_tanh': ('activation', [f(3, 4)], {'act_type': 'tanh'}, True),
    'activation_softrelu': ('activation', [f(3, 4)], {'act_type': 'softrelu'}, True),
    'batch_norm': ('batch_norm', [f(4, 3, 2, 2), pos(3), f(3), f(3), pos(3)],
                   {'fix_gamma': False}, True),
    'batch_norm_eval': ('batch_norm', [f(4, 3, 2), pos(3), f(3), f(3), pos(3)],
                        {'fix_gamma': False, 'use_global_stats': True}, False),
    'convolution': ('convolution', [f(2, 3, 6, 6), f(4, 3, 3, 3), f(4)],
                    {'kernel': (3, 3), 'num_filter': 4, 'pad': (1, 1), 'stride': (2, 2)}, True),
    'deconvolution': ('deconvolution', [f(2, 3, 4, 4), f(3, 2, 3, 3), f(2)],
                      {'kernel': (3, 3), 'num_filter': 2, 'stride': (2, 2), 'no_bias': False},
                      True),
    'fully_connected': ('fully_connected', [f(4, 2, 3), f(5, 6), f(5)],
                        {'num_hidden': 5}, True),
    'fully_connected_noflat': ('fully_connected', [f(4, 2, 3), f(5, 3)],
                               {'num_hidden': 5, 'no_bias': True, 'flatten': False}, True),
    'pooling_max': ('pooling', [f(2, 3, 6, 6)],
                    {'kernel': (2, 2), 'stride': (2, 2), 'pool_type': 'max'}, True),
    'pooling_avg_global': ('pooling', [f(2, 3, 5, 5)],
                           {'kernel': (1, 1), 'global_pool': True, 'pool_type': 'avg'}, True),
    'dropout_eval': ('dropout', [f(3, 4)], {'p': 0.5}, False),
    'embedding': ('embedding', [idx(6, 2, 3), f(6, 4)], {'input_dim': 6, 'output_dim': 4},
                  True),
    'rnn_lstm': ('rnn', [f(3, 2, 4), f(4 * 5 * (4 + 5 + 2)), f(1, 2, 5), f(1, 2, 5)],
                 {'state_size': 5, 'num_layers': 1, 'mode': 'lstm', 'state_outputs': True},
                 True),
    'one_hot': ('one_hot', [idx(5, 4)], {'depth': 5}, True),
    'pick': ('pick', [f(3, 4), idx(4, 3)], {'axis': 1}, True),
    'pick_keepdims': ('pick', [f(3, 4), idx(3, 4)], {'axis': 0, 'keepdims': True}, True),
    'topk_value': ('topk', [f(3, 6)], {'k': 2, 'ret_typ': 'value'}, True),
    'topk_indices': ('topk', [f(3, 6)], {'k': 3, 'axis': 0}, True),
    'sequence_mask': ('sequence_mask', [f(4, 3, 2), given([1, 3, 4])],
                      {'use_sequence_length': True, 'value': -1.0}, True),
    'layer_norm': ('layer_norm', [f(3, 5), pos(5), f(5)], {'axis': -1}, True),
    'leaky_relu': ('leaky_relu', [f(3, 4)], {'act_type': 'leaky', 'slope': 0.1}, True),
    'leaky_relu_elu': ('leaky_relu', [f(3, 4)], {'act_type': 'elu', 'slope': 0.5}, True),
    'batch_dot': ('batch_dot', [f(2, 3, 4), f(2, 4, 5)], {}, True),
    'batch_dot_t': ('batch_dot', [f(2, 4, 3), f(2, 5, 4)],
                    {'transpose_a': True, 'transpose_b': True}, True),
    'arange_like': ('arange_like', [f(2, 3)], {'start': 1.0, 'step': 0.5}, True),
    'batch_flatten': ('batch_flatten', [f(2, 3, 4)], {}, True),
    'cast': ('cast', [f(2, 3)], {'dtype': 'float64'}, True),
    'erf': ('erf', [f(3, 4)], {}, True),
    'erfinv': ('erfinv', [('half', (3, 4))], {}, True),
    'gamma': ('gamma', [pos(3, 4)], {}, True),
    'gammaln': ('gammaln', [pos(3, 4)], {}, True),
    'gather_nd': ('gather_nd', [f(3, 4), given([[0, 2, 1], [1, 3, 0]], 'int32')], {}, True),
    'reshape_like': ('reshape_like', [f(2, 6), f(3, 4)], {}, True),
    'shape_array': ('shape_array', [f(2, 3, 4)], {}, True),
    'slice': ('slice', [f(4, 5)], {'begin': (1, 0), 'end': (3, 5), 'step': (1, 2)}, True),
    'smooth_l1': ('smooth_l1', [f(3, 4)], {'scalar': 2.0}, True),
    'roi_pooling': ('roi_pooling', [f(1, 2, 6, 6),
                                    given([[0, 0, 0, 3, 3], [0, 1, 2, 5, 5]])],
                    {'pooled_size': (2, 2), 'spatial_scale': 1.0}, True),
    'multibox_prior': ('multibox_prior', [f(1, 2, 3, 3)],
                       {'sizes': (0.5, 0.25), 'ratios': (1.0, 2.0)}, True),
    'reshape_m2_m1': ('reshape', [f(2, 3, 4)], {'newshape': (-2, -1)}, True),
    'reshape_m3_m4': ('reshape', [f(2, 1, 3, 4)], {'newshape': (-2, -3, -4)}, True),
    'reshape_m5': ('reshape', [f(2, 3, 4)], {'newshape': (-5, -2)}, True),
    'reshape_m6': ('reshape', [f(6, 4)], {'newshape': (-6, 2, -1, -2)}, True),
    'reshape_reverse': ('reshape', [f(2, 3, 4)], {'newshape': (-1, 4), 'reverse': True}, True),
}


def make_input(spec, rng):
    kind = spec[0]
    if kind == 'f':
        return rng.uniform(-1, 1, spec[1]).astype('float32')
    if kind == 'pos':
        return rng.uniform(0.5, 1.5, spec[1]).astype('float32')
    if kind == 'half':
        return rng.uniform(-0.9, 0.9, spec[1]).astype('float32')
    if kind == 'i':
        return rng.randint(0, spec[1], spec[2]).astype('int32')
    return onp.array(spec[1], dtype=spec[2])


def run_case(name, op, inputs, params, train):
    rng = onp.random.RandomState(zlib.crc32(name.encode()))
    host = [make_input(s, rng) for s in inputs]
    arrays = [np.array(h, dtype=h.dtype) for h in host]
    grads = [h.dtype.kind == 'f' and op not in ('shape_array', 'one_hot', 'arange_like',
                                               'multibox_prior')
             and not (op == 'sequence_mask' and j == 1) and not (op == 'roi_pooling' and j)
             for j, h in enumerate(host)]
    for a, g in zip(arrays, grads):
        if g:
            a.attach_grad()
    with autograd.record(train_mode=train):
        out = getattr(npx, op)(*arrays, **params)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    heads = [rng.uniform(-1, 1, o.shape).astype(o.dtype) if o.dtype.kind == 'f'
             else None for o in outs]
    differentiable = any(grads) and any(h is not None for h in heads)
    if differentiable:
        autograd.backward([o for o, h in zip(outs, heads) if h is not None],
                          [np.array(h) for h in heads if h is not None])
    record = {}
    for j, h in enumerate(host):
        record[f'{name}/in{j}'] = h
        if differentiable and grads[j]:
            record[f'{name}/grad{j}'] = arrays[j].grad.asnumpy()
    for j, (o, h) in enumerate(zip(outs, heads)):
        record[f'{name}/out{j}'] = o.asnumpy()
        if differentiable and h is not None:
            record[f'{name}/head{j}'] = h
    meta = {'op': op, 'params': params, 'train': train,
            'grads': [j for j, g in enumerate(grads) if g and differentiable],
            'n_out': len(outs)}
    return record, meta


def _jsonable(value):
    if isinstance(value, tuple):
        return list(value)
    return value


def main():
    npx.set_np()
    arrays, index = {}, {}
    for name, (op, inputs, params, train) in CASES.items():
        record, meta = run_case(name, op, inputs, params, train)
        arrays.update(record)
        meta['params'] = {k: _jsonable(v) for k, v in meta['params'].items()}
        index[name] = meta
    os.makedirs(OUT, exist_ok=True)
    with zipfile.ZipFile(os.path.join(OUT, 'npx.npz'), 'w', zipfile.ZIP_DEFLATED) as z:
        for key in sorted(arrays):
            buf = io.BytesIO()
            onp.save(buf, arrays[key])
            info = zipfile.ZipInfo(key + '.npy', date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, buf.getvalue())
    with open(os.path.join(OUT, 'npx.json'), 'w') as fh:
        json.dump(index, fh, indent=1, sort_keys=True)
        fh.write('\n')
    print(f'{len(index)} npx cases, {len(arrays)} arrays')


if __name__ == '__main__':
    main()
