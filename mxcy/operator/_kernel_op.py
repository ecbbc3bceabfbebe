"""Pushing a C kernel of `mxcy._sampling` (float32/float64 arrays) as one engine op.

`push_kernel(fn, inputs, outs, reqs, name)` runs ``fn(xs, bufs, adds)`` inside the op:
``xs`` are the input views as C-contiguous arrays of one float dtype (float64 when any
input is float64, else float32: float16 goes through float32), ``bufs`` one array per
output (None for a skipped output) that the kernel fills, ``adds`` whether the kernel must
add into it instead (only with ``can_add``: kernels that accumulate in place). An output
of another dtype, a strided one, or one whose req the kernel cannot honour gets a
temporary that is stored (written or added) after the kernel.
"""
import numpy as np

from mxcy import _ndarray


def kernel_dtype(views):
    return np.float64 if any(v.dtype == np.float64 for v in views) else np.float32


def push_kernel(fn, inputs, outs, reqs, name, can_add=False):
    live = [i for i, (o, r) in enumerate(zip(outs, reqs)) if o is not None and r != 'null']
    if not live:
        return
    n_in = len(inputs)

    def run(*views):
        dt = kernel_dtype(views[:n_in])
        xs = [np.ascontiguousarray(v, dt) for v in views[:n_in]]
        bufs, adds, pending = [None] * len(outs), [False] * len(outs), []
        for k, i in enumerate(live):
            view, req = views[n_in + k], reqs[i]
            direct = view.dtype == dt and view.flags.c_contiguous
            if direct and (req == 'write' or (req == 'add' and can_add)):
                bufs[i], adds[i] = view, req == 'add'
            else:
                bufs[i] = np.empty(view.shape, dt)
                pending.append((view, bufs[i], req))
        fn(xs, bufs, adds)
        for view, buf, req in pending:
            if req == 'add':
                np.add(view, buf, out=view, casting='unsafe')
            else:
                np.copyto(view, buf, casting='unsafe')
    _ndarray.push_numpy(run, list(inputs), [outs[i] for i in live], name)
