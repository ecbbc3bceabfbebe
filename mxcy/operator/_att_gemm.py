"""The interleaved attention products as strided batched GEMMs (`mxcy._seqattn.att_gemm`).

An interleaved tensor x (L, B, parts·H·D) holds, per position and batch entry, H heads of
`parts` D-wide projections; head h of part j of batch entry b is the (L, D) matrix at
element offset b·W + h·parts·D + j·D with row stride B·W (W = parts·H·D). An attention
tensor (B·H, Lq, Lk) holds matrix b·H + h contiguously. Each product below runs over the
B·H (batch entry, head) pairs at once, reading and writing those matrices in place: one
engine op per forward or backward, no head split/merge copies.

Each op's `forward`/`backward` here pushes float32/float64 arrays of one dtype with no
empty extent and returns True; otherwise it returns False and the caller runs its NumPy
path (the explicit fallback: float16 and empty shapes).
"""
import math

import numpy as np

from mxcy import _seqattn

_BLAS = (np.dtype(np.float32), np.dtype(np.float64))


def usable(arrays):
    """Whether att_gemm can run on these NDArrays (None entries ignored)."""
    arrays = [a for a in arrays if a is not None]
    dt = np.dtype(arrays[0].dtype)
    return dt in _BLAS and all(np.dtype(a.dtype) == dt and a.size > 0 for a in arrays)


def heads(x, h, parts, j):
    """The strided view of part j's head matrices in interleaved x: (view, L, D)."""
    n, b, w = x.shape
    d = w // (parts * h)
    return (x, j * d, b * w, w, parts * d), n, d


def att(a, h):
    """The strided view of the (Lq, Lk) matrices of an attention tensor (B·H, Lq, Lk)."""
    _, lq, lk = a.shape
    return (a, 0, lk, h * lq * lk, lq * lk)


def _live(req, arr):
    return arr is not None and req != 'null'


def _beta(req):
    return 1.0 if req == 'add' else 0.0


def _push(reads, writes, gemms, zero, name, count, h):
    gemms = [g + (count, h) for g in gemms]
    _seqattn.att_gemm(reads, writes, gemms, zero, name.encode())


def qk_forward(name, qsrc, ksrc, y, req, h):
    """y (req) (q / sqrt(D)) · kᵀ per head; qsrc, ksrc = (tensor, parts, part index)."""
    if not _live(req, y):
        return True
    if not usable([qsrc[0], ksrc[0], y]):
        return False
    q, lq, d = heads(qsrc[0], h, *qsrc[1:])
    k, lk, _ = heads(ksrc[0], h, *ksrc[1:])
    g = (q, k, att(y, h), lq, lk, d, 0, 1, 1.0 / math.sqrt(d), _beta(req))
    _push([qsrc[0], ksrc[0]], [y], [g], None, name, y.shape[0], h)
    return True


def qk_backward(name, dy, qsrc, ksrc, dq_in, dk_in, req, h):
    """The gradients of qk_forward: dq = s·dY·k and dk = s·dYᵀ·q into the parts q and k
    came from; k's tensor's last part (v) is zeroed unless added to. For selfatt q and k
    share one tensor: dq_in is dk_in and req has one entry."""
    self_att = qsrc[0] is ksrc[0]
    reqs = (req[0], req[0]) if self_att else tuple(req)
    live = [(g, r) for g, r in zip((dq_in, dk_in), reqs) if _live(r, g)]
    if not live:
        return True
    if not usable([dy, qsrc[0], ksrc[0]] + [g for g, _ in live]):
        return False
    q, lq, d = heads(qsrc[0], h, *qsrc[1:])
    k, lk, _ = heads(ksrc[0], h, *ksrc[1:])
    s, ady, kv_parts = 1.0 / math.sqrt(d), att(dy, h), ksrc[1]
    gemms, zero = [], None
    if _live(reqs[0], dq_in):
        gemms.append((ady, k, heads(dq_in, h, *qsrc[1:])[0], lq, d, lk, 0, 0, s,
                      _beta(reqs[0])))
    if _live(reqs[1], dk_in):
        gemms.append((ady, q, heads(dk_in, h, *ksrc[1:])[0], lk, d, lq, 1, 0, s,
                      _beta(reqs[1])))
        if reqs[1] != 'add':     # v, the last part, gets no gradient
            zero = (dk_in, (kv_parts - 1) * d, lk * dk_in.shape[1] * h, d, kv_parts * d)
    writes = [dk_in] if self_att else [g for g, _ in live]
    _push(list({id(x): x for x in (dy, qsrc[0], ksrc[0])}.values()), writes, gemms, zero,
          name, dy.shape[0], h)
    return True


def valatt_forward(name, kv, kv_parts, a, y, req, h):
    """y (req) attention · v per head, v the last part of kv, merged into (Lq, B, H·D)."""
    if not _live(req, y):
        return True
    if not usable([kv, a, y]):
        return False
    v, lk, d = heads(kv, h, kv_parts, kv_parts - 1)
    g = (att(a, h), v, heads(y, h, 1, 0)[0], a.shape[1], d, lk, 0, 0, 1.0, _beta(req))
    _push([kv, a], [y], [g], None, name, a.shape[0], h)
    return True


def valatt_backward(name, dy, kv, kv_parts, a, dkv, da, req, h):
    """dv = attentionᵀ · dout into kv's last part (its other parts zeroed unless added);
    d attention = dout · vᵀ."""
    live = [(g, r) for g, r in zip((dkv, da), req) if _live(r, g)]
    if not live:
        return True
    if not usable([dy, kv, a] + [g for g, _ in live]):
        return False
    v, lk, d = heads(kv, h, kv_parts, kv_parts - 1)
    dout, lq = heads(dy, h, 1, 0)[0], a.shape[1]
    gemms, zero = [], None
    if _live(req[0], dkv):
        gemms.append((att(a, h), dout, heads(dkv, h, kv_parts, kv_parts - 1)[0], lk, d, lq,
                      1, 0, 1.0, _beta(req[0])))
        if req[0] != 'add':
            zero = (dkv, 0, lk * kv.shape[1] * h, (kv_parts - 1) * d, kv_parts * d)
    if _live(req[1], da):
        gemms.append((dout, v, att(da, h), lq, lk, d, 0, 1, 1.0, _beta(req[1])))
    _push([dy, kv, a], [g for g, _ in live], gemms, zero, name, a.shape[0], h)
    return True
