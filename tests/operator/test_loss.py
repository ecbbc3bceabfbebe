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
    # MXNet divides multi_output gradients by the spatial size (4) unless normalization='valid'
    np.testing.assert_allclose(dx, (softmax(x, axis=1) - onehot) / 4, rtol=1e-6)
    y2, _ = backward('SoftmaxOutput', dict(preserve_shape=True),
                     [x, RNG.integers(0, 4, (2, 3)).astype(np.float64)])
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


# SoftmaxOutput gradients from MXNet 1.9.1 (symbolic bind, ignore_label=2): a slice of d data
# per case. multi_output divides by the spatial size unless normalization is 'valid'; 'batch'
# with preserve_shape divides by the number of rows; 'valid' counts labels != ignore_label
# even without use_ignore.
SM_DATA = {
    '3d': (np.sin(np.arange(24.)).reshape(2, 3, 4), [[0, 2, 1, 2], [1, 0, 2, 0]],
           dict(multi_output=True), lambda g: g[:, :, 1]),
    '4d': (np.cos(np.arange(36.)).reshape(2, 3, 2, 3),
           [[[0, 2, 1], [2, 2, 0]], [[1, 0, 2], [0, 1, 1]]],
           dict(multi_output=True), lambda g: g[:, :, 0, 1]),
    '2d': (np.sin(np.arange(12.)).reshape(4, 3), [0, 2, 1, 2], {}, lambda g: g),
    'pres': (np.sin(np.arange(24.)).reshape(2, 3, 4), [[0, 2, 1], [3, 0, 2]],
             dict(preserve_shape=True), lambda g: g[:, :, 1]),
}
SM_MXNET = [
    ('3d', dict(normalization='null'),
     [0.13765277, 0.02274486, -0.16039762, -0.15967595, 0.02268807, 0.13698787]),
    ('3d', dict(normalization='null', use_ignore=True),
     [0, 0, 0, -0.15967595, 0.02268807, 0.13698787]),
    ('3d', dict(normalization='batch', use_ignore=True, grad_scale=2.5),
     [0, 0, 0, -0.19959493, 0.02836009, 0.17123484]),
    ('3d', dict(normalization='valid'),
     [0.11012222, 0.01819589, -0.1283181, -0.12774076, 0.01815046, 0.1095903]),
    ('3d', dict(normalization='valid', use_ignore=True, grad_scale=2.5),
     [0, 0, 0, -0.31935189, 0.04537614, 0.27397575]),
    ('4d', dict(normalization='null', use_ignore=True),
     [0, 0, 0, -0.10980729, 0.0570016, 0.05280569]),
    ('4d', dict(normalization='batch'),
     [0.02263426, 0.0280241, -0.05065836, -0.05490365, 0.0285008, 0.02640284]),
    ('4d', dict(normalization='valid', grad_scale=2.5),
     [0.08487849, 0.10509037, -0.18996886, -0.20588867, 0.106878, 0.09901066]),
    ('2d', dict(normalization='valid'),
     [-0.41382809, 0.19989961, 0.21392848, 0.28731149, 0.11705506, -0.40436655,
      0.07035044, -0.32055098, 0.25020055, 0.30712477, 0.11805073, -0.4251755]),
    ('2d', dict(normalization='batch', use_ignore=True),
     [-0.20691404, 0.09994981, 0.10696424, 0, 0, 0, 0.03517522, -0.16027549, 0.12510027,
      0, 0, 0]),
    ('pres', dict(normalization='batch'),
     [0.0555988, 0.01805828, -0.11777817, 0.03777627, 0.02304097, 0.06185546]),
    ('pres', dict(normalization='valid'),
     [0.0833982, 0.02708742, -0.17666725, 0.0566644, 0.03456146, 0.09278319]),
    ('pres', dict(normalization='null', use_ignore=True),
     [0.33359281, 0, -0.70666902, 0.22665761, 0.13824584, 0]),
]


@pytest.mark.parametrize('dtypes', [('float32', 'float32'), ('float64', 'float64'),
                                    ('float32', 'float64')],
                         ids=['f32', 'f64', 'f32-f64label'])   # the last: the NumPy path
@pytest.mark.parametrize('case,params,expected', SM_MXNET,
                         ids=[f"{c}-{'-'.join(map(str, p.values()))}" for c, p, _ in SM_MXNET])
def test_softmax_output_gradient_matches_mxnet(case, params, expected, dtypes):
    x, label, extra, part = SM_DATA[case]
    ins = [x.astype(dtypes[0]), np.array(label, dtype=dtypes[1])]
    _, (dx, dl) = backward('SoftmaxOutput', dict(extra, ignore_label=2, **params), ins)
    np.testing.assert_allclose(part(dx).ravel(), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(dl, 0)
