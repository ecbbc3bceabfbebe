"""Small building blocks that operator forward/backward code shares (all push, none wait)."""
import math

import numpy as np

from mxcy import _ndarray
from mxcy._npkernels import cast_half
from mxcy._ops import BINARY_OPS
from mxcy.base import DTYPE_CODES

_ADD = BINARY_OPS['add']
_ONES = {}


def ones_vector(n, dtype, ctx):
    """A cached (1, n) array of ones: GEMM with it sums rows (bias gradients)."""
    key = (n, dtype, ctx)       # no np.dtype(...).name here: it costs microseconds a call
    vec = _ONES.get(key)
    if vec is None:
        vec = _ONES[key] = _ndarray.full((1, n), 1, ctx, dtype)
    return vec


def gemm(a, b, c, m, n, k, trans_a=False, trans_b=False, req='write', batch=1):
    """c (req) op(a)·op(b): 'write'/'inplace' overwrite, 'add' accumulates, 'null' skips."""
    if req == 'null':
        return
    beta = 1.0 if req == 'add' else 0.0
    _ndarray.gemm(a, b, c, m, n, k, trans_a, trans_b, batch, 1.0, beta)


def assign(dst, value_fn, req):
    """dst (req) value, where value_fn(out) writes the value into `out`.

    'write'/'inplace' compute straight into dst; 'add' into a temporary, then dst += tmp.
    """
    if req == 'null':
        return
    if req == 'add':
        tmp = _ndarray.new_empty(dst.shape, DTYPE_CODES[np.dtype(dst.dtype)], dst.context)
        value_fn(tmp)
        _ndarray.binary(dst, tmp, _ADD, out=dst)
    else:
        value_fn(dst)


def nd(op_name):
    """``mx.nd.<op_name>``: a registry call, recorded when autograd records (the
    differentiable gradients, OpSpec.grad_graph, are written with it)."""
    from mxcy.ndarray._gen import function
    return function(op_name)


def check_req(op, req):
    for r in req:
        if r not in ('write', 'inplace', 'add', 'null'):
            raise ValueError(f"{op}: req must be 'write', 'inplace', 'add' or 'null', got {r!r}")


def gemm_reduce(x, y, axes, mean, req, backward):
    """sum/mean of x over `axes` into y (backward: dy = y spread back into dx = x) as one
    GEMM with a ones vector, when the reduced axes are contiguous and lead or trail: no
    NumPy, no GIL on the worker. Returns False (nothing pushed) for other cases."""
    shape = x.shape
    if req == 'null' or not axes or axes != tuple(range(axes[0], axes[-1] + 1)) or \
            x.dtype not in (np.float32, np.float64) or y.dtype != x.dtype:
        return False
    lead, r = math.prod(shape[:axes[0]]), math.prod(shape[a] for a in axes)
    trail = math.prod(shape[axes[-1] + 1:])
    if r == 0 or lead * trail == 0 or (lead > 1 and trail > 1):
        return False
    alpha, beta = (1.0 / r if mean else 1.0), (1.0 if req == 'add' else 0.0)
    ones = ones_vector(r, x.dtype, x.context)                   # (1, r)
    m, n = (lead, trail) if lead > 1 else (1, trail)
    xm = x.reshape((m, r)) if trail == 1 else x.reshape((r, n))
    ym = y.reshape((m, 1)) if trail == 1 else y.reshape((1, n))
    if trail == 1:          # rows of x (m, r): y = x·1 ; dx = dy·1ᵀ
        args = (ym, ones, xm, m, r, 1, False, False) if backward else \
            (xm, ones, ym, m, 1, r, False, True)
    else:                   # columns of x (r, n): y = 1ᵀ·x ; dx = 1·dy
        args = (ones, ym, xm, r, n, 1, True, False) if backward else \
            (ones, xm, ym, 1, n, r, False, False)
    _ndarray.gemm(*args, 1, alpha, beta)
    return True


def bit_select(mask, yes, no, out):
    """out := yes where mask else no, bit for bit: (yes ^ no) & -mask ^ no on the bits.

    NumPy's where/copyto with a mask take a branch per element (1.3 ms for 2^18 random
    signs; 0.3 ms here). yes, no and out have out's dtype; yes and no broadcast to out's
    shape; out may be yes, not no."""
    bits = np.dtype(f'u{out.itemsize}')
    m = mask.view(np.uint8).astype(bits)
    np.negative(m, out=m)              # 0 or all ones
    o = out.view(bits)
    np.bitwise_xor(np.asarray(yes).view(bits), np.asarray(no).view(bits), out=o)
    o &= m
    o ^= np.asarray(no).view(bits)


def push_cast(x, out, req, name):
    """out (req) x converted to out's dtype: float32 <-> float16 by F16C where the CPU has
    it (mxcy._npkernels.cast_half, 35x NumPy's software conversion, the same bits), the
    rest by NumPy's unsafe cast."""
    if req == 'null' or out is None:
        return
    add = req == 'add'

    def run(v, o):
        if add:
            np.add(o, v, out=o, casting='unsafe')
        elif not cast_half(v, o):
            np.copyto(o, v, casting='unsafe')
    _ndarray.push_numpy(run, [x], [out], name)
