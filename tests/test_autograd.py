"""mx.autograd: recording scopes, backward through the operators' own gradients, variables'
grad_req, versions, threads, custom Functions, grad().

Expected values marked "MXNet 1.9.1" were recorded from MXNet 1.9.1 running the same code.
"""
import threading

import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd
from mxcy.test_utils import check_numeric_gradient


def variable(values, grad_req='write', dtype='float32'):
    a = mx.nd.array(np.asarray(values), dtype=dtype)
    a.attach_grad(grad_req)
    return a


# ---------------------------------------------------------------- scopes
def test_scopes_and_flags_as_mxnet():
    assert (autograd.is_recording(), autograd.is_training()) == (False, False)
    with autograd.record():
        assert (autograd.is_recording(), autograd.is_training()) == (True, True)
        with autograd.pause():
            assert (autograd.is_recording(), autograd.is_training()) == (False, False)
        with autograd.predict_mode():
            assert (autograd.is_recording(), autograd.is_training()) == (True, False)
    with autograd.train_mode():
        assert (autograd.is_recording(), autograd.is_training()) == (False, True)
    # MXNet 1.9.1: set_* return the previous state
    assert [autograd.set_recording(True), autograd.set_recording(False),
            autograd.set_training(True), autograd.set_training(False)] == \
        [False, True, False, True]


def test_scopes_restore_after_an_exception():
    with pytest.raises(KeyError), autograd.record():
        raise KeyError('inside')
    assert not autograd.is_recording() and not autograd.is_training()


# ---------------------------------------------------------------- gradients
def test_mixed_expression_matches_mxnet():
    x = variable([[1., 2., 3.], [4., 5., 6.]])
    w = variable([[0.5, -1., 2.], [1., 0., -0.5]], grad_req='add')
    with autograd.record():
        h = mx.nd.FullyConnected(x, w, num_hidden=2, no_bias=True)
        y = mx.nd.tanh(h / 4) * x[:, 0:2] - (x ** 2).mean(axis=1, keepdims=True) + \
            3 / (x[1] + 1).sum()
    y.backward(mx.nd.array([[1., 2.], [3., 4.]]))
    # MXNet 1.9.1
    np.testing.assert_allclose(x.grad.asnumpy(), [
        [-0.16303349, -4.3349638, -6.3197522], [-11.059908, -22.576645, -30.181839]],
        rtol=1e-5)
    np.testing.assert_allclose(w.grad.asnumpy(), [
        [0.60783744, 0.82449025, 1.04114306], [19.784834, 25.469442, 31.154054]],
        rtol=1e-5)


def test_indexing_is_recorded():
    x = variable([[1, 2], [3, 4]])
    with autograd.record():
        y = x[0] * 2 + x[1:2].sum() + x[:, 1].sum() + x[1, 0] * 10
    y.backward()
    # MXNet 1.9.1 gives [[2, 4], [2, 4]] without the last term; x[1, 0] (shape (1,)) is
    # broadcast over both elements of y, so it adds 2 * 10
    np.testing.assert_array_equal(x.grad.asnumpy(), [[2, 4], [22, 4]])


@pytest.mark.parametrize('key', [
    'nd', 'list', 'nested', 'pair', 'broadcast_pair'])
def test_integer_array_indexing_is_recorded(key):
    """x[idx] and x[rows, cols] gather (repeated indices add their gradients), as NumPy."""
    xn = np.arange(24.).reshape(4, 3, 2)
    np_key, mx_key = {
        'nd': ([2, 0, 2], mx.nd.array([2, 0, 2])),
        'list': ([3, 1], [3, 1]),
        'nested': (np.array([[0, 1], [2, 2]]), np.array([[0, 1], [2, 2]])),
        'pair': (([0, 3, 0], [1, -1, 1]), ([0, 3, 0], [1, -1, 1])),
        'broadcast_pair': ((np.array([1, 2]), np.array([[0], [2]])),
                           (mx.nd.array([1, 2]), mx.nd.array([[0], [2]]))),
    }[key]
    x = variable(xn)
    with autograd.record():
        y = x[mx_key]
        (y * y).sum().backward()
    want = xn[np_key]
    grad = np.zeros_like(xn)
    np.add.at(grad, np_key, 2 * want)
    np.testing.assert_array_equal(y.asnumpy(), want)
    np.testing.assert_array_equal(x.grad.asnumpy(), grad)


def test_recorded_indexing_errors_name_the_key():
    x = variable(np.zeros((4, 3)))
    with autograd.record():
        with pytest.raises(IndexError, match='index 5 is out of bounds for axis 0 with size 4'):
            x[[5]]
        with pytest.raises(IndexError, match='could not be broadcast'):
            x[[0, 1], [0, 1, 2]]
        with pytest.raises(IndexError, match='non-integer'):
            x[np.array([0.5])]
        with pytest.raises(mx.MXNetError, match='is not recorded'):
            x[[0, 1], 1:]


@pytest.mark.parametrize('expr', [
    'x * 2', '2 * x', 'x - 3', '3 - x', '1.5 / x', 'x / 4', 'x ** 2', '2 ** x',
    'x * np.float64(2.5)', 'x + c', 'c - x', 'c / x', 'x * c', 'x % 1.5', 'x > c',
    'x + True', 'x * [1.0, 2.0, 3.0]'])
def test_recorded_arithmetic_syntax(expr):
    """The dunders' recorded C path and the general path give the registry op MXNet
    records, its value and its gradient (checked against float64 differences)."""
    xn = np.array([0.5, 1.0, 2.0])
    c = mx.nd.array([2.0, -1.0, 3.0], dtype='float64')

    def f(values):
        x = mx.nd.array(values, dtype='float64')
        x.attach_grad()
        with autograd.record():
            y = eval(expr, {'x': x, 'c': c, 'np': np})
            total = (y * y).sum() if y.dtype != np.bool_ else y.sum()
        return x, y, total
    x, y, total = f(xn)
    assert autograd.get_symbol(y).list_arguments()[0] == 'var0'
    total.backward()
    eps = 1e-6
    numeric = [(f(xn + eps * e)[2].asscalar() - f(xn - eps * e)[2].asscalar()) / (2 * eps)
               for e in np.eye(3)]
    np.testing.assert_allclose(x.grad.asnumpy(), numeric, rtol=1e-5, atol=1e-6)


def test_recorded_syntax_records_mxnets_operators():
    x = variable([1., 2.])
    c = mx.nd.array([3., 4.])
    with autograd.record():
        y = (3 - x) * c + x / 2
    ops = [n['op'] for n in __import__('json').loads(autograd.get_symbol(y).tojson())['nodes']]
    assert ops == ['null', '_rminus_scalar', 'null', 'broadcast_mul', '_div_scalar',
                   'broadcast_add']


def test_a_square_uses_both_inputs():
    x = variable([1., -2., 3.])
    with autograd.record():
        y = (x * x).sum() + mx.nd.elemwise_mul(x, x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 4 * x.asnumpy())


@pytest.mark.parametrize('case', ['FullyConnected', 'Convolution', 'Pooling', 'softmax',
                                  'BatchNorm', 'LeakyReLU', 'Concat', 'Embedding', 'RNN'])
def test_same_gradients_as_the_executor(case):
    """autograd pushes each op's declared backward: its gradients equal bind's."""
    rng = np.random.default_rng(7)
    shapes, kwargs, ops = {
        'FullyConnected': ({'data': (4, 5), 'weight': (3, 5), 'bias': (3,)},
                           dict(num_hidden=3), ['data', 'weight', 'bias']),
        'Convolution': ({'data': (2, 3, 6, 6), 'weight': (4, 3, 3, 3), 'bias': (4,)},
                        dict(kernel=(3, 3), num_filter=4, pad=(1, 1)),
                        ['data', 'weight', 'bias']),
        'Pooling': ({'data': (2, 3, 6, 6)}, dict(kernel=(2, 2), stride=(2, 2)), ['data']),
        'softmax': ({'data': (3, 5)}, dict(axis=-1), ['data']),
        'BatchNorm': ({'data': (4, 3, 2, 2), 'gamma': (3,), 'beta': (3,)},
                      dict(fix_gamma=False), ['data', 'gamma', 'beta']),
        'LeakyReLU': ({'data': (3, 4)}, dict(act_type='elu'), ['data']),
        'Concat': ({'a': (2, 3), 'b': (2, 2)}, dict(dim=1), ['a', 'b']),
        'Embedding': ({'data': (5,), 'weight': (6, 3)}, dict(input_dim=6, output_dim=3),
                      ['data', 'weight']),
        'RNN': ({'data': (3, 2, 4), 'parameters': (4 * 5 * (4 + 5 + 2),),
                 'state': (1, 2, 5), 'state_cell': (1, 2, 5)},
                dict(state_size=5, num_layers=1, mode='lstm'),
                ['data', 'parameters', 'state', 'state_cell']),
    }[case]
    values = {k: rng.standard_normal(s).astype(np.float32) * 0.5 for k, s in shapes.items()}
    if case == 'Embedding':
        values['data'] = np.array([0, 5, 2, 2, 1], np.float32)
    aux = {}
    if case == 'BatchNorm':
        aux = {'moving_mean': np.zeros(3, np.float32), 'moving_var': np.ones(3, np.float32)}
    syms = {k: mx.sym.Variable(k) for k in ops}
    out_sym = getattr(mx.sym, case)(*[syms[k] for k in ops], **kwargs)
    exe = out_sym.simple_bind(mx.cpu(), **shapes)
    for k, v in values.items():
        exe.arg_dict[k][:] = v
    for arr, v in zip(exe.aux_arrays, aux.values()):
        arr[:] = v
    exe.forward(is_train=True)
    head = rng.standard_normal(exe.outputs[0].shape).astype(np.float32)
    exe.backward(mx.nd.array(head))
    arrays = {k: variable(v) for k, v in values.items()}
    with autograd.record():
        out = getattr(mx.nd, case)(*[arrays[k] for k in ops],
                                   *[mx.nd.array(a) for a in aux.values()], **kwargs)
    out.backward(mx.nd.array(head))
    np.testing.assert_allclose(out.asnumpy(), exe.outputs[0].asnumpy(), rtol=1e-5,
                               atol=1e-6)
    for k in ops:
        if case == 'Embedding' and k == 'data':
            continue
        np.testing.assert_allclose(arrays[k].grad.asnumpy(), exe.grad_dict[k].asnumpy(),
                                   rtol=1e-4, atol=1e-5, err_msg=k)


def test_gradient_against_finite_differences_float64():
    rng = np.random.default_rng(3)
    x0 = rng.uniform(0.5, 1.5, (3, 4))
    w0 = rng.standard_normal((2, 4))

    def f(x, w):
        h = mx.nd.dot(x, w, transpose_b=True)
        return (mx.nd.sigmoid(h) * mx.nd.log(x[:, 0:2]) + h ** 2).sum()
    x, w = variable(x0, dtype='float64'), variable(w0, dtype='float64')
    with autograd.record():
        y = f(x, w)
    y.backward()
    eps = 1e-6
    for arr, base in ((x, x0), (w, w0)):
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                moved = base.copy()
                moved[idx] += sign * eps
                args = (mx.nd.array(moved, dtype='float64'), w) if arr is x else \
                    (x, mx.nd.array(moved, dtype='float64'))
                numeric[idx] += sign * f(*args).asscalar() / (2 * eps)
        np.testing.assert_allclose(arr.grad.asnumpy(), numeric, rtol=1e-6, atol=1e-8)
    assert check_numeric_gradient is not None


# ---------------------------------------------------------------- grad_req and heads
def test_write_overwrites_and_add_accumulates():
    a, b = variable([1., 2.]), variable([1., 2.], grad_req='add')
    for _ in range(3):
        with autograd.record():
            y = (a * 3 + b * 3).sum()
        y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [3, 3])
    np.testing.assert_array_equal(b.grad.asnumpy(), [9, 9])
    c = variable([5.], grad_req='null')
    with autograd.record():
        (c * 2).backward()
    np.testing.assert_array_equal(c.grad.asnumpy(), [0])


def test_several_heads_and_a_variable_as_head():
    a = variable([1., 2.])
    with autograd.record():
        y1 = a * 2
        y2 = a * a
    autograd.backward([y1, y2, a], [mx.nd.array([1., 1.]), mx.nd.array([10., 10.]),
                                     mx.nd.array([100., 100.])])
    np.testing.assert_array_equal(a.grad.asnumpy(), [122, 142])


def test_mark_variables_and_grad():
    a = mx.nd.array([1., 2., 3.])
    ga = mx.nd.zeros((3,))
    autograd.mark_variables([a], [ga])
    with autograd.record():
        b = (a * a * a).sum()
    got = autograd.grad(b, [a])
    # MXNet 1.9.1: the gradient comes back and the variable's own buffer is untouched
    np.testing.assert_array_equal(got[0].asnumpy(), [3, 12, 27])
    np.testing.assert_array_equal(ga.asnumpy(), [0, 0, 0])


def test_detach_and_pause_stop_the_gradient():
    a = variable([1., 2.])
    with autograd.record():
        y = a * 2 + a.detach() * 5
        with autograd.pause():
            z = a * 7
        y = y + z
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [2, 2])


# ---------------------------------------------------------------- errors
def test_backward_twice_needs_retain_graph():
    a = variable([1., 2.])
    with autograd.record():
        y = a * 2
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [2, 2])
    with pytest.raises(mx.MXNetError, match='retain_graph'):
        y.backward()


def test_backward_of_an_unrecorded_array_raises():
    with pytest.raises(mx.MXNetError, match='computational graph'):
        mx.nd.ones((2,)).backward()


def test_in_place_change_of_a_graph_array_raises_at_the_call():
    a = variable([1., 2.])
    with autograd.record():
        b = a * 2
        with pytest.raises(mx.MXNetError, match='computational graph'):
            a += 1
        with pytest.raises(mx.MXNetError, match='computational graph'):
            b[0] = 5
        with pytest.raises(mx.MXNetError, match='computational graph'):
            mx.nd.relu(a, out=b)


def test_input_changed_after_recording_raises_at_backward():
    a = variable([1., 2.])
    with autograd.record():
        y = mx.nd.sigmoid(a * 3)        # sigmoid's backward reads its output
        z = (a * a).sum()               # mul's backward reads its inputs
    y[:] = 0                            # outside record: allowed, but y is now stale
    with pytest.raises(mx.MXNetError, match='sigmoid'):
        y.backward()
    a[:] = 7
    with pytest.raises(mx.MXNetError, match="input 'lhs' of"):
        z.backward()


def test_training_mode_reaches_the_operators():
    x = variable(np.ones((200,)))
    with autograd.record():
        y = mx.nd.Dropout(x, p=0.5)
    kept = y.asnumpy() != 0
    assert 0 < kept.sum() < 200 and np.allclose(y.asnumpy()[kept], 2)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), kept * 2.0)
    with autograd.record(train_mode=False):
        np.testing.assert_array_equal(mx.nd.Dropout(x, p=0.5).asnumpy(), np.ones(200))


# ---------------------------------------------------------------- threads, Function
def test_two_threads_record_separate_graphs():
    results, errors = {}, []

    def work(k):
        try:
            a = variable(np.full(4, float(k)))
            for _ in range(50):
                with autograd.record():
                    y = (a * a * k).sum()
                y.backward()
            results[k] = a.grad.asnumpy()
        except Exception as exc:       # noqa: BLE001
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and not any(t.is_alive() for t in threads)
    for k in (1, 2, 3):
        np.testing.assert_allclose(results[k], np.full(4, 2.0 * k * k))
    assert not autograd.is_recording()


def test_a_thread_that_does_not_record_is_not_recorded_while_another_does():
    a = variable([1., 2.])
    recording, done, seen = threading.Event(), threading.Event(), []

    def recorder():
        with autograd.record():
            recording.set()
            done.wait(30)

    t = threading.Thread(target=recorder)
    t.start()
    recording.wait(30)
    try:
        y = a * 3                      # this thread does not record: a plain result
        z = mx.nd.relu(a)
        seen += [y._ag, z._ag]
    finally:
        done.set()
        t.join(30)
    assert seen == [None, None]
    with autograd.record():
        with autograd.pause():
            assert (a * 3)._ag is None
        assert (a * 3)._ag is not None


class Sigmoid(autograd.Function):
    def forward(self, x):
        y = 1 / (1 + mx.nd.exp(-x))
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        y, = self.saved_tensors
        return dy * y * (1 - y)


def test_custom_function():
    x = variable([-1., 0., 2.])
    with autograd.record():
        y = Sigmoid()(x) * 3
    y.backward()
    s = 1 / (1 + np.exp(-x.asnumpy()))
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * s * (1 - s), rtol=1e-6)
    f = Sigmoid()
    f(x)
    with pytest.raises(mx.MXNetError, match='once'):
        f(x)


def test_get_symbol_replays_the_recorded_graph():
    a = variable(np.arange(6.).reshape(2, 3))
    with autograd.record():
        y = mx.nd.relu(a * 2 - 3).sum(axis=1)
    sym = autograd.get_symbol(y)
    assert sym.list_arguments() == ['var0']
    exe = sym.bind(mx.cpu(), {'var0': a.detach()})
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), y.asnumpy())
    with pytest.raises(mx.MXNetError, match='recorded'):
        autograd.get_symbol(a)
