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

Inside one engine op: the checks and the log-softmax in NumPy (float64), then the alpha
and beta recursions in log space per sample, in C (`mxcy._sampling.ctc`).
"""
import numpy as np

from mxcy import _sampling
from mxcy._ndarray import push_numpy
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op
from mxcy.operator.tensor import push_value, zero_grads

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
    with np.errstate(invalid='ignore'):
        ints = lab.astype(np.int64)
    used = np.arange(lab.shape[1])[None, :] < counts[:, None]
    bad = used & ((ints != lab) | (ints < 0) | (ints >= classes) | (ints == blank))
    if bad.any():
        b = int(bad.any(axis=1).argmax())
        raise ValueError(f"{op}: label {b} {lab[b, :counts[b]].tolist()} must hold class "
                         f"indices in [0, {classes}) other than the blank {blank} "
                         f"(blank_label={p.blank_label!r})")
    ext[:, 1::2] = np.where(used, ints, blank)[:, :width // 2]
    z = x - x.max(axis=2, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=2, keepdims=True))
    return logp, frames, ext, 2 * counts + 1


def _ctc(logp, frames, ext, sizes, head=None):
    """(losses (N,), gradients (T, N, C) w.r.t. the activations times the head gradient
    `head` (N,), or None without it): the alpha/beta recursions of `mxcy._sampling.ctc`."""
    losses = np.empty(logp.shape[1])
    grad = None if head is None else np.empty(logp.shape)
    if head is not None:
        head = np.ascontiguousarray(np.asarray(head, np.float64).reshape(-1))
    logp = np.ascontiguousarray(logp)
    _sampling.ctc(logp, np.exp(logp), frames, ext, np.ascontiguousarray(sizes), losses, grad,
                  head)
    return losses, grad


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
    backward_needs = ('out_grads', 'outputs')

    def outputs(self, p):
        return ['output0', 'output1']

    def num_visible_outputs(self, p):
        return 1

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
            return shapes, [None, None], []
        if label is not None and label[0] != n:
            raise self.shape_error('label', f'({n}, label_sequence_length)', label,
                                   f'data {data} has batch size {n}')
        for i, name in enumerate(self.arguments(p)[2:], start=2):
            if shapes[i] is not None and shapes[i] != (n,):
                raise self.shape_error(name, (n,), shapes[i])
            shapes[i] = (n,)
        return shapes, [(n,), data], []

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0]] * 2, []

    def forward(self, p, is_train, req, ins, outs, aux):
        """The losses, and (hidden output1, as in MXNet) their gradients w.r.t. data, which
        the one pass over alpha and beta gives with them; backward scales them."""
        name = self.name

        def run(x, label, *rest):
            extra, (loss_out, grad_out) = rest[:-2], rest[-2:]
            losses, grad = _ctc(*_prepare(name, p, x, label, extra), head=np.ones(x.shape[1]))
            if req[0] == 'add':
                loss_out += losses
            elif req[0] != 'null':
                np.copyto(loss_out, losses, casting='unsafe')
            np.copyto(grad_out, grad, casting='unsafe')
        push_numpy(run, list(ins), list(outs), name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        def grad(head, g):
            return g * np.asarray(head, np.float64)[None, :, None]
        push_value(grad, [out_grads[0], outs[1]], in_grads[0], req[0],
                   self.name + '_backward')
        zero_grads(req, in_grads, which=tuple(range(1, len(in_grads))))
