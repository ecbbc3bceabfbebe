"""Inference graph passes (mxcy/_graph_passes.py): each rewritten graph gives the bound
graph's outputs to float rounding, the rewrite is the one expected, and folded weights
follow parameter changes."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _fused, _graph_passes

sym = mx.sym


def conv(x, name, f=8, k=3, bias=True, stride=1, groups=1):
    return sym.Convolution(x, kernel=(k, k), pad=(k // 2, k // 2), num_filter=f,
                           stride=(stride, stride), num_group=groups, no_bias=not bias,
                           name=name)


def bind(net, passes, monkeypatch, shape=(2, 3, 8, 8), dtype='float32', seed=0):
    monkeypatch.setenv('MXCY_GRAPH_PASSES', passes)
    exe = net.simple_bind(mx.cpu(), grad_req='null', type_dict={'data': dtype}, data=shape)
    rng = np.random.RandomState(seed)
    for name in sorted(exe.arg_dict):
        exe.arg_dict[name][:] = rng.uniform(-1, 1, exe.arg_dict[name].shape)
    for name in sorted(exe.aux_dict):
        lo = 0.5 if name.endswith('var') else -0.5
        exe.aux_dict[name][:] = rng.uniform(lo, lo + 1, exe.aux_dict[name].shape)
    return exe


def fused_ops(exe):
    graph = exe._infer_graph
    assert graph, "the passes rewrote nothing"
    return [n.op.name for n in graph.nodes if not n.is_variable]


def check_same(net, monkeypatch, expect_ops=None, rtol=1e-5, atol=1e-5, **kw):
    ref = bind(net, '0', monkeypatch, **kw)
    exe = bind(net, '1', monkeypatch, **kw)
    want = [o.asnumpy() for o in ref.forward(is_train=False)]
    got = [o.asnumpy() for o in exe.forward(is_train=False)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    assert exe.outputs[0] is exe.forward(is_train=False)[0]      # same output arrays
    if expect_ops is not None:
        assert fused_ops(exe) == expect_ops
    return ref, exe


@pytest.mark.parametrize('bias', [True, False])
@pytest.mark.parametrize('fix_gamma', [True, False])
def test_conv_bn_relu_stack_is_folded_and_fused(monkeypatch, bias, fix_gamma):
    x = sym.Variable('data')
    for i in range(3):
        x = sym.BatchNorm(conv(x, f'c{i}', bias=bias), fix_gamma=fix_gamma, name=f'bn{i}')
        x = sym.Activation(x, act_type='relu', name=f'r{i}')
    # NOTE: outputs reach ~30 after three layers; folding rounds the weights differently, so
    # a cancelling output differs by a few float32 ulps of 30 (1.5e-5), not of itself
    check_same(x, monkeypatch, ['_fused_conv_act'] * 3, atol=1e-4)


def test_residual_block_add_relu_in_one_op(monkeypatch):
    x = sym.Variable('data')
    body = sym.relu(sym.BatchNorm(conv(x, 'c1', bias=False), name='bn1'))
    body = sym.BatchNorm(conv(body, 'c2', bias=False), name='bn2')
    short = sym.BatchNorm(conv(x, 'down', k=1, bias=False), name='bnd')
    out = sym.Activation(body + short, act_type='relu')
    out = sym.Activation(out + out, act_type='relu')        # the same input twice
    check_same(out, monkeypatch, ['_fused_conv_act', '_fused_conv_act', '_fused_conv_act',
                                  '_fused_add_act', '_fused_add_act'])


def test_bn_not_after_conv_becomes_bn_relu(monkeypatch):
    x = sym.Variable('data')
    pooled = sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type='avg')
    y = sym.relu(sym.BatchNorm(pooled, fix_gamma=False, name='bn'))
    z = sym.BatchNorm(x * 2, name='bn_alone')       # stays as it is
    check_same(sym.Group([y, z]), monkeypatch,
               ['Pooling', '_contrib_BatchNormWithReLU', '_mul_scalar', 'BatchNorm'])


def test_conv_output_used_twice_is_not_folded(monkeypatch):
    x = sym.Variable('data')
    c = conv(x, 'c')
    y = sym.relu(sym.BatchNorm(c, name='bn')) + c
    check_same(y, monkeypatch, ['Convolution', '_contrib_BatchNormWithReLU',
                                'elemwise_add'])


def test_conv_output_that_is_a_graph_output_is_not_folded(monkeypatch):
    c = conv(sym.Variable('data'), 'c')
    y = sym.relu(sym.BatchNorm(c, name='bn'))
    _, exe = check_same(sym.Group([y, c]), monkeypatch,
                        ['Convolution', '_contrib_BatchNormWithReLU'])
    assert len(exe.outputs) == 2


def test_use_global_stats_and_fully_connected_and_clip(monkeypatch):
    x = sym.Variable('data')
    y = sym.clip(sym.BatchNorm(conv(x, 'c'), use_global_stats=True, name='bn'), 0, 6)
    y = sym.FullyConnected(y, num_hidden=5, name='fc')
    y = sym.BatchNorm(y, fix_gamma=False, name='bnfc')
    check_same(y, monkeypatch, ['_fused_conv_act', 'FullyConnected'])


def test_depthwise_and_float64(monkeypatch):
    x = sym.Variable('data')
    x = sym.relu(sym.BatchNorm(conv(x, 'c0', f=4, bias=False), name='bn0'))
    x = sym.relu(sym.BatchNorm(conv(x, 'dw', f=4, groups=4, bias=False, stride=2),
                               name='bn1'))
    check_same(x, monkeypatch, ['_fused_conv_act'] * 2, rtol=1e-12, atol=1e-12,
               dtype='float64')


def test_statistics_output_in_use_blocks_folding(monkeypatch):
    bn = sym.BatchNorm(conv(sym.Variable('data'), 'c'), output_mean_var=True, name='bn')
    check_same(sym.Group([bn[0], bn[1]]), monkeypatch, None)
    exe = bind(sym.Group([bn[0], bn[1]]), '1', monkeypatch)
    exe.forward(is_train=False)
    assert exe._infer_graph is False                  # nothing to rewrite


def _block():
    x = sym.Variable('data')
    y = sym.relu(sym.BatchNorm(conv(x, 'c1', bias=False), fix_gamma=False, name='bn1'))
    return sym.relu(sym.BatchNorm(conv(y, 'c2'), fix_gamma=False, name='bn2') + y)


def test_folded_weights_follow_parameter_changes(monkeypatch):
    ref = bind(_block(), '0', monkeypatch)
    exe = bind(_block(), '1', monkeypatch)

    def same():
        want = ref.forward(is_train=False)[0].asnumpy()
        np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(), want,
                                   rtol=1e-5, atol=1e-5)
    same()
    for e in (ref, exe):                                       # a slice assignment
        e.arg_dict['bn1_gamma'][:] = 3.0
    same()
    new = {'c2_weight': mx.nd.ones((8, 8, 3, 3)) * 0.1, 'c2_bias': mx.nd.ones((8,))}
    for e in (ref, exe):
        e.copy_params_from(new, {'bn2_moving_mean': mx.nd.ones((8,))})
    same()
    for e in (ref, exe):                                       # an in-place NDArray op
        e.aux_dict['bn1_moving_var'] *= 4
    same()


def test_module_set_params_refolds(monkeypatch):
    net = _block()
    mods = {}
    for passes in ('0', '1'):
        monkeypatch.setenv('MXCY_GRAPH_PASSES', passes)
        mod = mx.mod.Module(net, data_names=['data'], label_names=None)
        mod.bind(data_shapes=[('data', (2, 3, 8, 8))], for_training=False)
        mod.init_params(mx.init.Xavier())
        mods[passes] = mod
    arg, aux = mods['0'].get_params()
    batch = mx.io.DataBatch([mx.nd.array(np.random.RandomState(1).rand(2, 3, 8, 8))])
    for step in range(2):
        mods['1'].set_params(arg, aux)
        outs = []
        for mod in mods.values():
            mod.forward(batch, is_train=False)
            outs.append(mod.get_outputs()[0].asnumpy())
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)
        arg = {k: v * 1.5 for k, v in arg.items()}
        aux = {k: v + 0.5 for k, v in aux.items()}
        mods['0'].set_params(arg, aux)
    assert mods['1']._exec._infer_graph


def test_training_forward_runs_the_bound_graph(monkeypatch):
    ref = bind(_block(), '0', monkeypatch)
    exe = bind(_block(), '1', monkeypatch)
    exe.forward(is_train=False)
    for is_train in (True, False, True):
        want = ref.forward(is_train=is_train)[0].asnumpy()
        np.testing.assert_allclose(exe.forward(is_train=is_train)[0].asnumpy(), want,
                                   rtol=1e-5, atol=1e-5)


def test_training_bind_and_off_switch_get_no_passes(monkeypatch):
    monkeypatch.setenv('MXCY_GRAPH_PASSES', '1')
    exe = _block().simple_bind(mx.cpu(), data=(2, 3, 8, 8))
    exe.forward(is_train=False)
    assert exe._infer_graph is False
    exe = bind(_block(), '0', monkeypatch)
    exe.forward(is_train=False)
    assert exe._infer_graph is False


def test_pass_selection(monkeypatch):
    for spec, want in (('fold', {'fold'}), ('fold, elemwise', {'fold', 'elemwise'}),
                       ('all', set(_graph_passes.PASSES)), ('off', set())):
        monkeypatch.setenv('MXCY_GRAPH_PASSES', spec)
        assert _graph_passes.enabled() == want
    monkeypatch.setenv('MXCY_GRAPH_PASSES', 'fold,fuse')
    with pytest.raises(ValueError, match="unknown pass.*'fuse'"):
        _graph_passes.enabled()
    exe = bind(_block(), 'fold', monkeypatch)
    exe.forward(is_train=False)
    assert fused_ops(exe) == ['_fused_conv_act', 'relu', '_fused_conv_act', 'elemwise_add',
                              'relu']


def test_zoo_resnet_through_module(monkeypatch, tmp_path):
    """mxcy's own model-zoo ResNet-18 v1, exported and loaded as users load MXNet's."""
    net = mx.gluon.model_zoo.vision.resnet18_v1()
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 3, 32, 32)))
    net.hybridize()
    net(x)
    net.export(str(tmp_path / 'r18'))
    s, arg, aux = mx.model.load_checkpoint(str(tmp_path / 'r18'), 0)
    rng = np.random.RandomState(1)
    aux = {k: mx.nd.array(rng.uniform(0.5, 1.5, v.shape)) for k, v in aux.items()}
    outs, mods = [], []
    for passes in ('0', '1'):
        monkeypatch.setenv('MXCY_GRAPH_PASSES', passes)
        mod = mx.mod.Module(s, data_names=['data'], label_names=None)
        mod.bind(data_shapes=[('data', x.shape)], for_training=False)
        mod.set_params(arg, aux)
        mod.forward(mx.io.DataBatch([x]), is_train=False)
        outs.append(mod.get_outputs()[0].asnumpy())
        mods.append(mod)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-4)
    ops = fused_ops(mods[1]._exec)
    assert 'BatchNorm' not in ops and ops.count('_fused_conv_act') == 20
    assert ops.count('_fused_add_act') == 8


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_add_act_kernel_twin(dtype):
    rng = np.random.RandomState(0)
    a, b = rng.randn(3, 100001).astype(dtype), rng.randn(3, 100001).astype(dtype)
    np.testing.assert_array_equal(_fused.add_act_np(a, b, 0.0, np.inf), np.maximum(a + b, 0))
    np.testing.assert_array_equal(_fused.add_act_np(a, None, -0.5, 0.5), np.clip(a, -.5, .5))


def test_hybridized_block_without_gradients_runs_the_passes(monkeypatch):
    """A hybridized block whose parameters need no gradient binds for inference; each call
    rebinds its input and output arrays (Executor._rebind_values) into the passes' program."""
    from mxcy.gluon import nn
    outs = []
    for passes in ('0', '1'):
        monkeypatch.setenv('MXCY_GRAPH_PASSES', passes)
        mx.random.seed(0)
        net = nn.HybridSequential()
        net.add(nn.Conv2D(4, 3, padding=1, in_channels=3), nn.BatchNorm(in_channels=4),
                nn.Activation('relu'), nn.Dense(3, in_units=4 * 8 * 8))
        net.initialize(mx.init.Xavier())
        for p in net.collect_params().values():
            p.grad_req = 'null'
        net.hybridize()
        rng = np.random.RandomState(2)
        outs.append([net(mx.nd.array(rng.rand(2, 3, 8, 8))).asnumpy() for _ in range(3)])
        exe = next(iter(net._cached.free.values()))[0]
        assert bool(exe._infer_graph) == (passes == '1')
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not np.allclose(outs[1][0], outs[1][1])


def test_reshaped_executor_keeps_the_passes(monkeypatch):
    ref = bind(_block(), '0', monkeypatch)
    exe = bind(_block(), '1', monkeypatch)
    exe.forward(is_train=False)
    x = np.random.RandomState(3).rand(5, 3, 8, 8)
    small = {}
    for name, e in (('ref', ref), ('exe', exe)):
        small[name] = e.reshape(allow_up_sizing=True, data=(5, 3, 8, 8))
        small[name].arg_dict['data'][:] = x
    got = small['exe'].forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(got, small['ref'].forward(is_train=False)[0].asnumpy(),
                               rtol=1e-5, atol=1e-5)
    assert small['exe']._infer_graph
    np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(),
                               ref.forward(is_train=False)[0].asnumpy(), rtol=1e-5, atol=1e-5)
