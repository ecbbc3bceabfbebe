"""gluon.nn basic layers: names, shapes, deferred initialization, forward vs NumPy,
gradients vs finite differences of NumPy references, hybridized == imperative, repr.

Values marked "MXNet 1.9.1" were recorded from MXNet 1.9.1 running the same code.
"""
import json
import os
import warnings

import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd
from mxcy.gluon import nn
from mxcy.gluon.parameter import DeferredInitializationError
from mxcy.test_utils import finite_difference as numeric_grad


def _rand(shape, seed=0, low=None, high=None):
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, high, shape)
    return rng.standard_normal(shape)


def _fresh(make):
    with mx.name.NameManager():
        return make()


def _set_params(net, seed=5):
    """Give every parameter deterministic values in [0.5, 1.5)."""
    for i, p in enumerate(net.collect_params().values()):
        p.set_data(mx.nd.array(_rand(p.shape, seed + i, 0.5, 1.5), dtype=p.dtype))


def _run(net, x, head, train=True, int_input=False):
    """Output, input gradient and trainable parameters' gradients of one recorded pass."""
    x = mx.nd.array(x, dtype=np.int32 if int_input else np.float32)
    if not int_input:
        x.attach_grad()
    with autograd.record(train_mode=train):
        y = net(x)
    y.backward(mx.nd.array(head))
    grads = {k: p.grad().asnumpy() for k, p in net.collect_params().items()
             if p.grad_req != 'null'}
    return y.asnumpy(), (None if int_input else x.grad.asnumpy()), grads


def _hybrid_matches_imperative(make, shape, train=True, int_input=False, seed=0):
    """The same layer run imperatively and hybridized: equal outputs, gradients and
    auxiliary states. Returns (net, x, head, y, dx, parameter gradients) of the
    imperative run; `head` is the output gradient fed to backward."""
    x = np.random.default_rng(seed).integers(0, 10, shape) if int_input else _rand(shape, seed)
    results = []
    for hybrid in (False, True):
        net = _fresh(make)
        net.initialize()
        with autograd.pause():
            head = _rand(net(mx.nd.array(x)).shape, 3)      # finishes deferred init
        if hybrid:
            net.hybridize()
        _set_params(net)
        y, gx, grads = _run(net, x, head, train, int_input)
        aux = {k: p.data().asnumpy() for k, p in net.collect_params().items()
               if p.grad_req == 'null'}
        results.append((net, y, gx, grads, aux))
    (net, y0, gx0, g0, a0), (_, y1, gx1, g1, a1) = results
    np.testing.assert_allclose(y1, y0, rtol=1e-5, atol=1e-6)
    if gx0 is not None:
        np.testing.assert_allclose(gx1, gx0, rtol=1e-5, atol=1e-6)
    for store0, store1 in ((g0, g1), (a0, a1)):
        assert store0.keys() == store1.keys()
        for k in store0:
            np.testing.assert_allclose(store1[k], store0[k], rtol=1e-5, atol=1e-6, err_msg=k)
    return net, x, head, y0, gx0, g0


def _value(param):
    return param.data().asnumpy().astype(np.float64)


def _fd_check(reference, arrays, head, got, rtol=2e-3, atol=2e-4):
    """Gradients `got` (one per array) equal central differences of sum(head·reference)."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    for i, g in enumerate(got):
        expected = numeric_grad(lambda: float((head * reference(*arrays)).sum()), arrays[i],
                                eps=1e-5)
        np.testing.assert_allclose(g, expected, rtol=rtol, atol=atol, err_msg=f'input {i}')


# ---------------------------------------------------------------- containers
def test_sequential_names_repr_indexing_and_slicing():
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            inner = nn.HybridSequential()
            with inner.name_scope():
                inner.add(nn.Dense(3, in_units=2), nn.LeakyReLU(0.1))
            net.add(inner, nn.Embedding(4, 2), nn.GroupNorm(2), nn.InstanceNorm(), nn.ELU())
    # MXNet 1.9.1
    assert repr(net) == (
        'HybridSequential(\n  (0): HybridSequential(\n    (0): Dense(2 -> 3, linear)\n'
        '    (1): LeakyReLU(0.1)\n  )\n  (1): Embedding(4 -> 2, float32)\n'
        '  (2): GroupNorm(eps=1e-05, num_groups=2, center=True, scale=True)\n'
        '  (3): InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, in_channels=0)\n'
        '  (4): ELU(\n  \n  )\n)')
    assert net[0][1].prefix == 'hybridsequential0_hybridsequential0_leakyrelu0_'
    assert len(net) == 5 and len(net[0]) == 2 and net[1] is net._children['1']
    part = net[1:3]
    assert type(part) is nn.HybridSequential and part.prefix == net.prefix
    assert len(part) == 2 and part[0] is net[1] and part[1] is net[2]
    assert list(part.collect_params()) == ['hybridsequential0_embedding0_weight',
                                           'hybridsequential0_groupnorm0_gamma',
                                           'hybridsequential0_groupnorm0_beta']


def test_sequential_runs_blocks_in_order_and_warns_when_all_hybrid():
    with mx.name.NameManager():
        seq = nn.Sequential()
        seq.add(nn.Dense(3, in_units=2), nn.Lambda('tanh'), nn.Lambda(lambda x: x * 2),
                nn.HybridLambda(lambda F, x: F.relu(x)))
        plain = nn.Sequential()
        plain.add(nn.Dense(3), nn.Dense(2))
    # MXNet 1.9.1
    assert repr(seq) == ('Sequential(\n  (0): Dense(2 -> 3, linear)\n  (1): Lambda(tanh)\n'
                         '  (2): Lambda(<lambda>)\n  (3): HybridLambda(<lambda>)\n)')
    assert list(seq.collect_params()) == ['dense0_weight', 'dense0_bias']
    seq.initialize()
    x = _rand((4, 2))
    w, b = seq[0].weight.data().asnumpy(), seq[0].bias.data().asnumpy()
    expected = np.maximum(np.tanh(x @ w.T + b) * 2, 0)
    np.testing.assert_allclose(seq(mx.nd.array(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        seq.hybridize()                 # a Lambda child: no warning
    with pytest.warns(UserWarning, match="All children of this Sequential layer "
                                         "'sequential1_' are HybridBlocks"):
        plain.hybridize()
    assert plain[0]._active and plain[1]._active


def test_hybrid_sequential_hybridized_matches_imperative():
    def make():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(6, activation='relu'), nn.BatchNorm(), nn.Dense(2, in_units=6))
        return net
    _hybrid_matches_imperative(make, (4, 5))


# ---------------------------------------------------------------- Dense
def test_dense_names_deferred_init_and_repr():
    with mx.name.NameManager():
        d = nn.Dense(5, activation='relu')
        d2 = nn.Dense(3, activation='sigmoid', in_units=4, use_bias=False)
    assert [(k, p.shape) for k, p in d.collect_params().items()] == [
        ('dense0_weight', (5, 0)), ('dense0_bias', (5,))]
    assert d.act.prefix == 'dense0_relu_' and d2.bias is None
    assert list(d2.collect_params()) == ['dense1_weight']
    # MXNet 1.9.1
    assert repr(d) == 'Dense(None -> 5, Activation(relu))'
    assert repr(d2) == 'Dense(4 -> 3, Activation(sigmoid))'
    d.initialize()
    with pytest.raises(DeferredInitializationError):
        d.weight.data()
    d(mx.nd.ones((2, 3, 4)))
    assert d.weight.shape == (5, 12) and d.weight.data().shape == (5, 12)
    assert repr(d) == 'Dense(12 -> 5, Activation(relu))'


@pytest.mark.parametrize('kwargs,shape', [
    ({'activation': 'tanh'}, (3, 2, 4)),
    ({'flatten': False}, (3, 2, 4)),
    ({'use_bias': False}, (3, 4)),
])
def test_dense_forward_and_gradients(kwargs, shape):
    net, x, head, y, gx, grads = _hybrid_matches_imperative(lambda: nn.Dense(5, **kwargs),
                                                            shape)
    flatten = kwargs.get('flatten', True)
    act = np.tanh if kwargs.get('activation') == 'tanh' else (lambda v: v)

    def ref(xv, wv, bv=0):
        return act((xv.reshape(shape[0], -1) if flatten else xv) @ wv.T + bv)
    arrays = [x, _value(net.weight)]
    got = [gx, grads['dense0_weight']]
    if net.bias is not None:
        arrays.append(_value(net.bias))
        got.append(grads['dense0_bias'])
    assert y.shape == ((3, 5) if flatten else shape[:-1] + (5,))
    np.testing.assert_allclose(y, ref(*arrays), rtol=1e-5, atol=1e-6)
    _fd_check(ref, arrays, head, got)


def test_dense_dtype():
    d = _fresh(lambda: nn.Dense(3, dtype='float64', in_units=2))
    d.initialize()
    assert d.weight.dtype == 'float64' and d.bias.dtype == 'float64'
    assert d(mx.nd.ones((1, 2), dtype=np.float64)).dtype == np.float64


# ---------------------------------------------------------------- Dropout
def test_dropout_training_inference_axes_and_repr():
    # MXNet 1.9.1
    assert repr(nn.Dropout(0.5)) == 'Dropout(p = 0.5, axes=())'
    assert repr(nn.Dropout(0.2, axes=(1,))) == 'Dropout(p = 0.2, axes=(1,))'
    x = _rand((6, 5, 4), low=1, high=2)
    for hybrid in (False, True):
        drop = _fresh(lambda: nn.Dropout(0.5, axes=(1,)))
        if hybrid:
            drop.hybridize()
        np.testing.assert_array_equal(drop(mx.nd.array(x)).asnumpy(),
                                      x.astype(np.float32))          # inference: identity
        xs = mx.nd.array(x)
        xs.attach_grad()
        with autograd.record():
            y = drop(xs)
        y.backward()
        mask = y.asnumpy() / x.astype(np.float32)
        assert set(np.round(np.unique(mask), 5)) <= {0.0, 2.0}
        assert 0 < (mask == 0).mean() < 1
        # one draw shared along axis 1
        np.testing.assert_array_equal(mask, np.broadcast_to(mask[:, :1], mask.shape))
        np.testing.assert_allclose(xs.grad.asnumpy(), mask, rtol=1e-6)


def test_dropout_rate_zero_is_a_copy():
    _hybrid_matches_imperative(lambda: nn.Dropout(0.0), (3, 4))
    x = _rand((3, 4))
    np.testing.assert_array_equal(nn.Dropout(0)(mx.nd.array(x)).asnumpy(),
                                  x.astype(np.float32))


# ---------------------------------------------------------------- BatchNorm
def _bn_ref(x, gamma, beta, axis, eps):
    red = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    mean, var = x.mean(axis=red, keepdims=True), x.var(axis=red, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma.reshape(shape) + beta.reshape(shape)


def test_batchnorm_names_deferred_init_and_repr():
    with mx.name.NameManager():
        bn = nn.BatchNorm()
        bn2 = nn.BatchNorm(in_channels=3, momentum=0.8, epsilon=1e-3, use_global_stats=True)
        bn3 = nn.BatchNorm(scale=False, center=False)
    # MXNet 1.9.1
    assert [(p.name, p.shape, p.grad_req) for p in bn.collect_params().values()] == [
        ('batchnorm0_gamma', (0,), 'write'), ('batchnorm0_beta', (0,), 'write'),
        ('batchnorm0_running_mean', (0,), 'null'), ('batchnorm0_running_var', (0,), 'null')]
    assert [p.grad_req for p in bn3.collect_params().values()] == ['null'] * 4
    assert repr(bn) == ('BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, '
                        'use_global_stats=False, in_channels=None)')
    assert repr(bn2) == ('BatchNorm(axis=1, eps=0.001, momentum=0.8, fix_gamma=False, '
                         'use_global_stats=True, in_channels=3)')
    assert bn2.in_channels == 3 and not hasattr(bn, 'in_channels')
    bn.initialize()
    bn(mx.nd.ones((2, 4, 3)))
    assert [p.shape for p in bn.collect_params().values()] == [(4,)] * 4
    np.testing.assert_array_equal(bn.running_var.data().asnumpy(), 1)
    assert repr(bn).endswith('in_channels=4)')


def test_batchnorm_training_step_matches_mxnet():
    bn = _fresh(nn.BatchNorm)
    bn.initialize()
    x = mx.nd.array(np.arange(12, dtype=np.float32).reshape(2, 3, 2) ** 1.5)
    x.attach_grad()
    with autograd.record():
        y = bn(x)
    y.backward(mx.nd.array(np.linspace(-1, 1, 12).reshape(2, 3, 2)))
    # MXNet 1.9.1 (after forward and backward)
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(),
                               [0.8554301, 1.4413003, 2.1821501], rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.data().asnumpy(),
                               [7.5823975, 12.026547, 16.28223], rtol=1e-5)
    np.testing.assert_allclose(y.asnumpy()[:, 0], [[-1.04645, -0.924119],
                                                   [0.751431, 1.219138]], rtol=1e-5)
    np.testing.assert_allclose(bn.gamma.grad().asnumpy(), [2.2033515, 2.2093923, 2.2106395],
                               rtol=1e-5)
    np.testing.assert_allclose(bn.beta.grad().asnumpy(), [-1.4545454, 0.0, 1.4545455],
                               atol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy()[0, 0], [-0.0073324288, 0.0066663185],
                               rtol=1e-4)
    # inference uses the running statistics (MXNet 1.9.1)
    np.testing.assert_allclose(bn(x).asnumpy()[1, 2], [7.2960863, 8.500533], rtol=1e-5)


@pytest.mark.parametrize('make,axis', [
    (lambda: nn.BatchNorm(), 1),
    (lambda: nn.BatchNorm(axis=-1, scale=False, momentum=0.5), -1),
    (lambda: nn.BatchNorm(center=False, epsilon=1e-3), 1),
    (lambda: nn.BatchNorm(use_global_stats=True), 1),
    (lambda: nn.BatchNormReLU(), 1),
])
def test_batchnorm_forward_gradients_and_running_stats(make, axis):
    net, x, head, y, gx, grads = _hybrid_matches_imperative(make, (4, 3, 5))
    kw = net._kwargs
    eps, momentum = kw['eps'], kw['momentum']
    c = x.shape[axis]
    gamma = np.ones(c) if kw['fix_gamma'] else _value(net.gamma)
    beta = _value(net.beta)
    mm0, mv0 = _rand(c, 7, 0.5, 1.5), _rand(c, 8, 0.5, 1.5)      # as _set_params set them
    relu = (lambda v: np.maximum(v, 0)) if net.fuse_relu else (lambda v: v)
    red = tuple(i for i in range(3) if i != axis % 3)
    if not kw['use_global_stats']:
        def ref(xv, gv, bv):
            return relu(_bn_ref(xv, gv, bv, axis, eps))
        np.testing.assert_allclose(_value(net.running_mean),
                                   mm0 * momentum + x.mean(axis=red) * (1 - momentum),
                                   rtol=1e-5)
        np.testing.assert_allclose(_value(net.running_var),
                                   mv0 * momentum + x.var(axis=red) * (1 - momentum),
                                   rtol=1e-5)
    else:
        def ref(xv, gv, bv):
            shape = [1, c, 1] if axis == 1 else [1, 1, c]
            return relu((xv - mm0.reshape(shape)) / np.sqrt(mv0.reshape(shape) + eps) *
                        gv.reshape(shape) + bv.reshape(shape))
        np.testing.assert_allclose(_value(net.running_mean), mm0, rtol=1e-6)
    np.testing.assert_allclose(y, ref(x, gamma, beta), rtol=1e-4, atol=1e-5)
    arrays, got = [x], [gx]
    if net.gamma.grad_req != 'null':
        arrays.append(gamma)
        got.append(grads[net.gamma.name])
    if net.beta.grad_req != 'null':
        arrays.append(beta)
        got.append(grads[net.beta.name])
    else:
        assert net.beta.name not in grads

    def ref_of(xv, *rest):
        params = {'g': gamma, 'b': beta}
        names = [n for n, p in (('g', net.gamma), ('b', net.beta)) if p.grad_req != 'null']
        params.update(zip(names, rest))
        return ref(xv, params['g'], params['b'])
    _fd_check(ref_of, arrays, head, got)


def test_batchnorm_recorded_in_predict_mode_matches_mxnet():
    """record(train_mode=False): the running statistics normalise; MXNet 1.9.1's backward
    (train_mode=True) still applies the batch-statistics formula to them."""
    for hybrid in (False, True):
        bn = _fresh(lambda: nn.BatchNorm(in_channels=3))
        bn.initialize()
        if hybrid:
            bn.hybridize()
        bn.running_mean.set_data(mx.nd.array([0.1, 0.2, 0.3]))
        bn.running_var.set_data(mx.nd.array([2.0, 3.0, 4.0]))
        x = mx.nd.array(np.arange(12).reshape(2, 3, 2))
        x.attach_grad()
        with autograd.record(train_mode=False):
            y = bn(x)
        y.backward(mx.nd.array(np.linspace(-1, 1, 12).reshape(2, 3, 2)))
        np.testing.assert_allclose(y.asnumpy()[0, 0], np.array([-0.1, 0.9]) / np.sqrt(2 + 1e-5),
                                   rtol=1e-5)
        np.testing.assert_allclose(bn.running_mean.data().asnumpy(), [0.1, 0.2, 0.3])
        # MXNet 1.9.1
        np.testing.assert_allclose(x.grad.asnumpy().ravel(), [
            -0.43423, -0.46315, -0.95, -1.16869, -2.30692, -2.75351, -0.60778, -0.63671,
            -2.26215, -2.48084, -4.98646, -5.43305], rtol=1e-4)
        np.testing.assert_allclose(bn.gamma.grad().asnumpy(), [1.25993, 3.88399, 8.59999],
                                   rtol=1e-4)


def test_batchnorm_cast_keeps_float32_for_float16():
    bn = _fresh(lambda: nn.BatchNorm(in_channels=2))
    bn.initialize()
    bn.cast('float16')
    # MXNet 1.9.1: the statistics stay float32
    assert [np.dtype(p.dtype).name for p in bn.collect_params().values()] == ['float32'] * 4
    bn.cast('float64')
    assert bn.gamma.data().dtype == np.float64


def test_batchnorm_relu_names_and_repr():
    bn = _fresh(nn.BatchNormReLU)
    assert list(bn.collect_params()) == [
        'batchnormrelu0_gamma', 'batchnormrelu0_beta', 'batchnormrelu0_running_mean',
        'batchnormrelu0_running_var']
    # MXNet 1.9.1
    assert repr(bn) == ('BatchNormReLU(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, '
                        'use_global_stats=False, in_channels=None)')


# ---------------------------------------------------------------- Instance/Layer/GroupNorm
def _norm_ref(x, gamma, beta, reduce, param_axis, eps, groups=None):
    shape = [1] * x.ndim
    shape[param_axis] = -1
    if groups:
        xg = x.reshape(x.shape[0], groups, -1)
        mean, var = xg.mean(axis=2, keepdims=True), xg.var(axis=2, keepdims=True)
        norm = ((xg - mean) / np.sqrt(var + eps)).reshape(x.shape)
    else:
        mean, var = x.mean(axis=reduce, keepdims=True), x.var(axis=reduce, keepdims=True)
        norm = (x - mean) / np.sqrt(var + eps)
    if groups:
        rep = x.shape[1] // groups
        gamma, beta = np.repeat(gamma, rep), np.repeat(beta, rep)
    return norm * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize('make,shape,reduce,param_axis,groups', [
    (lambda: nn.InstanceNorm(scale=True), (4, 3, 5), (2,), 1, None),
    (lambda: nn.InstanceNorm(), (2, 3, 2, 2), (2, 3), 1, None),
    (lambda: nn.InstanceNorm(axis=2, scale=True, epsilon=1e-3), (4, 3, 5), (1,), 2, None),
    (lambda: nn.LayerNorm(), (4, 3, 5), (2,), 2, None),
    (lambda: nn.LayerNorm(axis=1, center=False), (4, 3, 5), (1,), 1, None),
    (lambda: nn.GroupNorm(3), (4, 6, 5), None, 1, 3),
    (lambda: nn.GroupNorm(scale=False), (2, 4, 3, 2), None, 1, 1),
])
def test_norm_layers_forward_and_gradients(make, shape, reduce, param_axis, groups):
    net, x, head, y, gx, grads = _hybrid_matches_imperative(make, shape)
    eps = net._kwargs['eps']
    gamma, beta = _value(net.gamma), _value(net.beta)
    assert gamma.shape == ((groups,) if groups else (shape[param_axis],))
    trainable = [(n, p) for n, p in (('g', net.gamma), ('b', net.beta))
                 if p.grad_req != 'null']
    assert sorted(grads) == sorted(p.name for _, p in trainable)

    def ref(xv, *rest):
        params = {'g': gamma, 'b': beta}
        params.update(zip([n for n, _ in trainable], rest))
        return _norm_ref(xv, params['g'], params['b'], reduce, param_axis, eps, groups)
    np.testing.assert_allclose(y, ref(x), rtol=1e-4, atol=1e-5)
    values = {'g': gamma, 'b': beta}
    _fd_check(ref, [x] + [values[n] for n, _ in trainable], head,
              [gx] + [grads[p.name] for _, p in trainable])


def test_norm_layers_names_deferred_init_and_repr():
    with mx.name.NameManager():
        inorm = nn.InstanceNorm()
        lnorm = nn.LayerNorm(in_channels=4)
        gnorm = nn.GroupNorm(2, center=False)
    # MXNet 1.9.1
    assert [(p.name, p.shape, p.grad_req) for p in inorm.collect_params().values()] == [
        ('instancenorm0_gamma', (0,), 'null'), ('instancenorm0_beta', (0,), 'write')]
    assert [(p.name, p.shape) for p in lnorm.collect_params().values()] == [
        ('layernorm0_gamma', (4,)), ('layernorm0_beta', (4,))]
    assert [(p.name, p.shape, p.grad_req) for p in gnorm.collect_params().values()] == [
        ('groupnorm0_gamma', (2,), 'write'), ('groupnorm0_beta', (2,), 'null')]
    assert repr(inorm) == ('InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, '
                           'in_channels=0)')
    assert repr(lnorm) == 'LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=4)'
    assert repr(gnorm) == 'GroupNorm(eps=1e-05, num_groups=2, center=False, scale=True)'
    inorm.initialize()
    inorm(mx.nd.ones((2, 5, 3)))
    assert inorm.gamma.shape == (5,) and repr(inorm).endswith('in_channels=5)')


def test_group_norm_matches_mxnet():
    gn = _fresh(lambda: nn.GroupNorm(2))
    gn.initialize()
    x = mx.nd.array(np.arange(16, dtype=np.float32).reshape(2, 4, 2) ** 1.5)
    x.attach_grad()
    with autograd.record():
        y = gn(x)
    y.backward(mx.nd.array(np.linspace(-1, 1, 16).reshape(2, 4, 2)))
    # MXNet 1.9.1
    np.testing.assert_allclose(y.asnumpy()[0], [[-1.141008, -0.635274], [0.289422, 1.48686],
                                                [-1.299184, -0.48892], [0.407013, 1.381092]],
                               rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy()[0, :2], [[-0.016433, 0.01345],
                                                         [0.012228, -0.009244]], rtol=1e-3)
    np.testing.assert_allclose(gn.gamma.grad().asnumpy(), [1.1833386, 1.1919857], rtol=1e-5)
    np.testing.assert_allclose(gn.beta.grad().asnumpy(), [-2.1333334, 2.1333334], rtol=1e-5)


# ---------------------------------------------------------------- Embedding, Flatten
def test_embedding():
    emb = _fresh(lambda: nn.Embedding(10, 3))
    # MXNet 1.9.1
    assert [(p.name, p.shape) for p in emb.collect_params().values()] == [
        ('embedding0_weight', (10, 3))]
    assert repr(emb) == 'Embedding(10 -> 3, float32)'
    assert repr(nn.Embedding(5, 2, dtype='float64')) == 'Embedding(5 -> 2, float64)'
    net, idx, head, y, _, grads = _hybrid_matches_imperative(lambda: nn.Embedding(10, 3),
                                                             (4, 5), int_input=True)
    w = _value(net.weight)
    np.testing.assert_allclose(y, w[idx], rtol=1e-6)
    expected = np.zeros_like(w)
    np.add.at(expected, idx, head)
    np.testing.assert_allclose(grads['embedding0_weight'], expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match='sparse_grad=True'):
        nn.Embedding(10, 3, sparse_grad=True)


def test_flatten():
    assert repr(nn.Flatten()) == 'Flatten'                   # MXNet 1.9.1
    _, x, head, y, gx, _ = _hybrid_matches_imperative(nn.Flatten, (4, 3, 2, 2))
    np.testing.assert_allclose(y, x.reshape(4, 12), rtol=1e-6)
    np.testing.assert_allclose(gx, head.reshape(x.shape), rtol=1e-6)


# ---------------------------------------------------------------- Lambda, HybridLambda
def test_lambda_and_hybrid_lambda():
    x = _rand((3, 4))
    lam = _fresh(lambda: nn.Lambda('tanh'))
    assert lam.prefix == 'lambda0_' and repr(lam) == 'Lambda(tanh)'
    np.testing.assert_allclose(lam(mx.nd.array(x)).asnumpy(), np.tanh(x), rtol=1e-5)
    two = nn.Lambda(lambda a, b: a * b)
    np.testing.assert_allclose(two(mx.nd.array(x), mx.nd.array(x)).asnumpy(), x * x,
                               rtol=1e-5)
    hl = nn.HybridLambda('tanh')
    assert repr(hl) == 'HybridLambda(tanh)'
    _, x, head, y, gx, _ = _hybrid_matches_imperative(
        lambda: nn.HybridLambda(lambda F, v: F.LeakyReLU(v, slope=0.1)), (3, 4))
    np.testing.assert_allclose(y, np.where(x > 0, x, 0.1 * x), rtol=1e-5)
    np.testing.assert_allclose(gx, head * np.where(x > 0, 1, 0.1), rtol=1e-5)
    _hybrid_matches_imperative(lambda: nn.HybridLambda('tanh'), (3, 4))


def test_lambda_errors_as_mxnet():
    # MXNet 1.9.1's messages
    with pytest.raises(AssertionError, match='Function name nope is not found in ndarray.'):
        nn.Lambda('nope')
    with pytest.raises(AssertionError,
                       match='Function name nope is not found in symbol/ndarray.'):
        nn.HybridLambda('nope')
    with pytest.raises(ValueError, match="Unrecognized function in lambda: 3 of type "
                                         "<class 'int'>"):
        nn.Lambda(3)


# ---------------------------------------------------------------- export
def test_export_writes_mxnet_parameter_names(tmp_path):
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(6, activation='relu'), nn.BatchNorm(), nn.Dropout(0.3),
                    nn.Dense(2, in_units=6))
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((3, 4)))
    sym_file, params_file = net.export(os.path.join(tmp_path, 'm'), epoch=3)
    assert sorted(os.listdir(tmp_path)) == ['m-0003.params', 'm-symbol.json']
    # MXNet 1.9.1
    assert sorted(mx.nd.load(params_file)) == [
        'arg:hybridsequential0_batchnorm0_beta', 'arg:hybridsequential0_batchnorm0_gamma',
        'arg:hybridsequential0_dense0_bias', 'arg:hybridsequential0_dense0_weight',
        'arg:hybridsequential0_dense1_bias', 'arg:hybridsequential0_dense1_weight',
        'aux:hybridsequential0_batchnorm0_running_mean',
        'aux:hybridsequential0_batchnorm0_running_var']
    with open(sym_file) as f:
        nodes = [(n['op'], n['name']) for n in json.load(f)['nodes']]
    assert nodes == [  # MXNet 1.9.1
        ('null', 'data'), ('null', 'hybridsequential0_dense0_weight'),
        ('null', 'hybridsequential0_dense0_bias'),
        ('FullyConnected', 'hybridsequential0_dense0_fwd'),
        ('Activation', 'hybridsequential0_dense0_relu_fwd'),
        ('null', 'hybridsequential0_batchnorm0_gamma'),
        ('null', 'hybridsequential0_batchnorm0_beta'),
        ('null', 'hybridsequential0_batchnorm0_running_mean'),
        ('null', 'hybridsequential0_batchnorm0_running_var'),
        ('BatchNorm', 'hybridsequential0_batchnorm0_fwd'),
        ('Dropout', 'hybridsequential0_dropout0_fwd'),
        ('null', 'hybridsequential0_dense1_weight'), ('null', 'hybridsequential0_dense1_bias'),
        ('FullyConnected', 'hybridsequential0_dense1_fwd')]
    loaded = mx.gluon.SymbolBlock.imports(sym_file, ['data'], params_file)
    x = mx.nd.array(_rand((3, 4)))
    np.testing.assert_allclose(loaded(x).asnumpy(), net(x).asnumpy(), rtol=1e-5, atol=1e-6)
