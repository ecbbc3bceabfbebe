"""The depthwise convolution kernels (mxcy/_conv_depthwise.pxi, _conv_dw.h): num_group ==
channels == num_filter, forward, dx and dW against the NumPy reference
(mxcy/operator/_conv_numpy.py) over the geometries they must cover, req 'add', overlapping
arrays through the engine, and float64 finite differences through the operator."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _conv
from mxcy.operator import _conv_numpy as ref
from mxcy.test_utils import check_op_backward

# (x shape, kernel, stride, pad, dilate)
GEOMETRIES = [
    ((2, 3, 7, 9), (3, 3), (1, 1), (1, 1), (1, 1)),        # MobileNet's 3×3, same padding
    ((2, 4, 8, 8), (3, 3), (2, 2), (1, 1), (1, 1)),        # stride 2, even width
    ((2, 4, 9, 11), (3, 3), (2, 2), (1, 1), (1, 1)),       # stride 2, odd width
    ((1, 3, 10, 13), (3, 3), (3, 3), (0, 2), (1, 1)),      # stride 3, uneven pad
    ((2, 5, 6, 11), (2, 3), (1, 2), (0, 1), (2, 1)),       # rectangular, dilation
    ((1, 2, 12, 12), (3, 3), (1, 1), (2, 2), (2, 2)),      # dilated 3×3
    ((2, 3, 5, 5), (9, 9), (1, 1), (4, 4), (1, 1)),        # window over the whole image
    ((1, 2, 4, 4), (5, 5), (1, 1), (1, 1), (1, 1)),        # window bigger than the image
    ((2, 3, 1, 17), (1, 5), (1, 2), (0, 2), (1, 1)),       # 1-D (H = 1)
    ((3, 16, 20, 20), (3, 3), (1, 1), (1, 1), (1, 1)),     # big enough to be split in parts
    # stride 1 on small planes: the flattened-plane loops (mxcy_dw_fwd_flat)
    ((2, 5, 14, 14), (3, 3), (1, 1), (1, 1), (1, 1)),      # MobileNet's 14×14
    ((1, 3, 7, 7), (3, 3), (1, 1), (1, 1), (1, 1)),        # and 7×7
    ((2, 3, 9, 13), (4, 4), (1, 1), (2, 1), (1, 1)),       # even window (3 + 1 taps a row)
    ((1, 2, 11, 8), (5, 2), (1, 1), (0, 0), (1, 1)),       # no padding, 2 taps a row
    ((1, 2, 38, 38), (3, 3), (1, 1), (1, 1), (1, 1)),      # padded plane 1600: the limit
    ((1, 2, 39, 39), (3, 3), (1, 1), (1, 1), (1, 1)),      # 1681: one pass a row (3x3s1)
    ((2, 3, 45, 58), (3, 3), (1, 1), (1, 1), (1, 1)),      # MobileNet's 56-wide kind
    ((1, 2, 420, 2), (3, 3), (1, 1), (1, 1), (1, 1)),      # two columns: edges only
    ((1, 2, 41, 40), (3, 3), (1, 1), (1, 0), (1, 1)),      # no column pad: row by row
    # stride 2: the parity planes (mxcy_dw_fwd_s2)
    ((2, 3, 14, 14), (3, 3), (2, 2), (1, 1), (1, 1)),      # MobileNet's 14 -> 7
    ((1, 3, 7, 7), (3, 3), (2, 2), (1, 1), (1, 1)),        # odd plane
    ((1, 2, 8, 13), (3, 3), (2, 2), (0, 1), (1, 1)),       # no row padding, odd width
    ((1, 2, 9, 10), (5, 4), (2, 2), (2, 3), (1, 1)),       # 5×4 window, odd column pad
    ((1, 2, 6, 6), (2, 2), (2, 2), (0, 0), (1, 1)),        # 2×2 window
    ((1, 2, 5, 9), (1, 1), (2, 2), (0, 0), (1, 1)),        # 1×1 at stride 2
    ((1, 2, 70, 66), (3, 3), (2, 2), (1, 1), (1, 1)),      # parity planes on the heap
]


def _data(shape, kernel, dtype, seed=0):
    rng = np.random.default_rng(seed)
    c = shape[1]
    return (rng.standard_normal(shape).astype(dtype),
            rng.standard_normal((c, 1) + kernel).astype(dtype),
            rng.standard_normal(c).astype(dtype))


@pytest.mark.parametrize('dtype,tol', [(np.float32, 1e-4), (np.float64, 1e-12)])
@pytest.mark.parametrize('shape,kernel,stride,pad,dilate', GEOMETRIES)
def test_depthwise_matches_numpy_reference(shape, kernel, stride, pad, dilate, dtype, tol):
    x, w, b = _data(shape, kernel, dtype)
    c = shape[1]
    y = _conv.conv_fwd_np(x, w, b, stride, pad, dilate, c)
    np.testing.assert_allclose(y, ref.conv_forward(x, w, b, stride, pad, dilate, c),
                               rtol=tol, atol=tol)
    dy = np.random.default_rng(1).standard_normal(y.shape).astype(dtype)
    dx, dw, db = _conv.conv_bwd_np(x, w, dy, True, stride, pad, dilate, c)
    np.testing.assert_allclose(dx, ref.conv_backward_data(dy, w, x.shape, stride, pad,
                                                          dilate, c), rtol=tol, atol=tol)
    np.testing.assert_allclose(dw, ref.conv_backward_weight(x, dy, kernel, stride, pad,
                                                            dilate, c),
                               rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(db, dy.sum(axis=(0, 2, 3)), rtol=tol, atol=tol * 10)


def test_dx_and_dw_each_alone():
    x, w, _ = _data((2, 4, 9, 10), (3, 3), np.float64)
    geometry = ((2, 2), (1, 1), (1, 1), 4)
    dy = np.random.default_rng(2).standard_normal((2, 4, 5, 5))
    dx, _, _ = _conv.conv_bwd_np(x, w, dy, False, *geometry, req_x=1, req_w=0)
    _, dw, _ = _conv.conv_bwd_np(x, w, dy, False, *geometry, req_x=0, req_w=1)
    np.testing.assert_allclose(dx, ref.conv_backward_data(dy, w, x.shape, *geometry),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dw, ref.conv_backward_weight(x, dy, (3, 3), *geometry),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('stride,size', [((1, 1), 10), ((2, 2), 10), ((1, 1), 44)])
def test_req_add_through_the_engine(stride, size):
    xn, wn, bn = _data((2, 6, size, size), (3, 3), np.float32)
    x, w, b = mx.nd.array(xn), mx.nd.array(wn), mx.nd.array(bn)
    geometry = (stride, (1, 1), (1, 1), 6)
    yn = ref.conv_forward(xn, wn, bn, *geometry)
    y0 = np.random.default_rng(3).standard_normal(yn.shape).astype(np.float32)
    y = mx.nd.array(y0)
    _conv.conv_forward(x, w, b, y, *geometry, req='add')
    np.testing.assert_allclose(y.asnumpy(), y0 + yn, rtol=1e-5, atol=1e-5)
    dyn = np.random.default_rng(4).standard_normal(yn.shape).astype(np.float32)
    dx0, dw0 = np.ones(xn.shape, np.float32), np.ones(wn.shape, np.float32)
    dx, dw = mx.nd.array(dx0), mx.nd.array(dw0)
    _conv.conv_backward(x, w, mx.nd.array(dyn), dx, dw, None, *geometry, 'add', 'add', 'null')
    np.testing.assert_allclose(dx.asnumpy(), dx0 + ref.conv_backward_data(
        dyn, wn, xn.shape, *geometry), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw.asnumpy(), dw0 + ref.conv_backward_weight(
        xn, dyn, (3, 3), *geometry), rtol=1e-4, atol=1e-4)


def test_output_overlapping_the_input_reads_the_old_input():
    """y written over x's own memory (one chunk, shifted views): the kernel must see x as
    it was before the op, as NumPy would."""
    rng = np.random.default_rng(5)
    base = mx.nd.array(rng.standard_normal((3, 4, 6, 6)).astype(np.float32))
    x, y = base[0:2], base[1:3]
    xn, wn = x.asnumpy(), rng.standard_normal((4, 1, 3, 3)).astype(np.float32)
    _conv.conv_forward(x, mx.nd.array(wn), None, y, (1, 1), (1, 1), (1, 1), 4)
    np.testing.assert_allclose(y.asnumpy(), ref.conv_forward(xn, wn, None, (1, 1), (1, 1),
                                                             (1, 1), 4), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('params', [
    {'kernel': (3, 3), 'pad': (1, 1)},
    {'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1), 'no_bias': True},
    {'kernel': (2, 3), 'stride': (1, 2), 'dilate': (2, 1)},
])
def test_gradients_by_finite_differences(params):
    rng = np.random.default_rng(6)
    c = 3
    params = dict(params, num_filter=c, num_group=c)
    inputs = [rng.standard_normal((2, c, 6, 7)), rng.standard_normal((c, 1) + params['kernel'])]
    if not params.get('no_bias'):
        inputs.append(rng.standard_normal(c))
    check_op_backward('Convolution', params, inputs, rtol=1e-6, atol=1e-8)


def test_wide_window_falls_back_to_the_gemm_path():
    """Windows wider than the depthwise loops' tables (64 columns) take im2col + GEMM."""
    x, w, b = _data((1, 2, 3, 70), (1, 65), np.float64)
    y = _conv.conv_fwd_np(x, w, b, (1, 1), (0, 0), (1, 1), 2)
    np.testing.assert_allclose(y, ref.conv_forward(x, w, b, (1, 1), (0, 0), (1, 1), 2),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('params', [
    {'kernel': (3, 3), 'pad': (1, 1), 'no_bias': False},
    {'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1), 'adj': (1, 1), 'no_bias': True},
])
def test_depthwise_deconvolution_gradients(params):
    """Deconvolution with num_group == channels == num_filter runs the depthwise kernels
    with the roles of data and output swapped."""
    rng = np.random.default_rng(8)
    c = 3
    params = dict(params, num_filter=c, num_group=c)
    inputs = [rng.standard_normal((2, c, 4, 5)), rng.standard_normal((c, 1) + params['kernel'])]
    if not params['no_bias']:
        inputs.append(rng.standard_normal(c))
    check_op_backward('Deconvolution', params, inputs, rtol=1e-6, atol=1e-8)
