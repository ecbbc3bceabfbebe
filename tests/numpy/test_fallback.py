"""mx.np's long tail computed by NumPy (mxcy/numpy/_fallback.py) and NumPy's protocols
(numpy.f(mx_array)) as MXNet 1.9.1 has them."""
import inspect

import numpy as onp
import pytest

from mxcy import numpy as np
from mxcy.numpy._signatures import FALLBACK, NP


# MXNet 1.9.1 names that always raise there (NumPy 1.20 removed them): absent in mxcy,
# listed in tests/compat/exclusions.py
FINANCIAL = ('mirr', 'npv', 'ppmt', 'pv', 'rate')


def test_every_mxnet_name_exists_with_its_parameters():
    for name, spec in NP.items():
        if name in FINANCIAL:
            assert not hasattr(np, name), name
            continue
        fn = getattr(np, name)
        if spec is None or not callable(fn) or isinstance(fn, type):
            continue
        want = [p.strip('*=') for p in spec.split() if p != '|' and not p.startswith('**')]
        got = [p.name for p in inspect.signature(fn).parameters.values()
               if p.kind is not p.VAR_KEYWORD]
        assert got[:len(want)] == want, (name, got, want)


@pytest.mark.parametrize('name,args', [
    ('sort', ([3.0, 1.0, 2.0],)), ('argsort', ([3.0, 1.0, 2.0],)),
    ('unique', ([3.0, 1.0, 1.0],)), ('nancumsum', ([1.0, 2.0, 3.0],)),
    ('diff', ([1.0, 4.0, 9.0],)), ('searchsorted', ([1.0, 2.0, 3.0], 2.5)),
    ('polyval', ([1.0, 2.0], [3.0])), ('nonzero', ([0.0, 1.0, 2.0],)),
    ('trace', ([[1.0, 2.0], [3.0, 4.0]],)), ('roll', ([1.0, 2.0, 3.0], 1)),
    ('nanmedian', ([1.0, 5.0, 3.0],)), ('percentile', ([1.0, 5.0, 3.0], 50)),
    ('intersect1d', ([1.0, 2.0], [2.0, 3.0])), ('union1d', ([1.0, 2.0], [2.0, 3.0])),
    ('einsum', ('ij->ji', [[1.0, 2.0], [3.0, 4.0]])), ('diag', ([1.0, 2.0],)),
    ('isnan', ([1.0, float('nan')],)), ('logical_not', ([0.0, 1.0],)),
])
def test_values_match_numpy(name, args):
    mx_args = [np.array(a) if isinstance(a, list) else a for a in args]
    np_args = [onp.array(a, dtype=onp.float32) if isinstance(a, list) else a for a in args]
    got = getattr(np, name)(*mx_args)
    want = getattr(onp, name)(*np_args)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            assert g.asnumpy().tolist() == w.tolist()
    elif isinstance(want, onp.generic) and name in FALLBACK:
        assert isinstance(got, onp.generic) and got == want   # MXNet's fallbacks: scalars
    else:
        assert type(got) is np.ndarray
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_unique_with_counts_and_out():
    u, counts = np.unique(np.array([2.0, 1.0, 2.0]), return_counts=True)
    assert u.tolist() == [1.0, 2.0] and counts.tolist() == [1, 2]
    out = np.zeros(3)
    assert np.copy(np.array([1.0, 2.0, 3.0]), out=out) is out and out.tolist() == [1, 2, 3]


def test_numpy_functions_dispatch_to_mx_np():
    x = np.ones(3)
    r = onp.sum(x)
    assert type(r) is np.ndarray and r.shape == () and r.item() == 3.0
    assert type(onp.exp(x)) is np.ndarray
    assert type(onp.cumprod(x)) is np.ndarray           # NumPy on the values
    assert isinstance(onp.nanmean(x), onp.floating)     # scalars stay NumPy scalars
    with pytest.raises(TypeError, match='numpy.add: mixes a numpy.ndarray'):
        onp.add(onp.ones(3), x)


def test_bad_call_names_the_function():
    with pytest.raises(TypeError, match='unique: '):
        np.unique(np.ones(2), bogus=1)


def test_numpy_computed_functions_refuse_to_lose_a_gradient():
    from mxcy import autograd
    from mxcy.base import MXNetError
    x = np.array([3.0, 1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        idx = np.argsort(x)                 # integer result: nothing to lose
        with pytest.raises(MXNetError, match='mx.np.sort: mxcy computes it with NumPy'):
            np.sort(x)
        y = np.sort(x.detach())             # a constant to the graph
    assert idx.tolist() == [1, 2, 0] and y.tolist() == [1, 2, 3]
