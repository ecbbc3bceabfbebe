"""ROIPooling's C kernels (mxcy/_detect.pyx: the forward keeps each bin's argmax for the
backward) against the operator's NumPy twin (reference / reference_grad): regions crossing the border, outside the image, a scale of 0.5 with
half-way coordinates (C's round: half away from zero), ties and NaN (NumPy's argmax),
float64, req 'add', 0 rois, and a bad batch index raising instead of reading memory."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.operator import get_op

ROIS = [[0, 0, 0, 3, 3], [1, 1, 2, 6, 5], [0, -4, -3, 2, 1], [1, 9, 9, 14, 12],
        [0, 2.5, 1.5, 5.0, 6.5], [1, 7, 0, 7, 0], [0, -2.5, 0.5, 3.5, 2.5]]


def numpy_path(x, rois, dy, pooled, scale):
    spec = get_op('ROIPooling')
    p = spec.params.parse('ROIPooling', dict(pooled_size=pooled, spatial_scale=scale))
    return spec.reference(p, x, rois), spec.reference_grad(p, [dy], [x, rois])[0]


def run(x, rois, dy, pooled, scale, dtype):
    data = mx.nd.array(x, dtype=dtype)
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.ROIPooling(data, mx.nd.array(rois, dtype=dtype), pooled_size=pooled,
                             spatial_scale=scale)
    y.backward(mx.nd.array(dy, dtype=dtype))
    return y.asnumpy(), data.grad.asnumpy()


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('pooled,scale', [((2, 2), 1.0), ((3, 2), 0.5), ((4, 5), 1.0)])
def test_kernel_matches_numpy_path(dtype, pooled, scale):
    rng = np.random.RandomState(0)
    x = rng.randint(-3, 4, (2, 3, 7, 8)).astype(dtype)        # many ties
    x[0, 1, 2, 3] = np.nan
    rois = np.array(ROIS, dtype)
    dy = rng.uniform(-1, 1, (len(ROIS), 3) + pooled).astype(dtype)
    got_y, got_g = run(x, rois, dy, pooled, scale, dtype)
    want_y, want_g = numpy_path(x, rois, dy, pooled, scale)
    np.testing.assert_array_equal(got_y, want_y)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-6, atol=1e-6)


def test_rounding_is_half_away_from_zero():
    x = np.arange(2 * 10 * 10, dtype=np.float32).reshape(1, 2, 10, 10)
    # 4.5 -> 5 (half to even would give 4): the bin ends at row/col 5
    y = mx.nd.ROIPooling(mx.nd.array(x), mx.nd.array([[0, -2.5, 2.5, 4.5, 4.5]]),
                         pooled_size=(1, 1), spatial_scale=1.0)
    assert y.asnumpy()[0, :, 0, 0].tolist() == [55.0, 155.0]


def test_float16_path_add_req_and_empty():
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, (2, 3, 7, 8))
    y16 = mx.nd.ROIPooling(mx.nd.array(x, dtype='float16'),
                           mx.nd.array(ROIS, dtype='float16'), pooled_size=(2, 2),
                           spatial_scale=1.0)
    y32 = mx.nd.ROIPooling(mx.nd.array(x), mx.nd.array(ROIS), pooled_size=(2, 2),
                           spatial_scale=1.0)
    np.testing.assert_allclose(y16.asnumpy(), y32.asnumpy(), atol=2e-3)
    data = mx.nd.array(x)
    data.attach_grad(grad_req='add')
    for _ in range(2):
        with mx.autograd.record():
            y = mx.nd.ROIPooling(data, mx.nd.array(ROIS), pooled_size=(2, 2),
                                 spatial_scale=1.0)
        y.backward(mx.nd.ones_like(y))
    want = numpy_path(x.astype(np.float32), np.array(ROIS, np.float32),
                      np.ones(y.shape, np.float32), (2, 2), 1.0)[1]
    np.testing.assert_allclose(data.grad.asnumpy(), 2 * want, rtol=1e-6)
    empty = mx.nd.ROIPooling(mx.nd.array(x), mx.nd.zeros((0, 5)), pooled_size=(2, 2),
                             spatial_scale=1.0)
    assert empty.shape == (0, 3, 2, 2)


@pytest.mark.parametrize('batch', [2, -1, 5])
def test_bad_batch_index_raises(batch):
    with pytest.raises(IndexError, match=r"ROIPooling: rois\[1\] names batch"):
        mx.nd.ROIPooling(mx.nd.ones((2, 1, 4, 4)),
                         mx.nd.array([[0, 0, 0, 1, 1], [batch, 0, 0, 1, 1]]),
                         pooled_size=(2, 2), spatial_scale=1.0).asnumpy()
