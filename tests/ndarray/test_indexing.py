"""mx.nd take/pick/one_hot/topk/sort/argsort/diag against NumPy, with MXNet's rules:
index truncation, clip/wrap/raise modes, float32 indices by default, stable ties,
topk ret_typ variants and k <= 0; method forms; errors."""
import numpy as np
import pytest

import mxcy as mx

rng = np.random.default_rng(3)




def check(got, want, dtype=None):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == (dtype or want.dtype)
    np.testing.assert_array_equal(got.asnumpy(), want.astype(got.dtype))


def arr(shape, dtype=np.float32):
    x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(dtype)
    return x, mx.nd.array(x, dtype=dtype)


# ---------------------------------------------------------------- take
@pytest.mark.parametrize('mode', ['clip', 'wrap'])
@pytest.mark.parametrize('axis', [0, 1, -1])
@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.int32, np.float16])
def test_take_modes(mode, axis, dtype):
    x, a = arr((3, 4, 5), dtype)
    idx = np.array([[0, -1, 7], [2, -8, 3]])
    got = mx.nd.take(a, mx.nd.array(idx), axis=axis, mode=mode)
    check(got, np.take(x, idx, axis=axis, mode='clip' if mode == 'clip' else 'wrap'))


def test_take_clip_treats_negatives_as_zero_and_truncates_floats():
    x, a = arr((4, 2))
    got = mx.nd.take(a, mx.nd.array([-3, 1.7, 2.2, -0.5, 9]))
    check(got, x[[0, 1, 2, 0, 3]])
    got = a.take(mx.nd.array([1, 0], dtype='int64'), axis=1)
    check(got, x[:, [1, 0]])


def test_take_raise_names_the_bad_index_at_the_next_wait():
    """The indices are data: as in MXNet, mode='raise' checks them inside the op (the call
    does not wait for them) and the error comes out of the next wait on the result."""
    x, a = arr((3, 2))
    check(mx.nd.take(a, mx.nd.array([2, 0]), mode='raise'), x[[2, 0]])
    bad = mx.nd.take(a, mx.nd.array([0, 3]), mode='raise')
    with pytest.raises(IndexError, match=r"take: index 3 is out of bounds for axis 0 with "
                                         r"size 3 \(mode='raise'\)"):
        bad.asnumpy()
    with pytest.raises(IndexError, match="take: index -1 is out of bounds"):
        mx.nd.take(a, mx.nd.array([-1]), mode='raise').wait_to_read()


def test_take_errors():
    a = mx.nd.ones((3, 2))
    with pytest.raises(ValueError, match=r"take: parameter 'mode' must be one of \['clip', "
                                         r"'wrap', 'raise'\], got 'fast'"):
        mx.nd.take(a, mx.nd.array([0]), mode='fast')
    with pytest.raises(TypeError, match="take: indices must be an NDArray"):
        mx.nd.take(a, [0, 1])
    with pytest.raises(ValueError, match="take: parameter 'axis'=2 is out of range"):
        mx.nd.take(a, mx.nd.array([0]), axis=2)


# ---------------------------------------------------------------- pick
@pytest.mark.parametrize('axis', [0, 1, -1])
@pytest.mark.parametrize('keepdims', [False, True])
@pytest.mark.parametrize('mode', ['clip', 'wrap'])
def test_pick(axis, keepdims, mode):
    x, a = arr((3, 4, 5))
    ax = axis % 3
    n = x.shape[ax]
    idx_shape = x.shape[:ax] + x.shape[ax + 1:]
    idx = rng.integers(-2, n + 2, idx_shape)
    fixed = np.clip(idx, 0, n - 1) if mode == 'clip' else np.mod(idx, n)
    want = np.take_along_axis(x, np.expand_dims(fixed, ax), axis=ax)
    got = mx.nd.pick(a, mx.nd.array(idx), axis=axis, keepdims=keepdims, mode=mode)
    check(got, want if keepdims else want.squeeze(ax))


def test_pick_details():
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    check(x.pick(mx.nd.array([0, 2], dtype='int32')), np.array([1, 6], np.float32))
    check(mx.nd.pick(x, mx.nd.array([[0], [2]]), axis=1), np.array([1, 6], np.float32))
    with pytest.raises(ValueError, match=r"pick: .*'index': expected \(2,\), given \(3,\)"):
        mx.nd.pick(x, mx.nd.array([0, 1, 1]), axis=1)
    with pytest.raises(ValueError, match="pick: parameter 'axis'=None .* is not supported"):
        mx.nd.pick(x, mx.nd.array([0]), axis=None)


# ---------------------------------------------------------------- one_hot
@pytest.mark.parametrize('dtype', ['float32', 'int32', 'float64', 'uint8'])
def test_one_hot(dtype):
    idx = np.array([[1, 0, 5], [-1, 2, 1.7]])
    got = mx.nd.one_hot(mx.nd.array(idx), 3, on_value=4, off_value=1, dtype=dtype)
    fixed = np.trunc(idx).astype(int)
    want = np.where(fixed[..., None] == np.arange(3), 4, 1).astype(dtype)
    check(got, want)
    check(mx.nd.array(idx).one_hot(4), (fixed[..., None] == np.arange(4)).astype('float32'))
    with pytest.raises(ValueError, match="one_hot: parameter 'depth' must be >= 0, got -1"):
        mx.nd.one_hot(mx.nd.array(idx), -1)


def test_one_hot_sizes_edges_and_out():
    # odd sizes, 0-size, depth 0, a large call (one write of `on` per in-range index),
    # out= over an existing array, onehot_encode (same op)
    r = np.random.default_rng(5)
    idx = r.integers(-3, 70, (37, 3)).astype(np.float32)
    hit = idx[..., None] == np.arange(64)
    want = np.where(hit, 2.5, -0.5).astype(np.float32)
    check(mx.nd.one_hot(mx.nd.array(idx), 64, on_value=2.5, off_value=-0.5), want)
    assert mx.nd.one_hot(mx.nd.zeros((0, 2)), 5).shape == (0, 2, 5)
    assert mx.nd.one_hot(mx.nd.array([1, 2]), 0).shape == (2, 0)
    out = mx.nd.full((4, 6), 7.0)
    mx.nd.one_hot(mx.nd.array([5, 0, 9, 2]), 6, out=out)
    check(out, np.eye(6, dtype=np.float32)[[5, 0, 2, 2]] * np.float32([[1], [1], [0], [1]]))
    enc = mx.nd.full((3, 4), 3.0)
    mx.nd.onehot_encode(mx.nd.array([3, 1, 0]), enc)
    check(enc, np.eye(4, dtype=np.float32)[[3, 1, 0]])


# ---------------------------------------------------------------- sort, argsort, topk
def np_order(x, axis, ascend):
    """Stable order; descending keeps equal elements in their original order."""
    if ascend:
        return np.argsort(x, axis=axis, kind='stable')
    return np.argsort(-x.astype(np.float64), axis=axis, kind='stable')


@pytest.mark.parametrize('axis', [0, 1, -1, None])
@pytest.mark.parametrize('ascend', [True, False])
@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.int32, np.uint8])
def test_sort_and_argsort(axis, ascend, dtype):
    x = rng.integers(0, 5, (3, 6)).astype(dtype)      # many ties
    a = mx.nd.array(x, dtype=dtype)
    flat = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis
    order = np_order(flat, ax, ascend)
    check(mx.nd.sort(a, axis=axis, is_ascend=ascend), np.take_along_axis(flat, order, ax))
    check(mx.nd.argsort(a, axis=axis, is_ascend=ascend), order, np.float32)
    check(a.argsort(axis=axis, is_ascend=ascend, dtype='int32'), order, np.int32)
    check(a.sort(axis=axis, is_ascend=ascend), np.take_along_axis(flat, order, ax))


@pytest.mark.parametrize('axis', [0, -1, None])
@pytest.mark.parametrize('k', [1, 2, 0])
@pytest.mark.parametrize('ascend', [False, True])
def test_topk_ret_types(axis, k, ascend):
    x = rng.integers(0, 4, (3, 5)).astype(np.float32)
    a = mx.nd.array(x)
    flat = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis
    kk = k if k > 0 else flat.shape[ax]
    order = np.take(np_order(flat, ax, ascend), np.arange(kk), axis=ax)
    values = np.take_along_axis(flat, order, ax)
    kw = {'axis': axis, 'k': k, 'is_ascend': ascend}
    check(mx.nd.topk(a, **kw), order, np.float32)
    check(mx.nd.topk(a, ret_typ='value', **kw), values)
    check(mx.nd.topk(a, ret_typ='indices', dtype='int64', **kw), order, np.int64)
    both = mx.nd.topk(a, ret_typ='both', **kw)
    assert isinstance(both, list) and len(both) == 2
    check(both[0], values)
    check(both[1], order, np.float32)
    mask = np.zeros_like(flat)
    np.put_along_axis(mask, order, 1, axis=ax)
    check(mx.nd.topk(a, ret_typ='mask', **kw), mask.reshape(x.shape))
    check(a.topk(**kw), order, np.float32)


def test_topk_mxnet_examples_and_errors():
    y = mx.nd.array([[3, 1, 2], [1, 3, 3]])
    check(y.topk(k=2), np.array([[0, 2], [1, 2]], np.float32))
    check(mx.nd.topk(mx.nd.array([3, 1, 2], dtype='int32'), k=2, ret_typ='value'),
          np.array([3, 2], np.int32))
    with pytest.raises(ValueError, match=r"topk: .*k=5 is larger than the 3 elements"):
        mx.nd.topk(y, k=5)
    with pytest.raises(ValueError, match="topk: parameter 'ret_typ' must be one of"):
        mx.nd.topk(y, ret_typ='values')
    out = mx.nd.zeros((2, 1))
    assert mx.nd.topk(y, out=out) is out
    check(out, np.array([[0], [1]], np.float32))


# ---------------------------------------------------------------- diag
@pytest.mark.parametrize('k', [0, 1, -1, 2])
def test_diag(k):
    x, a = arr((3, 4))
    check(mx.nd.diag(a, k=k), np.diag(x, k))
    check(a.diag(k), np.diag(x, k))
    v, b = arr((3,))
    check(mx.nd.diag(b, k=k), np.diag(v, k))
    z, c = arr((2, 3, 4))
    check(mx.nd.diag(c, k=k, axis1=1, axis2=2), np.diagonal(z, k, 1, 2))
    want = np.diagonal(z, k, -1, 0)
    if want.shape[-1]:
        check(mx.nd.diag(c, k=k, axis1=-1, axis2=0), want)
    else:       # NumPy returns an empty diagonal; MXNet says it does not exist
        with pytest.raises(ValueError, match=f"diag: diagonal k={k} does not exist"):
            mx.nd.diag(c, k=k, axis1=-1, axis2=0)


def test_diag_errors():
    with pytest.raises(ValueError, match=r"diag: diagonal k=5 does not exist"):
        mx.nd.diag(mx.nd.ones((2, 2)), k=5)
    with pytest.raises(ValueError, match="diag: axis1 and axis2 must differ"):
        mx.nd.diag(mx.nd.ones((2, 2, 2)), axis1=1, axis2=-2)
