"""The permute (transpose) and row gather/scatter (Embedding) kernels against NumPy."""
import itertools

import numpy as np
import pytest

import mxcy as mx
from mxcy import _ops


# the larger shapes take the 16x16 block path (dst's last axis strided in src, another
# axis contiguous there, both at least 4 long), with partial blocks
@pytest.mark.parametrize('shape', [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 4), (2, 3, 1, 2, 3),
                                   (37, 50), (5, 17, 33), (4, 20, 1, 18), (3, 4, 2, 5, 6)])
@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.float16, np.int8, np.int64])
def test_permute_matches_numpy_for_every_axis_order(shape, dtype):
    x = (np.arange(np.prod(shape)) % 120).reshape(shape).astype(dtype)
    xn = mx.nd.array(x, dtype=dtype)
    for perm in itertools.permutations(range(len(shape))):
        out = mx.nd.empty(tuple(shape[p] for p in perm), dtype=dtype)
        _ops.push_permute(xn, out, perm)
        np.testing.assert_array_equal(out.asnumpy(), x.transpose(perm))


def test_permute_rejects_mismatched_output():
    with pytest.raises(ValueError, match=r"output \(3, 2\) does not match the permuted shape "
                                         r"\(4, 2\)"):
        _ops.push_permute(mx.nd.zeros((2, 4)), mx.nd.zeros((3, 2)), (1, 0))


@pytest.mark.parametrize('idx_dtype', [np.float32, np.float64, np.int32, np.int64])
def test_gather_and_scatter_rows_clip_like_mxnet(idx_dtype):
    rng = np.random.default_rng(0)
    table = rng.standard_normal((6, 5)).astype(np.float32)
    idx = np.array([[0, 5.7, -3], [2, 9, 2]]).astype(idx_dtype)   # clip mode, truncation
    fixed = np.clip(np.trunc(idx).astype(np.int64), 0, 5).ravel()
    rows = mx.nd.empty((6, 5))
    _ops.push_rows('gather', mx.nd.array(idx, dtype=idx_dtype), mx.nd.array(table), rows)
    np.testing.assert_array_equal(rows.asnumpy(), table[fixed])
    dy = rng.standard_normal((6, 5)).astype(np.float32)
    grad = mx.nd.ones((6, 5))
    _ops.push_rows('scatter', mx.nd.array(idx, dtype=idx_dtype), grad, mx.nd.array(dy))
    ref = np.zeros((6, 5), np.float32)
    np.add.at(ref, fixed, dy)                                       # duplicates add up
    np.testing.assert_allclose(grad.asnumpy(), ref, rtol=1e-6)
    _ops.push_rows('scatter', mx.nd.array(idx, dtype=idx_dtype), grad, mx.nd.array(dy),
                   zero_first=False)                                # req='add'
    np.testing.assert_allclose(grad.asnumpy(), 2 * ref, rtol=1e-6)


def test_rows_reject_bad_input():
    with pytest.raises(ValueError, match=r"rows float32\(3, 4\) do not match table "
                                         r"float32\(6, 5\) and 3 indices"):
        _ops.push_rows('gather', mx.nd.zeros((3,)), mx.nd.zeros((6, 5)), mx.nd.zeros((3, 4)))
    with pytest.raises(TypeError, match="uint8"):
        _ops.push_rows('gather', mx.nd.zeros((3,), dtype='uint8'), mx.nd.zeros((6, 5)),
                       mx.nd.zeros((3, 5)))
    with pytest.raises(ValueError, match="input_dim is 0"):
        _ops.push_rows('scatter', mx.nd.zeros((3,)), mx.nd.zeros((0, 5)), mx.nd.zeros((3, 5)))
