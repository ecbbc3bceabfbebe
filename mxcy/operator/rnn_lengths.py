"""The RNN operator with ``use_sequence_length``: each sequence of the batch runs over its
own length only (``sequence_length``, one value per batch entry): its outputs past the
length are zero, its returned states are those after its last valid step, and a
bidirectional layer's reverse direction starts at that step. The fused kernel takes no
lengths, so this path runs the NumPy recurrence (mxcy._reference.rnn_fwd_np/rnn_bwd_np)
once per sequence inside one engine op: correct first; backward recomputes the forward
it needs rather than keeping it in ``reserve``.
"""
import numpy as np

from mxcy import _ndarray
from mxcy._reference import rnn_bwd_np, rnn_fwd_np
from mxcy.base import MXNetError


def _lengths(lengths, t, name='RNN'):
    out = np.asarray(lengths).astype(np.int64).reshape(-1)
    if not np.array_equal(out, np.asarray(lengths).reshape(-1)) or \
            (out.size and (out.min() < 1 or out.max() > t)):
        raise MXNetError(f"{name}: sequence_length must hold whole numbers in [1, {t}] "
                         f"(the sequence axis), got {np.asarray(lengths).reshape(-1)}")
    return out


def _sequence(mode, p, x, w, hx, cx, b, n):
    """Forward of batch entry b over its first n steps: (y, hy, cy, saved)."""
    return rnn_fwd_np(mode, x[:n, b:b + 1], w, hx[:, b:b + 1],
                      None if cx is None else cx[:, b:b + 1], p.num_layers, p.bidirectional)


def push_forward(p, req, ins, outs):
    """Write output (and state outputs) for every sequence; `reserve` is not used."""
    lstm = p.mode == 'lstm'
    heads = outs[:-1]                   # output[, state_output[, statecell_output]]
    reqs = list(req[:len(heads)])

    def run(x, w, hx, *rest):
        cx = rest[0] if lstm else None
        lengths, views = rest[1 if lstm else 0], rest[(2 if lstm else 1):]
        for b, n in enumerate(_lengths(lengths, x.shape[0])):
            y, hy, cy, _ = _sequence(p.mode, p, x, w, hx, cx, b, n)
            values = [np.concatenate([y, np.zeros((x.shape[0] - n,) + y.shape[1:],
                                                  y.dtype)])[:, 0], hy[:, 0]]
            if lstm:
                values.append(cy[:, 0])
            targets = [views[0][:, b]] + [v[:, b] for v in views[1:]]
            for target, value, r in zip(targets, values, reqs):
                if r == 'add':
                    target += value
                elif r != 'null':
                    target[...] = value
    _ndarray.push_numpy(run, list(ins), list(heads), 'RNN_sequence_length')


def push_backward(p, req, out_grads, ins, in_grads):
    """Gradients of data, parameters, state(s); sequence_length gets none (MXNet's zero)."""
    lstm = p.mode == 'lstm'
    n_heads = 1 + (2 if lstm else 1) * bool(p.state_outputs)
    grads = [g for g, r in zip(in_grads, req) if r != 'null' and g is not None]
    which = [i for i, (g, r) in enumerate(zip(in_grads, req)) if r != 'null' and
             g is not None]
    if not grads:
        return
    reqs = [req[i] for i in which]

    def run(*views):
        x, w, hx = views[:3]
        cx = views[3] if lstm else None
        lengths = views[4 if lstm else 3]
        heads = views[(5 if lstm else 4):(5 if lstm else 4) + n_heads]
        targets = views[(5 if lstm else 4) + n_heads:]
        dy, dhy = heads[0], (heads[1] if len(heads) > 1 else None)
        dcy = heads[2] if len(heads) > 2 else None
        total = [np.zeros_like(x), np.zeros_like(w), np.zeros_like(hx)] + \
            ([np.zeros_like(cx)] if lstm else [])
        for b, n in enumerate(_lengths(lengths, x.shape[0])):
            _, _, _, saved = _sequence(p.mode, p, x, w, hx, cx, b, n)
            dx, dw, dhx, dcx = rnn_bwd_np(
                p.mode, x[:n, b:b + 1], w, hx[:, b:b + 1],
                None if cx is None else cx[:, b:b + 1], saved, dy[:n, b:b + 1],
                None if dhy is None else dhy[:, b:b + 1],
                None if dcy is None else dcy[:, b:b + 1], p.num_layers, p.bidirectional)
            total[0][:n, b] += dx[:, 0]
            total[1] += dw
            total[2][:, b] += dhx[:, 0]
            if lstm:
                total[3][:, b] += dcx[:, 0]
        for i, target, r in zip(which, targets, reqs):
            value = total[i] if i < len(total) else 0     # sequence_length: zero
            if r == 'add':
                target += value
            else:
                target[...] = value
    heads = list(out_grads[:n_heads])
    _ndarray.push_numpy(run, list(ins) + heads, grads, 'RNN_sequence_length_backward')
