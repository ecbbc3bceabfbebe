"""Loss layers: forward values and the gradient formulas they implement."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.operator import get_op
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(0)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def backward(op, params, ins, head=None):
    spec = get_op(op)
    p = spec.params.parse(op, params)
    nd_in = [mx.nd.array(a, dtype=a.dtype) for a in ins]
    _, shapes, _ = spec.infer_shape(p, [a.shape for a in ins])
    outs = [mx.nd.empty(s, dtype=ins[0].dtype) for s in shapes]
    spec.forward(p, True, ['write'], nd_in, outs, [])
    grads = [mx.nd.ones(a.shape, dtype=a.dtype) * 7 for a in ins]
    heads = [mx.nd.array(head if head is not None else np.ones(shapes[0]), dtype=ins[0].dtype)]
    spec.backward(p, ['write'] * len(ins), heads, nd_in, outs, grads, [])
    return outs[0].asnumpy(), [g.asnumpy() for g in grads]


@pytest.mark.parametrize('normalization', ['null', 'batch', 'valid'])
def test_softmax_output_gradient(normalization):
    x = RNG.standard_normal((5, 4))
    label = np.array([0, 3, 1, -1, 2], dtype=np.float64)
    y, (dx, dl) = backward('SoftmaxOutput', dict(use_ignore=True, ignore_label=-1,
                                                 normalization=normalization,
                                                 grad_scale=2.0), [x, label])
    np.testing.assert_allclose(y, softmax(x), rtol=1e-6)
    ref = softmax(x)
    ref[np.arange(5), label.astype(int) % 4] -= 1
    ref[3] = 0
    ref *= 2.0 / {'null': 1, 'batch': 5, 'valid': 4}[normalization]
    np.testing.assert_allclose(dx, ref, rtol=1e-6)
    np.testing.assert_array_equal(dl, 0)


def test_softmax_output_multi_output_and_preserve_shape():
    x = RNG.standard_normal((2, 3, 4))
    label = RNG.integers(0, 3, (2, 4)).astype(np.float64)
    y, (dx, _) = backward('SoftmaxOutput', dict(multi_output=True), [x, label])
    np.testing.assert_allclose(y, softmax(x, axis=1))
    onehot = np.moveaxis(np.eye(3)[label.astype(int)], -1, 1)
    np.testing.assert_allclose(dx, softmax(x, axis=1) - onehot, rtol=1e-6)
    y2, _ = backward('SoftmaxOutput', dict(preserve_shape=True), [x, RNG.integers(0, 4, (2, 3)).astype(np.float64)])
    np.testing.assert_allclose(y2, softmax(x, axis=-1))


def test_softmax_output_label_name_and_shapes():
    out = mx.sym.SoftmaxOutput(mx.sym.Variable('data'), name='softmax')
    assert out.list_arguments() == ['data', 'softmax_label']
    args, outs, _ = out.infer_shape(data=(8, 10))
    assert args[1] == (8,) and outs[0] == (8, 10)
    unnamed = mx.sym.SoftmaxOutput(mx.sym.Variable('data'))
    assert unnamed.list_arguments()[1].endswith('_label')
    with pytest.raises(mx.MXNetError, match=r"label.*expected \(8,\), given \(7,\)"):
        out.infer_shape(data=(8, 10), softmax_label=(7,))


@pytest.mark.parametrize('op,link', [
    ('LinearRegressionOutput', lambda x: x),
    ('LogisticRegressionOutput', lambda x: 1 / (1 + np.exp(-x))),
    ('MAERegressionOutput', lambda x: x)])
def test_regression_outputs(op, link):
    x = RNG.standard_normal((4, 3))
    label = RNG.standard_normal((4, 3))
    y, (dx, _) = backward(op, dict(grad_scale=3.0), [x, label])
    np.testing.assert_allclose(y, link(x), rtol=1e-6)
    diff = link(x) - label
    ref = np.sign(diff) if op == 'MAERegressionOutput' else diff
    np.testing.assert_allclose(dx, 3.0 / 3 * ref, rtol=1e-6)


def test_make_loss_and_softmax_cross_entropy():
    x = RNG.standard_normal((4, 3))
    y, (dx,) = backward('MakeLoss', dict(grad_scale=0.5, normalization='batch'), [x])
    np.testing.assert_array_equal(y, x)
    np.testing.assert_allclose(dx, np.full_like(x, 0.5 / 4))
    label = np.array([0, 2, 1, 1], dtype=np.float64)
    check_op_forward('softmax_cross_entropy', {}, [x, label],
                     [np.array([-np.log(softmax(x)[np.arange(4), [0, 2, 1, 1]]).sum()])])
    check_op_backward('softmax_cross_entropy', {}, [x, label], grad_nodes=['data'])
