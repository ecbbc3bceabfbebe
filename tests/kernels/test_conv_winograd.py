"""Float32 3×3 stride-1 convolutions through Winograd F(2×2, 3×3) (mxcy/_conv_winograd.pxi)
against the float64 im2col path and the float32 one, over the geometries it takes: odd
and even planes (partial tiles), every padding, one image and many (split in parts),
accumulation into the output (req add), bias or none."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _conv

# (x shape, filters, pad); all have ≥ 32 channels, ≥ 64 filters and ≥ 64 tiles
GEOMETRIES = [
    ((1, 32, 16, 16), 64, (1, 1)),      # even plane, one image
    ((2, 32, 15, 13), 64, (1, 1)),      # odd planes: the last tile row and column are half
    ((3, 40, 12, 17), 64, (0, 0)),      # no padding: 10 × 15 outputs, half tiles at one edge
    ((2, 32, 11, 12), 72, (2, 1)),      # wider padding, uneven between the axes
    ((1, 32, 40, 40), 64, (1, 1)),      # one big image: split over the workers
    ((9, 48, 10, 9), 64, (1, 0)),       # many images: parts by tile rows across images
    ((4, 32, 7, 7), 512, (1, 1)),       # many filters: blocks of one tile row
]


def reference(x, w, b, pad):
    return _conv.conv_fwd_np(x.astype(np.float64), w.astype(np.float64),
                             None if b is None else b.astype(np.float64), pad=pad)


def arrays(shape, f, seed, bias=True):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((f, shape[1], 3, 3)).astype(np.float32)
    b = rng.standard_normal(f).astype(np.float32) if bias else None
    return x, w, b


def close(got, ref):
    """Within float32 rounding of the sums: a few ulp of the largest magnitude."""
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-6 * np.abs(ref).max())


@pytest.mark.parametrize('shape,f,pad', GEOMETRIES)
def test_winograd_matches_the_float64_convolution(shape, f, pad):
    x, w, b = arrays(shape, f, seed=sum(shape) + f)
    got = _conv.conv_fwd_np(x, w, b, pad=pad)
    close(got, reference(x, w, b, pad))
    old = _conv.set_winograd(False)
    try:
        im2col = _conv.conv_fwd_np(x, w, b, pad=pad)
    finally:
        _conv.set_winograd(old)
    close(got, im2col)


@pytest.mark.parametrize('shape,f,pad', GEOMETRIES[1:3])
def test_winograd_adds_into_the_output_and_runs_without_bias(shape, f, pad):
    x, w, _ = arrays(shape, f, seed=5, bias=False)
    y0 = np.random.default_rng(6).standard_normal(
        (shape[0], f) + reference(x, w, None, pad).shape[2:]).astype(np.float32)
    got = _conv.conv_fwd_np(x, w, None, pad=pad, y0=y0)
    close(got, y0 + reference(x, w, None, pad))


def test_nd_convolution_and_its_gradient_through_winograd():
    """mx.nd.Convolution takes the path forward; the backward (im2col) is unchanged."""
    x, w, b = arrays((2, 64, 9, 10), 64, seed=3)
    xs, ws, bs = mx.nd.array(x), mx.nd.array(w), mx.nd.array(b)
    xs.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution(xs, ws, bs, kernel=(3, 3), pad=(1, 1), num_filter=64)
    y.backward()
    close(y.asnumpy(), reference(x, w, b, (1, 1)))
    dx = _conv.conv_bwd_np(x.astype(np.float64), w.astype(np.float64),
                           np.ones(y.shape), pad=(1, 1))[0]
    np.testing.assert_allclose(xs.grad.asnumpy(), dx, rtol=1e-5, atol=1e-4)


# (x shape, filters, pad) whose data gradient, a 3×3 convolution of dy with padding
# 2 - pad, takes the Winograd path, and, where the forward does (all but the second: 48
# tiles), the weight gradient too
BACKWARD = [((2, 64, 12, 11), 64, (1, 1)), ((3, 64, 10, 10), 64, (0, 0)),
            ((2, 64, 9, 13), 72, (2, 1)), ((1, 64, 20, 20), 64, (1, 0)),
            ((5, 64, 14, 15), 64, (1, 1))]


@pytest.mark.parametrize('shape,f,pad', BACKWARD)
def test_winograd_gradients_match_the_float64_ones(shape, f, pad):
    x, w, _ = arrays(shape, f, seed=11 + f)
    y_shape = reference(x, w, None, pad).shape
    dy = np.random.default_rng(12).standard_normal(y_shape).astype(np.float32)
    ref = _conv.conv_bwd_np(x.astype(np.float64), w.astype(np.float64),
                            dy.astype(np.float64), pad=pad)
    got = _conv.conv_bwd_np(x, w, dy, pad=pad)
    for g, r in zip(got, ref):                # dx, dW by Winograd; db by its own path
        close(g, r)


def test_winograd_gradients_add_with_grad_req_add():
    x, w, _ = arrays((2, 64, 12, 11), 64, seed=13)
    rng = np.random.default_rng(14)
    held_x = rng.standard_normal(x.shape).astype(np.float32)
    held_w = rng.standard_normal(w.shape).astype(np.float32)
    xs, ws = mx.nd.array(x), mx.nd.array(w)
    for v, held in ((xs, held_x), (ws, held_w)):
        v.attach_grad(grad_req='add')
        v.grad[:] = held
    with mx.autograd.record():
        y = mx.nd.Convolution(xs, ws, kernel=(3, 3), pad=(1, 1), num_filter=64, no_bias=True)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(mx.nd.array(dy))
    ref = _conv.conv_bwd_np(x.astype(np.float64), w.astype(np.float64),
                            dy.astype(np.float64), pad=(1, 1))
    close(xs.grad.asnumpy(), held_x + ref[0])
    close(ws.grad.asnumpy(), held_w + ref[1])


@pytest.mark.parametrize('act', ['relu', 'relu6'])
def test_winograd_applies_the_fused_activation_of_an_inference_graph(act):
    """Convolution + ReLU (or clip 0..6) bound for inference is one op whose clamp the
    Winograd epilogue applies."""
    x, w, b = arrays((2, 32, 13, 12), 64, seed=21)
    conv = mx.sym.Convolution(mx.sym.var('data'), kernel=(3, 3), pad=(1, 1), num_filter=64,
                              name='c')
    net = (mx.sym.Activation(conv, act_type='relu') if act == 'relu'
           else mx.sym.clip(conv, a_min=0, a_max=6))
    mod = mx.mod.Module(net, data_names=['data'], label_names=None)
    mod.bind(data_shapes=[('data', x.shape)], for_training=False)
    mod.set_params({'c_weight': mx.nd.array(w), 'c_bias': mx.nd.array(b)}, {})
    mod.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    conv_ref = reference(x, w, b, (1, 1))
    ref = np.clip(conv_ref, 0, np.inf if act == 'relu' else 6)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), ref, rtol=0,
                               atol=2e-6 * np.abs(conv_ref).max())   # the sums' rounding
