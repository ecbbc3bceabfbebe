#!/usr/bin/env python3
"""Record MXNet 1.9.1's optimizers and update operators for mxcy's golden tests.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_optimizer_fixtures.py

tests/optimizer/mxnet_files/ gets ``optimizers.json`` (the cases) and
``optimizers.npz`` (inputs and MXNet's results), deterministic for a given MXNet:

* ``opt/<id>``: an optimizer created by name with keyword arguments, run through an
  Updater for STEPS steps on fixed weights and gradients (two indices, with
  ``param_idx2name`` so the wd/lr multipliers apply); the weights after each step;
* ``op/<id>``: one call of an update operator on fixed inputs: its inputs, its
  outputs and every input after the call (states change in place), flattened into one
  float32 array (float16 values are exact in float32); the json gives names, shapes and
  dtypes.
"""
import io
import json
import os
import zipfile

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'optimizer',
                   'mxnet_files')
STEPS = 3
SHAPE = (2, 3)

BASE = [{}, {'wd': 0.1}, {'rescale_grad': 0.5, 'clip_gradient': 0.3, 'wd': 0.01},
        {'learning_rate': 0.05}]
EXTRA = {
    'sgd': [{'momentum': 0.9}, {'momentum': 0.9, 'wd': 0.1, 'clip_gradient': 0.2}],
    'nag': [{'momentum': 0.9}, {'momentum': 0.9, 'wd': 0.1, 'clip_gradient': 0.2}],
    'adam': [{'beta1': 0.8, 'beta2': 0.9, 'epsilon': 1e-6}],
    'rmsprop': [{'centered': True}, {'centered': True, 'clip_weights': 0.5},
                {'clip_weights': 0.5, 'gamma1': 0.8}],
    'signum': [{'momentum': 0.0}, {'wd_lh': 0.1}],
    'lamb': [{'lower_bound': 0.1, 'upper_bound': 0.5}, {'bias_correction': False}],
    'lars': [{'momentum': 0.9}, {'momentum': 0.9, 'eta': 0.01, 'eps': 1e-3}],
    'lbsgd': [{'momentum': 0.9}, {'warmup_strategy': 'power2', 'batch_scale': 4,
                                  'updates_per_epoch': 2, 'warmup_epochs': 2},
              {'warmup_strategy': 'sqrt', 'batch_scale': 4, 'updates_per_epoch': 2,
               'warmup_epochs': 2}, {'warmup_strategy': 'lars', 'batch_scale': 4}],
    'dcasgd': [{'momentum': 0.9}, {'lamda': 0.5}],
    'ftrl': [{'lamda1': 0.001, 'beta': 0.5}],
    'ftml': [{'beta1': 0.5}],
    'nadam': [{'schedule_decay': 0.01}],
    'adamax': [{'beta1': 0.5}],
    'adagrad': [{'eps': 1e-3}],
    'adadelta': [{'rho': 0.5}],
    'groupadagrad': [{'eps': 1e-3}],
}
NO_WD = ('groupadagrad',)           # MXNet refuses wd != 0
MP = ('sgd', 'nag', 'lamb', 'lbsgd', 'adam', 'lars')
RANDOM = ('sgld',)                  # noise from MXNet's generator: not recorded


def _data(seed):
    rng = np.random.RandomState(seed)
    weights = [rng.uniform(-1, 1, SHAPE).astype(np.float32) for _ in range(2)]
    grads = [[rng.uniform(-1, 1, SHAPE).astype(np.float32) for _ in range(2)]
             for _ in range(STEPS)]
    return weights, grads


def optimizer_cases():
    names = sorted(n for n in mx.optimizer.Optimizer.opt_registry if n not in RANDOM)
    for name in names:
        for kw in BASE + EXTRA.get(name, []):
            if name in NO_WD and kw.get('wd'):
                continue
            yield name, dict(kw), 'float32'
        if name in MP:
            yield name, {'multi_precision': True, 'wd': 0.01}, 'float16'
            yield name, {'multi_precision': True, 'momentum': 0.9} if name in (
                'sgd', 'nag', 'lbsgd', 'lars') else {'multi_precision': True}, 'float16'


def run_optimizer(name, kw, dtype, arrays, cases):
    weights, grads = _data(len(cases))
    idx2name = {0: 'fc_weight', 1: 'fc_bias'}
    opt = mx.optimizer.create(name, param_idx2name=idx2name, **kw)
    opt.set_lr_mult({'fc_bias': 2.0})
    updater = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(w, dtype=dtype) for w in weights]
    history = []
    for step in range(STEPS):
        for i in range(2):
            updater(i, mx.nd.array(grads[step][i], dtype=dtype), ws[i])
        history.append(np.stack([w.asnumpy().astype(np.float32) for w in ws]))
    cid = f"{name}-{len(cases)}"
    arrays[f'opt/{cid}'] = np.stack(history)
    cases.append({'id': cid, 'name': name, 'kwargs': kw, 'dtype': dtype,
                  'seed': len(cases) - 0, 'steps': STEPS})


def _pos(shape, rng):
    return rng.uniform(0.1, 1, shape).astype(np.float32)


def _sym(shape, rng):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def op_cases():
    """(op, {input: kind}, params): kind 'w' (signed), 'p' (positive), 'z' (zeros)."""
    mom = {'weight': 'w', 'grad': 'w', 'mom': 'w'}
    hyper = [{'lr': 0.1}, {'lr': 0.1, 'wd': 0.1, 'rescale_grad': 2.0, 'clip_gradient': 0.5}]
    for params in hyper:
        yield 'sgd_update', {'weight': 'w', 'grad': 'w'}, params
        yield 'signsgd_update', {'weight': 'w', 'grad': 'w'}, params
        yield 'sgd_mom_update', mom, dict(params, momentum=0.9)
        yield 'nag_mom_update', mom, dict(params, momentum=0.9)
        yield 'signum_update', mom, dict(params, momentum=0.9, wd_lh=0.01)
        yield 'adam_update', {'weight': 'w', 'grad': 'w', 'mean': 'w', 'var': 'p'}, params
        yield 'rmsprop_update', {'weight': 'w', 'grad': 'w', 'n': 'p'}, \
            dict(params, clip_weights=0.8)
        yield 'rmspropalex_update', {'weight': 'w', 'grad': 'w', 'n': 'p', 'g': 'z',
                                     'delta': 'w'}, dict(params, clip_weights=0.8)
        yield 'ftrl_update', {'weight': 'w', 'grad': 'w', 'z': 'w', 'n': 'p'}, params
        ftml = {k: v for k, v in params.items() if k != 'clip_gradient'}
        yield 'ftml_update', {'weight': 'w', 'grad': 'w', 'd': 'p', 'v': 'p', 'z': 'w'}, \
            dict(ftml, t=3, clip_grad=params.get('clip_gradient', -1))
        yield 'lamb_update_phase1', {'weight': 'w', 'grad': 'w', 'mean': 'w', 'var': 'p'}, \
            {'t': 2, 'wd': params.get('wd', 0.0), 'rescale_grad': 1.5}
        yield 'lamb_update_phase2', {'weight': 'w', 'g': 'w', 'r1': 'p1', 'r2': 'p1'}, \
            {'lr': 0.1, 'lower_bound': 0.2, 'upper_bound': 0.9}
        mp = {'weight': 'h', 'grad': 'h', 'mom': 'w', 'weight32': 'w'}
        yield 'mp_sgd_update', {'weight': 'h', 'grad': 'h', 'weight32': 'w'}, params
        yield 'mp_sgd_mom_update', mp, dict(params, momentum=0.9)
        yield 'mp_nag_mom_update', mp, dict(params, momentum=0.9)
        yield 'mp_lamb_update_phase1', {'weight': 'h', 'grad': 'h', 'mean': 'w', 'var': 'p',
                                        'weight32': 'w'}, {'t': 2, 'wd': 0.1}
        yield 'mp_lamb_update_phase2', {'weight': 'h', 'g': 'w', 'r1': 'p1', 'r2': 'p1',
                                        'weight32': 'w'}, {'lr': 0.1}
    multi = {'lrs': (0.1, 0.2), 'wds': (0.0, 0.1), 'num_weights': 2,
             'rescale_grad': 0.5, 'clip_gradient': 0.4}
    for prefix in ('', 'preloaded_'):
        for form, group in (('sgd', 'wg'), ('sgd_mom', 'wgm'), ('mp_sgd', 'hgW'),
                            ('mp_sgd_mom', 'hgmW')):
            params = dict(multi, momentum=0.9) if 'mom' in form else dict(multi)
            yield f'{prefix}multi_{form}_update', group, params


def run_op(op, inputs, params, arrays, cases, rng):
    cid = f"{op}-{len(cases)}"
    if isinstance(inputs, str):             # a multi op: groups of (kinds)
        names, kinds = [], []
        for i in range(params['num_weights']):
            for c in inputs:
                n = {'w': 'weight', 'h': 'weight', 'g': 'grad', 'm': 'mom',
                     'W': 'weight32'}[c]
                names.append(f'{n}_{i}')
                kinds.append({'h': 'h', 'g': 'h' if 'h' in inputs else 'w'}.get(c, 'w'))
    else:
        names, kinds = list(inputs), list(inputs.values())
    values = {}
    for n, k in zip(names, kinds):
        if k == 'p1':
            values[n] = _pos((1,), rng)
        elif k == 'p':
            values[n] = _pos(SHAPE, rng)
        elif k == 'z':
            values[n] = np.zeros(SHAPE, np.float32)
        else:
            values[n] = _sym(SHAPE, rng).astype(np.float16 if k == 'h' else np.float32)
    if 'weight32_0' in values or 'weight32' in values:     # master copy = the weight
        for n in list(values):
            if n.startswith('weight32'):
                values[n] = values[n.replace('weight32', 'weight')].astype(np.float32)
    nds = {n: mx.nd.array(v, dtype=v.dtype) for n, v in values.items()}
    call = dict(params)
    args = [nds[n] for n in names]
    if op.startswith('preloaded_'):
        lrs, wds = call.pop('lrs'), call.pop('wds')
        values['lrs'] = np.array(lrs, np.float32)
        values['wds'] = np.array(wds, np.float32)
        args += [mx.nd.array(lrs), mx.nd.array(wds)]
        names = names + ['lrs', 'wds']
    if op.startswith(('multi', 'preloaded')):
        n = call['num_weights']
        k = len(args) // n if not op.startswith('preloaded') else (len(args) - 2) // n
        outs = [mx.nd.zeros(SHAPE, dtype=values[names[i * k]].dtype) for i in range(n)]
        getattr(mx.nd, op)(*args, out=outs, **call)
    else:
        outs = [getattr(mx.nd, op)(*args, **call)]
    # one flat float32 array per case: inputs, outputs, then the inputs after the call
    parts = [values[n] for n in names] + [o.asnumpy() for o in outs] + \
        [a.asnumpy() for a in args]
    arrays[f'op/{cid}'] = np.concatenate([p.astype(np.float32).ravel() for p in parts])
    cases.append({'id': cid, 'op': op, 'inputs': names, 'params': params,
                  'shapes': [list(values[n].shape) for n in names],
                  'dtypes': [values[n].dtype.name for n in names],
                  'out_shapes': [list(o.shape) for o in outs],
                  'out_dtypes': [np.dtype(o.dtype).name for o in outs]})


def _save_npz(path, arrays):
    """np.savez_compressed with fixed zip timestamps (a rerun writes the same bytes)."""
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[name]))
            info = zipfile.ZipInfo(name + '.npy', date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays, opt_cases, ops = {}, [], []
    for name, kw, dtype in optimizer_cases():
        try:
            run_optimizer(name, kw, dtype, arrays, opt_cases)
        except Exception as e:      # noqa: BLE001  (MXNet's own bugs: reported, skipped)
            print(f'MXNet fails on {name} {kw} {dtype}: {type(e).__name__}: {e}'[:300])
    rng = np.random.RandomState(7)
    for op, inputs, params in op_cases():
        run_op(op, inputs, params, arrays, ops, rng)
    _save_npz(os.path.join(OUT, 'optimizers.npz'), arrays)
    with open(os.path.join(OUT, 'optimizers.json'), 'w') as f:
        json.dump({'shape': SHAPE, 'optimizers': opt_cases, 'ops': ops}, f,
                  separators=(',', ':'),
                  sort_keys=True)
    print(len(opt_cases), 'optimizer cases,', len(ops), 'op cases')


if __name__ == '__main__':
    main()
