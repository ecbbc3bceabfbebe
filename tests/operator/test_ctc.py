"""CTCLoss: losses and gradients against MXNet 1.9.1 literals, a brute-force NumPy
reference (every alignment enumerated) and finite differences; lengths, both blank
conventions, infeasible labels, errors, mx.sym and autograd."""
import itertools

import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd
from mxcy.test_utils import check_op_backward

# inputs of the MXNet 1.9.1 literals below: np.random.RandomState(0).randn(5, 3, 4)
X = np.random.RandomState(0).randn(5, 3, 4).astype(np.float32)
LABEL_FIRST = np.array([[1, 2, 0], [3, 3, 0], [1, 0, 0]], np.float32)
LABEL_LAST = np.array([[0, 1, -1], [2, 2, -1], [0, -1, -1]], np.float32)


def brute_force(x, labels, blank):
    """-log Σ over every frame-level path that collapses to `labels` (NumPy, tiny T)."""
    z = np.exp(x - x.max(axis=1, keepdims=True))
    prob = z / z.sum(axis=1, keepdims=True)
    total = 0.0
    for path in itertools.product(range(x.shape[1]), repeat=x.shape[0]):
        collapsed = [c for i, c in enumerate(path) if c != blank and
                     (i == 0 or c != path[i - 1])]
        if collapsed == list(labels):
            total += np.prod(prob[np.arange(x.shape[0]), path])
    return -np.log(total) if total > 0 else 0.0


def test_ctc_matches_mxnet_literals():
    d = mx.nd.array(X)
    d.attach_grad()
    with autograd.record():
        loss = mx.nd.CTCLoss(d, mx.nd.array(LABEL_FIRST))
    loss.backward(mx.nd.array([1.0, 2.0, -0.5]))
    # MXNet 1.9.1: mx.nd.CTCLoss on these inputs, backward with head [1, 2, -0.5]
    np.testing.assert_allclose(loss.asnumpy(), [4.400851, 3.606066, 6.116258], rtol=1e-5)
    np.testing.assert_allclose(d.grad.asnumpy()[:, 1], [
        [0.526517, 0.07311518, 0.5024028, -1.102035],
        [0.005646467, 0.2306427, 0.3872597, -0.623549],
        [-0.8410717, 0.7490857, 0.2012286, -0.1092428],
        [-0.05290256, 0.06191464, 0.04650242, -0.05551434],
        [-0.174396, 0.179897, 0.5695432, -0.5750437]], rtol=1e-4, atol=1e-6)
    last = mx.nd.CTCLoss(d, mx.nd.array(LABEL_LAST), blank_label='last')
    # MXNet 1.9.1, blank_label='last'
    np.testing.assert_allclose(last.asnumpy(), [1.853761, 5.259657, 4.633718], rtol=1e-5)
    with autograd.record():
        loss = mx.nd.CTCLoss(d, mx.nd.array(LABEL_FIRST), mx.nd.array([5, 3, 4]),
                             mx.nd.array([2, 1, 1]), use_data_lengths=True,
                             use_label_lengths=True)
    loss.backward()
    # MXNet 1.9.1, data_lengths [5, 3, 4], label_lengths [2, 1, 1]
    np.testing.assert_allclose(loss.asnumpy(), [4.400851, 2.370543, 5.141387], rtol=1e-5)
    np.testing.assert_allclose(d.grad.asnumpy()[:, 1], [
        [-0.1180266, 0.03655759, 0.2512014, -0.1697321],
        [-0.1280891, 0.1153213, 0.1936299, -0.1808622],
        [-0.009238541, 0.3745428, 0.1006143, -0.4659185],
        [0, 0, 0, 0], [0, 0, 0, 0]], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize('blank_label', ['first', 'last'])
def test_ctc_equals_brute_force(blank_label):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 2, 3))
    if blank_label == 'first':
        labels, blank = np.array([[1, 2], [2, 2]], np.float64), 0     # padding: 0
        want = [brute_force(x[:, 0], [1, 2], 0), brute_force(x[:, 1], [2, 2], 0)]
    else:
        labels, blank = np.array([[0, -1], [1, 0]], np.float64), 2    # padding: -1
        want = [brute_force(x[:, 0], [0], 2), brute_force(x[:, 1], [1, 0], 2)]
    got = mx.nd.CTCLoss(mx.nd.array(x, dtype='float64'), mx.nd.array(labels, dtype='float64'),
                        blank_label=blank_label)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10)
    assert blank in (0, 2)


@pytest.mark.parametrize('lengths', [False, True])
def test_ctc_gradient_finite_differences(lengths):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 3, 4))
    label = np.array([[1, 2, 0], [3, 3, 0], [2, 0, 0]], np.float64)
    params = {}
    inputs = [x, label]
    if lengths:
        params = dict(use_data_lengths=True, use_label_lengths=True)
        inputs += [np.array([5., 3., 4.]), np.array([2., 1., 1.])]
    check_op_backward('CTCLoss', params, inputs, grad_nodes=['data'], rtol=1e-5, atol=1e-8)


def test_ctc_infeasible_and_empty_labels():
    x = mx.nd.array(np.random.RandomState(1).randn(2, 2, 3))
    x.attach_grad()
    with autograd.record():
        loss = mx.nd.CTCLoss(x, mx.nd.array([[1, 1], [1, 0]]))
    loss.backward()
    # MXNet 1.9.1: [1, 1] needs 3 frames (a blank between the repeats): loss 0, gradient 0
    np.testing.assert_allclose(loss.asnumpy(), [0.0, 0.08031166], rtol=1e-5)
    np.testing.assert_array_equal(x.grad.asnumpy()[:, 0], 0)
    empty = mx.nd.CTCLoss(x, mx.nd.array([[0, 0], [1, 0]]))
    np.testing.assert_allclose(empty.asnumpy(), [0.48044205, 0.08031166], rtol=1e-5)


def exe_forward(sym, feed):
    return sym.bind(mx.cpu(), feed).forward()[0].asnumpy()


def test_ctc_shapes_symbol_and_errors():
    data, label = mx.sym.var('data'), mx.sym.var('label')
    out = mx.sym.CTCLoss(data, label, label_lengths=mx.sym.var('ll'), use_label_lengths=True)
    assert out.list_arguments() == ['data', 'label', 'll']
    args, outs, _ = out.infer_shape(data=(5, 3, 4), label=(3, 2))
    assert args == [(5, 3, 4), (3, 2), (3,)] and outs == [(3,)]
    feed = {'data': mx.nd.array(X), 'label': mx.nd.array(LABEL_FIRST[:, :2]),
            'll': mx.nd.array([2, 1, 1])}
    want = mx.nd.CTCLoss(feed['data'], feed['label'], label_lengths=feed['ll'],
                         use_label_lengths=True).asnumpy()
    np.testing.assert_allclose(exe_forward(out, feed), want, rtol=1e-6)
    assert want[0] == pytest.approx(4.400851, rel=1e-5)     # MXNet 1.9.1 (label [1, 2])
    assert mx.nd.ctc_loss is not None and mx.sym.ctc_loss is not None
    with pytest.raises(ValueError, match="CTCLoss: shape mismatch for argument 'label'"):
        mx.nd.CTCLoss(mx.nd.array(X), mx.nd.ones((2, 3)))
    with pytest.raises(ValueError, match="argument 'data'"):
        mx.nd.CTCLoss(mx.nd.ones((5, 4)), mx.nd.ones((5, 2)))
    with pytest.raises(ValueError, match=r"label 0 \[7.0\] must hold class indices in \[0, 4\)"):
        mx.nd.CTCLoss(mx.nd.array(X), mx.nd.array([[7, 0], [1, 0], [1, 0]])).asnumpy()
    with pytest.raises(ValueError, match=r"data_lengths must hold 3 integers in \[0, 5\]"):
        mx.nd.CTCLoss(mx.nd.array(X), mx.nd.array(LABEL_FIRST), mx.nd.array([6, 1, 1]),
                      use_data_lengths=True).asnumpy()
