"""Module on several contexts with a plain local KVStore: the contexts share one copy of the
parameters and of their gradients (``DataParallelExecutorGroup.share_params``), the other
executors' backward adds into the first's gradients, and one update serves every context.
Anything that needs per-context copies (``kvstore=None``) gets them back."""
import numpy as np

import mxcy as mx
from tests.module._nets import TWO, mlp

RNG = np.random.RandomState(7)
X = RNG.randn(6, 5).astype(np.float32)
Y = RNG.randint(0, 3, 6).astype(np.float32)
START = {'fc1_weight': RNG.randn(4, 5).astype(np.float32),
         'fc1_bias': RNG.randn(4).astype(np.float32),
         'fc2_weight': RNG.randn(3, 4).astype(np.float32),
         'fc2_bias': RNG.randn(3).astype(np.float32)}


def batch(x=X, y=Y):
    return mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])


def ready(context=TWO, kvstore='local', lr=0.5):
    mod = mx.mod.Module(mlp(), context=context)
    mod.bind([('data', (6, 5))], [('softmax_label', (6,))])
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in START.items()})
    mod.init_optimizer(kvstore=kvstore, optimizer='sgd',
                       optimizer_params={'learning_rate': lr})
    return mod


def weights(mod):
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


def pushed(fn):
    mx.nd.waitall()
    before = mx.engine.stats()['pushed']
    fn()
    return mx.engine.stats()['pushed'] - before


def test_local_store_shares_parameters_and_sums_gradients_in_place():
    two, one = ready(), ready(mx.cpu())
    group = two._exec_group
    assert group.params_shared and not one._exec_group.params_shared
    for w, g in zip(group.param_arrays, group.grad_arrays):
        assert w[1] is w[0] and g[1] is g[0]
    first, second = group.execs
    assert first.arg_dict['data'] is not second.arg_dict['data']    # inputs stay per context
    assert first.outputs[0] is not second.outputs[0]
    for mod in (two, one):
        mod.forward_backward(batch())
    # the shared gradient is the whole batch's: context 1 added its slice's into it
    for name, grad in one._exec.grad_dict.items():
        np.testing.assert_allclose(first.grad_dict[name].asnumpy(), grad.asnumpy(),
                                   rtol=1e-5, atol=1e-6, err_msg=name)
    # one update per parameter, as on one context: no sums, no copies
    assert pushed(two.update) == pushed(one.update) == len(START)
    for name, value in weights(one).items():
        np.testing.assert_allclose(weights(two)[name], value, rtol=1e-5, atol=1e-6)
        assert np.abs(value - START[name]).max() > 1e-3


def test_kvstore_none_gives_each_context_its_own_copy_back():
    mod = ready()
    mod.forward_backward(batch())
    mod.update()
    start = weights(mod)
    mod.init_optimizer(kvstore=None, optimizer='sgd', optimizer_params={'learning_rate': 0.5},
                       force_init=True)
    group = mod._exec_group
    assert not group.params_shared
    for block, grads in zip(group.param_arrays, group.grad_arrays):
        assert block[0] is not block[1] and grads[0] is not grads[1]
        np.testing.assert_array_equal(block[1].asnumpy(), block[0].asnumpy())
    mod.forward_backward(batch())
    mod.update()
    # each context stepped on its own slice's gradient (rescale_grad = 1 / batch size)
    for name, block, grads in zip(mod._param_names, group.param_arrays, group.grad_arrays):
        for w, g in zip(block, grads):
            np.testing.assert_allclose(w.asnumpy(), start[name] - 0.5 / 6 * g.asnumpy(),
                                       rtol=1e-5, atol=1e-6, err_msg=name)
    w0, w1 = (a.asnumpy() for a in group.param_arrays[0])
    assert np.abs(w0 - w1).max() > 1e-4
    # and back to a local store: shared again, from the first context's weights
    mod.init_optimizer(kvstore='local', optimizer='sgd', force_init=True)
    assert group.params_shared and group.param_arrays[0][1] is group.param_arrays[0][0]
    np.testing.assert_array_equal(group.param_arrays[0][0].asnumpy(), w0)


def test_rebind_reshape_and_monitor_follow_the_shared_executors():
    mod = mx.mod.Module(mlp(), context=TWO)
    mod.bind([('data', (6, 5))], [('softmax_label', (6,))])
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in START.items()})
    mon = mx.monitor.Monitor(1, pattern='fc2_output')
    mod.install_monitor(mon)
    mod.init_optimizer(kvstore='local', optimizer='sgd', optimizer_params={'learning_rate': 0.5})
    group = mod._exec_group
    assert mon.exes == group.execs and group.execs[1]._monitor is not None
    mon.tic()
    mod.forward(batch(), is_train=True)
    assert len(mon.toc()) == 2                 # one fc2_output per executor
    mod.bind([('data', (6, 5))], [('softmax_label', (6,))], force_rebind=True)
    assert mod._exec_group.params_shared
    one = ready(mx.cpu())
    for m in (mod, one):
        m.forward_backward(batch())
        m.update()
        m.forward_backward(batch(X[:4], Y[:4]))      # a smaller last batch: reshaped
        m.update()
    group = mod._exec_group
    assert group.params_shared and [e.arg_dict['data'].shape for e in group.execs] == \
        [(2, 5), (2, 5)]
    assert all(g[1] is g[0] for g in group.grad_arrays)
    for name, value in weights(one).items():
        np.testing.assert_allclose(weights(mod)[name], value, rtol=1e-5, atol=1e-6)


def test_bucket_modules_share_the_default_buckets_single_copy():
    def sym_gen(key):
        return mlp(), ('data',), ('softmax_label',)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=6, context=TWO)
    mod.bind([('data', (6, 5))], [('softmax_label', (6,))])
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in START.items()})
    # bound before the optimizer exists: it follows the default bucket at init_optimizer
    mod.switch_bucket(4, [('data', (4, 5))], [('softmax_label', (4,))])
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5})
    default = mod._buckets[6]._exec_group
    for key in (4, 2):
        if key == 2:                            # bound after: shared at bind
            mod.switch_bucket(2, [('data', (2, 5))], [('softmax_label', (2,))])
        group = mod._buckets[key]._exec_group
        assert group.params_shared
        for mine, theirs in zip(group.param_arrays + group.grad_arrays,
                                default.param_arrays + default.grad_arrays):
            assert all(a is theirs[0] for a in mine)
    one = mx.mod.Module(mlp(), context=mx.cpu())
    one.bind([('data', (4, 5))], [('softmax_label', (4,))])
    one.init_params(arg_params={k: mx.nd.array(v) for k, v in START.items()})
    one.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5,
                                                          'rescale_grad': 1 / 6})
    small = batch(X[:4], Y[:4])
    small.bucket_key, small.provide_data = 4, [('data', (4, 5))]
    small.provide_label = [('softmax_label', (4,))]
    for m in (mod, one):
        m.forward_backward(small)
        m.update()
    for name, value in weights(one).items():
        np.testing.assert_allclose(weights(mod)[name], value, rtol=1e-5, atol=1e-6)


def test_convolution_gradients_stay_per_context_and_are_summed():
    """Only FullyConnected gradients are accumulated in place; a convolution's weight
    gradient is computed by each context at once and summed in update."""
    x = mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), num_filter=2,
                           name='conv')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=3,
                                                     name='fc'), name='softmax')
    rng = np.random.RandomState(1)
    start = {'conv_weight': rng.randn(2, 1, 3, 3), 'conv_bias': rng.randn(2),
             'fc_weight': rng.randn(3, 32) * 0.3, 'fc_bias': rng.randn(3)}
    b = mx.io.DataBatch([mx.nd.array(rng.randn(6, 1, 6, 6))], [mx.nd.array(Y)])
    mods = []
    for ctx in (mx.cpu(), TWO):
        mod = mx.mod.Module(net, context=ctx)
        mod.bind([('data', (6, 1, 6, 6))], [('softmax_label', (6,))])
        mod.init_params(arg_params={k: mx.nd.array(v) for k, v in start.items()})
        mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5})
        mod.forward_backward(b)
        mods.append(mod)
    one, two = mods
    group = two._exec_group
    for name, w, g in zip(two._param_names, group.param_arrays, group.grad_arrays):
        assert w[1] is w[0]
        assert (g[1] is g[0]) == name.startswith('fc'), name
    assert pushed(two.update) == pushed(one.update) + 2      # conv_weight and conv_bias sums
    for name, value in weights(one).items():
        np.testing.assert_allclose(weights(two)[name], value, rtol=1e-5, atol=1e-6)
        assert np.abs(value - start[name]).max() > 1e-3
