"""Small building blocks that operator forward/backward code shares (all push, none wait)."""
import numpy as np

from mxcy import _ndarray
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
