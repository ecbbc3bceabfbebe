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
from mxcy._test_helpers import *  # noqa: F401,F403,E402  (MXNet's other helpers)
from mxcy._test_runners import (numeric_grad, check_consistency, check_speed,  # noqa: F401
                                check_gluon_hybridize_consistency, compare_optimizer,
                                DummyIter, download, download_model, get_zip_data,
                                get_bz2_data, get_mnist, get_mnist_ubyte, get_mnist_pkl,
                                get_mnist_iterator, get_cifar10, get_im2rec_path)

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


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    a, b = _np(a), _np(b)
    if not use_broadcast and a.shape != b.shape:
        return False
    rt, at = _DEFAULT_TOL.get(np.result_type(a, b), (1e-5, 1e-20))
    return np.allclose(a, b, rtol=rt if rtol is None else rtol,
                       atol=at if atol is None else atol, equal_nan=equal_nan)


def assert_almost_equal(a, b, rtol=None, atol=None, names=('a', 'b'), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Assert |a - b| <= atol + rtol·|b| elementwise, reporting the worst mismatch.
    Shapes must be equal (mxcy does not broadcast here, whatever use_broadcast says:
    a silently broadcast comparison hides shape bugs)."""
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


def rand_ndarray(shape, stype='default', density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A dense random array (uniform in [0, 1), or 'normal'; modifier_func applied to
    each value); only 'default' storage exists here."""
    if stype != 'default':
        raise ValueError(f"rand_ndarray: storage type {stype!r} is not supported; "
                         "mxcy has dense arrays only")
    if distribution in (None, 'uniform'):
        data = np.random.uniform(size=shape)
    elif distribution == 'normal':
        data = np.random.normal(size=shape)
    else:
        raise ValueError(f"rand_ndarray: distribution must be 'uniform' or 'normal', got "
                         f"{distribution!r}")
    if modifier_func is not None:
        data = np.vectorize(modifier_func)(data)
    data = np.asarray(data).astype(dtype or np.float32)
    return array(data, ctx=ctx, dtype=data.dtype)


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return tuple(np.random.randint(low, dim + 1, size=num_dim))


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


def finite_difference(f, x, eps=1e-6):
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
            expected = finite_difference(loss, inputs[i]) + (base[i] if req == 'add' else 0)
            assert_almost_equal(grads[i], expected, rtol, atol,
                                names=(f"{op_name} d{names[i]} (req={req})",
                                       'finite differences'))


# ---------------------------------------------------------------- symbol-level helpers
# MXNet's names and signatures: a symbol is bound to NumPy `location` values (a list in
# list_arguments() order or a dict by name, cast to `dtype`), run, and compared.
def _parse_location(sym, location, ctx, dtype=np.float32):
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) != set(names):
            raise ValueError(f"Symbol arguments and keys of the given location do not match: "
                             f"symbol arguments {names}, location keys {sorted(location)}")
    else:
        location = list(location)
        if len(location) != len(names):
            raise ValueError(f"location has {len(location)} arrays, the symbol has "
                             f"{len(names)} arguments {names}")
        location = dict(zip(names, location))
    return {k: array(v, ctx=ctx, dtype=v.dtype if dtype == 'asnumpy' else dtype)
            if isinstance(v, np.ndarray) else v for k, v in location.items()}


def _parse_aux_states(sym, aux_states, ctx, dtype=np.float32):
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states) != set(names):
            raise ValueError(f"Symbol aux_states names and given aux_states do not match: "
                             f"symbol {names}, given {sorted(aux_states)}")
    else:
        aux_states = dict(zip(names, aux_states))
    return {k: array(v, ctx=ctx, dtype=dtype) for k, v in aux_states.items()}


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Bind `sym` to the NumPy `inputs` (as float32 NDArrays), run forward, return the
    output as a NumPy array (a list of them when there are several)."""
    ctx = ctx or default_context()
    exe = sym.bind(ctx, args={k: array(v, ctx=ctx) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def check_symbolic_forward(sym, location, expected, rtol=1e-4, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=np.float32):
    """Forward (is_train=False) of `sym` at `location` equals `expected` (a list in
    list_outputs() order or a dict by output name); returns the output NDArrays."""
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    exe = sym.bind(ctx, args=location, aux_states=aux_states)
    exe.forward(is_train=False)
    outputs = [x.asnumpy() for x in exe.outputs]
    if len(expected) != len(outputs):
        raise AssertionError(f"check_symbolic_forward: {len(expected)} expected arrays for "
                             f"{len(outputs)} outputs {sym.list_outputs()}")
    for name, expect, output in zip(sym.list_outputs(), expected, outputs):
        assert_almost_equal(expect, output, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return exe.outputs


def _as_head_grad(g, ctx):
    if isinstance(g, np.ndarray):
        return array(g, ctx=ctx, dtype=np.float32 if g.dtype == np.float16 else g.dtype)
    return g


def check_symbolic_backward(sym, location, out_grads, expected, rtol=1e-5, atol=None,
                            aux_states=None, grad_req='write', ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=np.float32):
    """Backward of `sym` at `location` with head gradients `out_grads` gives `expected`
    (a list in list_arguments() order or a dict by name). Gradient buffers start filled
    with random values, so 'add' must add onto them and 'null' must leave them alone.
    Returns the gradient NDArrays by name."""
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    names = sym.list_arguments()
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(names, expected))
    expected = {k: np.asarray(v) for k, v in expected.items()}
    # dirty buffers (in each argument's dtype), so a backward that ignores grad_req shows
    rng = np.random.default_rng(0)
    grads_npy = {k: rng.standard_normal(v.shape) for k, v in expected.items()}
    grads = {k: array(v, ctx=ctx, dtype=location[k].dtype) for k, v in grads_npy.items()}
    grads_npy = {k: g.asnumpy() for k, g in grads.items()}
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in names}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(names, grad_req))
    exe = sym.bind(ctx, args=location, args_grad=grads, grad_req=grad_req,
                   aux_states=aux_states)
    exe.forward(is_train=True)
    if isinstance(out_grads, (list, tuple)):
        out_grads = [_as_head_grad(g, ctx) for g in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = {k: _as_head_grad(g, ctx) for k, g in out_grads.items()}
    elif isinstance(out_grads, np.ndarray):
        out_grads = [_as_head_grad(out_grads, ctx)]
    exe.backward(out_grads)
    got = {k: g.asnumpy() for k, g in grads.items()}
    for name in expected:
        req = grad_req.get(name, 'null')
        labels = (f"EXPECTED_{name}", f"BACKWARD_{name}")
        if req == 'write':
            assert_almost_equal(expected[name], got[name], rtol, atol, labels,
                                equal_nan=equal_nan)
        elif req == 'add':
            assert_almost_equal(expected[name], got[name] - grads_npy[name], rtol, atol,
                                labels, equal_nan=equal_nan)
        elif req == 'null':
            assert_almost_equal(grads_npy[name], got[name], rtol, atol, labels,
                                equal_nan=equal_nan)
        else:
            raise ValueError(f"Invalid grad_req {req!r} for argument {name!r}")
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=1e-3, rtol=1e-2,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=np.float32):
    """The symbolic gradient of f = Σ_outputs sum(output · P) (P a fixed random
    projection per output) equals central differences of f, for each argument in
    `grad_nodes` (default: all; a dict gives each one's grad_req). Compute in float64
    (``dtype=np.float64``) with a small `numeric_eps` for tight tolerances."""
    ctx = ctx or default_context()
    if grad_stype_dict:
        raise ValueError("check_numeric_gradient: mxcy has dense arrays only "
                         f"(grad_stype_dict={grad_stype_dict!r})")
    location = _parse_location(sym, location, ctx, dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_npy = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    if grad_nodes is None:
        grad_req = {k: 'write' for k in sym.list_arguments()}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_req = {k: 'write' for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
    else:
        raise ValueError(f"check_numeric_gradient: grad_nodes must be a list, a tuple or a "
                         f"dict, got {type(grad_nodes).__name__}")
    unknown = [k for k in grad_req if k not in location]
    if unknown:
        raise ValueError(f"check_numeric_gradient: grad_nodes {unknown} are not arguments "
                         f"of the symbol {sym.list_arguments()}")
    _, out_shapes, _ = sym._infer_shape_strict(**{k: v.shape for k, v in location.items()})
    rng = np.random.default_rng(1)
    # projections not too small, or the finite differences lose precision
    proj = [rng.random(s) + 0.1 for s in out_shapes]
    grads_npy = {k: rng.normal(0, 0.01, size=location[k].shape) for k in grad_req}
    grads = {k: array(v, ctx=ctx, dtype=dtype) for k, v in grads_npy.items()}
    grads_npy = {k: g.asnumpy() for k, g in grads.items()}
    exe = sym.bind(ctx, args=location, args_grad=grads, grad_req=grad_req,
                   aux_states=aux_states)
    exe.forward(is_train=True)
    exe.backward([array(p, ctx=ctx, dtype=o.dtype) for p, o in zip(proj, exe.outputs)])
    symbolic = {k: g.asnumpy() for k, g in grads.items()}

    def f():
        if aux_npy is not None:
            for key, val in aux_npy.items():
                exe.aux_dict[key][:] = val
        exe.forward(is_train=use_forward_train)
        return sum(float((o.asnumpy().astype(np.float64) * p).sum())
                   for o, p in zip(exe.outputs, proj))
    for name, req in grad_req.items():
        value = location_npy[name]
        fd = np.zeros(value.shape, dtype=np.float64)
        flat, fd_flat = value.reshape(-1), fd.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + numeric_eps / 2
            exe.arg_dict[name][:] = value
            hi = f()
            flat[i] = old - numeric_eps / 2
            exe.arg_dict[name][:] = value
            lo = f()
            flat[i] = old
            fd_flat[i] = (hi - lo) / numeric_eps
        exe.arg_dict[name][:] = value
        labels = (f"NUMERICAL_{name}", f"BACKWARD_{name}")
        if req == 'write':
            assert_almost_equal(fd, symbolic[name], rtol, atol, labels)
        elif req == 'add':
            assert_almost_equal(fd, symbolic[name] - grads_npy[name], rtol, atol, labels)
        elif req == 'null':
            assert_almost_equal(grads_npy[name], symbolic[name], rtol, atol, labels)
        else:
            raise ValueError(f"Invalid grad_req {req!r} for argument {name!r}")
