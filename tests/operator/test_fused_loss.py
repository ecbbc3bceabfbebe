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
