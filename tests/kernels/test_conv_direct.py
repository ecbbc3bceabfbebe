"""The AVX2 direct float32 convolution forward (mxcy/_conv_direct.h, _conv_direct.pxi)
against a NumPy reference (float64), over the geometries it takes: odd sizes, padding,
strides, dilation, groups, batch 1 (split by tiles or by filters) and batches, the 7×7
stem, filter counts that leave a part-filled tile of 4; plus req add and the fused clamp."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _conv, _fused
from tests.kernels.test_conv_packed import arrays

pytestmark = pytest.mark.skipif(not _conv.direct_conv_available(),
                                reason='the direct kernel needs AVX2+FMA (and not AVX-512)')

# (x shape, w shape, stride, pad, dilate, groups)
GEOMETRIES = [
    ((1, 3, 11, 13), (5, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),        # odd sizes, f % 4 = 1
    ((2, 8, 9, 7), (6, 8, 3, 3), (2, 2), (1, 1), (1, 1), 1),          # stride 2
    ((1, 6, 17, 15), (8, 3, 3, 3), (1, 2), (2, 1), (2, 3), 2),        # dilation, groups
    ((2, 8, 13, 10), (7, 8, 3, 3), (2, 3), (1, 2), (1, 1), 1),        # uneven strides/pad
    ((3, 3, 30, 30), (16, 3, 7, 7), (2, 2), (3, 3), (1, 1), 1),       # a 7×7 stem
    ((1, 4, 5, 5), (4, 4, 5, 5), (3, 3), (0, 0), (1, 1), 1),          # stride > kernel/2
    ((1, 16, 9, 9), (8, 16, 1, 1), (1, 1), (1, 1), (1, 1), 1),        # 1×1 with padding
    ((1, 64, 7, 7), (130, 64, 3, 3), (1, 1), (1, 1), (1, 1), 1),      # batch 1, by filters
    ((1, 16, 40, 38), (33, 16, 3, 3), (1, 1), (1, 1), (1, 1), 1),     # batch 1, by tiles
    ((16, 32, 7, 7), (33, 32, 3, 3), (1, 1), (1, 1), (1, 1), 1),      # batch 16
    ((5, 12, 14, 14), (20, 6, 3, 3), (2, 2), (1, 1), (1, 1), 2),      # batch, groups, s2
]


def conv_numpy(x, w, b, stride, pad, dilate, groups):
    """y = conv2d(x, w) + b in float64 NumPy (window by window)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, pad, dilate
    xp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    xp[:, :, ph:ph + h, pw:pw + wd] = x
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    fg = f // groups
    y = np.zeros((n, f, oh, ow))
    for g in range(groups):
        xg = xp[:, g * cg:(g + 1) * cg]
        wg = w[g * fg:(g + 1) * fg]
        for ki in range(kh):
            for kj in range(kw):
                win = xg[:, :, ki * dh:ki * dh + (oh - 1) * sh + 1:sh,
                         kj * dw:kj * dw + (ow - 1) * sw + 1:sw]
                y[:, g * fg:(g + 1) * fg] += np.einsum('ncij,fc->nfij', win, wg[:, :, ki, kj])
    if b is not None:
        y += b.astype(np.float64)[None, :, None, None]
    return y


def tolerance(w):
    """Float32 sums of K = cg·kh·kw products of unit normals."""
    return 2e-6 * np.sqrt(np.prod(w.shape[1:])) * 8


@pytest.mark.parametrize('geometry', GEOMETRIES)
def test_direct_forward_matches_numpy(geometry):
    x, w, b, args = arrays(geometry, 1)
    assert _conv.conv_fwd_takes_direct(x.shape, w.shape, **args)
    y = _conv.conv_fwd_np(x, w, b, **args)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, conv_numpy(x, w, b, **args), rtol=1e-4, atol=tolerance(w))


@pytest.mark.parametrize('geometry', GEOMETRIES[:4] + GEOMETRIES[7:9])
def test_direct_forward_req_add_without_bias(geometry):
    x, w, _, args = arrays(geometry, 2)
    y_ref = conv_numpy(x, w, None, **args)
    y0 = np.random.default_rng(3).standard_normal(y_ref.shape).astype(np.float32)
    y = _conv.conv_fwd_np(x, w, None, y0=y0, **args)
    np.testing.assert_allclose(y, y_ref + y0, rtol=1e-4, atol=tolerance(w))


def test_direct_equals_other_float32_path():
    """The direct path and im2col + BLAS agree to float32 rounding."""
    x, w, b, args = arrays(GEOMETRIES[8], 4)
    y = _conv.conv_fwd_np(x, w, b, **args)
    old = _conv.set_direct_conv(False)
    try:
        assert not _conv.conv_fwd_takes_direct(x.shape, w.shape, **args)
        y_blas = _conv.conv_fwd_np(x, w, b, **args)
    finally:
        _conv.set_direct_conv(old)
    np.testing.assert_allclose(y, y_blas, rtol=1e-4, atol=tolerance(w))


def test_paths_not_taken():
    """float64 stays on BLAS; 1×1 without padding keeps its GEMMs on the data."""
    assert not _conv.conv_fwd_takes_direct((1, 8, 9, 9), (4, 8, 3, 3), dtype=np.float64)
    assert not _conv.conv_fwd_takes_direct((1, 64, 9, 9), (32, 64, 1, 1))
    assert not _conv.conv_fwd_takes_direct((1, 2, 9, 9), (4, 2, 2, 2))        # K = 8
    # weights past L2 (a batch) or 4 MB (batch 1) stay on im2col + BLAS
    assert _conv.conv_fwd_takes_direct((16, 64, 14, 14), (64, 64, 3, 3), pad=(1, 1))
    assert not _conv.conv_fwd_takes_direct((16, 256, 14, 14), (256, 256, 3, 3), pad=(1, 1))
    assert _conv.conv_fwd_takes_direct((1, 256, 14, 14), (256, 256, 3, 3), pad=(1, 1))
    assert not _conv.conv_fwd_takes_direct((1, 512, 7, 7), (512, 512, 3, 3), pad=(1, 1))


@pytest.mark.parametrize('direct', [True, False], ids=['direct', 'blas'])
@pytest.mark.parametrize('lo,hi', [(0.0, np.inf), (0.0, 6.0), (-0.5, 0.25)])
@pytest.mark.parametrize('geometry', [GEOMETRIES[2], GEOMETRIES[7], GEOMETRIES[9]])
def test_fused_conv_clamp(geometry, lo, hi, direct):
    """_fused.conv_act: the clamp in the direct kernel's epilogue, or the separate pass
    after the other paths (they must not skip it)."""
    x, w, b, args = arrays(geometry, 5)
    ref = np.clip(conv_numpy(x, w, b, **args), lo, hi)
    y = mx.nd.zeros(ref.shape, dtype='float32')
    old = _conv.set_direct_conv(direct)
    try:
        _fused.conv_act(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), y, args['stride'],
                        args['pad'], args['dilate'], args['groups'], lo, hi)
        out = y.asnumpy()
    finally:
        _conv.set_direct_conv(old)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=tolerance(w))
    assert out.min() >= lo and out.max() <= hi


def test_direct_through_nd_convolution_parts():
    """mx.nd.Convolution at batch 16 and batch 1 (parts on the engine's workers)."""
    for geometry in (GEOMETRIES[9], GEOMETRIES[8], GEOMETRIES[7]):
        x, w, b, args = arrays(geometry, 6)
        k = w.shape[2:]
        y = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), kernel=k,
                              stride=args['stride'], pad=args['pad'], dilate=args['dilate'],
                              num_group=args['groups'], num_filter=w.shape[0])
        np.testing.assert_allclose(y.asnumpy(), conv_numpy(x, w, b, **args), rtol=1e-4,
                                   atol=tolerance(w))


def test_set_direct_conv_returns_old_value():
    old = _conv.set_direct_conv(False)
    try:
        assert _conv.set_direct_conv(False) is False
        assert _conv.set_direct_conv(True) is False
        assert _conv.set_direct_conv(True) is True
    finally:
        _conv.set_direct_conv(old)
