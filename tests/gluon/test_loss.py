"""gluon.loss: every loss against MXNet 1.9.1 outputs (literals) and NumPy references,
hybridized == imperative, gradients through autograd (imperative and hybridized) against
float64 finite differences, sample_weight / weight / batch_axis semantics, errors."""
import math

import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd
from mxcy.gluon import loss as gloss
from mxcy.test_utils import finite_difference as numeric_grad


def R(seed, shape, lo=-1, hi=1):
    """The inputs the MXNet 1.9.1 literals were computed from."""
    return np.random.RandomState(seed).uniform(lo, hi, shape).astype(np.float32)


PRED, LABEL, SW = R(0, (3, 4)), R(1, (3, 4)), R(2, (3, 1), 0, 1)
BINARY = (R(5, (3, 4), 0, 1) > 0.5).astype(np.float32)
PROBS = R(6, (3, 4), 0.05, 0.95)
POS_W = R(7, (1, 4), 0.5, 2)
SPARSE = np.array([0, 3, 1], np.float32)
DIST = np.abs(R(8, (3, 4)))
DIST /= DIST.sum(1, keepdims=True)
SIGNS = np.sign(R(11, (3, 4))).astype(np.float32)
RATE = R(13, (3, 4), 0.5, 3)
COUNTS = np.array([[0, 1, 2, 3], [4, 0, 1, 5], [2, 2, 7, 0]], np.float32)
SEQ = R(14, (2, 6, 5))
SEQ_LABEL = np.array([[1, 2, 3], [3, 3, -1]], np.float32)

# name: (loss, inputs); None stands for an input not given (positional)
CASES = {
    'L2': (lambda: gloss.L2Loss(), [PRED, LABEL]),
    'L2_w_sw': (lambda: gloss.L2Loss(weight=0.7), [PRED, LABEL, SW]),
    'L1': (lambda: gloss.L1Loss(), [PRED, LABEL]),
    'L1_ba1': (lambda: gloss.L1Loss(batch_axis=1), [R(3, (2, 3, 4)), R(4, (2, 3, 4))]),
    'L2_label_flat': (lambda: gloss.L2Loss(), [PRED[:, :1], LABEL[:, 0]]),
    'BCE': (lambda: gloss.SigmoidBCELoss(), [PRED * 3, BINARY]),
    'BCE_sig': (lambda: gloss.SigmoidBCELoss(from_sigmoid=True), [PROBS, BINARY]),
    'BCE_pw': (lambda: gloss.SigmoidBCELoss(), [PRED * 3, BINARY, None, POS_W]),
    'BCE_sig_pw': (lambda: gloss.SigmoidBCELoss(from_sigmoid=True),
                   [PROBS, BINARY, None, POS_W]),
    'SCE': (lambda: gloss.SoftmaxCELoss(), [PRED * 2, SPARSE]),
    'SCE_sw': (lambda: gloss.SoftmaxCELoss(weight=2.0), [PRED * 2, SPARSE, SW]),
    'SCE_dense': (lambda: gloss.SoftmaxCELoss(sparse_label=False), [PRED * 2, DIST]),
    'SCE_logits': (lambda: gloss.SoftmaxCELoss(from_logits=True), [PRED * 2, SPARSE]),
    'SCE_axis1': (lambda: gloss.SoftmaxCELoss(axis=1),
                  [R(9, (2, 3, 4)), np.array([[0, 2, 1, 1], [2, 2, 0, 1]], np.float32)]),
    'KL': (lambda: gloss.KLDivLoss(), [np.log(np.abs(R(10, (3, 4))) + 0.1), DIST]),
    'KL_nologits': (lambda: gloss.KLDivLoss(from_logits=False), [PRED, DIST]),
    'Huber': (lambda: gloss.HuberLoss(rho=0.5), [PRED, LABEL]),
    'Hinge': (lambda: gloss.HingeLoss(), [PRED, SIGNS]),
    'Hinge_m': (lambda: gloss.HingeLoss(margin=0.5), [PRED, SIGNS]),
    'SqHinge': (lambda: gloss.SquaredHingeLoss(), [PRED, SIGNS]),
    'Logistic': (lambda: gloss.LogisticLoss(), [PRED * 3, SIGNS]),
    'Logistic_bin': (lambda: gloss.LogisticLoss(label_format='binary'), [PRED * 3, BINARY]),
    'Triplet': (lambda: gloss.TripletLoss(), [PRED, LABEL, R(12, (3, 4))]),
    'Triplet_m': (lambda: gloss.TripletLoss(margin=0.1, weight=2.), [PRED, LABEL, R(12, (3, 4))]),
    'Poisson': (lambda: gloss.PoissonNLLLoss(), [np.log(RATE), COUNTS]),
    'Poisson_nolog': (lambda: gloss.PoissonNLLLoss(from_logits=False), [RATE, COUNTS]),
    'Poisson_full_pos': (lambda: gloss.PoissonNLLLoss(compute_full=True),
                         [np.log(RATE), COUNTS + 1]),
    'Poisson_full_pos_sw': (lambda: gloss.PoissonNLLLoss(compute_full=True, weight=0.5),
                            [np.log(RATE), COUNTS + 1, SW]),
    'Cosine': (lambda: gloss.CosineEmbeddingLoss(),
               [PRED, LABEL, np.array([1, -1, -1], np.float32)]),
    'Cosine_m': (lambda: gloss.CosineEmbeddingLoss(margin=0.2),
                 [PRED, LABEL, np.array([1, -1, -1], np.float32), SW]),
    'SDML': (lambda: gloss.SDMLLoss(), [PRED, LABEL]),
    'SDML_s': (lambda: gloss.SDMLLoss(smoothing_parameter=0.1), [PRED, LABEL]),
    'CTC': (lambda: gloss.CTCLoss(), [SEQ, SEQ_LABEL]),
    'CTC_lens': (lambda: gloss.CTCLoss(), [SEQ, SEQ_LABEL, np.array([6, 4], np.float32),
                                           np.array([2, 2], np.float32)]),
    'CTC_TNC': (lambda: gloss.CTCLoss(layout='TNC', label_layout='TN'),
                [SEQ.transpose(1, 0, 2), np.array([[1, 3], [2, 3], [3, -1]], np.float32)]),
    'CTC_w_sw': (lambda: gloss.CTCLoss(weight=0.5),
                 [SEQ, SEQ_LABEL, None, None, np.array([2, 3], np.float32)]),
}

# outputs of mxnet.gluon.loss on the same inputs, from MXNet 1.9.1
MXNET = {
    'L2': [0.219706, 0.3723049, 0.254364],
    'L2_w_sw': [0.06705348, 0.006756724, 0.09787006],
    'L1': [0.4910631, 0.8139968, 0.6255628],
    'L1_ba1': [0.7251405, 0.7177616, 0.6699808],
    'L2_label_flat': [0.034738, 0.153346, 0.6427405],
    'BCE': [0.6772364, 0.4568251, 1.441548],
    'BCE_sig': [1.741688, 0.5465217, 0.5756986],
    'BCE_pw': [0.8009471, 0.5638565, 1.530822],
    'BCE_sig_pw': [2.274443, 0.7859271, 0.6253328],
    'SCE': [1.643011, 0.5248976, 2.895572],
    'SCE_sw': [1.432689, 0.02721723, 3.183174],
    'SCE_dense': [1.3282, 1.724532, 1.71905],
    'SCE_logits': [-0.195254, -1.567092, 0.4662339],
    'SCE_axis1': [1.269549, 1.175855],
    'KL': [-0.7594941, -0.1652942, -0.9619942],
    'KL_nologits': [0.1653646, 0.3500968, 0.158035],
    'Huber': [0.3150507, 0.5639969, 0.3932917],
    'Hinge': [1.160941, 1.199455, 0.6950328],
    'Hinge_m': [0.6609415, 0.6994545, 0.3227267],
    'SqHinge': [1.383147, 1.583404, 0.704573],
    'Logistic': [1.00002, 1.169707, 0.526646],
    'Logistic_bin': [0.6772364, 0.4568251, 1.441548],
    'Triplet': [1.670782, 0.0, 1.736543],
    'Triplet_m': [1.541563, 0.0, 1.673086],
    'Poisson': [0.8502861],
    'Poisson_nolog': [0.8502861],
    'Poisson_full_pos': [2.872008],
    'Poisson_full_pos_sw': [0.5758878],
    'Cosine': [[1.116217], [0.0], [0.0]],
    'Cosine_m': [[0.4866648], [0.0], [0.0]],
    'SDML': [0.7944804, 1.591356, 0.07656652],
    'SDML_s': [1.222255, 2.371615, 0.01093541],
    'CTC': [6.135887, 6.54085],
    'CTC_lens': [5.879838, 6.284003],
    'CTC_TNC': [6.135887, 6.54085],
    'CTC_w_sw': [6.135887, 9.811275],
}


def nd_inputs(inputs, dtype='float32'):
    return [None if x is None else mx.nd.array(x, dtype=dtype) for x in inputs]


@pytest.mark.parametrize('name', sorted(CASES))
def test_loss_matches_mxnet_and_hybridizes(name):
    make, inputs = CASES[name]
    loss = make()
    got = loss(*nd_inputs(inputs)).asnumpy()
    want = np.array(MXNET[name], np.float32)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)
    if any(x is None for x in inputs):
        # a hybridized block drops None inputs and shifts the later ones (reported to the
        # block's owner): give explicit values that mean the same
        inputs = list(inputs)
        if name.startswith('BCE'):
            inputs[2] = np.ones((1, 1), np.float32)
        else:       # CTC: every frame, the labels' lengths up to their padding
            inputs[2:4] = [np.array([6, 6], np.float32), np.array([3, 2], np.float32)]
    loss.hybridize()
    hybrid = loss(*nd_inputs(inputs)).asnumpy()
    np.testing.assert_allclose(hybrid, got, rtol=1e-6, atol=1e-7)


# name -> indices of the inputs to differentiate (float64, finite differences)
GRADIENTS = {
    'L2_w_sw': (0, 1), 'L1_ba1': (0,), 'L2_label_flat': (0, 1), 'BCE': (0,),
    'BCE_sig': (0,), 'BCE_pw': (0,), 'BCE_sig_pw': (0,), 'SCE_sw': (0,), 'SCE_dense': (0,),
    'SCE_axis1': (0,), 'KL_nologits': (0,), 'Huber': (0, 1), 'Hinge_m': (0,),
    'SqHinge': (0,), 'Logistic': (0,), 'Triplet_m': (0, 1, 2), 'Poisson': (0,),
    'Poisson_nolog': (0,), 'Poisson_full_pos_sw': (0,), 'Cosine_m': (0, 1),
    'SDML': (0, 1), 'CTC_lens': (0,), 'CTC_TNC': (0,),
}


@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
@pytest.mark.parametrize('name', sorted(GRADIENTS))
def test_loss_gradients(name, hybridize):
    make, inputs = CASES[name]
    if hybridize and any(x is None for x in inputs):
        inputs = list(inputs)
        inputs[2] = np.ones((1, 1), np.float32)
    loss = make()
    if hybridize:
        loss.hybridize()
    xs = [None if x is None else np.ascontiguousarray(x, np.float64) for x in inputs]
    head = np.random.default_rng(0).standard_normal(np.shape(MXNET[name]))
    arrays = nd_inputs(xs, 'float64')
    for i in GRADIENTS[name]:
        arrays[i].attach_grad()
    with autograd.record():
        out = loss(*arrays)
    out.backward(mx.nd.array(head, dtype='float64'))

    def value():
        return float((loss(*nd_inputs(xs, 'float64')).asnumpy() * head).sum())
    for i in GRADIENTS[name]:
        np.testing.assert_allclose(arrays[i].grad.asnumpy(), numeric_grad(value, xs[i]),
                                   rtol=1e-5, atol=1e-7, err_msg=f'{name} input {i}')


def test_sample_weight_weight_and_batch_axis_against_numpy():
    x, y = R(20, (2, 5, 3)), R(21, (2, 5, 3))
    sw = R(22, (1, 5, 1), 0, 1)             # one weight per sample on batch axis 1
    got = gloss.L2Loss(weight=3., batch_axis=1)(*nd_inputs([x, y, sw])).asnumpy()
    want = (1.5 * (x - y) ** 2 * sw).mean(axis=(0, 2))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    got = gloss.L1Loss(batch_axis=2)(*nd_inputs([x, y])).asnumpy()
    np.testing.assert_allclose(got, np.abs(x - y).mean(axis=(0, 1)), rtol=1e-5)
    # elementwise sample weights broadcast too; weight=None is no factor
    sw2 = R(23, (2, 5, 3), 0, 1)
    got = gloss.HuberLoss(rho=2.)(*nd_inputs([x, y, sw2])).asnumpy()
    d = np.abs(x - y)
    want = (np.where(d > 2, d - 1, 0.25 * d ** 2) * sw2).mean(axis=(1, 2))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # a zero sample weight removes the sample, in the loss and in its gradient
    p = mx.nd.array(PRED)
    p.attach_grad()
    with autograd.record():
        out = gloss.SoftmaxCELoss()(p, mx.nd.array(SPARSE), mx.nd.array([[1.], [0.], [2.]]))
    out.backward()
    assert out.asnumpy()[1] == 0
    np.testing.assert_array_equal(p.grad.asnumpy()[1], 0)


def test_softmax_ce_against_numpy():
    x = R(30, (4, 6)) * 3
    label = np.array([5, 0, 2, 2], np.float32)
    logp = x - x.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    got = gloss.SoftmaxCrossEntropyLoss()(*nd_inputs([x, label])).asnumpy()
    np.testing.assert_allclose(got, -logp[np.arange(4), label.astype(int)], rtol=1e-5)
    assert gloss.SoftmaxCELoss is gloss.SoftmaxCrossEntropyLoss
    assert gloss.SigmoidBCELoss is gloss.SigmoidBinaryCrossEntropyLoss


def test_poisson_compute_full_zero_target_is_finite():
    """MXNet 1.9.1 returns NaN here (0 · log 0); the Stirling term is 0 for targets <= 1."""
    pred = np.log(RATE).astype(np.float64)
    got = gloss.PoissonNLLLoss(compute_full=True)(*nd_inputs([pred, COUNTS], 'float64'))
    t = COUNTS.astype(np.float64)
    safe = np.where(t > 1, t, 1)
    stirling = np.where(t > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * math.pi * safe),
                        0)
    want = (np.exp(pred) - t * pred + stirling).mean()
    np.testing.assert_allclose(got.asnumpy(), [want], rtol=1e-12)


def test_sdml_and_ctc_structure():
    loss = gloss.SDMLLoss()
    assert isinstance(loss.kl_loss, gloss.KLDivLoss)
    assert repr(gloss.L2Loss()) == 'L2Loss(batch_axis=0, w=1.0)'
    assert repr(gloss.CTCLoss()) == 'CTCLoss(batch_axis=0, w=None)'
    assert gloss.CTCLoss(label_layout='TN')._batch_axis == 1


def test_loss_argument_errors():
    with pytest.raises(TypeError, match="L1Loss: weight must be a number or None"):
        gloss.L1Loss(weight='2')
    with pytest.raises(ValueError, match="label_format must be 'signed' or 'binary'"):
        gloss.LogisticLoss(label_format='ones')
    with pytest.raises(ValueError, match="only 'NTC' and 'TNC' layouts for pred"):
        gloss.CTCLoss(layout='NCT')
    with pytest.raises(ValueError, match="only 'NT' and 'TN' layouts for label"):
        gloss.CTCLoss(label_layout='TT')
    with pytest.raises(NotImplementedError):
        gloss.Loss(None, 0)(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)))
    with pytest.raises(ValueError, match="reshape_like: lhs"):
        gloss.L2Loss()(mx.nd.ones((3, 4)), mx.nd.ones((3, 5)))


def test_a_none_sample_weight_keeps_its_place_when_hybridized():
    """SigmoidBCELoss(pred, label, None, pos_weight): pos_weight must not move into the
    sample_weight slot after hybridize()."""
    pred = mx.nd.array([[0.3, -1.2], [2.0, 0.1]])
    label = mx.nd.array([[1., 0.], [0., 1.]])
    pos_weight = mx.nd.array([[2., 3.]])
    blk = gloss.SigmoidBCELoss()
    imperative = blk(pred, label, None, pos_weight).asnumpy()
    blk.hybridize()
    np.testing.assert_allclose(blk(pred, label, None, pos_weight).asnumpy(), imperative,
                               rtol=1e-6)
