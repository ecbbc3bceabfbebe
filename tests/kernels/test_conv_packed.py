"""The float32 convolution through the packed/indirect GEMM (mxcy/_conv_packed.pxi) against
the im2col + BLAS path (float32, and float64 as the reference), over the geometries it must
cover."""
import numpy as np
import pytest

from mxcy import _conv

# (x shape, w shape, stride, pad, dilate, groups); every K = cg·kh·kw ≥ 64 takes the packed path
GEOMETRIES = [
    ((6, 20, 12, 12), (50, 20, 5, 5), (1, 1), (0, 0), (1, 1), 1),    # LeNet's second layer
    ((3, 16, 9, 11), (12, 16, 3, 3), (1, 1), (1, 1), (1, 1), 1),     # padding
    ((2, 8, 13, 10), (7, 8, 3, 3), (2, 3), (1, 2), (1, 1), 1),       # strides, uneven pad
    ((2, 8, 12, 12), (6, 8, 3, 3), (1, 1), (2, 2), (2, 2), 1),       # dilation
    ((3, 32, 7, 7), (40, 16, 2, 2), (1, 1), (0, 1), (1, 1), 2),      # groups
    ((2, 72, 5, 5), (33, 72, 1, 1), (1, 1), (0, 0), (1, 1), 1),      # 1×1, odd filter count
    ((17, 16, 10, 10), (9, 16, 3, 3), (1, 1), (1, 1), (1, 1), 1),    # many images (parts)
]


def conv_ref(x, w, b, stride, pad, dilate, groups):
    """The float64 convolution: im2col + BLAS (the packed path is float32 only), which
    tests/operator/test_conv.py checks against a direct NumPy loop."""
    return _conv.conv_fwd_np(x.astype(np.float64), w.astype(np.float64),
                             b.astype(np.float64), stride=stride, pad=pad, dilate=dilate,
                             groups=groups)


@pytest.fixture(autouse=True, params=[2, 1], ids=['packed_on_avx512', 'packed_on_avx2'])
def packed_isa(request):
    """Run each test with the packed path allowed from AVX-512 (the default) and from AVX2
    (off by default there: slower than BLAS, bench/RESULTS.md), so an AVX2 machine checks
    the AVX2 kernel too."""
    old = _conv.set_packed_conv_isa(request.param)
    old_direct = _conv.set_direct_conv(False)     # the AVX2 forward would take these first
    yield request.param
    _conv.set_packed_conv_isa(old)
    _conv.set_direct_conv(old_direct)


@pytest.fixture
def blas_path():
    """Run the body with the packed path off; restored afterwards."""
    old = _conv.set_packed_conv(False)
    yield
    _conv.set_packed_conv(old)


def arrays(geometry, seed):
    xs, ws, stride, pad, dilate, groups = geometry
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    return x, w, b, dict(stride=stride, pad=pad, dilate=dilate, groups=groups)


@pytest.mark.parametrize('geometry', GEOMETRIES)
def test_packed_forward_matches_reference(geometry):
    x, w, b, args = arrays(geometry, 1)
    y = _conv.conv_fwd_np(x, w, b, **args)
    ref = conv_ref(x, w, b, args['stride'], args['pad'], args['dilate'], args['groups'])
    assert y.shape == ref.shape
    np.testing.assert_allclose(y, ref, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize('geometry', GEOMETRIES)
def test_packed_backward_matches_blas_path(geometry):
    x, w, b, args = arrays(geometry, 2)
    y = _conv.conv_fwd_np(x, w, b, **args)
    dy = np.random.default_rng(3).standard_normal(y.shape).astype(np.float32)
    dx, dw, db = _conv.conv_bwd_np(x, w, dy, True, **args)
    old = _conv.set_packed_conv(False)
    try:
        dx_ref, dw_ref, db_ref = _conv.conv_bwd_np(x, w, dy, True, **args)
    finally:
        _conv.set_packed_conv(old)
    scale = np.abs(dw_ref).max()
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-4, atol=1e-4 * np.abs(dx_ref).max())
    np.testing.assert_allclose(dw, dw_ref, rtol=1e-4, atol=1e-4 * scale)
    np.testing.assert_allclose(db, db_ref, rtol=1e-5, atol=1e-5 * np.abs(db_ref).max())


def test_packed_and_blas_forward_agree_without_bias(blas_path):
    x, w, _, args = arrays(GEOMETRIES[1], 4)
    y_blas = _conv.conv_fwd_np(x, w, None, **args)
    _conv.set_packed_conv(True)
    y_packed = _conv.conv_fwd_np(x, w, None, **args)
    np.testing.assert_allclose(y_packed, y_blas, rtol=1e-4, atol=1e-4)


def test_packed_weight_gradient_is_finite_difference_correct():
    """dW from the packed path against a float64 directional derivative of Σ y·dy."""
    x, w, b, args = arrays(GEOMETRIES[2], 5)
    y = _conv.conv_fwd_np(x, w, b, **args)
    dy = np.random.default_rng(6).standard_normal(y.shape)
    _, dw, _ = _conv.conv_bwd_np(x, w, dy.astype(np.float32), True, **args)
    direction = np.random.default_rng(7).standard_normal(w.shape)
    eps = 1e-3
    ref = args['stride'], args['pad'], args['dilate'], args['groups']
    plus = (conv_ref(x, w + eps * direction, b, *ref) * dy).sum()
    minus = (conv_ref(x, w - eps * direction, b, *ref) * dy).sum()
    np.testing.assert_allclose((dw * direction).sum(), (plus - minus) / (2 * eps), rtol=1e-3)
