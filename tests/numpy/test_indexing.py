"""mx.np indexing, assignment, in-place arithmetic, pickling: NumPy's rules."""
import pickle

import numpy as onp
import pytest

from mxcy import autograd
from mxcy import numpy as np

A = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4)


@pytest.mark.parametrize('key', [0, -1, (1, 2), (1, 2, 3), (-1, -2, -3), slice(1, 2),
                                 (slice(None), 1), (Ellipsis, 0), (0, Ellipsis, 1),
                                 (slice(None, None, -1),), (1, slice(0, 3, 2)), None,
                                 (None, 0), ([0, 1], [1, 2]), ([1, 0],)])
def test_getitem_matches_numpy(key):
    got = np.array(A)[key]
    want = A[key]
    assert type(got) is np.ndarray and got.shape == want.shape
    assert got.asnumpy().tolist() == want.tolist()


def test_boolean_and_array_keys():
    a = np.array(A)
    assert a[a > 20].asnumpy().tolist() == A[A > 20].tolist()
    idx = np.array([1, 0], dtype='int64')
    assert a[idx].asnumpy().tolist() == A[[1, 0]].tolist()
    assert a[0, np.array([2, 0], dtype='int32')].asnumpy().tolist() == A[0, [2, 0]].tolist()


def test_setitem():
    a = np.array(A)
    b = A.copy()
    for key, value in ((0, 1.0), ((1, 2), np.array([9, 8, 7, 6])), (Ellipsis, a + 0),
                       ((slice(None), 0, 0), [5, 6])):
        a[key] = value
        b[key] = value.asnumpy() if hasattr(value, 'asnumpy') else value
        assert a.asnumpy().tolist() == b.tolist(), key
    a[a > 10] = 0
    b[b > 10] = 0
    assert a.asnumpy().tolist() == b.tolist()


def test_inplace_keeps_dtype_and_memory():
    a = np.ones(3, dtype='int32')
    span = a._span()
    a += 2
    a *= np.array([1, 2, 3], dtype='int32')
    assert a._span() == span and a.dtype == onp.int32 and a.tolist() == [3, 6, 9]
    f = np.ones(3)
    f += np.ones(3, dtype='int32')
    assert f.dtype == onp.float32 and f.tolist() == [2, 2, 2]
    with pytest.raises(TypeError, match='in-place true division of an integer array'):
        a /= 2


def test_reversed_and_mixed_operands():
    f = np.array([1.0, 2.0])
    assert (2 - f).tolist() == [1, 0] and (2 / f).tolist() == [2, 1]
    assert ([3, 3] - f).tolist() == [2, 1] and (onp.float32(2) * f).tolist() == [2, 4]
    b = np.array([True, False], dtype=bool)
    assert (b + b).dtype == onp.bool_ and (b + b).tolist() == [True, False]
    assert (3 / np.array([2, 4], dtype='int32')).tolist() == [1.5, 0.75]
    assert (2 < f).tolist() == [False, False] and (2 <= f).tolist() == [False, True]


def test_pickle_and_conversion_round_trip():
    a = np.array(A)
    b = pickle.loads(pickle.dumps(a))
    assert type(b) is np.ndarray and b.asnumpy().tolist() == A.tolist()
    assert onp.asarray(a).tolist() == A.tolist()


def test_as_np_ndarray_shares_autograd_record():
    import mxcy as mx
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = (x.as_np_ndarray() * 3).sum()
    y.backward()
    assert x.grad.asnumpy().tolist() == [3.0, 3.0]
