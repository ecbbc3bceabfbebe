"""CTCLoss's C recursions (mxcy._sampling.ctc) against a per-sample log-space NumPy
reference written here: both blank conventions, repeated labels, data and label lengths,
zero-length labels, labels no alignment can produce, head gradients, req 'add', float32,
and MXNet's hidden second output."""
import numpy as np
import pytest

import mxcy as mx

RNG = np.random.default_rng(21)


def _lse(values):
    return np.logaddexp.reduce(np.asarray(values, np.float64))


def ctc_ref(x, labels, frames, blank):
    """(loss, d loss / d x (T, C)) of one sample: x (T, C) activations, the label as a
    list of classes, the frames used; standard alpha/beta (both include the emission)."""
    steps, classes = x.shape
    grad = np.zeros((steps, classes))
    ext = [blank]
    for c in labels:
        ext += [c, blank]
    size = len(ext)
    if frames == 0:
        return 0.0, grad
    z = x[:frames] - x[:frames].max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))

    def skip(s):
        return s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]
    alpha = np.full((frames, size), -np.inf)
    for s in range(min(size, 2)):
        alpha[0, s] = logp[0, ext[s]]
    for t in range(1, frames):
        for s in range(size):
            prev = [alpha[t - 1, s]] + ([alpha[t - 1, s - 1]] if s else []) + \
                ([alpha[t - 1, s - 2]] if skip(s) else [])
            alpha[t, s] = _lse(prev) + logp[t, ext[s]]
    loglik = _lse(alpha[frames - 1, max(size - 2, 0):])
    if not np.isfinite(loglik):
        return 0.0, grad
    beta = np.full((frames, size), -np.inf)
    for s in range(max(size - 2, 0), size):
        beta[frames - 1, s] = logp[frames - 1, ext[s]]
    for t in range(frames - 2, -1, -1):
        for s in range(size):
            nxt = [beta[t + 1, s]] + ([beta[t + 1, s + 1]] if s + 1 < size else []) + \
                ([beta[t + 1, s + 2]] if s + 2 < size and skip(s + 2) else [])
            beta[t, s] = _lse(nxt) + logp[t, ext[s]]
    for t in range(frames):
        grad[t] = np.exp(logp[t])
        for s in range(size):
            grad[t, ext[s]] -= np.exp(alpha[t, s] + beta[t, s] - logp[t, ext[s]] - loglik)
    return -loglik, grad


def _case(blank_label, steps=9, n=6, classes=5, width=4):
    """Activations, padded labels, data lengths, label lengths and the per-sample truth."""
    blank, pad = (0, 0) if blank_label == 'first' else (classes - 1, -1)
    symbols = [c for c in range(classes) if c != blank]
    seqs = [[symbols[0]] * 3,                                   # repeats: needs 5 frames
            [symbols[1], symbols[2], symbols[1]],
            [],                                                 # zero-length label
            [symbols[3]] * 4,                                   # infeasible in 6 frames
            [symbols[0], symbols[3]],
            [symbols[2]]]
    frames = np.array([9, 7, 4, 6, 0, 1])                       # 0 frames: loss 0
    label = np.full((n, width), pad, np.float64)
    for b, seq in enumerate(seqs):
        label[b, :len(seq)] = seq
    x = RNG.standard_normal((steps, n, classes)) * 2
    return x, label, frames, np.array([len(s) for s in seqs]), seqs, blank


@pytest.mark.parametrize('blank_label', ['first', 'last'])
@pytest.mark.parametrize('label_lengths', [False, True])
def test_ctc_matches_reference(blank_label, label_lengths):
    x, label, frames, counts, seqs, blank = _case(blank_label)
    head = RNG.uniform(0.5, 2, x.shape[1])
    args = [x, label, frames.astype(np.float64)] + ([counts.astype(float)] if label_lengths
                                                    else [])
    nds = [mx.nd.array(a, dtype='float64') for a in args]
    nds[0].attach_grad()
    with mx.autograd.record():
        loss = mx.nd.CTCLoss(*nds, use_data_lengths=True, use_label_lengths=label_lengths,
                             blank_label=blank_label)
    loss.backward(mx.nd.array(head, dtype='float64'))
    want = [ctc_ref(x[:, b], seqs[b], frames[b], blank) for b in range(x.shape[1])]
    np.testing.assert_allclose(loss.asnumpy(), [w[0] for w in want], rtol=1e-12, atol=1e-12)
    assert loss.asnumpy()[3] == 0 and loss.asnumpy()[4] == 0
    grad = np.stack([w[1] * h for w, h in zip(want, head)], axis=1)
    np.testing.assert_allclose(nds[0].grad.asnumpy(), grad, rtol=1e-10, atol=1e-12)


def test_ctc_extreme_activations_take_the_log_space_path():
    """Log-probabilities below -200 (sample 1) leave the scaled recursion for the log-space
    one; both must agree with the reference."""
    x, label, frames, _, seqs, blank = _case('first')
    x[:, 1] *= 300
    nds = [mx.nd.array(a, dtype='float64') for a in (x, label, frames.astype(float))]
    nds[0].attach_grad()
    with mx.autograd.record():
        loss = mx.nd.CTCLoss(*nds, use_data_lengths=True)
    loss.backward()
    want = [ctc_ref(x[:, b], seqs[b], frames[b], blank) for b in range(x.shape[1])]
    assert loss.asnumpy()[1] > 200
    np.testing.assert_allclose(loss.asnumpy(), [w[0] for w in want], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(nds[0].grad.asnumpy(), np.stack([w[1] for w in want], 1),
                               rtol=1e-10, atol=1e-12)


def test_ctc_float32_req_add_and_hidden_output():
    x, label, _, _, seqs, blank = _case('first')
    data = mx.nd.array(x, dtype='float32')
    data.attach_grad(grad_req='add')
    data.grad[:] = 0.5
    with mx.autograd.record():
        loss = mx.nd.CTCLoss(data, mx.nd.array(label))
    loss.backward()
    want = [ctc_ref(x[:, b], seqs[b], x.shape[0], blank) for b in range(x.shape[1])]
    np.testing.assert_allclose(loss.asnumpy(), [w[0] for w in want], rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(data.grad.asnumpy(), np.stack([w[1] for w in want], 1) + 0.5,
                               rtol=1e-4, atol=1e-5)
    # MXNet 1.9.1: two outputs, the gradient hidden; the visible one is 'output0'
    sym = mx.sym.CTCLoss(mx.sym.var('data'), mx.sym.var('label'), name='ctc')
    assert sym.list_outputs() == ['ctc_output0']
    assert sym.infer_shape(data=x.shape, label=label.shape)[1] == [(x.shape[1],)]
