"""Operators of mxcy/operator/tensor.py: copies with a new shape, casts, permutations,
broadcasting, repetition, clip and fills. Forward against NumPy (MXNet's semantics),
backward against finite differences in float64, req='add', shape inference and errors."""
import numpy as np
import pytest

from mxcy import _ndarray
from mxcy.base import DTYPE_CODES
from mxcy.context import cpu
from mxcy.ndarray.utils import array
from mxcy.operator import ShapeError, get_op
from mxcy.operator._params import ParamError
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape)


def infer(op, params, *shapes):
    spec = get_op(op)
    return spec.infer_shape(spec.params.parse(op, params), list(shapes))


def forward_add(op, params, inputs):
    """Forward with req='add' onto random outputs equals base + forward(write)."""
    spec = get_op(op)
    p = spec.params.parse(op, params)
    ins = [array(x, dtype=x.dtype) for x in inputs]
    _, shapes, _ = spec.infer_shape(p, [x.shape for x in ins])
    _, types, _ = spec.infer_type(p, [x.dtype.name for x in inputs])
    outs = [_ndarray.new_empty(s, DTYPE_CODES[np.dtype(t)], cpu()) for s, t in zip(shapes, types)]
    spec.forward(p, False, ['write'] * len(outs), ins, outs, [])
    want = [o.asnumpy() for o in outs]
    base = [RNG.standard_normal(s).astype(t) for s, t in zip(shapes, types)]
    outs = [array(b, dtype=b.dtype) for b in base]
    spec.forward(p, False, ['add'] * len(outs), ins, outs, [])
    for o, b, w in zip(outs, base, want):
        np.testing.assert_allclose(o.asnumpy(), b + w, rtol=1e-6, atol=1e-6)


X = rand(2, 3, 4)
V5, X1054, S2131, S11 = rand(5), rand(10, 5, 4), rand(2, 1, 3, 1), rand(1, 1)
B214, B121, B21, L13, R43, R45 = (rand(2, 1, 4), rand(1, 2, 1), rand(2, 1), rand(1, 3),
                                  rand(4, 3), rand(4, 5))

# op, params, inputs, NumPy reference of the output (MXNet semantics)
CASES = [
    ('Flatten', {}, [X], X.reshape(2, 12)),
    ('Flatten', {}, [V5], V5.reshape(5, 1)),
    ('Reshape', {'shape': (0, -1)}, [X], X.reshape(2, 12)),
    ('Reshape', {'shape': (-1, 0), 'reverse': True}, [X1054], X1054.reshape(50, 4)),
    ('Reshape', {'shape': (-2, 1)}, [X], X.reshape(2, 3, 4, 1)),
    ('Reshape', {'shape': (-3, -2)}, [X], X.reshape(6, 4)),
    ('Reshape', {'shape': (-4, 1, -1, -2)}, [X], X.reshape(1, 2, 3, 4)),
    ('Reshape', {'shape': '(4, -1)'}, [X], X.reshape(4, 6)),
    ('Reshape', {'target_shape': (0, 4)}, [X], X.reshape(6, 4)),
    ('Reshape', {'target_shape': (0, 0), 'keep_highest': True}, [X], X.reshape(2, 12)),
    ('reshape', {'shape': (3, 8)}, [X], X.reshape(3, 8)),
    ('expand_dims', {'axis': -1}, [X], X[..., None]),
    ('expand_dims', {'axis': 1}, [X], X[:, None]),
    ('squeeze', {}, [S2131], S2131.reshape(2, 3)),
    ('squeeze', {'axis': 1}, [S2131], S2131.reshape(2, 3, 1)),
    ('squeeze', {}, [S11], S11.reshape(1)),      # never 0-d: (1,)
    ('identity', {}, [X], X),
    ('_copy', {}, [X], X),
    ('transpose', {}, [X], X.transpose()),
    ('transpose', {'axes': (2, 0, 1)}, [X], X.transpose(2, 0, 1)),
    ('transpose', {'axes': (-1, 0, 1)}, [X], X.transpose(2, 0, 1)),
    ('SwapAxis', {'dim1': 0, 'dim2': 2}, [X], X.swapaxes(0, 2)),
    ('swapaxes', {'dim1': 1, 'dim2': -1}, [X], X.swapaxes(1, 2)),
    ('reverse', {'axis': 1}, [X], X[:, ::-1]),
    ('flip', {'axis': (0, 2)}, [X], X[::-1, :, ::-1]),
    ('broadcast_to', {'shape': (2, 3, 4)}, [B214], np.broadcast_to(B214, (2, 3, 4))),
    ('broadcast_to', {'shape': (0, 5, 0)}, [B214], np.broadcast_to(B214, (2, 5, 4))),
    ('broadcast_axis', {'axis': (0, 2), 'size': (3, 5)}, [B121],
     np.broadcast_to(B121, (3, 2, 5))),
    ('broadcast_axes', {'axis': 1, 'size': 4}, [B21], np.broadcast_to(B21, (2, 4))),
    ('broadcast_like', {}, [L13, R43], np.broadcast_to(L13, (4, 3))),
    ('broadcast_like', {'lhs_axes': (0,), 'rhs_axes': (1,)}, [L13, R45],
     np.broadcast_to(L13, (5, 3))),
    ('tile', {'reps': (2, 1, 3)}, [X], np.tile(X, (2, 1, 3))),
    ('tile', {'reps': (2,)}, [X], np.tile(X, 2)),
    ('tile', {'reps': (2, 1, 1, 2)}, [X], np.tile(X, (2, 1, 1, 2))),
    ('repeat', {'repeats': 2}, [X], np.repeat(X, 2)),
    ('repeat', {'repeats': 3, 'axis': -1}, [X], np.repeat(X, 3, axis=-1)),
    ('clip', {'a_min': -0.5, 'a_max': 0.5}, [X], np.clip(X, -0.5, 0.5)),
    ('zeros_like', {}, [X], np.zeros_like(X)),
    ('ones_like', {}, [X], np.ones_like(X)),
    ('BlockGrad', {}, [X], X),
    ('stop_gradient', {}, [X], X),
]


def _id(case):
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize('case', CASES, ids=[_id(c) for c in CASES])
def test_forward(case):
    op, params, inputs, ref = case
    check_op_forward(op, params, inputs, [ref])


@pytest.mark.parametrize('case', CASES, ids=[_id(c) for c in CASES])
def test_forward_req_add(case):
    op, params, inputs, _ = case
    forward_add(op, params, inputs)


GRAD_CASES = [c for c in CASES if c[0] not in ('BlockGrad', 'stop_gradient')]


@pytest.mark.parametrize('case', GRAD_CASES, ids=[_id(c) for c in GRAD_CASES])
def test_backward(case):
    """Finite differences in float64, for req 'write' and 'add' (zeros_like/ones_like and
    broadcast_like's rhs: the differences are zero and so must the gradient be)."""
    op, params, inputs, _ = case
    check_op_backward(op, params, inputs)


def test_forward_float32_and_int():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    check_op_forward('Reshape', {'shape': (-1,)}, [x], [x.reshape(-1)])
    check_op_forward('transpose', {}, [x], [x.T])
    check_op_forward('tile', {'reps': (1, 2)}, [x], [np.tile(x, (1, 2))])
    xf = X.astype(np.float32)
    check_op_forward('Flatten', {}, [xf], [xf.reshape(2, 12)])
    check_op_forward('clip', {'a_min': -1, 'a_max': 1}, [xf], [np.clip(xf, -1, 1)])


def test_blockgrad_gradient_is_zero_and_add_keeps():
    spec = get_op('BlockGrad')
    p = spec.params.parse('BlockGrad', {})
    x, dy = array(X), array(rand(2, 3, 4))
    for req, base in (('write', rand(2, 3, 4)), ('add', rand(2, 3, 4))):
        g = array(base)
        spec.backward(p, [req], [dy], [x], [x], [g], [])
        want = np.zeros_like(base) if req == 'write' else base
        np.testing.assert_allclose(g.asnumpy(), want)
    assert spec.backward_needs == ()


def test_clip_gradient_passes_on_the_bounds():
    spec = get_op('clip')
    p = spec.params.parse('clip', {'a_min': -1, 'a_max': 1})
    x = array(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]))
    dy = array(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    g = array(np.zeros(5))
    spec.backward(p, ['write'], [dy], [x], [x], [g], [])
    np.testing.assert_allclose(g.asnumpy(), [0, 2, 3, 4, 0])


def test_cast():
    x = np.array([[-1.7, 2.5], [0.4, -0.0]], dtype=np.float32)
    check_op_forward('Cast', {'dtype': 'int32'}, [x], [np.trunc(x).astype(np.int32)])
    check_op_forward('cast', {'dtype': np.float64}, [x], [x.astype(np.float64)])
    spec = get_op('Cast')
    p = spec.params.parse('Cast', {'dtype': 'float64'})
    assert spec.infer_type(p, ['float32']) == (['float32'], ['float64'], [])
    assert spec.infer_type(p, [None]) == ([None], ['float64'], [])
    dy = array(np.array([[1.5, -2.0], [3.0, 4.0]]), dtype=np.float64)
    g = array(np.ones((2, 2), np.float32), dtype=np.float32)
    spec.backward(p, ['add'], [dy], [array(x, dtype=np.float32)], [None], [g], [])
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.asnumpy(), 1 + dy.asnumpy())
    check_op_backward('Cast', {'dtype': 'float64'}, [X])


def test_inferred_shapes():
    assert infer('Flatten', {}, (2, 3, 4)) == ([(2, 3, 4)], [(2, 12)], [])
    assert infer('Flatten', {}, None) == ([None], [None], [])
    assert infer('Reshape', {'shape': (0, -1)}, None)[1] == [None]
    assert infer('Reshape', {'shape': (-1, 0), 'reverse': True}, (10, 5, 4))[1] == [(50, 4)]
    assert infer('Reshape', {'shape': (-1, 0)}, (10, 5, 4))[1] == [(40, 5)]
    assert infer('expand_dims', {'axis': 0}, (3,))[1] == [(1, 3)]
    assert infer('squeeze', {}, (1, 3, 1))[1] == [(3,)]
    assert infer('transpose', {}, (2, 3, 4))[1] == [(4, 3, 2)]
    assert infer('SwapAxis', {'dim1': 0, 'dim2': 1}, (2, 3))[1] == [(3, 2)]
    assert infer('broadcast_like', {}, (1, 3), None)[1] == [None]
    assert infer('tile', {'reps': (2, 3)}, (4,))[1] == [(2, 12)]
    assert infer('repeat', {'repeats': 2}, (2, 3))[1] == [(12,)]
    assert infer('Cast', {'dtype': 'int8'}, (2, 3))[1] == [(2, 3)]


@pytest.mark.parametrize('op, params, shapes, match', [
    ('Reshape', {'shape': (5, -1)}, [(2, 3, 4)],
     r"Reshape: shape mismatch for argument 'data'.*shape=\(5, -1\).*given \(2, 3, 4\)"),
    ('Reshape', {'shape': (7, 3)}, [(2, 3, 4)], r"Reshape: .*'data'.*\(2, 3, 4\)"),
    ('Reshape', {}, [(2, 3)], r"Reshape: parameter 'shape' is required"),
    ('Flatten', {}, [()], r"Flatten: shape mismatch for argument 'data'"),
    ('expand_dims', {'axis': 4}, [(2, 3, 4)],
     r"expand_dims: parameter 'axis'=4 is out of range for input shape \(2, 3, 4\)"),
    ('squeeze', {'axis': 0}, [(2, 1)],
     r"squeeze: shape mismatch for argument 'data': expected size 1 on axis 0"),
    ('transpose', {'axes': (0, 1)}, [(2, 3, 4)],
     r"transpose: shape mismatch for argument 'data': expected 2 dimensions"),
    ('transpose', {'axes': (0, 0, 1)}, [(2, 3, 4)], r"transpose: .*'axes'.*not a permutation"),
    ('SwapAxis', {'dim1': 0, 'dim2': 3}, [(2, 3)], r"SwapAxis: parameter 'dim2'=3"),
    ('reverse', {'axis': 2}, [(2, 3)], r"reverse: parameter 'axis'=2 is out of range"),
    ('broadcast_to', {'shape': (2, 5, 4)}, [(2, 3, 4)],
     r"broadcast_to: shape mismatch for argument 'data': expected a shape broadcastable to "
     r"\(2, 5, 4\).*given \(2, 3, 4\)"),
    ('broadcast_to', {'shape': (5,)}, [(2, 3)], r"broadcast_to: .*'data'.*1 dimensions"),
    ('broadcast_axis', {'axis': 0, 'size': 3}, [(2, 3)],
     r"broadcast_axis: .*'data': expected size 1 on axis 0"),
    ('broadcast_like', {}, [(2, 3), (2, 4)], r"broadcast_like: .*'lhs'.*\(2, 4\).*\(2, 3\)"),
    ('broadcast_like', {'lhs_axes': (0,)}, [(1, 3), (2, 4)], r"broadcast_like: give lhs_axes"),
    ('tile', {'reps': (-1,)}, [(2,)], r"tile: parameter 'reps' must be non-negative"),
    ('repeat', {'repeats': 2, 'axis': 2}, [(2, 3)], r"repeat: parameter 'axis'=2"),
])
def test_shape_errors(op, params, shapes, match):
    with pytest.raises(ShapeError if 'shape mismatch' in match or 'out of range' in match
                       else ValueError, match=match):
        infer(op, params, *shapes)


def test_param_errors_name_the_operator_and_parameter():
    with pytest.raises(ParamError, match=r"Reshape: parameter 'shape' expects a tuple"):
        get_op('Reshape').params.parse('Reshape', {'shape': 'abc'})
    with pytest.raises(TypeError, match=r"expand_dims: required parameter 'axis'"):
        get_op('expand_dims').params.parse('expand_dims', {})
    with pytest.raises(ParamError, match=r"Cast: parameter 'dtype'"):
        get_op('Cast').params.parse('Cast', {'dtype': 'complex128'})
    with pytest.raises(TypeError, match=r"clip: unexpected parameter"):
        get_op('clip').params.parse('clip', {'a_min': 0, 'a_max': 1, 'amax': 2})


def test_backward_needs_are_minimal():
    """The memory plan frees what backward does not read: keep these declarations tight."""
    for op in ('Flatten', 'Reshape', 'expand_dims', 'squeeze', 'identity', 'transpose',
               'SwapAxis', 'reverse', 'broadcast_to', 'tile', 'repeat', 'Cast'):
        assert get_op(op).backward_needs == ('out_grads',), op
    assert get_op('clip').backward_needs == ('out_grads', 'inputs')
    assert get_op('zeros_like').backward_needs == ()
