"""mx.np elementwise maths and reductions: values against NumPy, MXNet's dtypes, autograd."""
import numpy as onp
import pytest

from mxcy import autograd
from mxcy import numpy as np

X = onp.array([[0.5, 1.0, 2.0], [3.0, 0.25, 1.5]], dtype=onp.float32)


@pytest.mark.parametrize('name', ['exp', 'log', 'log2', 'log10', 'log1p', 'expm1', 'sqrt',
                                  'cbrt', 'square', 'sin', 'cos', 'tan', 'arctan', 'sinh',
                                  'cosh', 'tanh', 'arcsinh', 'abs', 'absolute', 'sign',
                                  'floor', 'ceil', 'trunc', 'fix', 'negative',
                                  'reciprocal', 'degrees', 'radians', 'deg2rad', 'rad2deg'])
def test_unary_matches_numpy(name):
    got = getattr(np, name)(np.array(X))
    assert type(got) is np.ndarray and got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), getattr(onp, name)(X), rtol=1e-5, atol=1e-6)


def test_unary_keeps_int_dtypes_as_mxnet_and_scalars_stay_scalars():
    assert np.exp(np.array([0, 1], dtype='int32')).dtype == onp.int32     # MXNet 1.9.1
    assert np.rint(np.array([0.5, 1.5, 2.5, -1.5])).tolist() == [0, 1, 2, -2]   # MXNet's
    assert np.abs(np.array([-1, 2], dtype='int32')).dtype == onp.int32
    assert np.exp(0.0) == 1.0


@pytest.mark.parametrize('name', ['add', 'subtract', 'multiply', 'divide', 'true_divide',
                                  'power', 'mod', 'remainder', 'maximum', 'minimum'])
def test_binary_broadcasts_like_numpy(name):
    a, b = X, onp.array([2.0, 0.5, 1.5], dtype=onp.float32)
    got = getattr(np, name)(np.array(a), np.array(b))
    onp.testing.assert_allclose(got.asnumpy(), getattr(onp, name)(a, b), rtol=1e-5)
    got = getattr(np, name)(np.array(a), 2.0)
    onp.testing.assert_allclose(got.asnumpy(), getattr(onp, name)(a, 2.0), rtol=1e-5)


@pytest.mark.parametrize('name', ['equal', 'not_equal', 'greater', 'greater_equal', 'less',
                                  'less_equal'])
def test_comparisons_give_bool(name):
    got = getattr(np, name)(np.array(X), 1.0)
    assert got.dtype == onp.bool_
    assert got.asnumpy().tolist() == getattr(onp, name)(X, 1.0).tolist()


@pytest.mark.parametrize('fname', ['sum', 'mean', 'max', 'min', 'prod', 'amax', 'amin',
                                   'std', 'var'])
@pytest.mark.parametrize('axis,keepdims', [(None, False), (0, False), (1, True),
                                           ((0, 1), False), (-1, False)])
def test_reductions(fname, axis, keepdims):
    got = getattr(np, fname)(np.array(X), axis=axis, keepdims=keepdims)
    want = getattr(onp, fname)(X, axis=axis, keepdims=keepdims)
    assert got.shape == want.shape          # 0-d for a full reduction
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


def test_reduction_dtypes_follow_mxnet():
    i = np.array([1, 2, 3], dtype='int32')
    assert np.sum(i).dtype == onp.int32            # NumPy would give int64
    assert np.mean(i).dtype == onp.float32
    assert np.sum(np.array([True, True], dtype=bool)).item() == 2
    assert np.var(np.array(X), ddof=1).item() == pytest.approx(onp.var(X, ddof=1), 1e-5)


def test_argmax_argmin_cumsum():
    a = np.array(X)
    assert np.argmax(a).item() == 3 and np.argmax(a).dtype == onp.int64
    assert np.argmin(a, axis=1).tolist() == [0, 1]
    onp.testing.assert_allclose(np.cumsum(a, axis=1).asnumpy(), onp.cumsum(X, axis=1))
    onp.testing.assert_allclose(np.cumsum(a).asnumpy(), onp.cumsum(X), rtol=1e-6)


def test_methods_are_the_functions():
    a = np.array(X)
    assert a.sum(axis=0).tolist() == np.sum(a, axis=0).tolist()
    assert a.mean().item() == pytest.approx(float(X.mean()))
    assert a.max(axis=1, keepdims=True).shape == (2, 1)
    assert a.argmax(axis=0).tolist() == [1, 0, 0]


def test_reduction_errors_name_the_function():
    with pytest.raises(ValueError, match='sum: axis 2 is out of bounds'):
        np.sum(np.array(X), axis=2)
    with pytest.raises(TypeError, match='sum: a must be an mx.np.ndarray'):
        np.sum(object())


def test_autograd_through_functions():
    x = np.array([0.5, 1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = np.sum(np.exp(x) * x) + np.mean(x ** 2) + np.max(x)
    y.backward()
    xn = x.asnumpy().astype(onp.float64)
    want = onp.exp(xn) * (1 + xn) + 2 * xn / 3 + onp.array([0, 0, 1])
    assert type(x.grad) is np.ndarray
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5)


def test_autograd_std_var():
    x = np.array([1.0, 2.0, 4.0])
    x.attach_grad()
    with autograd.record():
        y = np.var(x)
    y.backward()
    xn = onp.array([1.0, 2.0, 4.0])
    onp.testing.assert_allclose(x.grad.asnumpy(), 2 * (xn - xn.mean()) / 3, rtol=1e-5)


def test_empty_axis_tuple_reduces_nothing():
    a = np.array(X)
    assert np.sum(a, axis=()).asnumpy().tolist() == X.tolist()
    assert np.max(np.array(2.0)).shape == ()
