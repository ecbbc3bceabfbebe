"""autograd's backward walk over the tape, which runs in C (`_ndarray.run_tape`): each
branch of it against NumPy — variables by grad_req, an output used twice, one array as
two inputs of a call, an unused output of a multi-output call, grad()'s captured
variables, versions, retain_graph, two threads, mx.np arrays."""
import threading

import numpy as np
import pytest

import mxcy as mx
from mxcy import _ndarray, autograd, npx
from mxcy.base import MXNetError


def variable(values, grad_req='write'):
    a = mx.nd.array(np.asarray(values, dtype=np.float32))
    a.attach_grad(grad_req)
    return a


def test_variables_are_the_c_record_and_keep_their_fields():
    x = variable([1.0, 2.0], 'add')
    assert type(x._ag) is _ndarray.GraphVariable is autograd._Variable
    assert (x._ag.req, x._ag.fresh) == ('add', False)
    with autograd.record():
        y = x * 3
    y.backward()
    assert x._ag.fresh and x._fresh_grad
    x._fresh_grad = False
    assert not x._ag.fresh


@pytest.mark.parametrize('req, expected', [('write', [6.0, 6.0]), ('add', [9.0, 9.0])])
def test_grad_req_write_overwrites_and_add_accumulates_across_backwards(req, expected):
    x = variable([1.0, -2.0], req)
    x.grad[:] = 3.0
    with autograd.record():
        y = x * 2 + x * 4          # two contributions in one pass: summed either way
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), expected)


def test_null_req_variable_gets_nothing_and_the_rest_still_flow():
    x, w = variable([1.0, 2.0], 'null'), variable([3.0, 4.0])
    with autograd.record():
        y = x * w
    y.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), [1.0, 2.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [0.0, 0.0])


def test_one_array_twice_in_a_call_and_an_output_used_twice():
    x = variable([1.0, 2.0, -3.0])
    with autograd.record():
        s = x * x                  # x twice among one call's inputs: a temporary, added
        y = s + s                  # s's gradient: two contributions into one buffer
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 4 * np.array([1.0, 2.0, -3.0]))


def test_an_unused_output_of_a_multi_output_call_counts_as_zero():
    x = variable(np.arange(6.0).reshape(2, 3))
    with autograd.record():
        a, b = mx.nd.split(x, num_outputs=2, axis=0)
        y = (a * 5).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[5, 5, 5], [0, 0, 0]])


def test_grad_captures_into_new_buffers_and_leaves_the_variables_own():
    x, w = variable([1.0, 2.0]), variable([3.0, 5.0])
    w.grad[:] = 7.0
    with autograd.record():
        y = x * w + x
    (gx,) = autograd.grad(y, [x])
    np.testing.assert_allclose(gx.asnumpy(), [4.0, 6.0])
    np.testing.assert_allclose(w.grad.asnumpy(), [7.0, 7.0])


def test_an_input_written_after_recording_raises_naming_the_operator():
    x, w = variable([1.0, 2.0]), variable([3.0, 4.0])
    with autograd.record():
        y = mx.nd.elemwise_mul(x, w)
    x[:] = 0
    with pytest.raises(MXNetError, match='elemwise_mul.*written after'):
        y.backward()


def test_an_output_written_after_recording_raises():
    x = variable([1.0, 2.0])
    with autograd.record():
        y = mx.nd.exp(x)           # exp's backward reads its output
        z = y * 2
    y[:] = 0
    with pytest.raises(MXNetError, match='output 0 of exp'):
        z.backward()


def test_retain_graph_runs_twice_then_the_graph_is_freed():
    x = variable([1.0, 2.0], 'add')
    with autograd.record():
        y = mx.nd.exp(x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(MXNetError, match='freed'):
        y.backward()


def test_backward_restores_recording_on_this_thread_even_after_an_error():
    x = variable([1.0, 2.0])
    with autograd.record():
        y = mx.nd.exp(x)
    x[:] = 0                       # an input written after recording
    with autograd.record():
        with pytest.raises(MXNetError):
            y.backward()
        assert autograd.is_recording() and autograd.is_training()
        z = x * 2                  # still recorded
    assert z._ag is not None
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 2.0])


def test_two_threads_walk_their_own_tapes_at_once():
    errors, grads = [], {}
    barrier = threading.Barrier(2)

    def work(k):
        try:
            x = variable(np.full(4, k + 1.0))
            barrier.wait()
            for _ in range(50):
                with autograd.record():
                    y = (x * x * (k + 1)).sum()
                y.backward()
            grads[k] = x.grad.asnumpy()
            assert not autograd.is_recording()
        except Exception as e:     # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(2):
        np.testing.assert_allclose(grads[k], 2 * (k + 1) * np.full(4, k + 1.0))


def test_numpy_mode_arrays_walk_the_same_tape():
    npx.set_np()
    try:
        x = mx.np.array([1.0, -2.0, 3.0])
        x.attach_grad()
        with autograd.record():
            y = (x * x).sum()
        y.backward()
        assert isinstance(x.grad, mx.np.ndarray)
        np.testing.assert_allclose(x.grad.asnumpy(), [2.0, -4.0, 6.0])
    finally:
        npx.reset_np()


def test_one_recording_flag_per_thread_in_c():
    seen = {}

    def other():
        seen['other'] = (autograd.is_recording(), autograd.is_training(),
                         _ndarray.ThreadState().recording)
        with autograd.record():
            seen['inner'] = _ndarray.ThreadState().recording

    with autograd.record(train_mode=False):
        # every ThreadState reads the same C thread-locals autograd sets
        assert (_ndarray.ThreadState().recording, _ndarray.ThreadState().training) == \
            (True, False)
        t = threading.Thread(target=other)
        t.start()
        t.join()
        x = variable([2.0])
        y = x * x                  # the C dunder path sees this thread's flag
        assert autograd.is_recording()
    assert seen == {'other': (False, False, False), 'inner': True}
    assert not _ndarray.ThreadState().recording
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [4.0])


def test_gradient_buffers_are_reused_across_steps_and_values_stay_right():
    x = variable([1.0, 2.0])
    for step in range(3):
        with autograd.record():
            y = mx.nd.exp(x * (step + 1))
        y.backward()
        assert _ndarray.grad_pool_size() >= 1      # y's ones and (x*k)'s gradient
        np.testing.assert_allclose(x.grad.asnumpy(),
                                   (step + 1) * np.exp((step + 1) * np.array([1.0, 2.0])),
                                   rtol=1e-5)


def test_a_gradient_kept_by_a_custom_function_is_not_reused():
    kept = []

    class Keep(autograd.Function):
        def forward(self, x):
            return x * 1

        def backward(self, dy):
            kept.append(dy)
            return dy * 2

    x = variable([1.0, 2.0])
    for k in range(2):
        with autograd.record():
            y = Keep()(x) * (k + 3.0)
        y.backward()
    np.testing.assert_allclose(kept[0].asnumpy(), [3.0, 3.0])
    np.testing.assert_allclose(kept[1].asnumpy(), [4.0, 4.0])
    assert kept[0] is not kept[1]


def test_a_diamond_graph_runs_each_node_once_after_all_its_users():
    xv = np.array([0.5, -1.0, 2.0])
    x = variable(xv)
    with autograd.record():
        a = mx.nd.exp(x)           # used by b, c and y: its gradient sums three paths
        b = a * 3
        c = mx.nd.sin(a) + b
        y = c * a + b
    y.backward()
    ea = np.exp(xv)
    # y = (sin(a) + 3a) a + 3a;  dy/da = cos(a) a + sin(a) + 6a + 3;  da/dx = a
    expected = (np.cos(ea) * ea + np.sin(ea) + 6 * ea + 3) * ea
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-5)
