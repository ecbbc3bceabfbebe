"""The C kernels of mxcy._sampling through their operators (BilinearSampler,
SpatialTransformer, deformable convolutions, im2col/col2im) against plain NumPy
references written here from the operators' definitions: samples outside the image,
exact-integer grid points, stride/dilation/groups, req 'add', float32/float64/float16."""
import numpy as np
import pytest

import mxcy as mx

RNG = np.random.default_rng(13)


def _grads(f, arrays, dtype, head, req='write'):
    """(output, input gradients) of f on mx arrays made from `arrays` under autograd."""
    nds = [mx.nd.array(a, dtype=dtype) for a in arrays]
    for a in nds:
        a.attach_grad(grad_req=req)
        if req == 'add':
            a.grad[:] = 1.0
    with mx.autograd.record():
        y = f(*nds)
    y.backward(mx.nd.array(head, dtype=dtype))
    return y.asnumpy(), [a.grad.asnumpy() for a in nds]


# ---------------------------------------------------------------- bilinear sampling
def _bilinear_ref(data, grid, dy):
    """(out, d data, d grid) of bilinear sampling at normalised grid points, in float64."""
    n, c, h, w = data.shape
    x = (grid[:, 0] + 1) * (w - 1) / 2
    y = (grid[:, 1] + 1) * (h - 1) / 2
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    out = np.zeros(dy.shape)
    dd, dg = np.zeros(data.shape), np.zeros(grid.shape)
    for b, i, j in np.ndindex(n, *grid.shape[2:]):
        fx, fy = x[b, i, j] - x0[b, i, j], y[b, i, j] - y0[b, i, j]
        for oy, ox in ((0, 0), (0, 1), (1, 0), (1, 1)):
            yy, xx = y0[b, i, j] + oy, x0[b, i, j] + ox
            if not (0 <= yy < h and 0 <= xx < w):
                continue
            wx, wy = (fx if ox else 1 - fx), (fy if oy else 1 - fy)
            v = data[b, :, yy, xx]
            out[b, :, i, j] += v * wx * wy
            dd[b, :, yy, xx] += dy[b, :, i, j] * wx * wy
            g = (dy[b, :, i, j] * v).sum()
            dg[b, 0, i, j] += g * (1 if ox else -1) * wy * (w - 1) / 2
            dg[b, 1, i, j] += g * (1 if oy else -1) * wx * (h - 1) / 2
    return out, dd, dg


def _grid_with_edges(n, h, w):
    """Grid points inside, outside (beyond ±1), on exact pixel centres and on the borders."""
    g = RNG.uniform(-1.4, 1.4, (n, 2, h, w))
    g[:, 0, 0, :] = np.linspace(-1, 1, w)               # exact integer x positions
    g[:, 1, 0, :] = -1                                  # top border row
    g[:, :, 1, 0] = 1.0                                 # bottom-right corner exactly
    g[:, :, 1, 1] = (-1.0 - 2.0 / (w - 1), 0.0)         # exactly one pixel left of the image
    return g


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_bilinear_sampler_matches_reference(dtype):
    data = RNG.standard_normal((2, 3, 5, 6))
    grid = _grid_with_edges(2, 4, 7)
    head = RNG.standard_normal((2, 3, 4, 7))
    y, (dd, dg) = _grads(mx.nd.BilinearSampler, [data, grid], dtype, head)
    ref = _bilinear_ref(data, grid, head)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == 'float32' else dict(rtol=1e-12, atol=1e-12)
    for got, want in zip((y, dd, dg), ref):
        np.testing.assert_allclose(got, want, **tol)


def test_bilinear_sampler_grad_req_add_and_float16():
    data = RNG.standard_normal((1, 2, 4, 4))
    grid = _grid_with_edges(1, 3, 3)
    head = RNG.standard_normal((1, 2, 3, 3))
    _, ref_dd, ref_dg = _bilinear_ref(data, grid, head)
    _, (dd, dg) = _grads(mx.nd.BilinearSampler, [data, grid], 'float64', head, req='add')
    np.testing.assert_allclose(dd, ref_dd + 1, rtol=1e-12)
    np.testing.assert_allclose(dg, ref_dg + 1, rtol=1e-12)
    y, (dd, _) = _grads(mx.nd.BilinearSampler, [data, grid], 'float16', head)
    assert y.dtype == np.float16 and dd.dtype == np.float16
    np.testing.assert_allclose(dd, ref_dd, rtol=2e-2, atol=2e-2)


def test_spatial_transformer_matches_reference():
    data = RNG.standard_normal((2, 3, 5, 6))
    loc = np.array([[0.9, 0.2, 0.1, -0.1, 1.3, 0.3], [1.5, 0, -0.6, 0.05, 0.7, 0.0]])
    head = RNG.standard_normal((2, 3, 4, 5))
    y, (dd, dloc) = _grads(lambda d, t: mx.nd.SpatialTransformer(
        d, t, target_shape=(4, 5), transform_type='affine', sampler_type='bilinear'),
        [data, loc], 'float64', head)
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 5), indexing='ij')
    base = np.stack([xs.ravel(), ys.ravel(), np.ones(20)])
    grid = (loc.reshape(2, 2, 3) @ base).reshape(2, 2, 4, 5)
    out, ref_dd, ref_dg = _bilinear_ref(data, grid, head)
    np.testing.assert_allclose(y, out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dd, ref_dd, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dloc, (ref_dg.reshape(2, 2, 20) @ base.T).reshape(2, 6),
                               rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- im2col / col2im
def _im2col_ref(x, kernel, stride, pad, dilate):
    n, c, h, w = x.shape
    oh = (h + 2 * pad[0] - dilate[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (w + 2 * pad[1] - dilate[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    cols = np.zeros((n, c, kernel[0], kernel[1], oh, ow))
    for i, j, y, z in np.ndindex(kernel[0], kernel[1], oh, ow):
        r = y * stride[0] - pad[0] + i * dilate[0]
        q = z * stride[1] - pad[1] + j * dilate[1]
        if 0 <= r < h and 0 <= q < w:
            cols[:, :, i, j, y, z] = x[:, :, r, q]
    return cols.reshape(n, c * kernel[0] * kernel[1], oh * ow)


@pytest.mark.parametrize('geo', [((3, 3), (1, 1), (1, 1), (1, 1)),
                                 ((2, 3), (2, 1), (0, 2), (1, 2)),
                                 ((3, 2), (3, 2), (2, 1), (2, 1))])
def test_im2col_col2im_match_reference(geo):
    kernel, stride, pad, dilate = geo
    kw = dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate)
    x = RNG.standard_normal((2, 3, 7, 8))
    want = _im2col_ref(x, *geo)
    head = RNG.standard_normal(want.shape)
    cols, (dx,) = _grads(lambda a: mx.nd.im2col(a, **kw), [x], 'float32', head, req='add')
    np.testing.assert_allclose(cols, want, rtol=1e-6)
    # col2im is im2col's adjoint: <im2col(x), head> = <x, col2im(head)>
    back = mx.nd.col2im(mx.nd.array(head), output_size=(7, 8), **kw).asnumpy()
    np.testing.assert_allclose((want * head).sum(), (x * back).sum(), rtol=1e-5)
    np.testing.assert_allclose(dx, back + 1, rtol=1e-5, atol=1e-5)
    y, (dcols,) = _grads(lambda a: mx.nd.col2im(a, output_size=(7, 8), **kw), [head],
                         'float64', x)
    np.testing.assert_allclose(dcols, want, rtol=1e-12)


# ---------------------------------------------------------------- deformable convolution
def _deform_cols_ref(x, off, mask, kernel, stride, pad, dilate, dg, clamp):
    """(N, C, K, OH, OW) samples of MXNet's deformable im2col, pixel by pixel."""
    n, c, h, w = x.shape
    oh, ow = off.shape[2:]
    kh, kw = kernel
    cols = np.zeros((n, c, kh * kw, oh, ow))
    for b, ch, i, j, y, z in np.ndindex(n, c, kh, kw, oh, ow):
        g, k = ch // (c // dg), i * kw + j
        hp = y * stride[0] - pad[0] + i * dilate[0] + off[b, g * 2 * kh * kw + 2 * k, y, z]
        wp = z * stride[1] - pad[1] + j * dilate[1] + off[b, g * 2 * kh * kw + 2 * k + 1, y, z]
        if clamp:
            if not (0 <= hp < h and 0 <= wp < w):
                continue
            hp, wp = min(hp, h - 1), min(wp, w - 1)
        elif not (-1 < hp < h and -1 < wp < w):
            continue
        h0, w0 = int(np.floor(hp)), int(np.floor(wp))
        v = 0.0
        for oy, ox in ((0, 0), (0, 1), (1, 0), (1, 1)):
            if 0 <= h0 + oy < h and 0 <= w0 + ox < w:
                fy = hp - h0 if oy else 1 - (hp - h0)
                fx = wp - w0 if ox else 1 - (wp - w0)
                v += x[b, ch, h0 + oy, w0 + ox] * fy * fx
        cols[b, ch, k, y, z] = v * (1 if mask is None else mask[b, g * kh * kw + k, y, z])
    return cols


@pytest.mark.parametrize('modulated', [False, True])
@pytest.mark.parametrize('geo', [dict(stride=(1, 1), pad=(1, 1), dilate=(1, 1), g=1, dg=1),
                                 dict(stride=(2, 1), pad=(2, 0), dilate=(2, 1), g=2, dg=2)])
def test_deformable_forward_matches_reference(modulated, geo):
    x = RNG.standard_normal((2, 4, 6, 5))
    kernel, dg, g = (3, 3), geo['dg'], geo['g']
    oh = (6 + 2 * geo['pad'][0] - geo['dilate'][0] * 2 - 1) // geo['stride'][0] + 1
    ow = (5 + 2 * geo['pad'][1] - geo['dilate'][1] * 2 - 1) // geo['stride'][1] + 1
    off = RNG.uniform(-2.5, 2.5, (2, 2 * dg * 9, oh, ow))     # many taps fall outside
    off[:, :, 0, 0] = np.round(off[:, :, 0, 0])               # exact integer positions
    off[0, 0, 0, 1] = 10.0                                    # far outside
    mask = RNG.uniform(0, 1, (2, dg * 9, oh, ow)) if modulated else None
    weight = RNG.standard_normal((4, 4 // g, 3, 3))
    bias = RNG.standard_normal(4)
    kw = dict(kernel=kernel, stride=geo['stride'], pad=geo['pad'], dilate=geo['dilate'],
              num_filter=4, num_group=g, num_deformable_group=dg)
    op = mx.nd.contrib.ModulatedDeformableConvolution if modulated else \
        mx.nd.contrib.DeformableConvolution
    args = [x, off] + ([mask] if modulated else []) + [weight, bias]
    y = op(*[mx.nd.array(a, dtype='float64') for a in args], **kw).asnumpy()
    cols = _deform_cols_ref(x, off, mask, kernel, geo['stride'], geo['pad'], geo['dilate'],
                            dg, clamp=not modulated)
    cols = cols.reshape(2, g, -1, oh * ow)
    want = np.einsum('gfk,ngkp->ngfp', weight.reshape(g, 4 // g, -1), cols)
    want = want.reshape(2, 4, oh, ow) + bias.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('modulated', [False, True])
def test_deformable_gradients_add_and_adjoint(modulated):
    """d data is the adjoint of the sampling (exact, offsets fixed); req 'add' adds."""
    x = RNG.standard_normal((1, 2, 5, 5))
    off = RNG.uniform(-1.8, 1.8, (1, 18, 5, 5))
    mask = [RNG.uniform(0, 1, (1, 9, 5, 5))] if modulated else []
    weight, head = RNG.standard_normal((3, 2, 3, 3)), RNG.standard_normal((1, 3, 5, 5))
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=3, no_bias=True)
    op = mx.nd.contrib.ModulatedDeformableConvolution if modulated else \
        mx.nd.contrib.DeformableConvolution
    args = [x, off] + mask + [weight]
    _, grads = _grads(lambda *a: op(*a, **kw), args, 'float64', head)
    _, added = _grads(lambda *a: op(*a, **kw), args, 'float64', head, req='add')
    for g, a in zip(grads, added):
        np.testing.assert_allclose(a, g + 1, rtol=1e-12, atol=1e-12)
    # <y(x), head> is linear in x: <d data, x> equals it (no bias)
    y = op(*[mx.nd.array(a, dtype='float64') for a in args], **kw).asnumpy()
    np.testing.assert_allclose((grads[0] * x).sum(), (y * head).sum(), rtol=1e-10)
    # d weight: <d weight, weight> equals it too
    np.testing.assert_allclose((grads[-1] * weight).sum(), (y * head).sum(), rtol=1e-10)
