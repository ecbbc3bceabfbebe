"""A base for operators computed by NumPy inside one engine op (no C kernel exists).

Subclasses give ``compute(p, *xs) -> tuple of outputs`` and, when differentiable,
``grad(p, dys, xs, ys) -> tuple of input gradients`` (None for a zero gradient), both on
NumPy arrays; `NumpyOp` pushes them with the right ``req`` handling, so an operator is
its shape/type inference plus two NumPy functions.
"""
import numpy as np

from mxcy import _ndarray
from mxcy.operator._spec import OpSpec
from mxcy.operator.tensor import zero_grads


def push_multi(fn, inputs, outs, reqs, name):
    """outs[i] (reqs[i]) fn(*input views)[i]; outputs with req 'null' or None are skipped
    (fn still computes them: keep such ops cheap or split them)."""
    live = [i for i, (o, r) in enumerate(zip(outs, reqs)) if o is not None and r != 'null']
    if not live:
        return
    targets = [outs[i] for i in live]
    n_in = len(inputs)

    def run(*views):
        values = fn(*views[:n_in])
        for k, i in enumerate(live):
            o, v = views[n_in + k], values[i]
            if v is None:
                v = 0
            if reqs[i] == 'add':
                np.add(o, v, out=o, casting='unsafe')
            else:
                np.copyto(o, v, casting='unsafe')
    _ndarray.push_numpy(run, list(inputs), targets, name)


class NumpyOp(OpSpec):
    backward_needs = ('out_grads', 'inputs', 'outputs')

    def forward(self, p, is_train, req, ins, outs, aux):
        compute = self.compute
        with_aux = list(ins) + list(aux)
        push_multi(lambda *xs: _as_tuple(compute(p, *xs)), with_aux, outs, req, self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if not hasattr(self, 'grad'):
            zero_grads(req, in_grads)
            return
        # what backward_needs leaves out arrives as None: pass it as empty
        ins, outs = list(ins or ()), list(outs or ())
        n_dy, n_x = len(out_grads), len(ins)
        grad = self.grad

        def run(*views):
            dys, xs, ys = views[:n_dy], views[n_dy:n_dy + n_x], views[n_dy + n_x:]
            return _as_tuple(grad(p, dys, xs, ys))
        push_multi(run, list(out_grads) + ins + outs, in_grads, req,
                   self.name + '_backward')


_NUMPY_BLAS = []


def _numpy_blas():
    """threadpoolctl controllers of NumPy's own OpenBLAS (mxcy's GEMM kernels use
    SciPy's, which mx.engine already caps), looked up once."""
    if not _NUMPY_BLAS:
        try:
            from threadpoolctl import ThreadpoolController
            libs = ThreadpoolController().select(user_api='blas').lib_controllers
            _NUMPY_BLAS.append([lib for lib in libs if '/numpy' in lib.filepath])
        except Exception:       # noqa: BLE001 -- no threadpoolctl: leave BLAS as it is
            _NUMPY_BLAS.append([])
    return _NUMPY_BLAS[0]


def bmm(a, b):
    """a @ b for stacked matrices inside an engine op, NumPy's BLAS held to
    mx.engine.blas_threads() threads meanwhile. A stacked matmul is one small GEMM per
    matrix, each a fork/join of NumPy's BLAS threads; on top of busy engine workers
    (workers x BLAS threads > cores) every join waits for a descheduled thread:
    measured 128 GEMMs of 128x128x64 at 400 ms with 2 threads, 14 ms with 1."""
    from mxcy.engine import blas_threads
    libs, n = _numpy_blas(), blas_threads()
    before = [lib.num_threads for lib in libs]
    for lib in libs:
        if lib.num_threads > n:
            lib.set_num_threads(n)
    try:
        return np.matmul(a, b)
    finally:
        for lib, k in zip(libs, before):
            if k > n:
                lib.set_num_threads(k)


def _as_tuple(v):
    return v if isinstance(v, (tuple, list)) else (v,)


def check_roi_shapes(op, in_shapes):
    """(data, rois) shapes of a region-of-interest operator, checked where known: data
    (N, C, H, W), rois (R, 5) rows of (batch index, x1, y1, x2, y2)."""
    d, r = in_shapes
    if r is not None and (len(r) != 2 or r[1] != 5):
        raise op.shape_error('rois', '(R, 5) = (batch index, x1, y1, x2, y2)', tuple(r))
    if d is not None and len(d) != 4:
        raise op.shape_error('data', 'a 4-D (N, C, H, W) shape', tuple(d))
    return d, r
