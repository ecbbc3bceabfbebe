"""``mx.np`` functions against MXNet 1.9.1's own outputs and gradients (under
``npx.set_np()``), from ``golden_np/`` written by ``tools/mxnet_np_golden.py``.

Each case calls the same function on the same inputs; outputs must have MXNet's count,
dtype and shape, and values within float32 tolerance (integers and booleans equal). For
differentiable cases the gradient of ``sum(out0 * head)`` is compared too. Samplers are
compared by shape and dtype. A call MXNet refuses must be refused by mxcy too, unless it
is in ``MXNET_LIMITS`` (MXNet 1.9.1 fails on valid NumPy input: mxcy gives NumPy's answer,
checked here).
"""
import json
import pathlib

import numpy as onp
import pytest

from mxcy import autograd
from mxcy import numpy as np

HERE = pathlib.Path(__file__).resolve().parent / 'golden_np'
CASES = json.loads((HERE / 'cases.json').read_text())
VALUES = onp.load(HERE / 'values.npz')
RTOL, ATOL = 2e-5, 1e-6
# (function) -> why MXNet 1.9.1 refuses a valid call that mxcy computes as NumPy does
MXNET_LIMITS = {
    'deg2rad': "MXNet 1.9.1's np.deg2rad calls an operator its build lacks (AttributeError)",
    'rad2deg': "MXNet 1.9.1's np.rad2deg calls an operator its build lacks (AttributeError)",
    'equal': "MXNet 1.9.1 cannot compare int32 with float32 arrays (type inference error)",
    'maximum': "MXNet 1.9.1 cannot take the maximum of int32 and float32 arrays",
    'ldexp': "MXNet 1.9.1's ldexp refuses an int32 exponent array",
    'pad': "MXNet 1.9.1 wants pad_width as a tuple; NumPy (and mxcy) accept an int",
    'histogram': "MXNet 1.9.1's histogram needs an explicit range; NumPy computes it",
}

# functions whose gradient MXNet 1.9.1 gets wrong; mxcy's is checked in tests/numpy
GRADIENT_DIFFERENCES = {
    'std': "MXNet 1.9.1's np.std records no gradient (all zeros); mxcy's is the derivative",
    'var': "MXNet 1.9.1's np.var records no gradient (all zeros); mxcy's is the derivative",
}
# NumPy-computed functions whose result dtype changed between MXNet's NumPy 1.23 and
# NumPy 2 (float32 inputs now give float32): mxcy follows the installed NumPy's dtype,
# the values are MXNet's
NUMPY2_DTYPES = {'nanquantile', 'histogram2d', 'histogramdd'}
# MXNet 1.9.1 hands back a NumPy array here, unlike every other mx.np function; mxcy
# gives an mx.np.ndarray (same values), as a user of mx.np expects
MXNET_NUMPY_RESULTS = {'lexsort'}
# outputs defined up to the sign of each vector: compared in absolute value
SIGN_FREE = {'linalg.eigh', 'linalg.svd', 'linalg.eig', 'linalg.qr'}


def _fn(name):
    fn = np
    for part in name.split('.'):
        fn = getattr(fn, part)
    return fn


def _tuples(v):
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v


def _args(case, descs):
    out = []
    for d in descs:
        if 'array' in d:
            x = VALUES[f"{case['case']}/in{d['array']}"]
            out.append(np.array(x, dtype=x.dtype))
        elif 'arrays' in d:
            out.append(_args(case, [{'array': j} for j in d['arrays']]))
        else:
            out.append(_tuples(d['value']))
    return out


def _flat(res):
    if isinstance(res, (list, tuple)):
        return [o for r in res for o in _flat(r)]
    return [res]


def _numpy_answer(case, args, kwargs):
    conv = [a.asnumpy() if isinstance(a, np.ndarray) else
            [x.asnumpy() for x in a] if isinstance(a, list) else a for a in args]
    return getattr(onp, case['fn'])(*conv, **kwargs)


@pytest.mark.parametrize('case', CASES, ids=[f"{c['case']}-{c['fn']}" for c in CASES])
def test_matches_mxnet(case):
    args = _args(case, case['args'])
    names = list(case['kwargs'])
    kwargs = dict(zip(names, _args(case, [case['kwargs'][n] for n in names])))
    if 'error' in case:
        if case['fn'] in MXNET_LIMITS:
            got = _flat(_fn(case['fn'])(*args, **kwargs))
            want = _flat(_numpy_answer(case, args, kwargs))
            for g, w in zip(got, want):
                onp.testing.assert_allclose(g.asnumpy(), w, rtol=1e-5, atol=1e-6)
            return
        with pytest.raises(Exception):  # noqa: B017  (MXNet refuses; mxcy must too)
            _fn(case['fn'])(*args, **kwargs)
        return
    flat_in = [a for a in args if isinstance(a, np.ndarray)] + \
        [x for a in args if isinstance(a, list) for x in a if isinstance(x, np.ndarray)]
    grads = [x for x in flat_in if x.dtype.kind == 'f'][:case['grads']]
    for x in grads:
        x.attach_grad()
    with autograd.record() if grads else _nothing():
        outs = _flat(_fn(case['fn'])(*args, **kwargs))
        if grads:
            o = outs[0]
            head = np.array((onp.arange(o.size) + 1).reshape(o.shape) / o.size, dtype=o.dtype)
            loss = (o * head).sum()
    if grads:
        loss.backward()
    assert len(outs) == len(case['outputs']), (len(outs), case['outputs'])
    for j, (o, want) in enumerate(zip(outs, case['outputs'])):
        if 'python' in want and case['fn'] in MXNET_NUMPY_RESULTS:
            assert isinstance(o, np.ndarray), f"output {j} is {type(o).__name__}"
            assert o.asnumpy().tolist() == eval('onp.' + want['value']).tolist()
            continue
        if 'python' in want:
            assert not isinstance(o, np.ndarray), f"output {j}: {o!r}"
            if want['python'] in ('bool', 'int', 'float'):
                assert o == want['value'], f"output {j}: {o!r} != {want['value']!r}"
            continue
        assert isinstance(o, np.ndarray), f"output {j} is {type(o).__name__}"
        if case['fn'] in NUMPY2_DTYPES:
            want_dt = _flat(_numpy_answer(case, args, kwargs))[j].dtype
            assert o.dtype == want_dt, f"output {j}: dtype {o.dtype}, NumPy {want_dt}"
        else:
            assert str(o.dtype) == want['dtype'], f"output {j}: dtype {o.dtype}, MXNet {want}"
        assert list(o.shape) == want['shape'], f"output {j}: shape {o.shape}, MXNet {want}"
        if not case['sample']:
            want_v = VALUES[f"{case['case']}/out{j}"].reshape(o.shape)
            got_v = o.asnumpy()
            if case['fn'] in SIGN_FREE:
                got_v, want_v = abs(got_v), abs(want_v)
            _close(got_v, want_v, f'output {j}')
    for j, x in enumerate(grads):
        want_g = VALUES[f"{case['case']}/grad{j}"]
        if case['fn'] in GRADIENT_DIFFERENCES:
            assert not want_g.any()         # still MXNet's zeros: the difference is MXNet's
            continue
        _close(x.grad.asnumpy(), want_g, f'gradient {j}')


def _close(got, want, what):
    if want.dtype.kind in 'biu':
        assert got.tolist() == want.tolist(), f"{what}: {got} != {want}"
    else:
        onp.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=what,
                                    equal_nan=True)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# the arrays of golden_np/reprs.json (tools/mxnet_np_golden.py REPRS), built here
REPR_ARRAYS = {
    'np.array([1, 2, 3])': lambda: np.array([1, 2, 3]),
    'np.array(3.5)': lambda: np.array(3.5),
    'np.array([[1.5, 2], [3, 4]])': lambda: np.array([[1.5, 2], [3, 4]]),
    "np.array([1, 2], dtype='int32')": lambda: np.array([1, 2], dtype='int32'),
    "np.array([1, 2], dtype='int64')": lambda: np.array([1, 2], dtype='int64'),
    "np.array([1, 2], dtype='float64')": lambda: np.array([1, 2], dtype='float64'),
    "np.array([1, 2], dtype='float16')": lambda: np.array([1, 2], dtype='float16'),
    "np.array([1, 2], dtype='uint8')": lambda: np.array([1, 2], dtype='uint8'),
    "np.array([1, 2], dtype='int8')": lambda: np.array([1, 2], dtype='int8'),
    'np.array([True, False], dtype=bool)': lambda: np.array([True, False], dtype=bool),
    'np.ones((2, 3, 4))': lambda: np.ones((2, 3, 4)),
    'np.arange(100)': lambda: np.arange(100),
    'np.zeros((2, 0))': lambda: np.zeros((2, 0)),
    'np.array(onp.array([1e-8, 1e8]))': lambda: np.array(onp.array([1e-8, 1e8])),
    'np.eye(3) * 1e-5': lambda: np.eye(3) * 1e-5,
    "np.full((3,), -0.5, dtype='float64')": lambda: np.full((3,), -0.5, dtype='float64'),
    'np.arange(2000).reshape(2, 1000)': lambda: np.arange(2000).reshape(2, 1000),
    'np.array([[True, False]], dtype=bool)': lambda: np.array([[True, False]], dtype=bool),
    "np.array(7, dtype='int32')": lambda: np.array(7, dtype='int32'),
}
REPRS = json.loads((HERE / 'reprs.json').read_text())


def test_repr_cases_are_the_recorded_ones():
    assert set(REPR_ARRAYS) == set(REPRS)


@pytest.mark.parametrize('expr', sorted(REPRS))
def test_repr_as_mxnet(expr):
    assert repr(REPR_ARRAYS[expr]()) == REPRS[expr]
