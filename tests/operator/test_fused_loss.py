"""_sparse_softmax_ce (operator/fused_loss.py), the imperative SoftmaxCrossEntropyLoss with
sparse labels, equals the three operators it stands for (the hybridized loss traces
those), values and gradients, on the cases where they could part: another axis, labels
out of range (clipped), float64, sample weights, accumulated gradients."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd, gluon


@pytest.mark.parametrize('shape,axis,dtype', [((6, 5), -1, 'float32'),
                                              ((2, 4, 3), 1, 'float64'),
                                              ((3, 2, 5), -1, 'float32')])
def test_equals_the_unfused_loss(shape, axis, dtype):
    rng = np.random.default_rng(4)
    pred_np = rng.standard_normal(shape)
    label_shape = shape[:axis % len(shape)] + shape[axis % len(shape) + 1:]
    label_np = rng.integers(-2, shape[axis] + 2, label_shape).astype(np.float32)  # clipped
    weight = mx.nd.array(rng.random(label_shape), dtype=dtype)
    head = rng.random(label_shape[:1])        # the loss is one value per sample
    results = []
    for hybrid in (False, True):
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss(axis=axis)
        if hybrid:
            loss_fn.hybridize()
        pred = mx.nd.array(pred_np, dtype=dtype)
        pred.attach_grad(grad_req='add')
        for _ in range(2):
            with autograd.record():
                loss = loss_fn(pred, mx.nd.array(label_np, dtype=dtype),
                               mx.nd.expand_dims(weight, axis=axis))
            loss.backward(mx.nd.array(head, dtype=dtype))
        results.append((loss.asnumpy(), pred.grad.asnumpy()))
    (l0, g0), (l1, g1) = results
    np.testing.assert_allclose(l0, l1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g0, g1, rtol=1e-5, atol=1e-6)


def test_records_one_node_and_matches_numpy():
    pred = mx.nd.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    pred.attach_grad()
    with autograd.record():
        raw = mx.nd._sparse_softmax_ce(pred, mx.nd.array([2, 0]), axis=-1)
    assert raw.shape == (2, 1)
    node = raw._ag.node
    assert node.spec.name == '_sparse_softmax_ce' and node.sources[0] is pred._ag
    logp = np.log(np.exp(pred.asnumpy()) / np.exp(pred.asnumpy()).sum(1, keepdims=True))
    np.testing.assert_allclose(raw.asnumpy()[:, 0], -logp[[0, 1], [2, 0]], rtol=1e-6)
    raw.backward()
    want = np.exp(logp)
    want[[0, 1], [2, 0]] -= 1
    np.testing.assert_allclose(pred.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


def _reference(x, label, axis):
    """(loss without the axis, gradient of its sum) in NumPy, labels clipped."""
    x = np.moveaxis(x, axis, -1)
    logp = x - x.max(-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
    k = np.clip(label.astype(np.int64), 0, x.shape[-1] - 1)
    loss = -np.take_along_axis(logp, k[..., None], -1)[..., 0]
    grad = np.exp(logp)
    np.put_along_axis(grad, k[..., None], np.take_along_axis(grad, k[..., None], -1) - 1, -1)
    return loss, np.moveaxis(grad, -1, axis)


@pytest.mark.parametrize('shape,axis,dtype,label_dtype', [
    ((7, 4), 1, 'float32', 'float32'), ((3, 6), 1, 'float64', 'int32'),
    ((2, 5, 3), 1, 'float64', 'int64'), ((4, 2, 5), 2, 'float32', 'float64')])
def test_kernels_match_numpy(shape, axis, dtype, label_dtype):
    """The one-kernel forward (class axis last) and backward (any axis), write and add."""
    rng = np.random.default_rng(7)
    x_np = rng.standard_normal(shape).astype(dtype)
    label_shape = shape[:axis] + shape[axis + 1:]
    label_np = rng.integers(-1, shape[axis] + 1, label_shape).astype(label_dtype)
    dy_np = rng.random(label_shape).astype(dtype)
    want_loss, want_grad = _reference(x_np.astype(np.float64), label_np, axis)
    x = mx.nd.array(x_np, dtype=dtype)
    x.attach_grad(grad_req='add')
    x.grad[:] = 1.0
    label = mx.nd.array(label_np, dtype=label_dtype)
    with autograd.record():
        loss = mx.nd._sparse_softmax_ce(x, label, axis=axis, keepdims=False)
    assert loss.shape == label_shape
    loss.backward(mx.nd.array(dy_np, dtype=dtype))
    tol = 1e-5 if dtype == 'float32' else 1e-12
    np.testing.assert_allclose(loss.asnumpy(), want_loss, rtol=tol, atol=tol)
    np.testing.assert_allclose(x.grad.asnumpy(),
                               1.0 + want_grad * np.expand_dims(dy_np, axis), rtol=tol,
                               atol=tol)


def test_kernel_refuses_mismatched_arrays():
    from mxcy._ndarray import sparse_ce as push_sparse_ce
    x, logp = mx.nd.zeros((3, 4)), mx.nd.zeros((3, 4))
    with pytest.raises(ValueError, match='sparse softmax cross-entropy.*do not match'):
        push_sparse_ce(x, logp, mx.nd.zeros((4,)), mx.nd.zeros((3,)), 1)
    with pytest.raises(TypeError, match='sparse softmax cross-entropy.*one dtype'):
        push_sparse_ce(x, logp, mx.nd.zeros((3,)), mx.nd.zeros((3,), dtype='float64'), 1)
    with pytest.raises(ValueError, match='class axis last'):
        push_sparse_ce(x, logp, mx.nd.zeros((4,)), mx.nd.zeros((4,)), 0)


@pytest.mark.parametrize('weight,label_shape,label_dtype', [
    (None, (5,), 'float32'), (0.5, (5,), 'float32'), (None, (5, 1), 'int32'),
    (None, (5,), 'int64'), (None, (5,), 'float64')])
def test_two_dimensional_loss_is_one_node(weight, label_shape, label_dtype):
    """(N, C) without sample weights: the per-sample loss is the fused call's own value
    (no mean node), equal to the hybridized loss (MXNet's three operators and the mean)."""
    rng = np.random.default_rng(3)
    pred_np = rng.standard_normal((5, 4))
    label = mx.nd.array(rng.integers(-1, 5, label_shape), dtype=label_dtype)
    results = []
    for hybrid in (False, True):
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss(weight=weight)
        if hybrid:
            loss_fn.hybridize()
        pred = mx.nd.array(pred_np)
        pred.attach_grad()
        with autograd.record():
            loss = loss_fn(pred, label)
        if not hybrid:
            node = loss._ag.node
            if weight is None:
                assert node.spec.name == '_sparse_softmax_ce' and node.sources[0] is pred._ag
                assert not node.params.keepdims and len(node.outputs) == 2
            else:
                assert node.sources[0].node.spec.name == '_sparse_softmax_ce'
        loss.backward()
        results.append((loss.asnumpy(), pred.grad.asnumpy()))
    assert results[0][0].shape == (5,)
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
