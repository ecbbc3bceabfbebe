#!/usr/bin/env python3
"""Record MXNet 1.9.1's outputs (and input gradients) of ``mx.np`` functions on small
fixed inputs, under ``npx.set_np()``.

Run in the MXNet peer venv (never in CI; the files it writes are committed):

    /work/mxnet_venv/bin/python tools/mxnet_np_golden.py

It writes, under ``tests/compat/golden_np/``:

- ``values.npz``: for case ``k`` the inputs ``k/in<j>`` (arrays given to the call), the
  outputs ``k/out<j>`` and, for differentiable cases, MXNet's gradients ``k/grad<j>`` of
  ``sum(out0 * head)`` with respect to the float inputs (``head`` fixed: 1, 2, 3, ...
  over the output's elements, divided by its size);
- ``cases.json``: per case the function (``np.sum``, ``np.linalg.norm`` ...), how each
  argument is built (an array input, a list of array inputs, or a JSON literal), the
  keywords, each output's dtype and shape, whether there are gradients, and MXNet's error
  message for calls MXNet refuses (mxcy must refuse them too);
- ``reprs.json``: ``repr()`` of a few arrays (expression -> MXNet's text).

Sampling functions are recorded by output shape and dtype only (their streams differ).
Inputs come from a ``RandomState`` seeded by the case index; a rerun gives the same bytes.
"""
import io
import json
import os
import zipfile

import mxnet as mx
import numpy as onp

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'compat',
                   'golden_np')

P = ('P', (2, 3))           # a positive float32 array (0.1 .. 0.9)
U = ('U', (2, 3))           # float32 in (-1, 1)
G = ('G', (2, 3))           # float32 >= 1.1 (arccosh)
N = ('I', (2, 3))           # int32 in [0, 5)
B = ('B', (2, 3))           # bool
V = ('U', (4,))             # a float32 vector
M = ('S', (3, 3))           # a well-conditioned symmetric positive definite float32 matrix

UNARY = ('abs', 'absolute', 'arccos', 'arcsin', 'arctan', 'arcsinh', 'arctanh', 'cbrt',
         'ceil', 'cos', 'cosh', 'degrees', 'deg2rad', 'exp', 'expm1', 'fabs', 'fix', 'floor',
         'log', 'log10', 'log1p', 'log2', 'negative', 'radians', 'rad2deg', 'reciprocal',
         'rint', 'sign', 'sin', 'sinh', 'sqrt', 'square', 'tan', 'tanh', 'trunc')
BINARY = ('add', 'subtract', 'multiply', 'divide', 'true_divide', 'power', 'mod',
          'remainder', 'maximum', 'minimum', 'hypot', 'arctan2', 'copysign', 'equal',
          'not_equal', 'greater', 'greater_equal', 'less', 'less_equal')
REDUCE = ('sum', 'mean', 'max', 'min', 'prod', 'amax', 'amin', 'std', 'var', 'argmax',
          'argmin', 'cumsum', 'all', 'any')

CASES = []


def case(fn, *args, grad=False, **kwargs):
    CASES.append((fn, args, kwargs, grad))


for _n in UNARY:
    case(_n, P, grad=_n not in ('ceil', 'fix', 'floor', 'rint', 'sign', 'trunc'))
case('arccosh', G, grad=True)
for _n in ('exp', 'abs', 'square', 'negative', 'sqrt'):
    case(_n, N)
for _n in BINARY:
    case(_n, P, U, grad=_n in ('add', 'subtract', 'multiply', 'divide', 'maximum',
                               'minimum', 'hypot'))
    case(_n, P, 0.5)
for _n in ('add', 'multiply', 'subtract', 'divide', 'equal', 'maximum'):
    case(_n, N, P)
    case(_n, N, 2)
    case(_n, N, ('I', (3,)))
case('power', P, ('P', (3,)), grad=True)
case('add', B, N)
case('logical_not', B)
case('bitwise_and', B, B)
case('bitwise_or', N, N)
case('bitwise_xor', N, N)
case('invert', N)
case('ldexp', P, N)
case('lcm', N, N)
for _n in REDUCE:
    gr = _n in ('sum', 'mean', 'max', 'min', 'prod', 'amax', 'amin', 'std', 'var',
                'cumsum')
    case(_n, U, grad=gr)
    case(_n, U, axis=0, grad=gr)
    if _n not in ('argmax', 'argmin', 'cumsum'):
        case(_n, U, axis=1, keepdims=True, grad=gr)
    case(_n, N)
for _n in ('sum', 'mean', 'prod'):
    case(_n, B)
case('std', U, ddof=1)
case('var', U, axis=1, ddof=1)
case('average', U, axis=0)
case('average', U, weights=('P', (2, 3)))
case('nanargmax', U)
case('nansum', U) if hasattr(mx.np, 'nansum') else None
case('ptp', U, axis=1)
case('median', U) if hasattr(mx.np, 'median') else None
case('percentile', U, 50)
case('quantile', U, 0.25, axis=1)
case('count_nonzero', N)
case('trace', M, grad=True)
# creation
case('zeros', [2, 3])
case('ones', [2], dtype='int32')
case('empty_like', P, dtype='int64', _shape_only=True)
case('full', [2, 2], 3)
case('full', [2], 1.5, dtype='float64')
case('zeros_like', N)
case('ones_like', P)
case('full_like', N, 7)
case('arange', 5)
case('arange', 1, 2, 0.25)
case('arange', 3, dtype='int32')
case('eye', 3, 4, 1)
case('identity', 2)
case('linspace', 0, 1, 5)
case('linspace', 0, 1, 4, endpoint=False)
case('logspace', 0, 2, 3)
case('indices', [2, 3])
case('hanning', 4)
case('hamming', 4)
case('blackman', 4)
case('tril', M, grad=True)
case('triu', M, 1)
case('array', [[1, 2], [3, 4]])
case('array', [True, False])
case('array', [[1, 2]], dtype='int64')
case('meshgrid', ('U', (3,)), ('U', (2,)))
case('diag', V, grad=True)
case('diag', M, 1, grad=True)
case('diagflat', ('U', (2,)))
case('diagonal', M)
# shapes
case('reshape', U, [3, 2], grad=True)
case('reshape', U, -1)
case('ravel', U)
case('transpose', ('U', (2, 3, 4)), grad=True)
case('transpose', ('U', (2, 3, 4)), [1, 0, 2])
case('swapaxes', ('U', (2, 3, 4)), 0, 2, grad=True)
case('moveaxis', ('U', (2, 3, 4)), 0, -1)
case('rollaxis', ('U', (2, 3, 4)), 2)
case('expand_dims', U, 1, grad=True)
case('squeeze', ('U', (2, 1, 3)), grad=True)
case('broadcast_to', ('U', (3,)), [2, 3], grad=True)
case('tile', U, [2, 1], grad=True)
case('repeat', U, 2, axis=1, grad=True)
case('repeat', U, 2)
case('flip', U, 0, grad=True)
case('flip', U)
case('fliplr', U)
case('flipud', U)
case('rot90', U)
case('roll', U, 1, axis=1)
case('roll', U, 2)
case('concatenate', [U, U], grad=True)
case('concatenate', [U, U], axis=1)
case('concatenate', [U, U], axis=None)
case('append', U, U, axis=0)
case('stack', [U, U], axis=1, grad=True)
case('vstack', [V, V])
case('row_stack', [V, V])
case('hstack', [U, U])
case('dstack', [U, U])
case('column_stack', [V, V])
case('split', ('U', (4, 2)), 2, grad=True)
case('split', ('U', (2, 6)), [1, 4], axis=1)
case('array_split', ('U', (5,)), 2)
case('hsplit', ('U', (2, 4)), 2)
case('vsplit', ('U', (4, 2)), 2)
case('dsplit', ('U', (2, 2, 4)), 2)
case('where', B, P, U, grad=True)
case('where', B, P, 0.0)
case('clip', U, -0.5, 0.5, grad=True)
case('clip', U, None, 0.2)
case('atleast_1d', P)
case('atleast_2d', V)
case('atleast_3d', V)
case('broadcast_arrays', V, ('U', (2, 4)))
case('delete', V, 1)
case('insert', V, 1, 5.0)
case('resize', U, [3, 3])
case('take', U, ('i', (2,)), axis=1, grad=True)
case('take', U, ('i', (3,)))
case('take_along_axis', U, ('i', (2, 1)), axis=1)
case('pad', U, 1)
case('pad', U, [[1, 0], [0, 2]], mode='edge')
# products
case('dot', V, V, grad=True)
case('dot', U, ('U', (3, 2)), grad=True)
case('dot', U, ('U', (3,)))
case('dot', ('U', (2, 2, 3)), ('U', (3, 2)))
case('matmul', U, ('U', (3, 2)), grad=True)
case('matmul', ('U', (4, 2, 3)), ('U', (4, 3, 2)), grad=True)
case('matmul', ('U', (4, 2, 3)), ('U', (3,)))
case('tensordot', ('U', (2, 3, 4)), ('U', (4, 3)), [[1, 2], [1, 0]], grad=True)
case('tensordot', U, ('U', (3, 2)), 1)
case('inner', U, ('U', (4, 3)))
case('outer', V, ('U', (3,)))
case('vdot', V, V)
case('einsum', 'ij,kj->ik', U, U, grad=True)
case('einsum', 'ij->j', U, grad=True)
case('einsum', 'i,i', V, V, grad=True)
case('einsum', 'bij,bjk->bik', ('U', (2, 2, 3)), ('U', (2, 3, 2)), grad=True)
case('einsum', 'ii->i', M)
case('kron', U, U) if hasattr(mx.np, 'kron') else None
case('cross', ('U', (3,)), ('U', (3,))) if hasattr(mx.np, 'cross') else None
# sorting, searching, sets, counting
case('sort', U)
case('sort', U, axis=0)
case('argsort', U)
case('msort', U)
case('argpartition', V, 2)
case('partition', V, 2)
case('searchsorted', ('s', (5,)), ('U', (3,)))
case('unique', N)
case('unique', N, return_counts=True, return_index=True)
case('nonzero', N)
case('argwhere', N)
case('flatnonzero', N)
case('bincount', ('n', (6,)))
case('digitize', V, ('s', (3,)))
case('histogram', V, 3)
case('intersect1d', N, N)
case('union1d', N, ('I', (4,)))
case('setdiff1d', N, ('I', (4,)))
case('setxor1d', N, ('I', (4,)))
case('in1d', N, ('I', (2,)))
case('isin', N, ('I', (2,)))
case('extract', B, U)
case('compress', ('b', (2,)), U, axis=0)
case('select', [B], [U])
case('choose', ('c', (3,)), [('U', (3,)), ('U', (3,))])
case('lexsort', [V, V]) if False else None
# floating point
case('isnan', U)
case('isinf', U)
case('isfinite', U)
case('isposinf', U)
case('isneginf', U)
case('signbit', U)
case('nan_to_num', U)
case('around', U, 1)
case('round', U, 2)
case('round_', U)
case('float_power', P, 2.0)
case('heaviside', U, 0.5)
case('spacing', P)
case('modf', U)
case('frexp', P)
case('divmod', P, 0.3)
case('positive', U)
case('real', U)
case('i0', U)
case('interp', ('U', (3,)), ('s', (5,)), ('s', (5,)))
case('allclose', U, U)
case('isclose', U, P)
case('array_equal', U, U)
case('array_equiv', U, U)
case('diff', V)
case('ediff1d', V)
case('trapz', V)
case('unwrap', V)
case('convolve', V, ('U', (2,))) if hasattr(mx.np, 'convolve') else None
case('correlate', V, ('U', (2,)))
case('cov', U)
case('corrcoef', U)
case('polyval', ('U', (3,)), V)
case('polyadd', V, V)
case('polysub', V, V)
case('polymul', ('U', (2,)), ('U', (3,)))
case('polyder', V) if hasattr(mx.np, 'polyder') else None
case('polyint', V)
case('poly', ('U', (2,)))
case('roots', ('U', (3,)))
case('vander', V, 3)
case('trim_zeros', ('n', (6,)))
case('histogram_bin_edges', V, 3)
case('tril_indices_from', M)
case('triu_indices_from', M)
case('diag_indices_from', M)
case('unravel_index', ('n', (3,)), [3, 4])
case('ndim', U)
case('shape', U)
case('size', U)
case('copy', U)
case('may_share_memory', U, U)
case('shares_memory', U, V)
# linalg
for _n in ('inv', 'det', 'slogdet', 'cholesky', 'eigvalsh', 'eigh', 'pinv', 'matrix_rank',
           'cond', 'svd', 'qr', 'eigvals', 'eig'):
    case('linalg.' + _n, M)
case('linalg.norm', U, grad=True)
case('linalg.norm', U, axis=1, grad=True)
case('linalg.norm', V, 1)
case('linalg.norm', U, 'fro')
case('linalg.norm', U, 'nuc')
case('linalg.solve', M, ('U', (3,)))
case('linalg.lstsq', M, ('U', (3,)), rcond=None)
case('linalg.matrix_power', M, 2)
case('linalg.multi_dot', [M, M, M])
case('linalg.tensorinv', ('S', (4, 4)), 1)
case('linalg.tensorsolve', M, ('U', (3,)))
# random: shapes and dtypes only
for _n, _a in (('uniform', ()), ('normal', ()), ('randint', (0, 5)), ('gamma', (2.0,)),
               ('beta', (2.0, 2.0)), ('chisquare', (2.0,)), ('exponential', ()),
               ('gumbel', ()), ('logistic', ()), ('lognormal', ()), ('pareto', (2.0,)),
               ('rayleigh', ()), ('weibull', (2.0,)), ('power', (2.0,))):
    case('random.' + _n, *_a, size=(2, 3), _sample=True)
case('random.choice', 5, size=(3,), _sample=True)
case('random.rand', 2, 3, _sample=True)
case('random.randn', 2, _sample=True)
case('random.multinomial', 4, [0.5, 0.5], size=2, _sample=True)
# the rest of mx.np's names with a value result (NumPy-computed in both libraries)
case('alltrue', B)
case('sometrue', B, axis=0)
case('product', P, axis=1)
case('bitwise_not', N)
case('empty', [2, 3], _shape_only=True)
for _n in ('nanargmin', 'nanmax', 'nanmin', 'nancumsum', 'nanmedian'):
    case(_n, U)
case('nancumprod', P, axis=1)
case('nanprod', P, axis=0)
case('nanpercentile', U, 50)
case('nanquantile', U, 0.25, axis=1)
case('lexsort', [V, ('U', (4,))])
case('histogram2d', V, ('U', (4,)), bins=2)
case('histogramdd', ('U', (5, 2)), bins=2)
case('ix_', ('I', (2,)), ('I', (3,)))
case('packbits', B)
case('polydiv', ('P', (3,)), ('P', (2,)))
case('polyfit', ('s', (5,)), ('U', (5,)), 1)
case('random.multivariate_normal', ('U', (2,)), ('S', (2, 2)), size=3, _sample=True)
CASES = [c for c in CASES if c is not None]

# repr(mx.np.array(...)) as MXNet prints it: (expression over mx.np as `np`) -> text
REPRS = ('np.array([1, 2, 3])', 'np.array(3.5)', 'np.array([[1.5, 2], [3, 4]])',
         "np.array([1, 2], dtype='int32')", "np.array([1, 2], dtype='int64')",
         "np.array([1, 2], dtype='float64')", "np.array([1, 2], dtype='float16')",
         "np.array([1, 2], dtype='uint8')", "np.array([1, 2], dtype='int8')",
         "np.array([True, False], dtype=bool)", 'np.ones((2, 3, 4))', 'np.arange(100)',
         'np.zeros((2, 0))', 'np.array(onp.array([1e-8, 1e8]))', 'np.eye(3) * 1e-5',
         "np.full((3,), -0.5, dtype='float64')", 'np.arange(2000).reshape(2, 1000)',
         'np.array([[True, False]], dtype=bool)', "np.array(7, dtype='int32')")


def make(spec, rng):
    kind, shape = spec
    if kind == 'P':
        return rng.uniform(0.1, 0.9, shape).astype('float32')
    if kind == 'U':
        return rng.uniform(-1, 1, shape).astype('float32')
    if kind == 'G':
        return rng.uniform(1.1, 3, shape).astype('float32')
    if kind == 'I':
        return rng.randint(0, 5, shape).astype('int32')
    if kind == 'i':
        return rng.randint(0, 2, shape).astype('int64')
    if kind == 'n':
        return onp.array([0, 2, 1, 0, 3, 0][:shape[0]], dtype='int64')
    if kind == 'c':
        return rng.randint(0, 2, shape).astype('int64')
    if kind in ('B', 'b'):
        return rng.uniform(size=shape) > 0.5
    if kind == 's':
        return onp.sort(rng.uniform(-1, 1, shape)).astype('float32')
    if kind == 'S':
        a = rng.uniform(-1, 1, shape)
        return (a @ a.T + shape[0] * onp.eye(shape[0])).astype('float32')
    raise ValueError(kind)


def is_spec(v):
    return isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) and \
        isinstance(v[1], tuple)


def build(args, rng, inputs):
    """(JSON description, MXNet values) of the arguments; arrays appended to `inputs`."""
    desc, vals = [], []
    for a in args:
        if is_spec(a):
            inputs.append(make(a, rng))
            desc.append({'array': len(inputs) - 1})
            vals.append(mx.np.array(inputs[-1], dtype=inputs[-1].dtype))
        elif isinstance(a, list) and a and all(is_spec(x) for x in a):
            d, v = build(a, rng, inputs)
            desc.append({'arrays': [x['array'] for x in d]})
            vals.append(v)
        else:
            desc.append({'value': a})
            vals.append(_tuples(a))
    return desc, vals


def _tuples(v):
    """Literal lists as tuples (what the test rebuilds from JSON; MXNet's pad wants one)."""
    return tuple(_tuples(x) for x in v) if isinstance(v, (list, tuple)) else v


def outputs_of(res):
    if isinstance(res, (list, tuple)):
        outs = []
        for r in res:
            outs.extend(outputs_of(r))
        return outs
    return [res]


def record(k, fn_name, args, kwargs, grad, arrays):
    rng = onp.random.RandomState(k)
    sample = kwargs.pop('_sample', False)
    shape_only = kwargs.pop('_shape_only', False)
    inputs = []
    desc, vals = build(args, rng, inputs)
    kdesc, kvals = build(list(kwargs.values()), rng, inputs)
    kw = dict(zip(kwargs, kvals))
    entry = {'case': k, 'fn': fn_name, 'args': desc, 'kwargs': dict(zip(kwargs, kdesc)),
             'sample': sample or shape_only}
    fn = mx.np
    for part in fn_name.split('.'):
        fn = getattr(fn, part)
    flat = [v for v in vals if isinstance(v, mx.np.ndarray)] + \
        [x for v in vals if isinstance(v, list) for x in v if isinstance(x, mx.np.ndarray)]
    grads = [x for x in flat if x.dtype.kind == 'f'] if grad else []
    for x in grads:
        x.attach_grad()
    for j, x in enumerate(inputs):
        arrays[f'{k}/in{j}'] = x
    try:
        if grads:
            with mx.autograd.record():
                outs = outputs_of(fn(*vals, **kw))
                o = outs[0]
                head = mx.np.array((onp.arange(o.size) + 1).reshape(o.shape) / o.size,
                                   dtype=o.dtype)
                loss = (o * head).sum()
            loss.backward()
        else:       # MXNet's NumPy fallbacks refuse to run while recording
            outs = outputs_of(fn(*vals, **kw))
    except Exception as e:                  # noqa: BLE001  (recorded: mxcy must refuse too)
        entry['error'] = f'{type(e).__name__}: {str(e).splitlines()[0][:200]}'
        return entry
    entry['outputs'] = []
    for j, o in enumerate(outs):
        if isinstance(o, mx.np.ndarray):
            v = o.asnumpy()
            entry['outputs'].append({'dtype': str(v.dtype), 'shape': list(v.shape)})
            if not entry['sample']:
                arrays[f'{k}/out{j}'] = v
        else:
            entry['outputs'].append({'python': type(o).__name__,
                                     'value': o if isinstance(o, (bool, int, float))
                                     else repr(o)})
    entry['grads'] = len(grads)
    for j, x in enumerate(grads):
        arrays[f'{k}/grad{j}'] = x.grad.asnumpy()
    return entry


def write_npz(path, arrays):
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            buf = io.BytesIO()
            onp.lib.format.write_array(buf, onp.ascontiguousarray(arrays[name]),
                                       allow_pickle=False)
            info = zipfile.ZipInfo(name + '.npy', date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def main():
    mx.npx.set_np()
    os.makedirs(OUT, exist_ok=True)
    arrays, entries = {}, []
    for k, (fn, args, kwargs, grad) in enumerate(CASES):
        obj = mx.np
        for part in fn.split('.'):
            obj = getattr(obj, part, None)
        if obj is None:
            print(f'skipped: mx.np.{fn} does not exist in MXNet {mx.__version__}')
            continue
        entries.append(record(k, fn, args, dict(kwargs), grad, arrays))
    write_npz(os.path.join(OUT, 'values.npz'), arrays)
    with open(os.path.join(OUT, 'cases.json'), 'w') as f:
        json.dump(entries, f, indent=0, sort_keys=True)
        f.write('\n')
    reprs = {e: repr(eval(e, {'np': mx.np, 'onp': onp})) for e in REPRS}  # noqa: S307
    with open(os.path.join(OUT, 'reprs.json'), 'w') as f:
        json.dump(reprs, f, indent=0, sort_keys=True)
        f.write('\n')
    errors = sum('error' in e for e in entries)
    print(f'{len(entries)} cases, {errors} refused by MXNet')


if __name__ == '__main__':
    main()
