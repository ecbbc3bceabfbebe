"""3-D Convolution / Deconvolution / Pooling (the NumPy kernels), 1-D forms through
mx.nd/mx.sym/JSON, refused channel-last layouts, and the Pad operator (pad_width, modes,
gradients) against direct NumPy references and finite differences.

Values marked "MXNet 1.9.1" were recorded from MXNet 1.9.1 running the same call.
"""
import itertools
import json

import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(3)


def conv_ref(x, w, b, stride, pad, dilate, groups):
    """A direct loop over output positions, any number of spatial axes."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])
    k = w.shape[2:]
    out = [(x.shape[2 + i] + 2 * pad[i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1
           for i in range(nd)]
    f, cg = w.shape[:2]
    fg = f // groups
    y = np.zeros((x.shape[0], f) + tuple(out))
    axes = list(range(1, 2 + nd))
    for pos in itertools.product(*(range(o) for o in out)):
        where = tuple(slice(p * s, p * s + d * (kk - 1) + 1, d)
                      for p, s, d, kk in zip(pos, stride, dilate, k))
        for g in range(groups):
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + where]
            y[(slice(None), slice(g * fg, (g + 1) * fg)) + pos] = np.tensordot(
                patch, w[g * fg:(g + 1) * fg], axes=(axes, axes))
    return y if b is None else y + b.reshape((1, f) + (1,) * nd)


def pool_ref(x, kernel, stride, pad, kind, convention='valid', include_pad=True):
    """MXNet's CPU rules: windows end at size + pad; 'full' rounds the count up."""
    rnd = np.floor if convention == 'valid' else np.ceil
    out = [int(rnd((n + 2 * q - k) / s)) + 1
           for n, k, s, q in zip(x.shape[2:], kernel, stride, pad)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for pos in itertools.product(*(range(o) for o in out)):
        start = [p * s - q for p, s, q in zip(pos, stride, pad)]
        end = [min(a + k, n + q) for a, k, n, q in zip(start, kernel, x.shape[2:], pad)]
        lo = [max(a, 0) for a in start]
        hi = [min(e, n) for e, n in zip(end, x.shape[2:])]
        win = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))]
        win = win.reshape(x.shape[:2] + (-1,))
        if kind == 'max':
            value = win.max(-1) if win.shape[-1] else np.finfo(x.dtype).min
        elif kind == 'sum':
            value = win.sum(-1)
        else:
            bounds = zip(start, end) if include_pad else zip(lo, hi)
            value = win.sum(-1) / np.prod([b - a for a, b in bounds])
        y[(slice(None), slice(None)) + pos] = value
    return y


# ---------------------------------------------------------------- 3-D convolution
@pytest.mark.parametrize('stride,pad,dilate,groups', [
    ((1, 1, 1), (0, 0, 0), (1, 1, 1), 1), ((2, 1, 2), (1, 0, 2), (1, 2, 1), 2)])
def test_convolution_3d_forward(stride, pad, dilate, groups):
    x = RNG.standard_normal((2, 4, 5, 6, 7))
    w = RNG.standard_normal((6, 4 // groups, 3, 2, 3))
    b = RNG.standard_normal(6)
    params = dict(kernel=(3, 2, 3), stride=stride, pad=pad, dilate=dilate, num_filter=6,
                  num_group=groups)
    ref = conv_ref(x, w, b, stride, pad, dilate, groups)
    check_op_forward('Convolution', params, [x, w, b], [ref])
    check_op_forward('Convolution', params, [a.astype(np.float32) for a in (x, w, b)], [ref],
                     rtol=1e-4, atol=1e-4)


def test_convolution_3d_matches_the_2d_kernel_on_a_depth_of_one():
    x, w = RNG.standard_normal((2, 4, 1, 6, 5)), RNG.standard_normal((4, 2, 1, 3, 2))
    params = dict(stride=(2, 1), pad=(1, 1), dilate=(1, 2), num_filter=4, num_group=2,
                  no_bias=True)
    y3 = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), kernel=(1, 3, 2),
                           **dict(params, stride=(1, 2, 1), pad=(0, 1, 1), dilate=(1, 1, 2)))
    y2 = mx.nd.Convolution(mx.nd.array(x[:, :, 0]), mx.nd.array(w[:, :, 0]), kernel=(3, 2),
                           **params)
    np.testing.assert_allclose(y3.asnumpy()[:, :, 0], y2.asnumpy(), rtol=1e-5, atol=1e-5)


def test_convolution_3d_backward():
    check_op_backward('Convolution', dict(kernel=(2, 2, 2), stride=(1, 2, 1), pad=(1, 0, 1),
                                          dilate=(1, 1, 2), num_filter=4, num_group=2),
                      [RNG.standard_normal((2, 2, 3, 4, 4)),
                       RNG.standard_normal((4, 1, 2, 2, 2)), RNG.standard_normal(4)])
    check_op_backward('Convolution', dict(kernel=(1, 2, 1), num_filter=2, no_bias=True),
                      [RNG.standard_normal((1, 3, 2, 3, 2)), RNG.standard_normal((2, 3, 1, 2, 1))])


def test_convolution_3d_in_image_ranges_equals_one_range(monkeypatch):
    """A batch whose column buffer exceeds the budget is cut into image ranges."""
    from mxcy.operator import _conv_numpy
    x, w = RNG.standard_normal((5, 4, 3, 4, 3)), RNG.standard_normal((6, 2, 2, 2, 2))
    args = ((1, 2, 1), (1, 0, 1), (1, 1, 1), 2)
    y = _conv_numpy.conv_forward(x, w, None, *args)
    dy = RNG.standard_normal(y.shape)
    dw = _conv_numpy.conv_backward_weight(x, dy, (2, 2, 2), *args)
    monkeypatch.setattr(_conv_numpy, '_COLS_BUDGET', 1)
    np.testing.assert_allclose(_conv_numpy.conv_forward(x, w, None, *args), y, rtol=1e-12)
    np.testing.assert_allclose(_conv_numpy.conv_backward_weight(x, dy, (2, 2, 2), *args), dw,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y, conv_ref(x, w, None, *args), rtol=1e-10, atol=1e-10)


def test_deconvolution_3d_is_the_adjoint_of_convolution():
    x = RNG.standard_normal((2, 4, 2, 3, 2))
    w = RNG.standard_normal((4, 3, 3, 2, 3))
    kw = dict(kernel=(3, 2, 3), stride=(2, 1, 2), pad=(1, 0, 1), num_filter=3)
    y = mx.nd.Deconvolution(mx.nd.array(x, dtype=np.float64),
                            mx.nd.array(w, dtype=np.float64), **kw).asnumpy()
    assert y.shape == (2, 3, 3, 4, 3)
    z = RNG.standard_normal(y.shape)
    lhs = (conv_ref(z, w, None, (2, 1, 2), (1, 0, 1), (1, 1, 1), 1) * x).sum()
    assert np.isclose(lhs, (z * y).sum())
    # adj enlarges the output on one side; groups split the channels
    y = mx.nd.Deconvolution(mx.nd.array(x), mx.nd.array(w[:, :1]), adj=(1, 0, 1),
                            num_group=2, **dict(kw, num_filter=2))
    assert y.shape == (2, 2, 4, 4, 4)


def test_deconvolution_3d_backward():
    check_op_backward('Deconvolution', dict(kernel=(2, 2, 2), stride=(2, 1, 2), pad=(1, 0, 0),
                                            adj=(1, 0, 1), num_filter=2, no_bias=False),
                      [RNG.standard_normal((1, 2, 2, 2, 2)),
                       RNG.standard_normal((2, 2, 2, 2, 2)), RNG.standard_normal(2)])
    check_op_backward('Deconvolution', dict(kernel=(1, 2, 2), num_filter=4, num_group=2),
                      [RNG.standard_normal((1, 2, 2, 2, 3)),
                       RNG.standard_normal((2, 2, 1, 2, 2))])


# ---------------------------------------------------------------- 3-D pooling
@pytest.mark.parametrize('kind', ['max', 'avg', 'sum'])
@pytest.mark.parametrize('k,s,p,conv', [((2, 2, 2), (2, 2, 2), (0, 0, 0), 'valid'),
                                        ((2, 3, 2), (2, 2, 1), (1, 1, 0), 'full')])
def test_pooling_3d_forward_backward(kind, k, s, p, conv):
    x = RNG.standard_normal((2, 2, 6, 4, 3))
    params = dict(kernel=k, stride=s, pad=p, pool_type=kind, pooling_convention=conv)
    check_op_forward('Pooling', params, [x], [pool_ref(x, k, s, p, kind, conv)])
    check_op_backward('Pooling', params, [x[:1]])


def test_pooling_3d_avg_without_padding_and_global():
    x = RNG.standard_normal((2, 3, 4, 5, 3))
    params = dict(kernel=(3, 3, 3), stride=(2, 2, 2), pad=(1, 1, 1), pool_type='avg',
                  count_include_pad=False, pooling_convention='full')
    check_op_forward('Pooling', params, [x],
                     [pool_ref(x, (3, 3, 3), (2, 2, 2), (1, 1, 1), 'avg', 'full', False)])
    check_op_backward('Pooling', params, [x[:1, :1]])
    check_op_forward('Pooling', dict(global_pool=True, pool_type='avg'), [x],
                     [x.mean((2, 3, 4), keepdims=True)])
    check_op_forward('Pooling', dict(global_pool=True, pool_type='max', kernel=(1, 1, 1)), [x],
                     [x.max((2, 3, 4), keepdims=True)])


def test_pooling_3d_window_of_padding_only_is_the_lowest_float():
    # MXNet 1.9.1: a 'full' window lying in the padding gives -FLT_MAX / -DBL_MAX
    x = np.arange(5.0).reshape(1, 1, 1, 1, 5) - 10
    for dtype in (np.float32, np.float64):
        y = mx.nd.Pooling(mx.nd.array(x, dtype=dtype), kernel=(1, 1, 2), stride=(1, 1, 2),
                          pad=(0, 0, 1), pooling_convention='full').asnumpy()
        np.testing.assert_array_equal(y.ravel(), [-10, -8, -6, np.finfo(dtype).min])


# ---------------------------------------------------------------- 1-D through nd/sym/JSON
def test_one_d_ops_keep_one_d_attributes_in_symbols_and_json():
    data = mx.sym.var('data')
    conv = mx.sym.Convolution(data, kernel=(3,), stride=(2,), pad=(1,), num_filter=4,
                              layout='NCW', name='c')
    pool = mx.sym.Pooling(conv, kernel=(2,), stride=(2,), pool_type='avg', name='p')
    deconv = mx.sym.Deconvolution(pool, kernel=(3,), stride=(2,), adj=(1,), num_filter=2,
                                  name='d')
    args, outs, _ = deconv.infer_shape(data=(2, 3, 11))
    assert dict(zip(deconv.list_arguments(), args)) == {
        'data': (2, 3, 11), 'c_weight': (4, 3, 3), 'c_bias': (4,), 'd_weight': (4, 2, 3)}
    assert outs == [(2, 2, 8)]       # W: 11 -> 6 (conv) -> 3 (pool) -> 8 (deconv, adj 1)
    nodes = {n['name']: n.get('attrs', {}) for n in json.loads(deconv.tojson())['nodes']}
    assert nodes['c']['kernel'] == '(3,)' and nodes['c']['layout'] == 'NCW'
    assert nodes['p']['kernel'] == '(2,)' and nodes['d']['adj'] == '(1,)'
    loaded = mx.sym.load_json(deconv.tojson())
    assert loaded.infer_shape(data=(2, 3, 11))[1] == [(2, 2, 8)]


def test_one_d_deconvolution_matches_the_adjoint_and_finite_differences():
    x, w = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((3, 2, 3))
    y = mx.nd.Deconvolution(mx.nd.array(x, dtype=np.float64), mx.nd.array(w, dtype=np.float64),
                            kernel=(3,), stride=(2,), pad=(1,), adj=(1,), num_filter=2)
    assert y.shape == (2, 2, 8)
    z = RNG.standard_normal(y.shape)
    lhs = (conv_ref(z, w, None, (2,), (1,), (1,), 1) * x).sum()
    assert np.isclose(lhs, (z * y.asnumpy()).sum())
    check_op_backward('Deconvolution', dict(kernel=(3,), stride=(2,), num_filter=2,
                                            no_bias=False),
                      [x, w, RNG.standard_normal(2)])
    check_op_backward('Pooling', dict(kernel=(3,), stride=(2,), pad=(1,), pool_type='avg',
                                      count_include_pad=False), [x])


@pytest.mark.parametrize('op,kw,shape', [
    ('Convolution', dict(kernel=(3, 3), num_filter=2, layout='NHWC'), (1, 5, 5, 2)),
    ('Convolution', dict(kernel=(3,), num_filter=2, layout='NCHW'), (1, 2, 5)),
    ('Deconvolution', dict(kernel=(2, 2, 2), num_filter=2, layout='NDHWC'), (1, 3, 3, 3, 2)),
    ('Pooling', dict(kernel=(2, 2), layout='NHWC'), (1, 4, 4, 2)),
    ('Pooling', dict(kernel=(2,), layout='NCDHW'), (1, 2, 4))])
def test_layouts_other_than_channel_first_are_refused(op, kw, shape):
    with pytest.raises(mx.MXNetError, match='layout'):
        getattr(mx.sym, op)(mx.sym.var('x'), **kw).infer_shape(x=shape)
    with pytest.raises(ValueError, match=f"{op}: layout='{kw['layout']}'"):
        getattr(mx.nd, op)(mx.nd.ones(shape), *[mx.nd.ones((2,) * len(shape))] *
                           (op != 'Pooling'), no_bias=True, **kw) if op != 'Pooling' else \
            mx.nd.Pooling(mx.nd.ones(shape), **kw)


def test_kernel_of_four_axes_is_refused():
    with pytest.raises(mx.MXNetError, match='kernel must have 1, 2 or 3 values'):
        mx.sym.Convolution(mx.sym.var('x'), kernel=(2, 2, 2, 2), num_filter=1).infer_shape(
            x=(1, 1, 3, 3, 3, 3))
    with pytest.raises(mx.MXNetError, match='5-D'):
        mx.sym.Pooling(mx.sym.var('x'), global_pool=True).infer_shape(x=(1, 1, 2, 2, 2, 2))


# ---------------------------------------------------------------- Pad
@pytest.mark.parametrize('mode', ['constant', 'edge', 'reflect'])
@pytest.mark.parametrize('shape,width', [((2, 2, 3, 4), (0, 0, 0, 0, 1, 2, 2, 1)),
                                         ((1, 2, 3, 2, 4), (0, 0, 0, 0, 1, 0, 0, 1, 2, 3))])
def test_pad_forward_backward(mode, shape, width):
    x = RNG.standard_normal(shape)
    pairs = [(width[2 * i], width[2 * i + 1]) for i in range(len(shape))]
    kwargs = {'constant_values': 1.5} if mode == 'constant' else {}
    params = dict(mode=mode, pad_width=width, constant_value=1.5)
    check_op_forward('Pad', params, [x], [np.pad(x, pairs, mode=mode, **kwargs)])
    check_op_backward('Pad', params, [x])


def test_pad_reflect_gradient_matches_mxnet():
    # MXNet 1.9.1: mx.nd.pad(x, 'reflect', (0,0,0,0,2,1,1,3)) backward with head arange
    x = mx.nd.array(np.arange(24.0).reshape(2, 1, 3, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.pad(x, mode='reflect', pad_width=(0, 0, 0, 0, 2, 1, 1, 3))
    y.backward(mx.nd.array(np.arange(96.0).reshape(y.shape)))
    assert y.shape == (2, 1, 6, 8)
    np.testing.assert_array_equal(
        x.grad.asnumpy().ravel(),
        [40, 56, 40, 20, 168, 240, 168, 84, 80, 112, 80, 40, 136, 200, 136, 68, 456, 672, 456,
         228, 272, 400, 272, 136])


def test_pad_symbol_and_errors():
    s = mx.sym.pad(mx.sym.var('x'), mode='edge', pad_width=(0, 0, 0, 0, 1, 1, 2, 2))
    assert s.infer_shape(x=(1, 2, 3, 3))[1] == [(1, 2, 5, 7)]
    assert json.loads(s.tojson())['nodes'][1]['op'] == 'Pad'
    with pytest.raises(ValueError, match=r"pad: reflect padding \(3, 3\) must be smaller"):
        mx.nd.pad(mx.nd.ones((1, 1, 3, 3)), mode='reflect', pad_width=(0, 0, 0, 0, 3, 3, 0, 0))
    with pytest.raises(TypeError, match="mode"):
        mx.nd.pad(mx.nd.ones((1, 1, 3, 3)), pad_width=(0,) * 8)


@pytest.mark.parametrize('dtype,lowest', [('float32', -3.4028235e+38),
                                          ('float64', -1.7976931348623157e+308)])
def test_max_pool_window_of_padding_only_is_the_lowest_value(dtype, lowest):
    """MXNet 1.9.1: a 'full'-convention window that holds only padding gives the lowest
    finite value of the dtype (mxcy gave 0)."""
    x = mx.nd.array(np.arange(9).reshape(1, 1, 3, 3), dtype=dtype)
    y = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pad=(1, 1), pool_type='max',
                      pooling_convention='full')
    np.testing.assert_array_equal(y.asnumpy().ravel(),
                                  np.array([0, 2, lowest, 6, 8, lowest, lowest, lowest, lowest],
                                           dtype=dtype))
