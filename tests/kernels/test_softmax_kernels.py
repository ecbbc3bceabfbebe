"""softmax / log_softmax kernels (`_ops.softmax_np`, forward and backward) against the
float64 NumPy reference `mxcy._reference.softmax_np`.

The last axis runs the vector row loops of mxcy/_vecmath.h (max, exp-and-sum, scale);
other axes run the strided loop. Both are checked over row lengths around the vector
width and the 256-element summing chunk, temperatures, req 'add', in place, and rows
with huge spreads, -inf and NaN.
"""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _ops, _reference

IMPLS = [pytest.param(_reference, id='reference'), pytest.param(_ops, id='cython')]
FLOAT_DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=2e-6, atol=1e-7), np.float64: dict(rtol=1e-13, atol=1e-15)}


def forward(impl, x, axis=-1, t=1.0, log=False, req=1, out=None):
    out = np.zeros_like(x) if out is None else out
    assert impl.softmax_np(x, out, axis, t, log, None, req) is out
    return out


def backward(impl, y, dy, axis=-1, t=1.0, log=False, req=1, out=None):
    out = np.zeros_like(y) if out is None else out
    assert impl.softmax_np(y, out, axis, t, log, dy, req) is out
    return out


def expected_softmax(x, axis, t):
    z = (x.astype(np.float64) - x.max(axis=axis, keepdims=True)) / t
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('axis', [-1, 0, 1])
@pytest.mark.parametrize('t', [1.0, 0.5, 3.0])
def test_forward_known_values(impl, dtype, axis, t):
    x = np.random.default_rng(0).standard_normal((3, 5, 7)).astype(dtype)
    y = forward(impl, x, axis, t)
    np.testing.assert_allclose(y, expected_softmax(x, axis, t), **TOL[dtype])
    np.testing.assert_allclose(y.sum(axis=axis), 1, **TOL[dtype])
    lg = forward(impl, x, axis, t, log=True)
    np.testing.assert_allclose(lg, np.log(expected_softmax(x, axis, t)), **TOL[dtype])


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('length', [1, 2, 15, 16, 17, 31, 255, 256, 257, 1000])
@pytest.mark.parametrize('log', [False, True])
def test_rows_of_every_length_match_the_reference(dtype, length, log):
    x = (np.random.default_rng(length).standard_normal((4, length)) * 5).astype(dtype)
    for t in (1.0, 0.7):
        for req in (1, 2):
            prior = np.full_like(x, 0.5)
            np.testing.assert_allclose(
                forward(_ops, x, -1, t, log, req, prior.copy()),
                forward(_reference, x, -1, t, log, req, prior.copy()), **TOL[dtype])


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('axis', [-1, 0])
@pytest.mark.parametrize('log', [False, True])
def test_backward_matches_the_reference(dtype, axis, log):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 300)).astype(dtype)
    y = forward(_reference, x, axis, 1.0, log)
    dy = rng.standard_normal(x.shape).astype(dtype)
    for t in (1.0, 2.0):
        for req in (1, 2):
            prior = np.full_like(x, -0.25)
            np.testing.assert_allclose(
                backward(_ops, y, dy, axis, t, log, req, prior.copy()),
                backward(_reference, y, dy, axis, t, log, req, prior.copy()), **TOL[dtype])


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
def test_forward_in_place(impl, dtype):
    x = np.random.default_rng(5).standard_normal((8, 40)).astype(dtype)
    expected = expected_softmax(x, -1, 1.0)
    impl.softmax_np(x, x, -1, 1.0, False, None, 1)
    np.testing.assert_allclose(x, expected, **TOL[dtype])


@pytest.mark.parametrize('impl', IMPLS)
@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
def test_extreme_rows(impl, dtype):
    big = 1e4 if dtype == np.float32 else 1e6
    x = np.array([[big, 0.0, -big, 1.0],                 # exps underflow to exactly 0
                  [-np.inf, 0.0, 0.0, -np.inf],          # -inf entries get probability 0
                  [np.nan, 0.0, 1.0, 2.0],               # a NaN poisons its row only
                  [-big, -big, -big, -big]], dtype=dtype)
    y = forward(impl, x)
    np.testing.assert_array_equal(y[0], np.array([1, 0, 0, 0], dtype=dtype))
    np.testing.assert_array_equal(y[1], np.array([0, 0.5, 0.5, 0], dtype=dtype))
    assert np.isnan(y[2]).all()
    np.testing.assert_array_equal(y[3], np.full(4, 0.25, dtype=dtype))
    lg = forward(impl, x, log=True)
    assert lg[0, 0] == 0 and lg[0, 2] == -2 * big and lg[1, 0] == -np.inf


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
def test_empty_and_single_element_rows(dtype):
    np.testing.assert_array_equal(forward(_ops, np.zeros((3, 1), dtype)), np.ones((3, 1)))
    assert forward(_ops, np.zeros((3, 0), dtype)).shape == (3, 0)
    assert forward(_ops, np.zeros((0, 4), dtype)).shape == (0, 4)


@pytest.mark.parametrize('dtype', FLOAT_DTYPES)
@pytest.mark.parametrize('axis', [-1, 0])
def test_big_arrays_cut_into_parts(dtype, axis):
    # >= 2^18 elements: the kernel runs as parts over the outer index (shared with idle
    # engine workers; here, without an engine, one after the other); odd counts
    x = np.random.default_rng(9).standard_normal((1023, 257)).astype(dtype)
    if axis == 0:
        x = x.reshape(3, 341, 257)
    np.testing.assert_allclose(forward(_ops, x, axis), forward(_reference, x, axis),
                               **TOL[dtype])
    y = forward(_reference, x, axis)
    dy = np.ones_like(x) * np.linspace(-1, 1, x.shape[-1], dtype=dtype)
    np.testing.assert_allclose(backward(_ops, y, dy, axis), backward(_reference, y, dy, axis),
                               **TOL[dtype])


def test_big_softmax_through_the_engine():
    xn = np.random.default_rng(10).standard_normal((2049, 131)).astype(np.float32)
    y = mx.nd.softmax(mx.nd.array(xn), axis=-1).asnumpy()
    np.testing.assert_allclose(y, expected_softmax(xn, -1, 1.0), **TOL[np.float32])
