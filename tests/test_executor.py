"""Executor (sym.bind / simple_bind): binding forms, forward/backward, the dict views,
grad_req, reshape, bind-time checks, whole-graph gradients, parallel branches, the memory
plan, and binding from another thread."""
import threading

import numpy as np
import pytest

import mxcy as mx
from mxcy import _ndarray
from mxcy.test_utils import check_numeric_gradient

TIMEOUT = 20.0


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.name.NameManager():
        yield


def nd(x, dtype=np.float32):
    return mx.nd.array(np.asarray(x), dtype=dtype)


def mlp(hidden=8, classes=3, act='tanh'):
    data = mx.sym.var('data')
    fc1 = mx.sym.FullyConnected(data, num_hidden=hidden, name='fc1')
    a1 = mx.sym.Activation(fc1, act_type=act, name='act1')
    return mx.sym.FullyConnected(a1, num_hidden=classes, name='fc2')


# ---------------------------------------------------------------- binding forms
def test_guide_a_times_b():
    A, B = mx.sym.Variable('A'), mx.sym.Variable('B')
    C = A * B
    a = mx.nd.ones(3) * 4
    b = mx.nd.ones(3) * 2
    exe = C.bind(ctx=mx.cpu(), args={'A': a, 'B': b})
    exe.forward()
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), [8., 8., 8.])
    assert exe.arg_dict['A'] is a and exe.arg_arrays == [a, b]
    assert list(exe.output_dict) == ['_mul0_output']
    assert exe.grad_arrays == [None, None] and exe.grad_dict == {}


def test_bind_with_lists_dicts_and_grad_req_forms():
    A, B = mx.sym.var('A'), mx.sym.var('B')
    C = A * B + A
    a, b = nd([1., 2.]), nd([3., 4.])
    head = nd([1., 10.])
    want = {'A': np.array([4., 50.]), 'B': np.array([1., 20.])}
    for grads, req in [([mx.nd.zeros(2), mx.nd.zeros(2)], 'write'),
                       ({'A': mx.nd.zeros(2), 'B': mx.nd.zeros(2)}, ['write', 'write']),
                       ({'A': mx.nd.zeros(2), 'B': mx.nd.zeros(2)}, {'A': 'write',
                                                                     'B': 'write'})]:
        exe = C.bind(mx.cpu(), [a, b], args_grad=grads, grad_req=req)
        exe.forward(is_train=True)
        exe.backward(head)
        for name in 'AB':
            np.testing.assert_allclose(exe.grad_dict[name].asnumpy(), want[name])
    # a dict grad_req that leaves a name out means 'null' for it
    exe = C.bind(mx.cpu(), {'A': a, 'B': b}, args_grad=[mx.nd.zeros(2), mx.nd.zeros(2)],
                 grad_req={'A': 'write'})
    assert exe.grad_arrays[1] is None and list(exe.grad_dict) == ['A']
    exe.forward(is_train=True)
    exe.backward(head)
    np.testing.assert_allclose(exe.grad_dict['A'].asnumpy(), want['A'])
    # no gradient array for an argument: no gradient for it
    exe = C.bind(mx.cpu(), [a, b], args_grad={'B': mx.nd.zeros(2)})
    assert exe.grad_arrays[0] is None
    exe.forward(is_train=True)
    exe.backward(head)
    np.testing.assert_allclose(exe.grad_dict['B'].asnumpy(), want['B'])


def test_bind_errors_name_the_problem():
    C = mx.sym.var('A') * mx.sym.var('B')
    a = nd([1., 2.])
    with pytest.raises(ValueError, match=r"args is missing \['B'\]"):
        C.bind(mx.cpu(), {'A': a})
    with pytest.raises(ValueError, match=r"args has 1 arrays, the symbol needs 2"):
        C.bind(mx.cpu(), [a])
    with pytest.raises(ValueError, match=r"unknown name\(s\) \['Q'\]"):
        C.bind(mx.cpu(), {'A': a, 'B': a, 'Q': a})
    with pytest.raises(TypeError, match=r"args\['B'\] must be an NDArray, got ndarray"):
        C.bind(mx.cpu(), {'A': a, 'B': np.ones(2)})
    with pytest.raises(ValueError, match="grad_req for 'A' must be one of"):
        C.bind(mx.cpu(), [a, a], args_grad=[a, a], grad_req='sometimes')
    with pytest.raises(ValueError, match=r"grad_req names unknown argument\(s\) \['Q'\]"):
        C.bind(mx.cpu(), [a, a], args_grad=[a, a], grad_req={'Q': 'write'})
    with pytest.raises(ValueError, match="grad_req has 1 entries for 2 arguments"):
        C.bind(mx.cpu(), [a, a], args_grad=[a, a], grad_req=['write'])


def test_bind_checks_shapes_and_dtypes_naming_the_argument():
    net = mlp()
    good = {'data': nd(np.ones((4, 5))), 'fc1_weight': nd(np.ones((8, 5))),
            'fc1_bias': nd(np.ones(8)), 'fc2_weight': nd(np.ones((3, 8))),
            'fc2_bias': nd(np.ones(3))}
    net.bind(mx.cpu(), good)
    bad = dict(good, fc2_weight=nd(np.ones((3, 7))))
    with pytest.raises(mx.MXNetError, match=r"node 'fc2'.*'weight'.*expected \(3, 8\), "
                                            r"given \(3, 7\)"):
        net.bind(mx.cpu(), bad)
    # dtypes: a float64 input with float32 weights fails at bind, not at forward
    bad = dict(good, data=nd(np.ones((4, 5)), np.float64))
    with pytest.raises(mx.MXNetError, match=r"node 'fc1'.*float"):
        net.bind(mx.cpu(), bad)
    # a variable declared float64 but bound to float32
    x = mx.sym.var('x', dtype='float64')
    with pytest.raises(mx.MXNetError, match="argument 'x' has dtype float32, the graph "
                                            "needs float64"):
        (x * 2).bind(mx.cpu(), {'x': nd([1.])})
    # a gradient array that does not match its argument
    with pytest.raises(mx.MXNetError, match="gradient of 'fc1_bias' has shape"):
        net.bind(mx.cpu(), good, args_grad={'fc1_bias': mx.nd.zeros(9)})
    with pytest.raises(mx.MXNetError, match="gradient of 'fc1_bias'.*float64"):
        net.bind(mx.cpu(), good, args_grad={'fc1_bias': mx.nd.zeros(8, dtype='float64')})


def test_simple_bind_allocates_from_inferred_shapes_and_types():
    net = mx.sym.SoftmaxOutput(mlp(), name='softmax')
    exe = net.simple_bind(mx.cpu(), data=(4, 5))
    assert [a.shape for a in exe.arg_arrays] == [(4, 5), (8, 5), (8,), (3, 8), (3,), (4,)]
    assert [g.shape for g in exe.grad_arrays] == [a.shape for a in exe.arg_arrays]
    assert all(a.dtype == np.float32 for a in exe.arg_arrays)
    assert not exe.arg_dict['fc1_weight'].asnumpy().any()
    exe = net.simple_bind(mx.cpu(), grad_req='null', data=(4, 5))
    assert exe.grad_arrays == [None] * 6
    exe = net.simple_bind(mx.cpu(), grad_req={'fc1_weight': 'write'}, data=(4, 5))
    assert list(exe.grad_dict) == ['fc1_weight']
    exe = net.simple_bind(mx.cpu(), type_dict={'data': 'float64'}, data=(4, 5))
    assert all(a.dtype == np.float64 for a in exe.arg_arrays)
    # the dtype a variable declares is honoured (as MXNet does)
    x = mx.sym.var('x', dtype='float64')
    assert (x * 2).simple_bind(mx.cpu(), x=(2,)).arg_arrays[0].dtype == np.float64
    with pytest.raises(mx.MXNetError, match='could not infer'):
        net.simple_bind(mx.cpu())


# ---------------------------------------------------------------- forward / backward
def test_forward_kwargs_and_backward_head_gradients():
    A, B = mx.sym.var('A'), mx.sym.var('B')
    exe = mx.sym.Group([A * B, A + B]).simple_bind(mx.cpu(), A=(2,), B=(2,))
    outs = exe.forward(is_train=True, A=np.array([1., 2.]), B=nd([3., 4.]))
    assert outs is exe.outputs
    np.testing.assert_allclose(outs[0].asnumpy(), [3., 8.])
    np.testing.assert_allclose(outs[1].asnumpy(), [4., 6.])
    np.testing.assert_allclose(exe.arg_dict['A'].asnumpy(), [1., 2.])
    exe.backward([nd([1., 1.]), nd([10., 100.])])
    np.testing.assert_allclose(exe.grad_dict['A'].asnumpy(), [13., 104.])
    np.testing.assert_allclose(exe.grad_dict['B'].asnumpy(), [11., 102.])
    # head gradients by output name; a missing one counts as ones
    exe.backward({'_plus0_output': nd([2., 2.])})
    np.testing.assert_allclose(exe.grad_dict['A'].asnumpy(), [5., 6.])
    # a head gradient of another dtype is cast, as MXNet copies it into its own buffer
    exe.backward([nd([1., 1.], np.float64), nd([10., 100.], np.float64)])
    np.testing.assert_allclose(exe.grad_dict['A'].asnumpy(), [13., 104.])
    with pytest.raises(ValueError, match=r"unknown output\(s\) \['nope'\]"):
        exe.backward({'nope': nd([1., 1.])})
    with pytest.raises(ValueError, match='1 head gradients for 2 outputs'):
        exe.backward([nd([1., 1.])])
    with pytest.raises(ValueError, match=r"head gradient for '_mul0' has shape \(3,\)"):
        exe.backward([nd([1., 1., 1.]), nd([1., 1.])])
    with pytest.raises(ValueError, match="'C' is not an argument"):
        exe.forward(C=np.ones(2))
    with pytest.raises(ValueError, match=r"'A' has shape \(3,\), the executor was bound "
                                         r"with \(2,\)"):
        exe.forward(A=nd([1., 2., 3.]))


def test_grad_req_add_accumulates_null_skips_write_overwrites():
    x = mx.sym.var('x')
    y = x * x
    xv = nd([1., 2., 3.])
    for req, factor in (('write', 1), ('add', 2)):
        g = nd([5., 5., 5.]) if req == 'add' else mx.nd.zeros(3)
        exe = y.bind(mx.cpu(), [xv], args_grad=[g], grad_req=req)
        for _ in range(2):
            exe.forward(is_train=True)
            exe.backward(mx.nd.ones(3))
        base = 5. if req == 'add' else 0.
        np.testing.assert_allclose(g.asnumpy(), base + factor * 2 * xv.asnumpy())
    exe = y.bind(mx.cpu(), [xv], args_grad=[mx.nd.zeros(3)], grad_req='null')
    assert exe.grad_arrays == [None] and exe.grad_dict == {}
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones(3))      # nothing to compute, nothing raised
    # 'add' on a variable used twice in the graph adds both paths each time
    z = x * x + x
    g = mx.nd.zeros(3)
    exe = z.bind(mx.cpu(), [xv], args_grad=[g], grad_req='add')
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward(mx.nd.ones(3))
    np.testing.assert_allclose(g.asnumpy(), 2 * (2 * xv.asnumpy() + 1))


@pytest.mark.parametrize('backward_first', [False, True])
def test_rebind_grad_moves_the_gradient_to_the_new_array(backward_first):
    x = mx.sym.var('x')
    z = x * x + x                           # two paths into x's gradient
    xv = nd([1., 2., 3.])
    g_old, g_new = mx.nd.zeros(3), mx.nd.zeros(3)
    exe = z.bind(mx.cpu(), [xv], args_grad=[g_old], grad_req='write')
    if backward_first:                      # the backward program exists already
        exe.forward(is_train=True)
        exe.backward(mx.nd.ones(3))
        g_old[:] = 0
    exe._rebind_grad('x', g_new)
    assert exe.grad_dict['x'] is g_new
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones(3))
    np.testing.assert_allclose(g_new.asnumpy(), 2 * xv.asnumpy() + 1)
    assert not g_old.asnumpy().any()
    with pytest.raises(mx.MXNetError, match=r"_rebind_grad: 'x'.*\(2,\)"):
        exe._rebind_grad('x', mx.nd.zeros(2))


def test_aux_states_views_and_copy_params_from():
    data = mx.sym.var('data')
    bn = mx.sym.BatchNorm(data, name='bn', fix_gamma=False)
    net = mx.sym.FullyConnected(bn, num_hidden=2, name='fc')
    assert net.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    args = {n: mx.nd.zeros(s) for n, s in zip(net.list_arguments(),
                                               net.infer_shape(data=(4, 3))[0])}
    with pytest.raises(ValueError, match="aux_states is missing"):
        net.bind(mx.cpu(), args)
    aux = [mx.nd.zeros(3), mx.nd.ones(3)]
    exe = net.bind(mx.cpu(), args, aux_states=aux)
    assert exe.aux_arrays == aux and list(exe.aux_dict) == ['bn_moving_mean', 'bn_moving_var']
    exe = net.bind(mx.cpu(), args, aux_states={'bn_moving_mean': aux[0],
                                              'bn_moving_var': aux[1]})
    rng = np.random.default_rng(0)
    params = {'bn_gamma': nd(rng.uniform(1, 2, 3)), 'bn_beta': nd(rng.standard_normal(3)),
              'fc_weight': nd(rng.standard_normal((2, 3))), 'fc_bias': nd([0.5, -0.5])}
    exe.copy_params_from(params, {'bn_moving_mean': nd([1., 2., 3.])})
    for k, v in params.items():
        np.testing.assert_array_equal(exe.arg_dict[k].asnumpy(), v.asnumpy())
    np.testing.assert_array_equal(exe.aux_dict['bn_moving_mean'].asnumpy(), [1., 2., 3.])
    with pytest.raises(ValueError, match="'extra' is not an argument"):
        exe.copy_params_from({'extra': mx.nd.zeros(1)})
    exe.copy_params_from({'extra': mx.nd.zeros(1)}, allow_extra_params=True)
    with pytest.raises(ValueError, match="'extra' is not an auxiliary state"):
        exe.copy_params_from({}, {'extra': mx.nd.zeros(1)})
    # inference uses the moving statistics: y = gamma (x - mean) / sqrt(var + eps) + beta
    x = rng.standard_normal((4, 3))
    out = exe.forward(is_train=False, data=x)[0].asnumpy()
    g, b = params['bn_gamma'].asnumpy(), params['bn_beta'].asnumpy()
    normed = g * (x - [1., 2., 3.]) / np.sqrt(1. + 1e-3) + b
    want = normed @ params['fc_weight'].asnumpy().T + [0.5, -0.5]
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


def test_set_monitor_callback_sees_every_output():
    seen = []
    exe = mlp().simple_bind(mx.cpu(), data=(2, 5))
    exe.set_monitor_callback(lambda name, arr: seen.append((name, arr.shape)))
    exe.forward()
    assert seen == [('fc1_output', (2, 8)), ('act1_output', (2, 8)), ('fc2_output', (2, 3))]
    assert 'MB allocated' in exe.debug_str()


# ---------------------------------------------------------------- reshape
def test_reshape_shares_memory_and_checks_unspecified_shapes():
    net = mx.sym.SoftmaxOutput(mlp(), name='softmax')
    exe = net.simple_bind(mx.cpu(), data=(4, 5))
    rng = np.random.default_rng(0)
    for name in ('fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias'):
        exe.arg_dict[name][:] = rng.standard_normal(exe.arg_dict[name].shape)
    small = exe.reshape(data=(2, 5), softmax_label=(2,))
    assert small.arg_dict['data'].shape == (2, 5) and small.outputs[0].shape == (2, 3)
    # parameters are the same arrays; a smaller input is a view of the old memory
    assert small.arg_dict['fc1_weight'] is exe.arg_dict['fc1_weight']
    small.arg_dict['data'][:] = 7.
    np.testing.assert_array_equal(exe.arg_dict['data'].asnumpy()[:2], 7.)
    small.grad_dict['data'][:] = 3.
    np.testing.assert_array_equal(exe.grad_dict['data'].asnumpy().reshape(-1)[:10], 3.)
    x = rng.standard_normal((2, 5)).astype(np.float32)
    out = small.forward(data=x)[0].asnumpy()
    full = exe.forward(data=np.concatenate([x, x]))[0].asnumpy()
    np.testing.assert_allclose(out, full[:2], rtol=1e-6)
    # an argument not named whose shape changes: an error unless partial_shaping
    with pytest.raises(mx.MXNetError, match="'softmax_label' would change from \\(4,\\) to "
                                            "\\(2,\\).*partial_shaping=True"):
        exe.reshape(data=(2, 5))
    part = exe.reshape(partial_shaping=True, data=(2, 5))
    assert part.arg_dict['softmax_label'].shape == (2,)
    # growing needs allow_up_sizing, and then gets new memory
    with pytest.raises(mx.MXNetError, match="'data' grows from \\(4, 5\\) to \\(8, 5\\)"):
        exe.reshape(data=(8, 5), softmax_label=(8,))
    big = exe.reshape(allow_up_sizing=True, data=(8, 5), softmax_label=(8,))
    assert big.arg_dict['data'].shape == (8, 5)
    assert big.arg_dict['fc1_weight'] is exe.arg_dict['fc1_weight']
    big.forward(data=np.concatenate([x] * 4))
    np.testing.assert_allclose(big.outputs[0].asnumpy()[:2], out, rtol=1e-6)


# ---------------------------------------------------------------- gradients of whole graphs
def test_mlp_gradient_matches_finite_differences_float64():
    net = mlp(hidden=6, classes=3, act='tanh')
    rng = np.random.default_rng(1)
    arg_shapes, _, _ = net.infer_shape(data=(3, 4))
    location = {n: rng.standard_normal(s) * 0.7 for n, s in zip(net.list_arguments(),
                                                                arg_shapes)}
    check_numeric_gradient(net, location, numeric_eps=1e-6, rtol=1e-6, atol=1e-8,
                           dtype=np.float64)


def test_conv_net_gradient_matches_finite_differences_float64():
    data = mx.sym.var('data')
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=2, pad=(1, 1), name='conv')
    act = mx.sym.Activation(conv, act_type='tanh', name='act')
    pool = mx.sym.Pooling(act, kernel=(2, 2), stride=(2, 2), pool_type='avg', name='pool')
    net = mx.sym.FullyConnected(pool, num_hidden=3, name='fc')
    rng = np.random.default_rng(2)
    arg_shapes, _, _ = net.infer_shape(data=(2, 2, 4, 4))
    location = {n: rng.standard_normal(s) * 0.5 for n, s in zip(net.list_arguments(),
                                                                arg_shapes)}
    check_numeric_gradient(net, location, numeric_eps=1e-6, rtol=1e-6, atol=1e-8,
                           dtype=np.float64)


# ---------------------------------------------------------------- asynchrony and overlap
@pytest.fixture
def two_workers():
    """A threaded engine with at least two workers for the test, then the old settings."""
    saved = (mx.engine.engine_type(), mx.engine.num_workers())
    if saved[0] != 'ThreadedEngine':
        mx.engine.set_engine_type('ThreadedEngine')
    if mx.engine.num_workers() < 2:
        mx.engine.set_num_workers(2)
    yield
    mx.engine.wait_all()
    if mx.engine.num_workers() != saved[1]:
        mx.engine.set_num_workers(saved[1])
    if mx.engine.engine_type() != saved[0]:
        mx.engine.set_engine_type(saved[0])


class _Rendezvous(mx.operator.CustomOp):
    """Pushes an engine op that doubles its input but first waits until the op of the
    other branch runs too: two branches that do not run at the same time never meet."""
    barrier = None

    def forward(self, is_train, req, in_data, out_data, aux):
        barrier = _Rendezvous.barrier

        def run(x, out):
            barrier.wait()          # raises BrokenBarrierError after its timeout
            out[...] = 2 * x
        _ndarray.push_numpy(run, [in_data[0]], [out_data[0]], 'rendezvous')


@mx.operator.register('test_executor_rendezvous')
class _RendezvousProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Rendezvous()


def test_parallel_branches_run_at_the_same_time(two_workers):
    x1, x2 = mx.sym.var('x1'), mx.sym.var('x2')
    b1 = mx.sym.Custom(mx.sym.FullyConnected(x1, num_hidden=16, name='fa'),
                       op_type='test_executor_rendezvous', name='meet_a')
    b2 = mx.sym.Custom(mx.sym.FullyConnected(x2, num_hidden=16, name='fb'),
                       op_type='test_executor_rendezvous', name='meet_b')
    net = b1 + b2
    exe = net.simple_bind(mx.cpu(), grad_req='null', x1=(8, 32), x2=(8, 32))
    rng = np.random.default_rng(0)
    values = {n: rng.standard_normal(a.shape).astype(np.float32)
              for n, a in exe.arg_dict.items()}
    for n, v in values.items():
        exe.arg_dict[n][:] = v
    _Rendezvous.barrier = threading.Barrier(2, timeout=TIMEOUT)
    exe.forward()
    # both rendezvous ops met, so the two branches were running together
    got = exe.outputs[0].asnumpy()
    want = 2 * (values['x1'] @ values['fa_weight'].T + values['fa_bias'] +
                values['x2'] @ values['fb_weight'].T + values['fb_bias'])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_forward_returns_before_outputs_are_ready(two_workers):
    x = mx.sym.var('x')
    exe = mx.sym.Group([mlp()(data=x), x * 3]).simple_bind(mx.cpu(), grad_req='null',
                                                             x=(2, 5))
    exe.arg_dict['x'][:] = 1.
    release, started = threading.Event(), threading.Event()

    def gate():
        started.set()
        release.wait(TIMEOUT)
    # an op that holds the input: everything the graph pushes must queue behind it
    mx.engine.push(gate, reads=(), writes=(exe.arg_dict['x'],), name='gate')
    try:
        assert started.wait(TIMEOUT)
        version = mx.engine.var_state(exe.outputs[1]._chunk)['version']
        outs = exe.forward()                  # returns at once: nothing waits here
        assert not release.is_set()
        # the graph's reads of x are queued behind the gate; no output was written yet
        queued = mx.engine.var_state(exe.arg_dict['x']._chunk)['queue']
        assert len(queued) >= 2 and all(kind == 'r' for kind, _ in queued), queued
        assert mx.engine.var_state(outs[1]._chunk)['version'] == version
    finally:
        release.set()
    np.testing.assert_allclose(outs[1].asnumpy(), 3.)
    assert mx.engine.var_state(outs[1]._chunk)['version'] > version


# ---------------------------------------------------------------- memory plan
def _deep_mlp(layers, width):
    net = mx.sym.var('data')
    for i in range(layers):
        net = mx.sym.FullyConnected(net, num_hidden=width, name=f'fc{i}')
        net = mx.sym.Activation(net, act_type='tanh', name=f'tanh{i}')
    return net


def _numpy_forward_backward(params, x, layers, head):
    """float64 reference of _deep_mlp: outputs and parameter gradients."""
    acts = [x]
    for i in range(layers):
        acts.append(np.tanh(acts[-1] @ params[f'fc{i}_weight'].T + params[f'fc{i}_bias']))
    grads, dy = {}, head
    for i in reversed(range(layers)):
        dz = dy * (1 - acts[i + 1] ** 2)
        grads[f'fc{i}_weight'] = dz.T @ acts[i]
        grads[f'fc{i}_bias'] = dz.sum(0)
        dy = dz @ params[f'fc{i}_weight']
    grads['data'] = dy
    return acts[-1], grads


@pytest.mark.parametrize('training', [False, True])
def test_memory_plan_is_smaller_than_naive_and_exact(training):
    layers, width = 10, 16
    net = _deep_mlp(layers, width)
    exe = net.simple_bind(mx.cpu(), grad_req='write' if training else 'null',
                          data=(4, width), type_dict={'data': 'float64'})
    assert exe.peak_bytes < exe.naive_bytes, (exe.peak_bytes, exe.naive_bytes)
    rng = np.random.default_rng(3)
    params = {n: rng.standard_normal(a.shape) * 0.4 for n, a in exe.arg_dict.items()}
    for n, v in params.items():
        exe.arg_dict[n][:] = v
    head = rng.standard_normal((4, width))
    want, want_grads = _numpy_forward_backward(params, params['data'], layers, head)
    for _ in range(2):          # a second run must not see stale reused buffers
        out = exe.forward(is_train=training)[0].asnumpy()
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-13)
        if training:
            exe.backward(nd(head, np.float64))
            for n, g in want_grads.items():
                np.testing.assert_allclose(exe.grad_dict[n].asnumpy(), g, rtol=1e-10,
                                           atol=1e-12, err_msg=n)


def test_internal_outputs_in_a_group_survive_the_plan():
    # every value that is a graph output keeps its own memory, even when the plan would
    # otherwise reuse it for a later layer
    layers = 6
    net = _deep_mlp(layers, 8)
    internals = net.get_internals()
    heads = mx.sym.Group([internals[f'tanh{i}_output'] for i in range(layers)])
    exe = heads.simple_bind(mx.cpu(), grad_req='null', data=(3, 8))
    rng = np.random.default_rng(4)
    params = {n: rng.standard_normal(a.shape) for n, a in exe.arg_dict.items()}
    for n, v in params.items():
        exe.arg_dict[n][:] = v
    outs = [o.asnumpy() for o in exe.forward()]
    act = params['data']
    for i in range(layers):
        act = np.tanh(act @ params[f'fc{i}_weight'].T + params[f'fc{i}_bias'])
        np.testing.assert_allclose(outs[i], act, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- threads
def test_bind_and_run_from_a_worker_thread():
    results, errors = {}, []

    def work(i):
        try:
            net = mlp()           # names come from this thread's own manager
            exe = net.simple_bind(mx.cpu(), data=(2, 5))
            for a in exe.arg_dict.values():
                a[:] = float(i + 1) / 10
            exe.forward(is_train=True)
            exe.backward(mx.nd.ones((2, 3)))
            results[i] = (net.list_arguments(), exe.outputs[0].asnumpy(),
                          exe.grad_dict['fc1_weight'].asnumpy())
        except Exception as e:      # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
    for i in range(3):
        v = (i + 1) / 10
        names, out, gw = results[i]
        assert names == ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias']
        h = np.tanh(np.full((2, 8), 5 * v * v + v))
        np.testing.assert_allclose(out, h @ np.full((8, 3), v) + v, rtol=1e-5)
        dh = np.full((2, 8), 3 * v) * (1 - h ** 2)
        np.testing.assert_allclose(gw, dh.T @ np.full((2, 5), v), rtol=1e-4)


def test_backward_program_reused_with_new_head_gradients():
    """A head that is also consumed inside the graph gets head + internal gradient, and the
    resolved backward pass picks up new head gradients on every call."""
    x = mx.sym.Variable('x')
    h = x * 2
    y = h * h
    exe = mx.sym.Group([h, y]).simple_bind(mx.cpu(), x=(3,))
    xv = np.array([1.0, -2.0, 0.5], np.float32)
    rng = np.random.default_rng(5)
    for _ in range(3):
        g1, g2 = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(
            np.float32)
        exe.forward(is_train=True, x=xv)
        exe.backward([mx.nd.array(g1), mx.nd.array(g2)])
        hv = 2 * xv
        np.testing.assert_allclose(exe.grad_dict['x'].asnumpy(), 2 * (g1 + g2 * 2 * hv),
                                   rtol=1e-5)
    exe.backward()          # default heads: ones
    np.testing.assert_allclose(exe.grad_dict['x'].asnumpy(), 2 * (1 + 2 * (2 * xv)),
                               rtol=1e-5)


# ---------------------------------------------------------------- variables as outputs
# From MXNet 1.9.1: a = [1, 2], its gradient array starts at [100, 100]; a.grad after each of
# two forward/backward passes with grad_req 'write', then 'add'. A variable that is an
# output gets its head gradient; an entry listed twice takes the last head gradient given.
VAR_HEAD_CASES = {
    'a*2,a': (lambda a: [a * 2, a], [[1, 1], [10, 10]], [12, 12], [[112, 112], [124, 124]]),
    'a,a*2': (lambda a: [a, a * 2], [[10, 10], [1, 1]], [12, 12], [[112, 112], [124, 124]]),
    'a': (lambda a: [a], [[10, 20]], [10, 20], [[110, 120], [120, 140]]),
    'a,a': (lambda a: [a, a], [[10, 20], [1, 2]], [1, 2], [[101, 102], [102, 104]]),
    'a,a*a,a': (lambda a: [a, a * a, a], [[10, 20], [1, 1], [3, 3]], [5, 7],
                [[105, 107], [110, 114]]),
}


@pytest.mark.parametrize('req', ['write', 'add'])
@pytest.mark.parametrize('case', list(VAR_HEAD_CASES))
def test_variable_output_receives_its_head_gradient(case, req):
    build, heads, write, add = VAR_HEAD_CASES[case]
    g = nd([100., 100.])
    exe = mx.sym.Group(build(mx.sym.Variable('a'))).bind(
        mx.cpu(), {'a': nd([1., 2.])}, args_grad={'a': g}, grad_req=req)
    for want in ([write, write] if req == 'write' else add):
        exe.forward(is_train=True)
        exe.backward([nd(h) for h in heads])
        np.testing.assert_array_equal(g.asnumpy(), want)


def test_variable_output_head_gradient_with_null_req_simple_bind_and_rebind():
    a, g = mx.sym.Variable('a'), nd([7., 7.])
    net = mx.sym.Group([a * 2, a])
    exe = net.bind(mx.cpu(), {'a': nd([1., 2.])}, args_grad={'a': g}, grad_req='null')
    exe.forward(is_train=True)
    exe.backward([nd([1., 1.]), nd([10., 10.])])
    assert exe.grad_arrays == [None] and g.asnumpy().tolist() == [7., 7.]
    exe = net.simple_bind(mx.cpu(), a=(2,))
    exe.forward(is_train=True)
    exe.backward([nd([1., 1.]), nd([10., 10.])])
    np.testing.assert_array_equal(exe.grad_dict['a'].asnumpy(), [12., 12.])   # MXNet 1.9.1
    new = mx.nd.zeros(2)
    exe._rebind_grad('a', new)
    exe.forward(is_train=True)
    exe.backward([nd([1., 1.]), nd([3., 4.])])
    np.testing.assert_array_equal(new.asnumpy(), [5., 6.])


def test_module_input_that_is_an_output_receives_its_head_gradient():
    data = mx.sym.Variable('data')
    net = mx.sym.Group([mx.sym.FullyConnected(data, num_hidden=2, name='fc'), data])
    mod = mx.mod.Module(net, data_names=['data'], label_names=None)
    mod.bind(data_shapes=[('data', (1, 3))], inputs_need_grad=True)
    mod.init_params(mx.init.One())
    mod.forward(mx.io.DataBatch([nd([[1., 2., 3.]])]), is_train=True)
    mod.backward([mx.nd.ones((1, 2)), nd([[10., 20., 30.]])])
    # MXNet 1.9.1: [[12, 22, 32]] (2 from the layer's ones weights, plus the head)
    np.testing.assert_array_equal(mod.get_input_grads()[0].asnumpy(), [[12., 22., 32.]])


# ---------------------------------------------------------------- duplicate names
def test_bind_refuses_two_variables_with_one_name():
    # MXNet 1.9.1 infers both 'x's but fails to bind (an internal check message)
    s = mx.sym.Variable('x') * 2 + mx.sym.Variable('x')
    assert s.infer_shape(x=(2,))[0] == [(2,), (2,)]
    for what, bind in (('simple_bind', lambda: s.simple_bind(mx.cpu(), x=(2,))),
                       ('bind', lambda: s.bind(mx.cpu(), [nd([1., 2.]), nd([3., 4.])])),
                       ('bind', lambda: s.bind(mx.cpu(), {'x': nd([1., 2.])})),
                       ('bind', lambda: s.eval(x=nd([1., 2.])))):
        with pytest.raises(mx.MXNetError, match=f"^{what}: the symbol has 2 different "
                                                "variables named 'x'.*rename"):
            bind()
