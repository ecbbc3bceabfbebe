#!/usr/bin/env python3
"""Record MXNet 1.9.1's own outputs and input gradients for every ``mx.nd`` operator.

Run in the MXNet peer venv (never in CI; the files it writes are committed):

    /work/mxnet_venv/bin/python tools/mxnet_golden.py

It reads the operator table in ``tools/mxnet_golden_table.py`` and writes, under
``tests/compat/golden/``:

- ``ops.npz``: for case ``k``, the inputs ``k/in<j>``, the outputs ``k/out<j>``, the head
  gradients ``k/head<j>`` and MXNet's input gradients ``k/grad<j>`` (compressed, written
  with fixed zip timestamps so a rerun gives the same bytes);
- ``index.json``: per case the op, case name, parameters, input dtypes and which inputs
  have gradients; per sampler case the number of draws and the first two moments
  (mean, variance) plus the fourth central moment, from which the test sizes its
  tolerance; and the table's reasons for the ``mx.nd`` names that have no case.

Value cases: inputs come from a ``RandomState`` seeded by the op and case names; under
``autograd.record(train_mode=...)`` (the table says which) the op runs once, then
``autograd.backward`` with fixed uniform head gradients for every output. An op that
MXNet cannot differentiate (or a case marked ``g=False``) records outputs only.
Sampler cases seed ``mx.random`` and record moments per parameter row (last axis =
draws); ``shuffle`` records the moments of the element that lands first over repeated
shuffles. Each case runs in a forked child, since MXNet 1.9.1 segfaults on a few inputs;
``GOLDEN_TRACE=1`` prints each case as it starts.
"""
import io
import json
import os
import pickle
import sys
import zipfile
import zlib

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mxnet_golden_table import CASES, SAMPLERS, UNCOVERED  # noqa: E402

ROOT = os.path.join(HERE, '..')
OUT = os.path.join(ROOT, 'tests', 'compat', 'golden')
SHUFFLES = 2000


def _rng(*names):
    return np.random.RandomState(zlib.crc32('/'.join(names).encode()))


def _spd(rng, shape):
    n = shape[-1]
    a = rng.uniform(-1, 1, shape)
    m = a @ np.swapaxes(a, -1, -2) if a.ndim > 1 else a
    return m + n * np.eye(n)


def make_input(spec, rng):
    """One input from its table spec: a NumPy array (or a Python scalar for ``S``)."""
    g = spec['g']
    if g == 's':
        return spec['v']
    dt = spec['dt']
    shape = tuple(spec.get('shape', ()))
    if g == 'u':
        x = rng.uniform(-1, 1, shape) * spec['s']
    elif g == 'p':
        x = rng.uniform(0.5, 2.0, shape)
    elif g == 'q':
        x = rng.uniform(1.2, 3.0, shape)
    elif g == 'i':
        x = rng.randint(spec['lo'], spec['hi'], shape)
    elif g == 'z':
        x = np.zeros(shape)
    elif g == 'l':
        x = np.array(spec['v'])
    elif g == 'spd':
        x = _spd(rng, shape[:-1] + (shape[-1], shape[-1]))
    elif g == 'tri':
        n = shape[-1]
        x = np.tril(rng.uniform(-1, 1, shape[:-1] + (n, n))) + 2 * np.eye(n)
    else:
        raise ValueError(f'unknown input kind {g!r}')
    return x.astype(dt)


def wants_grad(spec):
    if spec['g'] in ('u', 'p', 'q', 'spd', 'tri'):
        return True
    return spec['g'] == 'l' and spec.get('grad', False)


def resolve(op):
    fn = mx.nd
    for part in op.split('.'):
        fn = getattr(fn, part)
    return fn


def to_params(params):
    """JSON keeps lists; both sides call with tuples."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}


def call(fn, args, params, mode):
    if mode == 'list':
        return fn(list(args), **params)
    return fn(*args, **params)


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def run_value_case(op, case, arrays):
    rng = _rng(op, case['n'])
    raw = [make_input(s, rng) for s in case['i']]
    args, grads_on = [], []
    for spec, x in zip(case['i'], raw):
        if spec['g'] == 's':
            args.append(x)
            grads_on.append(False)
            continue
        a = mx.nd.array(x, dtype=x.dtype)
        on = bool(case['g'] and wants_grad(spec))
        if on:
            a.attach_grad()
        args.append(a)
        grads_on.append(on)
    fn, params = resolve(op), to_params(case['p'])
    with mx.autograd.record(train_mode=case['train']):
        outs = as_list(call(fn, args, params, case['call']))
    record = {'op': op, 'case': case['n'], 'params': case['p'], 'call': case['call'],
              'train': case['train'], 'inputs': [], 'n_out': len(outs), 'grads': False}
    k = len(arrays['keys'])
    arrays['keys'].append(k)
    for j, (spec, x) in enumerate(zip(case['i'], raw)):
        if spec['g'] == 's':
            record['inputs'].append({'scalar': x})
        else:
            arrays[f'{k}/in{j}'] = x
            record['inputs'].append({'dtype': str(x.dtype), 'grad': grads_on[j]})
    for j, o in enumerate(outs):
        arrays[f'{k}/out{j}'] = o.asnumpy()
    if any(grads_on):
        heads = [mx.nd.array(rng.uniform(-1, 1, o.shape), dtype=o.dtype) for o in outs]
        try:
            mx.autograd.backward(outs, heads, train_mode=case['train'])
            gs = [a.grad.asnumpy() if on else None for a, on in zip(args, grads_on)]
        except mx.base.MXNetError as err:   # MXNet has no gradient for this op
            lines = [ln for ln in str(err).splitlines() if 'Error' in ln or 'failed' in ln]
            record['no_grad_reason'] = ' '.join((lines or ['?'])[-1].split())[:160]
        else:
            record['grads'] = True
            for j, h in enumerate(heads):
                arrays[f'{k}/head{j}'] = h.asnumpy()
            for j, gr in enumerate(gs):
                if gr is not None:
                    arrays[f'{k}/grad{j}'] = gr
    return record


def moments(draws):
    """Per row (all axes but the last): mean, variance, fourth central moment."""
    d = np.asarray(draws, dtype=np.float64)
    d = d.reshape(-1, d.shape[-1])
    mean = d.mean(axis=1)
    c = d - mean[:, None]
    return {'mean': mean.tolist(), 'var': (c ** 2).mean(axis=1).tolist(),
            'm4': (c ** 4).mean(axis=1).tolist(), 'n': int(d.shape[1])}


def _sampler_input(spec, x):
    if spec['g'] == 's':
        return {'scalar': x}
    if spec['g'] == 'z':
        return {'zeros': list(x.shape), 'dtype': str(x.dtype)}
    return {'value': x.tolist(), 'dtype': str(x.dtype)}


def run_sampler_case(op, case):
    mx.random.seed(1234)
    rng = _rng(op, case['n'])
    raw = [make_input(s, rng) for s in case['i']]
    args = [x if s['g'] == 's' else mx.nd.array(x, dtype=x.dtype)
            for s, x in zip(case['i'], raw)]
    fn, params = resolve(op), to_params(case['p'])
    if op.endswith('shuffle'):
        draws = np.array([fn(*args, **params).asnumpy()[0] for _ in range(SHUFFLES)])
    else:
        draws = as_list(call(fn, args, params, case['call']))[0].asnumpy()
    rec = {'op': op, 'case': case['n'], 'params': case['p'], 'call': case['call'],
           'inputs': [_sampler_input(s, x) for s, x in zip(case['i'], raw)],
           'out_dtype': str(draws.dtype)}
    rec.update(moments(draws))
    return rec


def write_npz(path, arrays):
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[name]),
                                      allow_pickle=False)
            info = zipfile.ZipInfo(name + '.npy', date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def isolated(fn, *args):
    """Run ``fn(*args)`` in a forked child: MXNet 1.9.1 segfaults on a few inputs (the
    crash is reported as that case's failure instead of ending the run)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = ('ok', fn(*args))
        except Exception as err:     # noqa: BLE001 -- handed to the parent
            res = ('err', f'{type(err).__name__}: {err}'[:300])
        with os.fdopen(w, 'wb') as f:
            pickle.dump(res, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, 'rb') as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        raise RuntimeError(f'MXNet crashed (wait status {status})')
    kind, res = pickle.loads(data)
    if kind == 'err':
        raise RuntimeError(res)
    return res


def _value_case(op, case):
    arrays = {'keys': []}
    if case['n'] == 'size0':     # MXNet 1.x reads a 0 in a shape as "unknown" unless
        with mx.util.np_shape(True):       # NumPy shape semantics are on
            rec = run_value_case(op, case, arrays)
    else:
        rec = run_value_case(op, case, arrays)
    del arrays['keys']
    return rec, arrays


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays = {}
    cases, samplers, failed, rejected = [], [], {}, {}
    for op in sorted(CASES):
        for case in CASES[op]:
            if os.environ.get("GOLDEN_TRACE"):
                print(op, case["n"], flush=True)
            try:
                rec, arrs = isolated(_value_case, op, case)
            except Exception as err:     # noqa: BLE001 -- report every table error at once
                msg = f'{type(err).__name__}: {err}'[:300]
                if case.get('auto'):
                    rejected[f'{op}/{case["n"]}'] = msg
                else:
                    failed[f'{op}/{case["n"]}'] = msg
                continue
            k = len(cases)
            cases.append(rec)
            arrays.update({f'{k}/{name.split("/", 1)[1]}': a for name, a in arrs.items()})
    for op in sorted(SAMPLERS):
        for case in SAMPLERS[op]:
            try:
                samplers.append(isolated(run_sampler_case, op, case))
            except Exception as err:     # noqa: BLE001
                failed[f'{op}/{case["n"]}'] = f'{type(err).__name__}: {err}'[:300]
    for name, msg in sorted(rejected.items()):
        print('dropped (MXNet rejects this dtype)', name, ' '.join(msg.split())[:160])
    for name, msg in sorted(failed.items()):
        print('FAILED', name, ' '.join(msg.split())[:400])
    write_npz(os.path.join(OUT, 'ops.npz'), arrays)
    index = {'mxnet_version': mx.__version__, 'cases': cases, 'samplers': samplers,
             'uncovered': UNCOVERED}
    with open(os.path.join(OUT, 'index.json'), 'w') as f:     # one case per line
        f.write('{"mxnet_version": %s,\n' % json.dumps(index['mxnet_version']))
        for key in ('cases', 'samplers'):
            f.write(f'"{key}": [\n')
            f.write(',\n'.join(json.dumps(c, sort_keys=True) for c in index[key]))
            f.write('\n],\n')
        f.write('"uncovered": %s}\n' % json.dumps(index['uncovered'], indent=1,
                                                    sort_keys=True))
    print(f'{len(cases)} value cases, {len(samplers)} sampler cases, {len(failed)} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
