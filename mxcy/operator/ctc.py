"""``CTCLoss`` (aliases ``ctc_loss``, ``_contrib_CTCLoss``, ``_contrib_ctc_loss``):
Connectionist Temporal Classification (Graves et al., 2006), MXNet 1.x semantics.

* ``data`` (T, N, C): unnormalised activations; the op applies a softmax over C.
* ``label`` (N, L): class indices. ``blank_label='first'``: class 0 is the blank, labels
  are 1..C-1 and a label sequence ends at its first 0; ``'last'``: class C-1 is the
  blank, labels are 0..C-2 and a sequence ends at its first -1.
* ``use_data_lengths`` adds an argument ``data_lengths`` (N,): the frames each sample
  uses (the rest of its frames get a zero gradient); ``use_label_lengths`` adds
  ``label_lengths`` (N,), which then decides the label lengths instead of the padding.
* Output (N,): -log p(label | data) per sample. A label that no alignment of the
  sample's frames can produce (more symbols plus repeats than frames) has loss 0 and a
  zero gradient, as in MXNet. A label outside the alphabet, the blank inside a label, or
  a length larger than the array it counts are errors (MXNet returned garbage), raised
  by the engine op at the next wait.
* Backward: d data = head gradient of the sample · (softmax(data) − the posterior of each
  class at each frame); labels and lengths get zero gradients.

The kernel is NumPy inside one engine op (float64 arithmetic, log space), vectorised over
the batch, one step per frame.
"""
import numpy as np

from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op
from mxcy.operator.tensor import push_value, zero_grads

_NEG = -np.inf


def _lengths(op, values, limit, n, what):
    """Integer lengths from a float array, each checked against `limit`."""
    lengths = np.asarray(values).reshape(-1)
    ints = lengths.astype(np.int64)
    if lengths.shape[0] != n or np.any(ints != lengths) or np.any(ints < 0) or \
            np.any(ints > limit):
        raise ValueError(f"{op}: {what} must hold {n} integers in [0, {limit}], got "
                         f"{lengths.tolist()}")
    return ints


def _prepare(op, p, x, label, extra):
    """(log-probabilities (T, N, C), frame counts (N,), labels with blanks around and
    between their symbols (N, S), S per sample) from the op's inputs, all checked."""
    x = np.asarray(x, dtype=np.float64)
    steps, n, classes = x.shape
    blank = 0 if p.blank_label == 'first' else classes - 1
    pad = 0 if p.blank_label == 'first' else -1
    extra = list(extra)
    frames = _lengths(op, extra.pop(0), steps, n, 'data_lengths') if p.use_data_lengths \
        else np.full(n, steps, np.int64)
    lab = np.asarray(label, dtype=np.float64).reshape(n, -1)
    if p.use_label_lengths:
        counts = _lengths(op, extra.pop(0), lab.shape[1], n, 'label_lengths')
    else:
        is_pad = lab == pad
        counts = np.where(is_pad.any(axis=1), is_pad.argmax(axis=1), lab.shape[1])
    width = 2 * int(counts.max(initial=0)) + 1
    ext = np.full((n, width), blank, np.int64)
    for b in range(n):
        seq = lab[b, :counts[b]]
        ints = seq.astype(np.int64)
        if np.any(ints != seq) or np.any(ints < 0) or np.any(ints >= classes) or \
                np.any(ints == blank):
            raise ValueError(f"{op}: label {b} {seq.tolist()} must hold class indices in "
                             f"[0, {classes}) other than the blank {blank} "
                             f"(blank_label={p.blank_label!r})")
        ext[b, 1:2 * counts[b]:2] = ints
    z = x - x.max(axis=2, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=2, keepdims=True))
    return logp, frames, ext, 2 * counts + 1


def _ctc(logp, frames, ext, sizes, want_grad):
    """(losses (N,), gradients (T, N, C) w.r.t. the activations or None)."""
    steps, n, classes = logp.shape
    width = ext.shape[1]
    rows = np.arange(n)[:, None]
    valid = np.arange(width)[None, :] < sizes[:, None]
    emit = np.where(valid[None], logp[:, rows, ext], _NEG)         # (T, N, S)
    skip = np.zeros((n, width), bool)
    skip[:, 2:] = (ext[:, 2:] != ext[:, :1]) & (ext[:, 2:] != ext[:, :-2])
    alpha = np.full((steps, n, width), _NEG)
    if steps:
        alpha[0, :, :2] = emit[0, :, :2]
    for t in range(1, steps):
        prev = alpha[t - 1]
        a = prev.copy()
        a[:, 1:] = np.logaddexp(prev[:, 1:], prev[:, :-1])
        a[:, 2:] = np.where(skip[:, 2:], np.logaddexp(a[:, 2:], prev[:, :-2]), a[:, 2:])
        alpha[t] = a + emit[t]
    last = np.maximum(frames - 1, 0)
    end = alpha[last, np.arange(n)]                                  # (N, S)
    tail = np.take_along_axis(end, np.stack([sizes - 1, np.maximum(sizes - 2, 0)], 1), 1)
    tail[:, 1] = np.where(sizes > 1, tail[:, 1], _NEG)
    loglik = np.logaddexp(tail[:, 0], tail[:, 1])
    loglik = np.where(frames == 0, np.where(sizes == 1, 0.0, _NEG), loglik)
    feasible = np.isfinite(loglik)
    losses = np.where(feasible, -loglik, 0.0)
    if not want_grad:
        return losses, None
    # beta[t, b, s]: log-probability of the rest of the label after frame t, from state s
    beta = np.full((steps, n, width), _NEG)
    start = np.zeros((n, width), bool)
    start[np.arange(n), sizes - 1] = True
    start[np.arange(n), np.maximum(sizes - 2, 0)] = True
    for t in range(steps - 1, -1, -1):
        if t < steps - 1:
            e = beta[t + 1] + emit[t + 1]
            b = e.copy()
            b[:, :-1] = np.logaddexp(e[:, :-1], e[:, 1:])
            b[:, :-2] = np.where(skip[:, 2:], np.logaddexp(b[:, :-2], e[:, 2:]), b[:, :-2])
            beta[t] = b
        here = (frames - 1 == t)[:, None]
        beta[t] = np.where(here, np.where(start, 0.0, _NEG), beta[t])
    with np.errstate(invalid='ignore'):
        post = np.exp(alpha + beta - np.where(feasible, loglik, 0.0)[None, :, None])
    post = np.where(np.isfinite(post), post, 0.0)
    occupancy = np.zeros((steps, n, classes))
    for b in range(n):
        np.add.at(occupancy[:, b].T, ext[b], post[:, b].T)
    grad = np.exp(logp) - occupancy
    used = (np.arange(steps)[:, None] < frames[None, :]) & feasible[None, :]
    return losses, np.where(used[:, :, None], grad, 0.0)


@register_op
class CTCLoss(OpSpec):
    """Connectionist Temporal Classification loss per sample (see the module docstring)."""
    name = 'CTCLoss'
    aliases = ('ctc_loss', '_contrib_CTCLoss', '_contrib_ctc_loss')
    params = ParamSchema(
        Param('use_data_lengths', 'bool', False),
        Param('use_label_lengths', 'bool', False),
        Param('blank_label', 'str', 'first', choices=('first', 'last')),
    )
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return (['data', 'label'] + (['data_lengths'] if p.use_data_lengths else []) +
                (['label_lengths'] if p.use_label_lengths else []))

    def infer_shape(self, p, in_shapes):
        shapes = [None if s is None else tuple(s) for s in in_shapes]
        data, label = shapes[0], shapes[1]
        if data is not None and len(data) != 3:
            raise self.shape_error('data', '(sequence_length, batch_size, alphabet_size)',
                                   data)
        if label is not None and len(label) != 2:
            raise self.shape_error('label', '(batch_size, label_sequence_length)', label)
        n = data[1] if data is not None else (label[0] if label is not None else None)
        if n is None:
            return shapes, [None], []
        if label is not None and label[0] != n:
            raise self.shape_error('label', f'({n}, label_sequence_length)', label,
                                   f'data {data} has batch size {n}')
        for i, name in enumerate(self.arguments(p)[2:], start=2):
            if shapes[i] is not None and shapes[i] != (n,):
                raise self.shape_error(name, (n,), shapes[i])
            shapes[i] = (n,)
        return shapes, [(n,)], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0]], []

    def forward(self, p, is_train, req, ins, outs, aux):
        name = self.name

        def value(x, label, *extra):
            return _ctc(*_prepare(name, p, x, label, extra), want_grad=False)[0]
        push_value(value, ins, outs[0], req[0], name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        name = self.name

        def grad(head, x, label, *extra):
            _, g = _ctc(*_prepare(name, p, x, label, extra), want_grad=True)
            return g * np.asarray(head, dtype=np.float64)[None, :, None]
        push_value(grad, [out_grads[0]] + list(ins), in_grads[0], req[0], name + '_backward')
        zero_grads(req, in_grads, which=tuple(range(1, len(ins))))
