"""mx.nd reductions against NumPy, with MXNet's rules: shape (1,) for full reductions,
`exclude`, dtype kept (integer wrap/truncation), argmax indices in the input dtype,
norm ord 1/2 only; method forms and bad axes."""
import numpy as np
import pytest

import mxcy as mx

rng = np.random.default_rng(1)




def check(got, want, dtype, rtol=None):
    assert got.dtype == dtype
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    r = rtol if rtol is not None else {np.float16: 3e-3, np.float32: 1e-5}.get(dtype, 1e-12)
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want.astype(np.float64),
                               rtol=r, atol=r)


def as_mx_shape(a):
    """MXNet has no 0-d arrays: a scalar result has shape (1,)."""
    a = np.asarray(a)
    return a.reshape(1) if a.shape == () else a


REDUCERS = {'sum': np.sum, 'mean': np.mean, 'max': np.max, 'min': np.min, 'prod': np.prod,
            'nansum': np.nansum, 'nanprod': np.nanprod}
AXES = [None, 0, 1, -1, (0, 2), (-1, 0), ()]


@pytest.mark.parametrize('name', sorted(REDUCERS))
@pytest.mark.parametrize('axis', AXES)
@pytest.mark.parametrize('keepdims', [False, True])
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_reductions_match_numpy(name, axis, keepdims, dtype):
    x = rng.uniform(0.5, 1.5, (2, 3, 4)).astype(dtype)
    got = getattr(mx.nd, name)(mx.nd.array(x, dtype=dtype), axis=axis, keepdims=keepdims)
    np_axis = None if axis == () else axis
    want = REDUCERS[name](x.astype(np.float64), axis=np_axis, keepdims=keepdims)
    check(got, as_mx_shape(want), dtype)


@pytest.mark.parametrize('name', sorted(REDUCERS))
@pytest.mark.parametrize('axis', [1, (0, 2), -1])
def test_exclude_reduces_the_other_axes(name, axis):
    x = rng.uniform(0.5, 1.5, (2, 3, 4))
    got = getattr(mx.nd, name)(mx.nd.array(x, dtype='float64'), axis=axis, exclude=True)
    kept = {a % 3 for a in ((axis,) if isinstance(axis, int) else axis)}
    others = tuple(a for a in range(3) if a not in kept)
    check(got, REDUCERS[name](x, axis=others), np.float64)


def test_full_reductions_have_shape_one():
    a = mx.nd.arange(24).reshape((2, 3, 4))
    assert mx.nd.sum(a).shape == (1,)
    assert mx.nd.sum(a, keepdims=True).shape == (1, 1, 1)
    assert mx.nd.max(mx.nd.ones((5,)), axis=0).shape == (1,)
    assert a.sum().asscalar() == 276
    assert mx.nd.sum(a, axis=(0, 1, 2), exclude=True).shape == (2, 3, 4)   # reduces none


def test_method_forms():
    x = rng.uniform(-1, 1, (3, 5)).astype(np.float32)
    a = mx.nd.array(x)
    check(a.sum(axis=1), x.sum(axis=1), np.float32)
    check(a.mean(axis=0, keepdims=True), x.mean(axis=0, keepdims=True), np.float32)
    check(a.max(), as_mx_shape(x.max()), np.float32)
    check(a.argmax(axis=1), x.argmax(axis=1), np.float32)
    check(a.norm(), as_mx_shape(np.linalg.norm(x)), np.float32)


@pytest.mark.parametrize('dtype', [np.int8, np.uint8, np.int32, np.int64, np.float16])
def test_other_dtypes_keep_their_dtype(dtype):
    x = rng.integers(0, 9, (3, 4)).astype(dtype)
    a = mx.nd.array(x, dtype=dtype)
    check(mx.nd.sum(a, axis=1), x.sum(axis=1, dtype=dtype), dtype)
    check(mx.nd.max(a, axis=0), x.max(axis=0), dtype)
    check(mx.nd.min(a), as_mx_shape(x.min()), dtype)
    want_mean = x.astype(np.float64).mean(axis=1)
    if dtype != np.float16:
        want_mean = np.trunc(want_mean)
    check(mx.nd.mean(a, axis=1), want_mean.astype(dtype), dtype)


def test_integer_sums_wrap_and_means_truncate_as_in_mxnet():
    assert mx.nd.sum(mx.nd.array([100, 100], dtype='int8')).asnumpy().tolist() == [-56]
    got = mx.nd.mean(mx.nd.array([-1, -2, -4, -8], dtype='int32'))
    assert got.asnumpy().tolist() == [-3]


def test_nan_reductions():
    x = np.array([[1.0, np.nan, 2.0], [np.nan, np.nan, 3.0]], np.float32)
    a = mx.nd.array(x)
    check(mx.nd.nansum(a, axis=1), [3.0, 3.0], np.float32)
    check(mx.nd.nanprod(a, axis=1), [2.0, 3.0], np.float32)
    assert np.isnan(mx.nd.sum(a, axis=1).asnumpy()).all()


# ---------------------------------------------------------------- argmax / argmin
@pytest.mark.parametrize('name', ['argmax', 'argmin'])
@pytest.mark.parametrize('axis', [0, 1, -1, None])
@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.int32, np.float16])
def test_arg_reductions(name, axis, dtype):
    x = rng.permutation(12).reshape(3, 4).astype(dtype)
    got = getattr(mx.nd, name)(mx.nd.array(x, dtype=dtype), axis=axis)
    check(got, as_mx_shape(getattr(np, name)(x, axis=axis)), dtype)
    kept = getattr(mx.nd, name)(mx.nd.array(x, dtype=dtype), axis=axis, keepdims=True)
    want_shape = (1, 1) if axis is None else np.expand_dims(
        getattr(np, name)(x, axis=axis), axis).shape
    assert kept.shape == want_shape


def test_argmax_returns_the_first_of_ties():
    got = mx.nd.argmax(mx.nd.array([[1, 3, 3], [2, 2, 1]]), axis=1)
    assert got.dtype == np.float32 and got.asnumpy().tolist() == [1, 0]


# ---------------------------------------------------------------- norm
@pytest.mark.parametrize('ord', [1, 2])
@pytest.mark.parametrize('axis', [None, 0, -1, (0, 1)])
@pytest.mark.parametrize('keepdims', [False, True])
def test_norm(ord, axis, keepdims):
    x = rng.normal(size=(3, 4, 2)).astype(np.float32)
    got = mx.nd.norm(mx.nd.array(x), ord=ord, axis=axis, keepdims=keepdims)
    ax = tuple(range(3)) if axis is None else axis
    x64 = x.astype(np.float64)
    want = (np.abs(x64).sum(axis=ax, keepdims=keepdims) if ord == 1 else
            np.sqrt((x64 ** 2).sum(axis=ax, keepdims=keepdims)))
    check(got, as_mx_shape(want), np.float32)


def test_norm_dtypes():
    assert mx.nd.norm(mx.nd.array([3, 4], dtype='int32')).asnumpy().tolist() == [5]
    got = mx.nd.norm(mx.nd.array([[3, 4]]), axis=1, out_dtype='float64')
    check(got, [5.0], np.float64)


# ---------------------------------------------------------------- errors and out=
def test_bad_axes_are_named():
    a = mx.nd.ones((2, 3, 4))
    with pytest.raises(ValueError, match=r"sum: parameter 'axis'=3 is out of range for "
                                         r"input shape \(2, 3, 4\)"):
        mx.nd.sum(a, axis=3)
    with pytest.raises(ValueError, match=r"mean: parameter 'axis'=-4 is out of range"):
        mx.nd.mean(a, axis=(0, -4))
    with pytest.raises(ValueError, match=r"max: parameter 'axis'=\(1, -2\) repeats an axis"):
        mx.nd.max(a, axis=(1, -2))
    with pytest.raises(TypeError, match="argmax: parameter 'axis' expects an integer"):
        mx.nd.argmax(a, axis=(0, 1))
    with pytest.raises(ValueError, match=r"norm: parameter 'ord' must be one of \[1, 2\], "
                                         r"got 3"):
        mx.nd.norm(a, ord=3)
    with pytest.raises(ValueError, match="max: .*cannot reduce axis 0 of size 0"):
        mx.nd.max(mx.nd.zeros((0, 3)), axis=0)
    with pytest.raises(TypeError, match="sum: data must be an NDArray"):
        mx.nd.sum([1, 2])


def test_numpy_integer_axes_and_out():
    a = mx.nd.arange(24).reshape((2, 3, 4))
    check(mx.nd.sum(a, axis=np.int64(1)), np.arange(24).reshape(2, 3, 4).sum(axis=1),
          np.float32)
    out = mx.nd.zeros((2, 4))
    assert mx.nd.sum(a, axis=1, out=out) is out
    check(out, np.arange(24).reshape(2, 3, 4).sum(axis=1), np.float32)
    with pytest.raises(ValueError, match=r"sum: out has shape \(4, 2\)"):
        mx.nd.sum(a, axis=1, out=mx.nd.zeros((4, 2)))
    assert mx.nd.sum(mx.nd.zeros((0, 3)), axis=0).asnumpy().tolist() == [0, 0, 0]
