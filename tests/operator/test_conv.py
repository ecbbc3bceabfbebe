"""Convolution, Deconvolution and Pooling against NumPy references and finite differences."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _conv
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(0)


def conv_ref(x, w, b, stride, pad, dilate, groups):
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dilate[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dilate[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, f, oh, ow))
    fg = f // groups
    for g in range(groups):
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * stride[0]:i * stride[0] + dilate[0] * (kh - 1) + 1:dilate[0],
                           j * stride[1]:j * stride[1] + dilate[1] * (kw - 1) + 1:dilate[1]]
                y[:, g * fg:(g + 1) * fg, i, j] = np.tensordot(
                    patch, w[g * fg:(g + 1) * fg], axes=([1, 2, 3], [1, 2, 3]))
    return y + (0 if b is None else b[None, :, None, None])


CASES = [((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1),
         ((1, 2), (1, 1), (2, 1), 2), ((3, 3), (2, 0), (1, 2), 1)]


@pytest.mark.parametrize('stride,pad,dilate,groups', CASES)
def test_convolution_forward_matches_reference(stride, pad, dilate, groups):
    x = RNG.standard_normal((3, 4, 9, 8))
    w = RNG.standard_normal((6, 4 // groups, 3, 2))
    b = RNG.standard_normal(6)
    params = dict(kernel=(3, 2), stride=stride, pad=pad, dilate=dilate, num_filter=6,
                  num_group=groups)
    check_op_forward('Convolution', params, [x, w, b],
                     [conv_ref(x, w, b, stride, pad, dilate, groups)])
    check_op_forward('Convolution', params, [x.astype(np.float32), w.astype(np.float32),
                                             b.astype(np.float32)],
                     [conv_ref(x, w, b, stride, pad, dilate, groups)], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('stride,pad,dilate,groups', CASES[:3])
def test_convolution_backward(stride, pad, dilate, groups):
    params = dict(kernel=(3, 2), stride=stride, pad=pad, dilate=dilate, num_filter=4,
                  num_group=groups)
    check_op_backward('Convolution', params,
                      [RNG.standard_normal((2, 2, 6, 5)), RNG.standard_normal((4, 2 // groups, 3, 2)),
                       RNG.standard_normal(4)])


def test_convolution_1d_and_no_bias():
    x, w = RNG.standard_normal((2, 3, 9)), RNG.standard_normal((4, 3, 3))
    ref = conv_ref(x[:, :, None], w[:, :, None], None, (1, 2), (0, 1), (1, 1), 1)[:, :, 0]
    check_op_forward('Convolution', dict(kernel=(3,), stride=(2,), pad=(1,), num_filter=4,
                                         no_bias=True), [x, w], [ref])
    check_op_backward('Convolution', dict(kernel=(3,), num_filter=4, no_bias=True), [x, w])


def test_many_images_are_processed_in_chunks_correctly():
    # a column buffer budget smaller than the batch forces several chunks
    x = RNG.standard_normal((40, 16, 20, 20)).astype(np.float32)
    w = RNG.standard_normal((8, 16, 5, 5)).astype(np.float32)
    y = _conv.conv_fwd_np(x, w, None)
    np.testing.assert_allclose(y, conv_ref(x, w, None, (1, 1), (0, 0), (1, 1), 1),
                               rtol=1e-3, atol=1e-3)


def test_convolution_shape_errors_name_the_argument():
    data = mx.sym.Variable('data')
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=2, name='c1')
    with pytest.raises(mx.MXNetError, match=r"c1.*data.*4-D"):
        conv.infer_shape(data=(2, 3, 8))
    with pytest.raises(mx.MXNetError, match=r"c1_weight|weight"):
        conv.infer_shape(data=(2, 3, 8, 8), c1_weight=(2, 4, 3, 3))
    with pytest.raises(mx.MXNetError, match=r"stride"):
        mx.sym.Convolution(data, kernel=(3, 3), stride=(1, 1, 1), num_filter=2).infer_shape(
            data=(1, 1, 5, 5))


def test_deconvolution_is_the_adjoint_of_convolution():
    x = RNG.standard_normal((2, 4, 3, 3))
    w = RNG.standard_normal((4, 3, 3, 3))
    y = mx.nd.Deconvolution(mx.nd.array(x, dtype=np.float64), mx.nd.array(w, dtype=np.float64),
                            kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=3).asnumpy()
    assert y.shape == (2, 3, 5, 5)
    # <conv(z), x> == <z, deconv(x)> for any z
    z = RNG.standard_normal((2, 3, 5, 5))
    lhs = (conv_ref(z, w, None, (2, 2), (1, 1), (1, 1), 1) * x).sum()
    assert np.isclose(lhs, (z * y).sum())
    check_op_backward('Deconvolution', dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                            num_filter=3, no_bias=False),
                      [x, w, RNG.standard_normal(3)])


def pool_ref(x, k, s, p, kind, convention='valid', include_pad=True):
    n, c, h, w = x.shape
    fill = -np.inf if kind == 'max' else 0
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), constant_values=fill)
    rnd = np.floor if convention == 'valid' else np.ceil
    oh = int(rnd((h + 2 * p[0] - k[0]) / s[0])) + 1
    ow = int(rnd((w + 2 * p[1] - k[1]) / s[1])) + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * s[0], j * s[1]
            win = xp[:, :, hs:min(hs + k[0], h + 2 * p[0]), ws:min(ws + k[1], w + 2 * p[1])]
            if kind == 'max':
                out[:, :, i, j] = win.max((2, 3))
            elif kind == 'sum':
                out[:, :, i, j] = win.sum((2, 3))
            else:
                count = win.shape[2] * win.shape[3]
                if not include_pad:
                    r0, c0 = max(hs - p[0], 0), max(ws - p[1], 0)
                    r1, c1 = min(hs + k[0] - p[0], h), min(ws + k[1] - p[1], w)
                    count = (r1 - r0) * (c1 - c0)
                out[:, :, i, j] = win.sum((2, 3)) / count
    return out


@pytest.mark.parametrize('kind', ['max', 'avg', 'sum'])
@pytest.mark.parametrize('k,s,p,conv', [((2, 2), (2, 2), (0, 0), 'valid'),
                                        ((3, 3), (2, 2), (1, 1), 'full'),
                                        ((3, 2), (1, 2), (1, 0), 'valid')])
def test_pooling_forward_backward(kind, k, s, p, conv):
    x = RNG.standard_normal((2, 3, 7, 6))
    params = dict(kernel=k, stride=s, pad=p, pool_type=kind, pooling_convention=conv)
    check_op_forward('Pooling', params, [x], [pool_ref(x, k, s, p, kind, conv)])
    check_op_backward('Pooling', params, [x])


def test_pooling_avg_without_padding_in_the_count_and_global_pool():
    x = RNG.standard_normal((2, 3, 5, 5))
    check_op_forward('Pooling', dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type='avg',
                                     count_include_pad=False),
                     [x], [pool_ref(x, (3, 3), (1, 1), (1, 1), 'avg', include_pad=False)])
    check_op_forward('Pooling', dict(global_pool=True, pool_type='max'), [x],
                     [x.max((2, 3), keepdims=True)])
    check_op_forward('Pooling', dict(kernel=(2,), stride=(2,), pool_type='max'),
                     [x[:, :, 0]], [x[:, :, 0, :4].reshape(2, 3, 2, 2).max(3)])


def test_pooling_errors():
    with pytest.raises(mx.MXNetError, match='kernel'):
        mx.sym.Pooling(mx.sym.Variable('x'), kernel=(2,), name='p').infer_shape(x=(1, 1, 4, 4))
    with pytest.raises(ValueError, match="pool_type.*one of"):
        mx.sym.Pooling(mx.sym.Variable('x'), kernel=(2, 2), pool_type='median')


@pytest.mark.parametrize('groups', [1, 2])
def test_big_convolution_in_parts_equals_image_by_image(groups):
    """Convolutions above the sharing threshold are cut into image ranges (dW summed from
    private per-part buffers): the result equals the kernel run one image at a time."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((16, 8, 16, 16))
    w = rng.standard_normal((16, 8 // groups, 3, 3))
    b = rng.standard_normal(16)
    args = dict(stride=(1, 1), pad=(1, 1), dilate=(1, 1), groups=groups)
    y = _conv.conv_fwd_np(x, w, b, **args)
    np.testing.assert_allclose(y, conv_ref(x, w, b, (1, 1), (1, 1), (1, 1), groups),
                               rtol=1e-10, atol=1e-10)
    dy = rng.standard_normal(y.shape)
    dx, dw, db = _conv.conv_bwd_np(x, w, dy, True, **args)
    singles = [_conv.conv_bwd_np(x[i:i + 1], w, dy[i:i + 1], True, **args)
               for i in range(len(x))]
    np.testing.assert_allclose(dx, np.concatenate([s[0] for s in singles]), rtol=1e-10,
                               atol=1e-10)
    np.testing.assert_allclose(dw, sum(s[1] for s in singles), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(db, sum(s[2] for s in singles), rtol=1e-10, atol=1e-10)


def test_big_convolution_gradients_accumulate_with_req_add():
    data = mx.sym.Variable('data')
    net = mx.sym.Pooling(mx.sym.Convolution(data, kernel=(3, 3), num_filter=16, pad=(1, 1),
                                            name='c'),
                         kernel=(2, 2), stride=(2, 2), pool_type='max')
    exe = net.simple_bind(mx.cpu(), data=(16, 8, 16, 16), grad_req='add')
    rng = np.random.default_rng(8)
    for name, arr in exe.arg_dict.items():
        arr[:] = rng.standard_normal(arr.shape)
    for g in exe.grad_arrays:
        g[:] = 0
    head = mx.nd.array(rng.standard_normal(exe.outputs[0].shape))
    exe.forward(is_train=True)
    exe.backward([head])
    once = {k: v.asnumpy() for k, v in exe.grad_dict.items()}
    exe.forward(is_train=True)
    exe.backward([head])
    for k, v in exe.grad_dict.items():
        np.testing.assert_allclose(v.asnumpy(), 2 * once[k], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('pool_type', [0, 1])
def test_big_pooling_in_parts_matches_numpy(pool_type):
    """Pooling above the sharing threshold is cut into plane ranges: same as NumPy."""
    x = np.random.default_rng(9).standard_normal((32, 16, 32, 32)).astype(np.float32)
    y = _conv.pool_fwd_np(x, (2, 2), (2, 2), (0, 0), 16, 16, pool_type)
    windows = x.reshape(32, 16, 16, 2, 16, 2)
    ref = windows.max(axis=(3, 5)) if pool_type == 0 else windows.mean(axis=(3, 5))
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)
    dy = np.ones_like(y)
    dx = _conv.pool_bwd_np(x, dy, (2, 2), (2, 2), (0, 0), pool_type)
    if pool_type == 0:       # one 1 per window, at its maximum
        np.testing.assert_array_equal(dx.reshape(32, 16, 16, 2, 16, 2).sum(axis=(3, 5)), 1)
        np.testing.assert_array_equal(dx[x == np.repeat(np.repeat(ref, 2, 2), 2, 3)], 1)
    else:
        np.testing.assert_allclose(dx, 0.25)
