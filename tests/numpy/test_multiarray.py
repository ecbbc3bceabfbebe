"""mx.np.ndarray: the class, zero-copy conversion, views, dunders with NumPy semantics."""
import numpy as onp
import pytest

import mxcy as mx
from mxcy import autograd
from mxcy import numpy as np


def test_class_is_an_ndarray_subclass_sharing_memory():
    # MXNet: (ndarray, NDArray, NDArrayBase, object); mxcy has a C base in between that
    # keeps +, -, *, / as C slots for the subclass
    assert issubclass(np.ndarray, mx.nd.NDArray) and mx.nd.NDArray in np.ndarray.__mro__
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    y = x.as_np_ndarray()
    assert type(y) is np.ndarray and y._span() == x._span() and y.shape == x.shape
    z = y.as_nd_ndarray()
    assert type(z) is mx.nd.NDArray and z._span() == x._span()
    y[0, 0] = 10            # one memory: a write through the np view shows in mx.nd
    assert x.asnumpy()[0, 0] == 10


def test_views_keep_the_np_class():
    a = np.arange(12).reshape(3, 4)
    for v in (a[1], a[1:3], a.reshape(4, 3), a.reshape(-1), a.T, a[0, 1], a.detach()):
        assert type(v) is np.ndarray
    assert a[0, 1].shape == () and a[0, 1].item() == 1.0
    assert a[1].shape == (4,)
    b = a[1]
    b[...] = 0
    assert a.asnumpy()[1].tolist() == [0, 0, 0, 0]


def test_creation_defaults_follow_mxnet():
    assert np.array([1, 2, 3]).dtype == onp.float32        # lists default to float32
    assert np.array(onp.array([1, 2])).dtype == onp.int64  # NumPy arrays keep theirs
    assert np.zeros((2, 3)).dtype == onp.float32
    assert np.ones(3, dtype='int32').asnumpy().tolist() == [1, 1, 1]
    assert np.full((2,), True).dtype == onp.bool_
    assert np.full((2,), 3).asnumpy().tolist() == [3.0, 3.0]
    assert np.arange(5).dtype == onp.float32
    assert np.arange(0, 1, 0.25).asnumpy().tolist() == [0, 0.25, 0.5, 0.75]
    assert np.array(3.0).shape == ()
    assert np.empty((2, 2)).shape == (2, 2)
    assert np.asarray(np.ones(2)) is not None


def test_repr_as_mxnet_prints_it():
    assert repr(np.array([1, 2, 3])) == 'array([1., 2., 3.])'
    assert repr(np.array(3.0)) == 'array(3.)'
    assert repr(np.array([1, 2], dtype='int32')) == 'array([1, 2], dtype=int32)'
    assert repr(np.array([1, 2], dtype='float64')) == 'array([1., 2.], dtype=float64)'
    assert repr(np.array([1, 2], dtype='int64')) == 'array([1, 2], dtype=int64)'
    assert repr(np.array([True, False], dtype=bool)) == 'array([ True, False])'
    assert str(np.ones(3)) == '[1. 1. 1.]'


def test_arithmetic_promotion_and_comparisons():
    i = np.array([1, 2], dtype='int32')
    f = np.array([1.0, 2.0])
    assert (i + f).dtype == onp.float32 and (i + f).asnumpy().tolist() == [2, 4]
    assert (i / 2).dtype == onp.float32 and (i / 2).asnumpy().tolist() == [0.5, 1.0]
    assert (i * 2).dtype == onp.int32
    assert (i + np.array([1, 1], dtype='int64')).dtype == onp.int64
    assert (np.ones(2, dtype='int64') + np.ones(2)).dtype == onp.float32   # MXNet, not NumPy
    c = f > 1.5
    assert c.dtype == onp.bool_ and c.asnumpy().tolist() == [False, True]
    assert (f == np.array([1.0, 0.0])).asnumpy().tolist() == [True, False]
    assert (np.ones(2, dtype=bool) + 1).dtype == onp.int64
    assert (2 - f).asnumpy().tolist() == [1, 0] and (2 ** f).asnumpy().tolist() == [2, 4]
    assert ([1, 1] + f).asnumpy().tolist() == [2, 3]
    with pytest.raises(ValueError, match='broadcast'):
        np.ones(3) + np.ones(2)


def test_zero_dim_and_scalars():
    s = np.array(2.5)
    assert s.shape == () and s.ndim == 0 and s.size == 1
    assert float(s) == 2.5 and s.item() == 2.5 and (s * 2).shape == ()
    assert (np.ones(3) * s).asnumpy().tolist() == [2.5] * 3
    with pytest.raises(TypeError, match='unsized'):
        len(s)


def test_indexing_advanced_and_boolean():
    a = np.array([[1, 2, 3], [4, 5, 6]])
    assert a[np.array([1, 0], dtype='int32')].asnumpy().tolist() == [[4, 5, 6], [1, 2, 3]]
    assert a[a > 3].asnumpy().tolist() == [4, 5, 6]
    assert a[:, 1].asnumpy().tolist() == [2, 5]
    assert a[None].shape == (1, 2, 3)
    a[a > 4] = 0
    assert a.asnumpy().tolist() == [[1, 2, 3], [4, 0, 0]]


def test_item_tolist_asnumpy():
    a = np.array([[1, 2], [3, 4]], dtype='int32')
    assert a.tolist() == [[1, 2], [3, 4]] and a.item(3) == 4
    assert isinstance(a.asnumpy(), onp.ndarray)


def test_autograd_records_np_arithmetic():
    x = np.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x * x + 2 * x
    y.backward()
    assert type(x.grad) is np.ndarray
    assert x.grad.asnumpy().tolist() == [4.0, 6.0, 8.0]


def test_bool_arrays_have_a_correct_path():
    b = np.array([True, False, True], dtype=bool)
    assert (b & np.array([True, True, False], dtype=bool)).asnumpy().tolist() == \
        [True, False, False]
    assert (~b).asnumpy().tolist() == [False, True, False]
    assert np.zeros(2, dtype=bool).asnumpy().tolist() == [False, False]
    with pytest.raises(TypeError, match='boolean negative'):
        -b


def test_operators_either_side_and_mixed_with_mx_nd():
    # +, -, *, / are C slots of mx.np's base class; the mx.np operand decides the
    # semantics whichever side it is on, also against a plain mx.nd array
    x = np.array([1., 2., 4.])
    a = mx.nd.array([4., 4., 4.])
    i = np.array([1, 2, 3])
    cases = [(x + a, [5, 6, 8]), (a + x, [5, 6, 8]), (x - a, [-3, -2, 0]),
             (a - x, [3, 2, 0]), (2 - x, [1, 0, -2]), (x * a, [4, 8, 16]),
             (a / x, [4, 2, 1]), (1 / x, [1, .5, .25]), (i / 2, [.5, 1, 1.5])]
    for got, want in cases:
        assert type(got) is np.ndarray
        assert got.asnumpy().tolist() == want
    assert (i / 2).dtype == onp.float32 and (x > a).dtype == onp.bool_
