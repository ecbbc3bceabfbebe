"""mx.np's C fast paths at their weak points: ``+ - * /`` as C slots (also in subclasses,
unless a subclass defines its own), attribute lookup in C, ``np.exp``-style unary functions
straight to the kernel, and ``asnumpy`` as one copy. Each keeps the engine contract: a
pending writer on an input is waited for, an error stored on an input reaches the result,
an overlapping view as ``out`` reads its old values, and autograd still records."""
import ctypes
import sys
import threading

import numpy as onp
import pytest

import mxcy as mx
from mxcy import autograd
from mxcy import numpy as np
from mxcy._ndarray import _keep_c_operators


class Injected(Exception):
    pass


def slow_write(arr, values, started=None, release=None):
    """Push a Python op that writes `values` into `arr` once `release` is set."""
    def run(out):
        if started is not None:
            started.set()
        if release is not None:
            assert release.wait(10)
        out[...] = values
    mx.nd.push_numpy(run, [], [arr], 'slow_write')


def test_binary_and_unary_wait_for_a_pending_writer():
    a = np.zeros((100,))
    b = np.ones((100,))
    started, release = threading.Event(), threading.Event()
    vals = onp.arange(100, dtype=onp.float32) / 100
    slow_write(a, vals, started, release)
    assert started.wait(10)
    s, m, e, q = a + b, a * 2, np.exp(a), a / b
    release.set()
    onp.testing.assert_allclose(s.asnumpy(), vals + 1)
    onp.testing.assert_allclose(m.asnumpy(), vals * 2)
    onp.testing.assert_allclose(e.asnumpy(), onp.exp(vals), rtol=1e-6)
    onp.testing.assert_allclose(q.asnumpy(), vals)


def test_an_error_on_an_input_reaches_the_results():
    a = np.zeros((10,))

    def fail(out):
        raise Injected('injected fault')
    mx.nd.push_numpy(fail, [], [a], 'failing_op')
    s = a + 1
    e = np.exp(a)
    for r in (s, e):
        with pytest.raises(Injected):
            r.asnumpy()
    with pytest.raises(Injected):
        a.asnumpy()
    with pytest.raises(Injected):
        mx.nd.waitall()                 # waitall raises the original once more
    onp.testing.assert_array_equal((np.ones((3,)) + 1).asnumpy(), [2, 2, 2])


def test_an_overlapping_view_as_out():
    x = onp.arange(10, dtype=onp.float32)
    a = np.array(x)
    a[1:] += a[:-1]
    ref = x.copy()
    ref[1:] += x[:-1]
    onp.testing.assert_array_equal(a.asnumpy(), ref)
    b = np.array(x / 10)
    np.exp(b[2:8], out=b[2:8])
    ref = x / 10
    ref[2:8] = onp.exp(ref[2:8])
    onp.testing.assert_allclose(b.asnumpy(), ref, rtol=1e-6)


def test_recorded_under_autograd():
    x = np.array([0.5, 1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = np.exp(x) * 2 + x
    y.backward()
    v = onp.array([0.5, 1.0, 2.0], onp.float32)
    onp.testing.assert_allclose(x.grad.asnumpy(), 2 * onp.exp(v) + 1, rtol=1e-6)
    onp.testing.assert_allclose(y.asnumpy(), 2 * onp.exp(v) + v, rtol=1e-6)


def test_unary_slow_paths_stay():
    i = np.array([1, 2], dtype='int32')
    assert np.exp(i).dtype == onp.int32            # MXNet 1.9.1 keeps int dtypes
    assert np.exp(np.array([True, False])).dtype == onp.float32
    assert np.exp(1.0) == pytest.approx(onp.e)
    out = np.zeros((2,))
    assert np.exp(np.array([0.0, 1.0]), out=out) is out
    onp.testing.assert_allclose(out.asnumpy(), [1, onp.e], rtol=1e-6)
    with pytest.raises(TypeError, match='exp'):
        np.exp('text')


class Sub(np.ndarray):
    __slots__ = ()


class OwnAdd(np.ndarray):
    __slots__ = ()

    def __add__(self, other):
        return 'own add'

    def __getattr__(self, name):
        return f'own {name}'


def test_subclass_instances():
    assert _keep_c_operators(Sub) == 2          # both groups were copied to Sub
    s = np.array([1.0, 2.0])._as_class(Sub)
    r = s + s
    assert type(r) is Sub
    onp.testing.assert_array_equal(r.asnumpy(), [2, 4])
    onp.testing.assert_array_equal((2 - s).asnumpy(), [1, 0])
    onp.testing.assert_allclose(np.exp(s).asnumpy(), onp.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(AttributeError, match="'Sub' object has no attribute 'exp'"):
        s.exp
    o = np.array([1.0])._as_class(OwnAdd)
    assert o + o == 'own add'                     # its own slot is kept
    assert o.anything == 'own anything'
    onp.testing.assert_array_equal((o * 3).asnumpy(), [3])
    assert _keep_c_operators(OwnAdd) == 0
    with pytest.raises(TypeError, match='_keep_c_operators'):
        _keep_c_operators(mx.nd.NDArray)


def test_ndarray_has_the_c_slots():
    a = np.ones((2,))
    with pytest.raises(AttributeError, match="'ndarray' object has no attribute 'exp'"):
        a.exp                                     # mx.nd's methods are not mx.np's
    assert a.as_nd_ndarray().exp().asnumpy()[0] == pytest.approx(onp.e)
    assert a.sum().item() == 2.0


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'int32', 'float16', 'bool'])
def test_asnumpy_is_a_copy(dtype):
    x = onp.arange(12).reshape(3, 4).astype(dtype)
    a = np.array(x)
    c = a.asnumpy()
    assert c.dtype == x.dtype and c.shape == (3, 4) and c.flags.owndata
    onp.testing.assert_array_equal(c, x)
    c[...] = 0
    onp.testing.assert_array_equal(a.asnumpy(), x)    # the array is untouched
    onp.testing.assert_array_equal(a[1].asnumpy(), x[1])     # a view at an offset
    onp.testing.assert_array_equal(a[1:, 2:].asnumpy(), x[1:, 2:])
    assert np.array(x)[0, 0].asnumpy().shape == ()
    assert np.zeros((0, 3), dtype=dtype).asnumpy().shape == (0, 3)


def test_asnumpy_of_a_large_array_and_a_pending_writer():
    a = np.zeros((1 << 16,))                     # 256 KiB: copied without the GIL
    started, release = threading.Event(), threading.Event()
    vals = onp.arange(1 << 16, dtype=onp.float32)
    slow_write(a, vals, started, release)
    threading.Timer(0.05, release.set).start()
    onp.testing.assert_array_equal(a.asnumpy(), vals)
    onp.testing.assert_array_equal(mx.nd.array(vals).asnumpy(), vals)


def _slot(cls, offset, sub=None):
    """A pointer in the type object of `cls` (`sub`: then at that offset in the struct
    the first points to), read with ctypes: CPython 3.8+ 64-bit layout."""
    p = ctypes.c_void_p.from_address(id(cls) + offset).value
    return p if sub is None else ctypes.c_void_p.from_address(p + sub).value


CPYTHON_LAYOUT = pytest.mark.skipif(
    sys.implementation.name != 'cpython' or hasattr(sys, 'gettotalrefcount')
    or ctypes.sizeof(ctypes.c_void_p) != 8, reason='reads a 64-bit CPython type layout')
TP_DEALLOC, TP_AS_NUMBER, TP_GETATTRO = 48, 96, 144
NB_ADD, NB_SUBTRACT, NB_MULTIPLY, NB_TRUE_DIVIDE = 0, 8, 16, 240


@CPYTHON_LAYOUT
def test_the_slots_are_the_c_ones():
    """What the speed rests on (the values are the same either way): mx.np.ndarray and a
    plain subclass get the C base's operator slots and CPython's own attribute lookup,
    not the generic slots that look the method up on every call."""
    from mxcy._ndarray import _NumpyOperators
    for cls in (np.ndarray, Sub):
        for nb in (NB_ADD, NB_SUBTRACT, NB_MULTIPLY, NB_TRUE_DIVIDE):
            assert _slot(cls, TP_AS_NUMBER, nb) == _slot(_NumpyOperators, TP_AS_NUMBER, nb)
        assert _slot(cls, TP_GETATTRO) == _slot(object, TP_GETATTRO)
    assert _slot(OwnAdd, TP_AS_NUMBER, NB_ADD) != _slot(_NumpyOperators, TP_AS_NUMBER, NB_ADD)
    assert _slot(np.ndarray, TP_DEALLOC) != _slot(Sub, TP_DEALLOC)    # Sub: the generic one


def test_plain_dealloc_only_for_a_class_that_adds_nothing():
    from mxcy._ndarray import _plain_dealloc

    class WithDel(np.ndarray):
        __slots__ = ()

        def __del__(self):
            pass

    class WithDict(np.ndarray):
        pass
    assert not _plain_dealloc(WithDel)
    assert not _plain_dealloc(WithDict)
    with pytest.raises(TypeError, match='_plain_dealloc'):
        _plain_dealloc(mx.nd.NDArray)
    xs = [np.ones((2,)) + 1 for _ in range(10)]       # warm caches up
    del xs
    before = sys.getrefcount(np.ndarray)
    for _ in range(3):                                  # freed without a leak of the type
        xs = [np.ones((2,)) + 1 for _ in range(1000)]
        del xs
    assert sys.getrefcount(np.ndarray) - before < 10   # a leak would be 3000
