"""Testing helpers with MXNet's names (``mx.test_utils``) and the operator harness.

The operator harness (`check_op_forward`, `check_op_backward`, `check_op`) drives one
registered operator through its declaration: forward against a NumPy reference, backward
against central finite differences in float64, inferred shapes against actual shapes,
``req='add'`` accumulation. The symbol-level helpers of MXNet (``check_numeric_gradient``,
``check_symbolic_forward/backward``) build on the same code once symbols exist.
"""
import numpy as np

from mxcy import _ndarray
from mxcy.context import cpu
from mxcy.ndarray.utils import array

_DEFAULT_TOL = {np.dtype(np.float16): (1e-2, 1e-2), np.dtype(np.float32): (1e-4, 1e-5),
                np.dtype(np.float64): (1e-7, 1e-9)}


def default_context():
    return cpu()


def set_default_context(ctx):
    """Kept for MXNet compatibility; mxcy runs on the CPU only."""
    return ctx


def _np(x):
    return x.asnumpy() if isinstance(x, _ndarray.NDArray) else np.asarray(x)


def same(a, b):
    """Exactly equal values (and shapes)."""
    return np.array_equal(_np(a), _np(b))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False):
    a, b = _np(a), _np(b)
    rt, at = _DEFAULT_TOL.get(np.result_type(a, b), (1e-5, 1e-20))
    return np.allclose(a, b, rtol=rt if rtol is None else rtol,
                       atol=at if atol is None else atol, equal_nan=equal_nan)


def assert_almost_equal(a, b, rtol=None, atol=None, names=('a', 'b'), equal_nan=False):
    """Assert |a - b| <= atol + rtol·|b| elementwise, reporting the worst mismatch."""
    a, b = _np(a), _np(b)
    if a.shape != b.shape:
        raise AssertionError(f"shape mismatch: {names[0]} {a.shape} vs {names[1]} {b.shape}")
    rt, at = _DEFAULT_TOL.get(np.result_type(a, b), (1e-5, 1e-20))
    rtol = rt if rtol is None else rtol
    atol = at if atol is None else atol
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    err = np.abs(a.astype(np.float64) - b.astype(np.float64))
    rel = err / (atol + rtol * np.abs(b.astype(np.float64)))
    idx = np.unravel_index(np.nanargmax(rel), rel.shape) if rel.size else ()
    raise AssertionError(
        f"Items are not equal (rtol={rtol}, atol={atol}): worst at index {idx}: "
        f"{names[0]}={a[idx]!r}, {names[1]}={b[idx]!r}, error {err[idx]!r}; "
        f"{int((rel > 1).sum())} of {a.size} elements differ")


def rand_ndarray(shape, stype='default', density=None, dtype=None, ctx=None):
    """A dense random array (uniform in [0, 1)); only 'default' storage exists here."""
    if stype != 'default':
        raise ValueError(f"rand_ndarray: storage type {stype!r} is not supported; "
                         "mxcy has dense arrays only")
    data = np.random.uniform(size=shape).astype(dtype or np.float32)
    return array(data, ctx=ctx, dtype=data.dtype)


def rand_shape_2d(dim0=10, dim1=10):
    return np.random.randint(1, dim0 + 1), np.random.randint(1, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10):
    return (np.random.randint(1, dim0 + 1), np.random.randint(1, dim1 + 1),
            np.random.randint(1, dim2 + 1))


def rand_shape_nd(num_dim, dim=10):
    return tuple(np.random.randint(1, dim + 1, size=num_dim))


# ---------------------------------------------------------------- operator harness
def _run_forward(spec, p, inputs, aux, is_train=False, req='write', outs=None):
    """Forward of one op on NumPy inputs; returns (outputs as NDArrays, input NDArrays)."""
    from mxcy.base import DTYPE_CODES
    ins = [array(x, dtype=x.dtype) for x in inputs]
    aux_nd = [array(x, dtype=x.dtype) for x in aux]
    _, out_shapes, _ = spec.infer_shape(p, [x.shape for x in ins])
    _, out_types, _ = spec.infer_type(p, [x.dtype.name for x in inputs])
    if outs is None:
        outs = [_ndarray.new_empty(tuple(s), DTYPE_CODES[np.dtype(t)], cpu())
                for s, t in zip(out_shapes, out_types)]
    spec.forward(p, is_train, [req] * len(outs), ins, outs, aux_nd)
    return outs, ins, aux_nd


def check_op_forward(op_name, params, inputs, expected, aux=(), is_train=False,
                     rtol=None, atol=None):
    """Forward on NumPy `inputs` equals `expected` (a list of arrays), shapes as inferred."""
    from mxcy.operator import get_op
    spec = get_op(op_name)
    p = spec.params.parse(op_name, params)
    outs, _, _ = _run_forward(spec, p, list(inputs), list(aux), is_train)
    for i, (o, e) in enumerate(zip(outs, expected)):
        assert_almost_equal(o, e, rtol, atol, names=(f'{op_name} output {i}', 'expected'))
    return [o.asnumpy() for o in outs]


def numeric_grad(f, x, eps=1e-6):
    """Central differences of scalar f at float64 x."""
    grad = np.zeros_like(x)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        hi = f()
        flat[i] = old - eps
        lo = f()
        flat[i] = old
        gflat[i] = (hi - lo) / (2 * eps)
    return grad


def check_op_backward(op_name, params, inputs, aux=(), is_train=True, grad_nodes=None,
                      rtol=1e-5, atol=1e-7, seed=0):
    """Backward of one op equals finite differences of sum(head · y) in float64, and
    req='add' adds the same gradient onto what the gradient arrays held."""
    from mxcy.base import DTYPE_CODES
    from mxcy.operator import get_op
    spec = get_op(op_name)
    p = spec.params.parse(op_name, params)
    inputs = [np.array(x, dtype=np.float64) for x in inputs]
    aux = [np.array(x, dtype=np.float64) for x in aux]
    rng = np.random.default_rng(seed)
    outs, ins, aux_nd = _run_forward(spec, p, inputs, [a.copy() for a in aux], is_train)
    heads = [rng.standard_normal(o.shape) for o in outs[:spec.num_visible_outputs(p)]]

    def loss():
        o, _, _ = _run_forward(spec, p, inputs, [a.copy() for a in aux], is_train)
        return sum(float((h * x.asnumpy()).sum()) for h, x in zip(heads, o))
    names = spec.arguments(p)
    wanted = range(len(inputs)) if grad_nodes is None else [names.index(n) for n in grad_nodes]
    for req in ('write', 'add'):
        base = [rng.standard_normal(x.shape) if req == 'add' else np.zeros(x.shape)
                for x in inputs]
        grads = [array(b, dtype=np.float64) for b in base]
        head_nd = [array(h, dtype=np.float64) for h in heads]
        head_nd += [_ndarray.new_empty(o.shape, DTYPE_CODES[np.dtype(o.dtype)], cpu())
                    for o in outs[len(heads):]]
        reqs = [req if i in wanted else 'null' for i in range(len(inputs))]
        spec.backward(p, reqs, head_nd, ins, outs, grads, aux_nd)
        for i in wanted:
            expected = numeric_grad(loss, inputs[i]) + (base[i] if req == 'add' else 0)
            assert_almost_equal(grads[i], expected, rtol, atol,
                                names=(f"{op_name} d{names[i]} (req={req})",
                                       'finite differences'))
