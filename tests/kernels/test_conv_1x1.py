"""1×1 convolutions as GEMMs on the NCHW data (mxcy/_conv_1x1.pxi) and the row bands that
split a single big image across workers (mxcy/_conv.pyx), against the NumPy reference of
mxcy/operator/_conv_numpy.py, in float32 and float64, plus finite differences."""
import numpy as np
import pytest

from mxcy import _conv
from mxcy.operator import _conv_numpy as ref
from mxcy.test_utils import check_op_backward

# (x shape, filters, stride, groups): odd sizes, channel counts off the SIMD width, stride 2
# on odd planes, groups, batch 1 and batches cut into image parts (> 2M multiply-adds)
POINTWISE = [
    ((2, 13, 7, 9), 11, (1, 1), 1),
    ((3, 12, 9, 7), 10, (2, 2), 1),          # stride 2 over odd sizes: a gather
    ((2, 12, 8, 11), 9, (1, 3), 3),          # uneven strides, three groups
    ((1, 72, 28, 28), 40, (1, 1), 1),        # batch 1 above the split size: row bands
    ((1, 64, 29, 27), 70, (2, 2), 2),        # row bands of a strided, grouped 1×1
    ((6, 40, 21, 21), 33, (1, 1), 1),        # several images per part
    ((5, 36, 23, 17), 24, (2, 2), 1),        # small planes of several images: im2col chunks
    ((3, 20, 41, 39), 12, (2, 2), 1),        # strided planes of ≥ 256 outputs: the gather
    ((4, 50, 1, 1), 30, (1, 1), 1),          # a classifier's 1×1 planes
    ((1, 512, 7, 7), 100, (1, 1), 1),        # batch 1, late layer: halves of the filters
]


def arrays(xs, f, groups, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal((f, xs[1] // groups, 1, 1)).astype(dtype)
    b = rng.standard_normal(f).astype(dtype)
    return x, w, b


def tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('xs,f,stride,groups', POINTWISE)
def test_pointwise_forward_matches_numpy(xs, f, stride, groups, dtype):
    x, w, b = arrays(xs, f, groups, dtype, 1)
    y = _conv.conv_fwd_np(x, w, b, stride=stride, groups=groups)
    expect = ref.conv_forward(x.astype(np.float64), w.astype(np.float64),
                              b.astype(np.float64), stride, (0, 0), (1, 1), groups)
    np.testing.assert_allclose(y, expect, **tol(dtype))
    # req add: onto what y held; no bias
    y0 = np.random.default_rng(2).standard_normal(y.shape).astype(dtype)
    y2 = _conv.conv_fwd_np(x, w, None, stride=stride, groups=groups, y0=y0)
    np.testing.assert_allclose(y2, y0 + expect - b.astype(np.float64)[None, :, None, None],
                               **tol(dtype))


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('xs,f,stride,groups', POINTWISE)
def test_pointwise_backward_matches_numpy(xs, f, stride, groups, dtype):
    x, w, b = arrays(xs, f, groups, dtype, 3)
    oh, ow = _conv.conv_geometry(xs, w.shape, stride, (0, 0), (1, 1))
    dy = np.random.default_rng(4).standard_normal((xs[0], f, oh, ow)).astype(dtype)
    dx, dw, db = _conv.conv_bwd_np(x, w, dy, True, stride=stride, groups=groups)
    x64, w64, dy64 = (t.astype(np.float64) for t in (x, w, dy))
    np.testing.assert_allclose(dx, ref.conv_backward_data(dy64, w64, xs, stride, (0, 0),
                                                          (1, 1), groups), **tol(dtype))
    np.testing.assert_allclose(dw, ref.conv_backward_weight(x64, dy64, (1, 1), stride,
                                                            (0, 0), (1, 1), groups),
                               rtol=tol(dtype)['rtol'], atol=tol(dtype)['atol'] * 10)
    np.testing.assert_allclose(db, dy64.sum(axis=(0, 2, 3)), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize('stride,groups', [((1, 1), 1), ((2, 2), 2), ((2, 1), 1)])
def test_pointwise_gradients_match_finite_differences(stride, groups):
    rng = np.random.default_rng(5)
    check_op_backward('Convolution', dict(kernel=(1, 1), stride=stride, num_filter=6,
                                          num_group=groups),
                      [rng.standard_normal((2, 4, 5, 7)),
                       rng.standard_normal((6, 4 // groups, 1, 1)), rng.standard_normal(6)])


# 3×3 and larger at batch 1 above the split size: output row bands (im2col of a band,
# one GEMM straight into y) or halves of the filters; stride 2 with padding, dilation,
# groups, odd sizes
BANDS = [
    ((1, 24, 31, 29), (20, 24, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 24, 65, 63), (36, 12, 3, 3), (2, 2), (1, 1), (1, 1), 2),
    ((1, 16, 40, 37), (18, 16, 3, 3), (1, 1), (2, 2), (2, 2), 1),
    ((1, 3, 67, 61), (64, 3, 7, 7), (2, 2), (3, 3), (1, 1), 1),    # a ResNet stem
    # late layers (planes under 2 bands of 256): halves of the filters, each with its columns
    ((1, 256, 7, 7), (65, 256, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 128, 15, 13), (40, 128, 3, 3), (2, 2), (1, 1), (1, 1), 1),
]


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('xs,ws,stride,pad,dilate,groups', BANDS)
def test_one_image_in_parts_matches_numpy(xs, ws, stride, pad, dilate, groups, dtype):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    oh, ow = _conv.conv_geometry(xs, ws, stride, pad, dilate)
    assert ws[0] * ws[1] * ws[2] * ws[3] * oh * ow >= 1 << 21     # really split
    old = _conv.set_packed_conv(False)
    try:
        y = _conv.conv_fwd_np(x, w, b, stride=stride, pad=pad, dilate=dilate, groups=groups)
    finally:
        _conv.set_packed_conv(old)
    expect = ref.conv_forward(x.astype(np.float64), w.astype(np.float64),
                              b.astype(np.float64), stride, pad, dilate, groups)
    np.testing.assert_allclose(y, expect, rtol=1e-4 if dtype == np.float32 else 1e-10,
                               atol=1e-3 if dtype == np.float32 else 1e-10)


@pytest.mark.parametrize('stride,groups', [((1, 1), 1), ((2, 2), 2)])
def test_pointwise_deconvolution_is_the_data_gradient_and_differentiates(stride, groups):
    """Deconvolution runs the 1×1 data-gradient GEMMs forward and the 1×1 forward GEMMs
    for its own data gradient."""
    import mxcy as mx
    from mxcy.test_utils import check_op_forward
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((2, 6, 4, 5)), rng.standard_normal((6, 4 // groups, 1, 1))
    params = dict(kernel=(1, 1), stride=stride, num_filter=4, num_group=groups)
    out = mx.sym.Deconvolution(mx.sym.Variable('x'), **params).infer_shape(
        x=x.shape)[1][0]
    expect = ref.conv_backward_data(x, w, out, stride, (0, 0), (1, 1), groups)
    check_op_forward('Deconvolution', params, [x, w], [expect])
    check_op_backward('Deconvolution', params, [x, w])
