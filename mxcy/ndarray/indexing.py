"""``mx.nd.diag`` (no registry operator yet; MXNet 1.x semantics).

take, pick, one_hot, topk, sort and argsort are registry operators
(`mxcy.operator.indexing`, `mxcy.operator.reduce`); importing one of them from here gives
the generated ``mx.nd`` function.
"""
import numbers

import numpy as np

from mxcy._ndarray import push_numpy
from mxcy.ndarray.elemwise import check_nd, norm_axis, prepare_out


def diag(data, k=0, axis1=0, axis2=1, out=None):
    """1-D input: a square matrix with `data` on diagonal k. N-D input: diagonal k of the
    (axis1, axis2) planes, appended as the last axis (NumPy's diagonal)."""
    check_nd(data, 'diag')
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"diag: k must be an integer, got {k!r}")
    k = int(k)
    ndim = len(data.shape)
    if ndim == 1:
        size = data.shape[0] + abs(k)
        res = prepare_out(out, (size, size), data.dtype, data.context, 'diag')

        def run_1d(x, o):
            np.copyto(o, np.diag(x, k))
        push_numpy(run_1d, [data], [res], 'diag')
        return res
    if ndim == 0:
        raise ValueError("diag: needs an array of at least 1 dimension")
    a1 = norm_axis(axis1, ndim, 'diag', 'axis1')
    a2 = norm_axis(axis2, ndim, 'diag', 'axis2')
    if a1 == a2:
        raise ValueError(f"diag: axis1 and axis2 must differ, both are {a1}")
    probe = np.broadcast_to(np.int8(0), data.shape)
    shape = np.diagonal(probe, k, a1, a2).shape
    if shape[-1] == 0:
        raise ValueError(f"diag: diagonal k={k} does not exist in the ({a1}, {a2}) planes "
                         f"of shape {data.shape}")
    res = prepare_out(out, shape, data.dtype, data.context, 'diag')

    def run(x, o):
        np.copyto(o, np.diagonal(x, k, a1, a2))
    push_numpy(run, [data], [res], 'diag')
    return res


def __getattr__(name):
    from mxcy.ndarray._gen import module_attr
    return module_attr(__name__, name)


__all__ = ['diag']
