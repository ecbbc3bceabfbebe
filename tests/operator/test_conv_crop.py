"""Convolutions whose outer kernel taps read only padding (a 3×3 kernel on a 1×1 or 2×2
plane) run with the kernel cropped (mxcy/_conv_crop.pxi): outputs and all three
gradients must equal the full convolution's, computed here in NumPy."""
import numpy as np
import pytest

import mxcy as mx
from tests.operator.test_conv import conv_ref

RNG = np.random.default_rng(7)


def conv_grads_ref(x, w, dy, stride, pad, dilate, groups):
    """(dx, dw, db) of conv_ref, tap by tap on the padded input."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    fg, oh, ow = f // groups, dy.shape[2], dy.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    for g in range(groups):
        cs, fs = slice(g * cg, (g + 1) * cg), slice(g * fg, (g + 1) * fg)
        for i in range(kh):
            for j in range(kw):
                rows = slice(i * dilate[0], i * dilate[0] + stride[0] * (oh - 1) + 1, stride[0])
                cols = slice(j * dilate[1], j * dilate[1] + stride[1] * (ow - 1) + 1, stride[1])
                dw[fs, :, i, j] = np.einsum('nfhw,nchw->fc', dy[:, fs], xp[:, cs, rows, cols])
                dxp[:, cs, rows, cols] += np.einsum('nfhw,fc->nchw', dy[:, fs], w[fs, :, i, j])
    dx = dxp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + wd]
    return dx, dw, dy.sum(axis=(0, 2, 3))


# (x shape, kernel, stride, pad, dilate, groups): every case has taps that only read padding
CASES = [((4, 8, 1, 1), (3, 3), (1, 1), (1, 1), (1, 1), 1),     # centre tap only
         ((4, 8, 2, 2), (3, 3), (2, 2), (1, 1), (1, 1), 1),     # 2×2 → 1×1: four taps
         ((3, 6, 5, 1), (3, 3), (1, 1), (1, 1), (1, 1), 2),     # width 1: crops w only
         ((2, 4, 1, 3), (5, 3), (1, 2), (2, 1), (1, 1), 1),     # height 1, stride in w
         ((2, 4, 1, 1), (3, 3), (1, 1), (2, 2), (2, 2), 1),     # dilated: centre only
         ((64, 32, 1, 1), (3, 3), (1, 1), (1, 1), (1, 1), 1)]   # big: split in parts


@pytest.mark.parametrize('dtype,tol', [(np.float64, 1e-10), (np.float32, 1e-4)])
@pytest.mark.parametrize('shape,kernel,stride,pad,dilate,groups', CASES)
def test_cropped_convolution_equals_the_full_one(shape, kernel, stride, pad, dilate, groups,
                                                  dtype, tol):
    f = 6
    x = RNG.standard_normal(shape)
    w = RNG.standard_normal((f, shape[1] // groups) + kernel)
    b = RNG.standard_normal(f)
    y_ref = conv_ref(x, w, b, stride, pad, dilate, groups)
    dy = RNG.standard_normal(y_ref.shape)
    dx_ref, dw_ref, db_ref = conv_grads_ref(x, w, dy, stride, pad, dilate, groups)
    xs, ws, bs = (mx.nd.array(v, dtype=dtype) for v in (x, w, b))
    for v in (xs, ws, bs):
        v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Convolution(xs, ws, bs, kernel=kernel, stride=stride, pad=pad,
                              dilate=dilate, num_filter=f, num_group=groups)
    y.backward(mx.nd.array(dy, dtype=dtype))
    np.testing.assert_allclose(y.asnumpy(), y_ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(xs.grad.asnumpy(), dx_ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(ws.grad.asnumpy(), dw_ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(bs.grad.asnumpy(), db_ref, rtol=tol, atol=tol)


def test_cropped_weight_gradient_adds_with_req_add_and_leaves_cut_taps():
    """grad_req='add': the cut taps keep what they held; the kept taps add."""
    x = RNG.standard_normal((3, 5, 1, 1))
    w = RNG.standard_normal((4, 5, 3, 3))
    dy = RNG.standard_normal((3, 4, 1, 1))
    _, dw_ref, _ = conv_grads_ref(x, w, dy, (1, 1), (1, 1), (1, 1), 1)
    xs, ws = mx.nd.array(x), mx.nd.array(w)
    ws.attach_grad(grad_req='add')
    held = RNG.standard_normal(w.shape)
    ws.grad[:] = held
    with mx.autograd.record():
        y = mx.nd.Convolution(xs, ws, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True)
    y.backward(mx.nd.array(dy))
    got = ws.grad.asnumpy()
    np.testing.assert_allclose(got, held + dw_ref, rtol=1e-5, atol=1e-5)
    assert np.array_equal(got[:, :, 0, 0], held[:, :, 0, 0].astype(np.float32))


def test_inference_module_on_a_one_pixel_plane_matches_numpy():
    """The bound executor (the zoo's path, through the graph passes) crops too."""
    x = RNG.standard_normal((2, 8, 1, 1)).astype(np.float32)
    w = RNG.standard_normal((16, 8, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(16).astype(np.float32)
    net = mx.sym.Activation(mx.sym.Convolution(mx.sym.var('data'), kernel=(3, 3), pad=(1, 1),
                                               num_filter=16, name='c'), act_type='relu')
    mod = mx.mod.Module(net, data_names=['data'], label_names=None)
    mod.bind(data_shapes=[('data', x.shape)], for_training=False)
    mod.set_params({'c_weight': mx.nd.array(w), 'c_bias': mx.nd.array(b)}, {})
    mod.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    ref = np.maximum(conv_ref(x, w, b, (1, 1), (1, 1), (1, 1), 1), 0)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), ref, rtol=1e-4, atol=1e-4)
