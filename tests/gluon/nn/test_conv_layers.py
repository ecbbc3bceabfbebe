"""gluon.nn convolution, pooling and padding layers: signatures, parameter names and
shapes, deferred in_channels, forward against NumPy references, gradients against
finite differences (float64), hybridized == imperative, export, repr.

Values marked "MXNet 1.9.1" were recorded from MXNet 1.9.1 running the same code.
"""
import inspect
import itertools
import json
import os

import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd
from mxcy.gluon import nn
from mxcy.test_utils import finite_difference as numeric_grad


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _fresh(make):
    with mx.name.NameManager():
        return make()


# ---------------------------------------------------------------- NumPy references
def conv_ref(x, w, b, stride, pad, dilate, groups=1):
    """Cross-correlation by a direct loop over output positions (any number of axes)."""
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


def deconv_ref(x, w, b, stride, pad, dilate, adj, groups=1):
    """Transposed convolution by scattering each input element through the kernel."""
    nd = x.ndim - 2
    k, cg, fg = w.shape[2:], x.shape[1] // groups, w.shape[1]
    full = [(n - 1) * s + d * (kk - 1) + 1 + a
            for n, s, d, kk, a in zip(x.shape[2:], stride, dilate, k, adj)]
    y = np.zeros((x.shape[0], fg * groups) + tuple(full))
    for pos in itertools.product(*(range(n) for n in x.shape[2:])):
        for off in itertools.product(*(range(kk) for kk in k)):
            target = tuple(p * s + o * d for p, s, o, d in zip(pos, stride, off, dilate))
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + pos]
                ws = w[(slice(g * cg, (g + 1) * cg), slice(None)) + off]
                y[(slice(None), slice(g * fg, (g + 1) * fg)) + target] += xs @ ws
    y = y[(slice(None), slice(None)) + tuple(slice(q, n - q) for q, n in zip(pad, full))]
    return y if b is None else y + b.reshape((1, -1) + (1,) * nd)


def pool_ref(x, kernel, stride, pad, kind, ceil=False, include_pad=True):
    """MXNet's rules: windows end at size + pad; ceil_mode rounds the count up."""
    rnd = np.ceil if ceil else np.floor
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
            value = win.max(-1)
        else:
            bounds = zip(start, end) if include_pad else zip(lo, hi)
            value = win.sum(-1) / np.prod([b - a for a, b in bounds])
        y[(slice(None), slice(None)) + pos] = value
    return y


def reflect_ref(x, width):
    pairs = [(width[2 * i], width[2 * i + 1]) for i in range(x.ndim)]
    return np.pad(x, pairs, mode='reflect')


# ---------------------------------------------------------------- construction
def test_signatures_are_mxnets():
    # MXNet 1.9.1: inspect.signature(cls.__init__)
    expected = {
        'Conv1D': "(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1, "
                  "layout='NCW', activation=None, use_bias=True, weight_initializer=None, "
                  "bias_initializer='zeros', in_channels=0, **kwargs)",
        'Conv3DTranspose': "(self, channels, kernel_size, strides=(1, 1, 1), "
                           "padding=(0, 0, 0), output_padding=(0, 0, 0), dilation=(1, 1, 1), "
                           "groups=1, layout='NCDHW', activation=None, use_bias=True, "
                           "weight_initializer=None, bias_initializer='zeros', in_channels=0, "
                           "**kwargs)",
        'MaxPool1D': "(self, pool_size=2, strides=None, padding=0, layout='NCW', "
                     "ceil_mode=False, **kwargs)",
        'MaxPool3D': "(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False, "
                     "layout='NCDHW', **kwargs)",
        'AvgPool1D': "(self, pool_size=2, strides=None, padding=0, layout='NCW', "
                     "ceil_mode=False, count_include_pad=True, **kwargs)",
        'AvgPool2D': "(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False, "
                     "layout='NCHW', count_include_pad=True, **kwargs)",
        'GlobalAvgPool3D': "(self, layout='NCDHW', **kwargs)",
        'ReflectionPad2D': "(self, padding=0, **kwargs)",
    }
    for name, sig in expected.items():
        assert str(inspect.signature(getattr(nn, name).__init__)) == sig, name


def test_parameter_names_shapes_and_repr():
    # MXNet 1.9.1: repr, prefix and {name: shape} of each layer made in a fresh NameManager
    cases = [
        (lambda: nn.Conv1D(4, 3), 'Conv1D(None -> 4, kernel_size=(3,), stride=(1,))',
         {'conv0_weight': (4, 0, 3), 'conv0_bias': (4,)}),
        (lambda: nn.Conv2D(4, 3, in_channels=2), 'Conv2D(2 -> 4, kernel_size=(3, 3), '
         'stride=(1, 1))', {'conv0_weight': (4, 2, 3, 3), 'conv0_bias': (4,)}),
        (lambda: nn.Conv3D(4, (1, 2, 3), strides=2, padding=1, dilation=(1, 1, 2), groups=2,
                           activation='relu', use_bias=False),
         'Conv3D(None -> 4, kernel_size=(1, 2, 3), stride=(2, 2, 2), padding=(1, 1, 1), '
         'dilation=(1, 1, 2), groups=2, bias=False, Activation(relu))',
         {'conv0_weight': (4, 0, 1, 2, 3)}),
        (lambda: nn.Conv1DTranspose(4, 3, output_padding=1, strides=2),
         'Conv1DTranspose(4 -> 0, kernel_size=(3,), stride=(2,))',
         {'conv0_weight': (0, 4, 3), 'conv0_bias': (4,)}),
        (lambda: nn.Conv2DTranspose(4, 3, groups=2, in_channels=6, padding=(1, 2),
                                    output_padding=1, strides=2),
         'Conv2DTranspose(2 -> 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 2), '
         'groups=2)', {'conv0_weight': (6, 2, 3, 3), 'conv0_bias': (4,)}),
        (lambda: nn.Conv3DTranspose(4, 2, activation='tanh'),
         'Conv3DTranspose(4 -> 0, kernel_size=(2, 2, 2), stride=(1, 1, 1), Activation(tanh))',
         {'conv0_weight': (0, 4, 2, 2, 2), 'conv0_bias': (4,)}),
        (lambda: nn.Conv2D(4, 3, groups=2, in_channels=2, padding=1, dilation=2),
         'Conv2D(1 -> 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), '
         'dilation=(2, 2), groups=2)', {'conv0_weight': (4, 1, 3, 3), 'conv0_bias': (4,)}),
        (lambda: nn.MaxPool1D(), 'MaxPool1D(size=(2,), stride=(2,), padding=(0,), '
         'ceil_mode=False, global_pool=False, pool_type=max, layout=NCW)', {}),
        (lambda: nn.MaxPool2D(3, 2, 1, ceil_mode=True), 'MaxPool2D(size=(3, 3), '
         'stride=(2, 2), padding=(1, 1), ceil_mode=True, global_pool=False, pool_type=max, '
         'layout=NCHW)', {}),
        (lambda: nn.MaxPool3D(), 'MaxPool3D(size=(2, 2, 2), stride=(2, 2, 2), '
         'padding=(0, 0, 0), ceil_mode=False, global_pool=False, pool_type=max, '
         'layout=NCDHW)', {}),
        (lambda: nn.AvgPool1D(3, 1, 1, ceil_mode=True), 'AvgPool1D(size=(3,), stride=(1,), '
         'padding=(1,), ceil_mode=True, global_pool=False, pool_type=avg, layout=NCW)', {}),
        (lambda: nn.AvgPool2D(padding=(1, 2), strides=1), 'AvgPool2D(size=(2, 2), '
         'stride=(1, 1), padding=(1, 2), ceil_mode=False, global_pool=False, pool_type=avg, '
         'layout=NCHW)', {}),
        (lambda: nn.GlobalMaxPool1D(), 'GlobalMaxPool1D(size=(1,), stride=(1,), padding=(0,),'
         ' ceil_mode=True, global_pool=True, pool_type=max, layout=NCW)', {}),
        (lambda: nn.GlobalAvgPool3D(), 'GlobalAvgPool3D(size=(1, 1, 1), stride=(1, 1, 1), '
         'padding=(0, 0, 0), ceil_mode=True, global_pool=True, pool_type=avg, '
         'layout=NCDHW)', {}),
        (lambda: nn.ReflectionPad2D(2), 'ReflectionPad2D(\n\n)', {}),
    ]
    for make, text, params in cases:
        block = _fresh(make)
        assert repr(block) == text
        assert {k: p.shape for k, p in block.params.items()} == params, text
        assert block.prefix == ('reflectionpad2d0_' if 'Reflection' in text else
                                'conv0_' if params else 'pool0_')
    # MXNet 1.9.1: the weight's init is the layer's weight_initializer, the bias' 'zeros'
    conv = _fresh(lambda: nn.Conv2D(4, 3, weight_initializer='ones'))
    assert conv.weight.init == 'ones' and conv.bias.init == 'zeros'
    # the activation is a child named after it, inside the layer's scope
    conv = _fresh(lambda: nn.Conv2D(4, 3, activation='relu'))
    assert conv.act.prefix == 'conv0_relu_' and list(conv._children) == ['act']


def test_operator_arguments_are_mxnets():
    # MXNet 1.9.1: block._kwargs
    conv = nn.Conv1DTranspose(4, 3, output_padding=1, strides=2)
    assert conv._kwargs == {'kernel': (3,), 'stride': (2,), 'dilate': (1,), 'pad': (0,),
                            'num_filter': 4, 'num_group': 1, 'no_bias': False,
                            'layout': 'NCW', 'adj': (1,)}
    assert nn.AvgPool1D(count_include_pad=False)._kwargs == {
        'kernel': (2,), 'stride': (2,), 'pad': (0,), 'global_pool': False, 'pool_type': 'avg',
        'layout': 'NCW', 'pooling_convention': 'valid', 'count_include_pad': False}
    assert nn.GlobalMaxPool2D()._kwargs == {
        'kernel': (1, 1), 'stride': (1, 1), 'pad': (0, 0), 'global_pool': True,
        'pool_type': 'max', 'layout': 'NCHW', 'pooling_convention': 'full'}
    assert nn.ReflectionPad2D((1, 2, 3, 4, 5, 6, 7, 8))._padding == (1, 2, 3, 4, 5, 6, 7, 8)


@pytest.mark.parametrize('make,match', [
    (lambda: nn.Conv1D(4, (3, 3)), 'kernel_size must be a number or a list of 1 ints'),
    (lambda: nn.Conv2D(4, 3, strides=(1, 1, 1)), 'strides must be a number or a list of 2'),
    (lambda: nn.MaxPool2D((2, 2, 2)), 'pool_size must be a number or a list of 2 ints'),
    (lambda: nn.Conv2D(4, 3, layout='NCW'), "only 'NCHW' and 'NHWC' layouts are valid"),
    (lambda: nn.Conv2D(4, 3, layout='NHWC'), "layout 'NHWC' \\(channels last\\) is not"),
    (lambda: nn.MaxPool3D(layout='NDHWC'), "layout 'NDHWC' \\(channels last\\) is not"),
    (lambda: nn.Conv2D(3, 3, groups=2), 'divisible by groups'),
    (lambda: nn.ReflectionPad2D((1, 1)), 'padding must be an int or 8 ints')])
def test_bad_arguments_raise_clear_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


# ---------------------------------------------------------------- forward and gradients
def _layer_values(net, x, seed=1):
    """Initialize `net` in float64 (the first call finishes deferred shapes), then give
    every parameter fixed random values; returns {attribute: NumPy value}."""
    net.initialize()
    net.cast('float64')
    net(mx.nd.array(x, dtype=np.float64))
    values = {}
    for i, (attr, p) in enumerate(sorted(net._reg_params.items())):
        values[attr] = _rand(p.shape, seed + i)
        p.set_data(mx.nd.array(values[attr], dtype=np.float64))
    return values


def _record(net, x, head):
    xa = mx.nd.array(x, dtype=np.float64)
    xa.attach_grad()
    with autograd.record():
        y = net(xa)
    y.backward(mx.nd.array(head, dtype=np.float64))
    grads = {attr: p.grad().asnumpy().copy() for attr, p in net._reg_params.items()}
    return y.asnumpy(), xa.grad.asnumpy().copy(), grads


# (constructor, input shape, NumPy reference of (x, weight, bias))
CASES = [
    ('conv1d', lambda: nn.Conv1D(3, 3, strides=2, padding=1), (2, 2, 7),
     lambda x, w, b: conv_ref(x, w, b, (2,), (1,), (1,))),
    ('conv2d', lambda: nn.Conv2D(4, (3, 2), dilation=(1, 2), groups=2, use_bias=False),
     (2, 4, 5, 6), lambda x, w, b: conv_ref(x, w, None, (1, 1), (0, 0), (1, 2), 2)),
    ('conv3d', lambda: nn.Conv3D(2, (2, 3, 2), strides=(1, 2, 1), padding=(1, 0, 1),
                                 activation='tanh'), (1, 2, 3, 5, 3),
     lambda x, w, b: np.tanh(conv_ref(x, w, b, (1, 2, 1), (1, 0, 1), (1, 1, 1)))),
    ('conv1dT', lambda: nn.Conv1DTranspose(3, 3, strides=2, padding=1, output_padding=1),
     (2, 2, 4), lambda x, w, b: deconv_ref(x, w, b, (2,), (1,), (1,), (1,))),
    ('conv2dT', lambda: nn.Conv2DTranspose(4, 3, strides=(2, 1), groups=2, in_channels=2,
                                           activation='relu'), (1, 2, 3, 3),
     lambda x, w, b: np.maximum(deconv_ref(x, w, b, (2, 1), (0, 0), (1, 1), (0, 0), 2), 0)),
    ('conv3dT', lambda: nn.Conv3DTranspose(2, 2, strides=2, padding=(0, 1, 0)),
     (1, 2, 2, 3, 2), lambda x, w, b: deconv_ref(x, w, b, (2, 2, 2), (0, 1, 0), (1, 1, 1),
                                                 (0, 0, 0))),
    ('maxpool1d', lambda: nn.MaxPool1D(3, 2, 1), (2, 2, 7),
     lambda x: pool_ref(x, (3,), (2,), (1,), 'max')),
    ('maxpool2d', lambda: nn.MaxPool2D(3, 2, ceil_mode=True), (1, 2, 6, 7),
     lambda x: pool_ref(x, (3, 3), (2, 2), (0, 0), 'max', ceil=True)),
    ('maxpool3d', lambda: nn.MaxPool3D(), (1, 2, 4, 4, 5),
     lambda x: pool_ref(x, (2, 2, 2), (2, 2, 2), (0, 0, 0), 'max')),
    ('avgpool1d', lambda: nn.AvgPool1D(3, 1, 1, count_include_pad=False), (2, 2, 5),
     lambda x: pool_ref(x, (3,), (1,), (1,), 'avg', include_pad=False)),
    ('avgpool2d', lambda: nn.AvgPool2D((2, 3), padding=1, ceil_mode=True), (1, 2, 5, 6),
     lambda x: pool_ref(x, (2, 3), (2, 3), (1, 1), 'avg', ceil=True)),
    ('avgpool3d', lambda: nn.AvgPool3D(2, 1, 1, count_include_pad=False), (1, 1, 2, 3, 2),
     lambda x: pool_ref(x, (2, 2, 2), (1, 1, 1), (1, 1, 1), 'avg', include_pad=False)),
    ('gmax1d', lambda: nn.GlobalMaxPool1D(), (2, 3, 5), lambda x: x.max(2, keepdims=True)),
    ('gmax2d', lambda: nn.GlobalMaxPool2D(), (2, 3, 3, 4),
     lambda x: x.max((2, 3), keepdims=True)),
    ('gmax3d', lambda: nn.GlobalMaxPool3D(), (1, 2, 2, 3, 2),
     lambda x: x.max((2, 3, 4), keepdims=True)),
    ('gavg1d', lambda: nn.GlobalAvgPool1D(), (2, 3, 5), lambda x: x.mean(2, keepdims=True)),
    ('gavg2d', lambda: nn.GlobalAvgPool2D(), (2, 3, 3, 4),
     lambda x: x.mean((2, 3), keepdims=True)),
    ('gavg3d', lambda: nn.GlobalAvgPool3D(), (1, 2, 2, 3, 2),
     lambda x: x.mean((2, 3, 4), keepdims=True)),
    ('reflect', lambda: nn.ReflectionPad2D(2), (1, 2, 3, 4),
     lambda x: reflect_ref(x, (0, 0, 0, 0, 2, 2, 2, 2))),
    ('reflect8', lambda: nn.ReflectionPad2D((0, 0, 0, 0, 1, 2, 3, 0)), (2, 1, 3, 4),
     lambda x: reflect_ref(x, (0, 0, 0, 0, 1, 2, 3, 0))),
]


@pytest.mark.parametrize('make,shape,ref', [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_forward_gradients_and_hybridize(make, shape, ref):
    net = _fresh(make)
    inputs = [_rand(shape)]
    values = _layer_values(net, inputs[0])
    if isinstance(net, nn.conv_layers._Conv):
        inputs += [values['weight'], values.get('bias')]

    def reference():
        return ref(*inputs)
    expected = reference()
    head = _rand(expected.shape, 7)
    y, dx, grads = _record(net, inputs[0], head)
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-10)
    # gradients against central differences of sum(head · reference) (float64)
    got = [dx, grads.get('weight'), grads.get('bias')]
    for i, arr in enumerate(inputs):
        if arr is not None:
            fd = numeric_grad(lambda: float((head * reference()).sum()), arr)
            np.testing.assert_allclose(got[i], fd, rtol=1e-6, atol=1e-7, err_msg=f'input {i}')
    # hybridized: the same outputs and gradients through the cached graph
    net.hybridize()
    yh, dxh, grads_h = _record(net, inputs[0], head)
    np.testing.assert_allclose(yh, y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dxh, dx, rtol=1e-12, atol=1e-12)
    assert grads_h.keys() == grads.keys()
    for k in grads:
        np.testing.assert_allclose(grads_h[k], grads[k], rtol=1e-12, atol=1e-12, err_msg=k)


def test_float32_conv_layers_match_float64():
    for make, shape in [(lambda: nn.Conv2D(3, 3, padding=1), (2, 2, 5, 5)),
                        (lambda: nn.Conv3D(3, 2, groups=1), (1, 2, 3, 3, 3)),
                        (lambda: nn.Conv3DTranspose(2, 2, strides=2), (1, 2, 2, 2, 2))]:
        x = _rand(shape)
        net = _fresh(make)
        net.initialize(mx.init.Xavier())
        y32 = net(mx.nd.array(x)).asnumpy()
        assert y32.dtype == np.float32
        params = {k: p.data().asnumpy().astype(np.float64) for k, p in net._reg_params.items()}
        net.cast('float64')
        for k, p in net._reg_params.items():
            p.set_data(mx.nd.array(params[k], dtype=np.float64))
        np.testing.assert_allclose(y32, net(mx.nd.array(x, dtype=np.float64)).asnumpy(),
                                   rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- deferred shapes
def test_deferred_in_channels_filled_by_the_first_forward():
    net = _fresh(lambda: nn.Conv3D(4, (1, 2, 3), groups=2))
    net.initialize()
    assert net.weight.shape == (4, 0, 1, 2, 3)
    net(mx.nd.ones((1, 6, 2, 3, 4)))
    assert net.weight.shape == (4, 3, 1, 2, 3) and net.weight.data().shape == (4, 3, 1, 2, 3)
    assert repr(net).startswith('Conv3D(3 -> 4,')
    t = _fresh(lambda: nn.Conv1DTranspose(4, 3))
    t.initialize()
    # hybridized before any call: the first cached call infers the shape too
    t.hybridize()
    assert t(mx.nd.ones((2, 3, 7))).shape == (2, 4, 9)
    # MXNet 1.9.1: Conv1DTranspose(4 -> 3, ...) once the weight is (3, 4, 3)
    assert t.weight.shape == (3, 4, 3)
    assert repr(t) == 'Conv1DTranspose(4 -> 3, kernel_size=(3,), stride=(1,))'
    bad = _fresh(lambda: nn.Conv2D(4, 3, groups=2))
    bad.initialize()
    with pytest.raises(ValueError, match='channels divisible by num_group=2'):
        bad(mx.nd.ones((1, 3, 5, 5)))


# ---------------------------------------------------------------- export
def test_export_writes_mxnets_graph(tmp_path):
    net = _fresh(lambda: nn.Conv1D(4, 3, strides=2, padding=1, activation='relu'))
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((2, 3, 9)))
    sym_file, params_file = net.export(os.path.join(tmp_path, 'c1'))
    nodes = json.load(open(sym_file))['nodes']
    # MXNet 1.9.1: the exported nodes (operator, name, operator attributes)
    assert [(n['op'], n['name']) for n in nodes] == [
        ('null', 'data'), ('null', 'conv0_weight'), ('null', 'conv0_bias'),
        ('Convolution', 'conv0_fwd'), ('Activation', 'conv0_relu_fwd')]
    assert nodes[3]['attrs'] == {'dilate': '(1,)', 'kernel': '(3,)', 'layout': 'NCW',
                                 'no_bias': 'False', 'num_filter': '4', 'num_group': '1',
                                 'pad': '(1,)', 'stride': '(2,)'}
    assert sorted(mx.nd.load(params_file)) == ['arg:conv0_bias', 'arg:conv0_weight']
    loaded = mx.sym.load(sym_file)
    assert loaded.infer_shape(data=(2, 3, 9))[1] == [(2, 4, 5)]

    pad = _fresh(lambda: nn.ReflectionPad2D(2))
    pad.hybridize()
    pad(mx.nd.ones((1, 2, 6, 6)))
    nodes = json.load(open(pad.export(os.path.join(tmp_path, 'r'))[0]))['nodes']
    # MXNet 1.9.1
    assert (nodes[1]['op'], nodes[1]['name'], nodes[1]['attrs']) == (
        'Pad', 'reflectionpad2d0_pad0',
        {'mode': 'reflect', 'pad_width': '(0, 0, 0, 0, 2, 2, 2, 2)'})

    pool = _fresh(lambda: nn.MaxPool3D(ceil_mode=True))
    pool.hybridize()
    pool(mx.nd.ones((1, 2, 3, 4, 5)))
    nodes = json.load(open(pool.export(os.path.join(tmp_path, 'p'))[0]))['nodes']
    # MXNet 1.9.1
    assert (nodes[1]['op'], nodes[1]['name'], nodes[1]['attrs']) == (
        'Pooling', 'pool0_fwd',
        {'global_pool': 'False', 'kernel': '(2, 2, 2)', 'layout': 'NCDHW', 'pad': '(0, 0, 0)',
         'pool_type': 'max', 'pooling_convention': 'full', 'stride': '(2, 2, 2)'})


def test_layers_compose_in_a_hybrid_sequential():
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(4, 3, padding=1, activation='relu'), nn.MaxPool2D(),
                    nn.Conv2DTranspose(2, 2, strides=2), nn.GlobalAvgPool2D())
    net.initialize()
    x = mx.nd.array(_rand((2, 3, 6, 6)))
    y = net(x).asnumpy()
    assert y.shape == (2, 2, 1, 1)
    assert list(net.collect_params()) == [
        'hybridsequential0_conv0_weight', 'hybridsequential0_conv0_bias',
        'hybridsequential0_conv1_weight', 'hybridsequential0_conv1_bias']
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), y, rtol=1e-5, atol=1e-6)
