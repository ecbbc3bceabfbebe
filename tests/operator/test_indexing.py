"""Operators of mxcy/operator/indexing.py: Concat, stack, SliceChannel, slice, slice_axis,
take, pick, one_hot, Embedding, where. Forward against NumPy (MXNet semantics), backward
against finite differences (float64), req='add', shape inference and its errors."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import _ndarray
from mxcy.base import DTYPE_CODES
from mxcy.context import cpu
from mxcy.ndarray._gen import make_function
from mxcy.ndarray.utils import array
from mxcy.operator import get_op
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(3)


def rand(*shape):
    return RNG.standard_normal(shape)


def infer(op, params, *shapes):
    spec = get_op(op)
    return spec.infer_shape(spec.params.parse(op, params), list(shapes))


def run(op, params, inputs, req='write', base=None):
    """Forward outputs (NumPy) with `req`, onto `base` arrays when given."""
    spec = get_op(op)
    p = spec.params.parse(op, params)
    ins = [array(x, dtype=x.dtype) for x in inputs]
    _, shapes, _ = spec.infer_shape(p, [x.shape for x in ins])
    _, types, _ = spec.infer_type(p, [x.dtype.name for x in inputs])
    outs = [array(b, dtype=b.dtype) for b in base] if base is not None else \
        [_ndarray.new_empty(s, DTYPE_CODES[np.dtype(t)], cpu()) for s, t in zip(shapes, types)]
    spec.forward(p, False, [req] * len(outs), ins, outs, [])
    return [o.asnumpy() for o in outs]


X, Y = rand(2, 3, 4), rand(2, 5, 4)
IDX = np.array([[0, 2], [3, 1], [2, 2]], dtype=np.float64)
PICK = np.array([[0, 2, 1, 1], [2, 2, 0, 1]], dtype=np.float64)
W = rand(5, 3)
COND = np.array([[1, 0, 2, 0], [0, 0, 1, -1], [1, 1, 0, 0]], dtype=np.float64)
A34, B34 = rand(3, 4), rand(3, 4)

# op, params, inputs, NumPy references of the visible outputs, gradient inputs
CASES = [
    ('Concat', {'num_args': 2}, [X, Y], [np.concatenate([X, Y], 1)], None),
    ('concat', {'num_args': 3, 'dim': -1}, [X, X, X], [np.concatenate([X] * 3, -1)], None),
    ('Concat', {'num_args': 2, 'dim': 0}, [X, X[:1]], [np.concatenate([X, X[:1]])], None),
    ('stack', {'num_args': 2}, [X, X + 1], [np.stack([X, X + 1])], None),
    ('stack', {'num_args': 3, 'axis': -1}, [X, X, X], [np.stack([X] * 3, -1)], None),
    ('SliceChannel', {'num_outputs': 3}, [X], np.split(X, 3, 1), None),
    ('split', {'num_outputs': 2, 'axis': -1}, [X], np.split(X, 2, -1), None),
    ('split', {'num_outputs': 3, 'axis': 1, 'squeeze_axis': True}, [X],
     [X[:, i] for i in range(3)], None),
    ('split', {'num_outputs': 1, 'axis': 0}, [X], [X], None),
    ('slice', {'begin': (0, 1), 'end': (2, 3)}, [X], [X[0:2, 1:3]], None),
    ('slice', {'begin': (None, -1), 'end': (None, None), 'step': (None, -1)}, [X],
     [X[:, ::-1]], None),
    ('slice', {'begin': (1, 2, 0), 'end': (None, 0, 4), 'step': (1, -2, 3)}, [X],
     [X[1:, 2:0:-2, 0:4:3]], None),
    ('crop', {'begin': (-1,), 'end': (None,)}, [X], [X[-1:]], None),
    ('slice_axis', {'axis': 1, 'begin': 1, 'end': None}, [X], [X[:, 1:]], None),
    ('slice_axis', {'axis': -1, 'begin': -3, 'end': -1}, [X], [X[..., -3:-1]], None),
    ('take', {}, [W, IDX], [W[IDX.astype(int)]], ['a']),
    ('take', {'axis': 1}, [X, IDX], [np.take(X, np.clip(IDX.astype(int), 0, 2), 1)], ['a']),
    ('take', {'axis': -1, 'mode': 'wrap'}, [X, IDX - 2],
     [np.take(X, np.mod(IDX.astype(int) - 2, 4), -1)], ['a']),
    ('take', {'mode': 'clip'}, [W, np.array([-3.0, 7.0, 4.9])], [W[[0, 4, 4]]], ['a']),
    ('pick', {'axis': 1}, [X, PICK], [np.take_along_axis(X, PICK.astype(int)[:, None], 1)[:, 0]],
     ['data']),
    ('pick', {'axis': 1, 'keepdims': True}, [X, PICK],
     [np.take_along_axis(X, PICK.astype(int)[:, None], 1)], ['data']),
    ('pick', {'axis': -1, 'mode': 'wrap'}, [X, rand(2, 3).round() * 5],
     None, ['data']),
    ('one_hot', {'depth': 4}, [IDX], [np.eye(4)[IDX.astype(int)]], None),
    ('one_hot', {'depth': 3, 'on_value': 5, 'off_value': -1, 'dtype': 'int32'},
     [np.array([0.0, 2.0, 3.0, -1.0])],
     [np.array([[5, -1, -1], [-1, -1, 5], [-1, -1, -1], [-1, -1, -1]])], None),
    ('Embedding', {'input_dim': 5, 'output_dim': 3, 'dtype': 'float64'}, [IDX, W],
     [W[IDX.astype(int)]], ['weight']),
    ('Embedding', {'input_dim': 5, 'output_dim': 3, 'dtype': 'float64'},
     [np.array([9.0, -2.0, 1.0, 1.0]), W], [W[[4, 0, 1, 1]]], ['weight']),
    ('where', {}, [COND, A34, B34], [np.where(COND != 0, A34, B34)], None),
    ('where', {}, [np.array([0.0, 1.0, 1.0]), A34, B34],
     [np.where(np.array([0, 1, 1])[:, None] != 0, A34, B34)], None),
]


def _id(case):
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize('case', CASES, ids=[_id(c) for c in CASES])
def test_forward(case):
    op, params, inputs, expected, _ = case
    if expected is None:        # pick with wrap
        idx = np.mod(np.trunc(inputs[1]).astype(int), inputs[0].shape[-1])
        expected = [np.take_along_axis(inputs[0], idx[..., None], -1)[..., 0]]
    check_op_forward(op, params, inputs, expected)


@pytest.mark.parametrize('case', CASES, ids=[_id(c) for c in CASES])
def test_forward_req_add(case):
    op, params, inputs, _, _ = case
    want = run(op, params, inputs)
    base = [RNG.standard_normal(w.shape).astype(w.dtype) for w in want]
    got = run(op, params, inputs, 'add', [b.copy() for b in base])
    for g, b, w in zip(got, base, want):
        np.testing.assert_allclose(g, b + w, rtol=1e-6, atol=1e-6)


GRAD_CASES = [c for c in CASES if c[0] != 'one_hot']


@pytest.mark.parametrize('case', GRAD_CASES, ids=[_id(c) for c in GRAD_CASES])
def test_backward(case):
    """Finite differences for req 'write' and 'add'; where's condition has zero
    gradient (the differences are zero away from its switching points)."""
    op, params, inputs, _, grad_nodes = case
    check_op_backward(op, params, inputs, grad_nodes=grad_nodes)


def test_index_arguments_get_zero_gradient():
    for op, params, inputs, idx_pos in (
            ('take', {}, [W, IDX], 1), ('pick', {'axis': 1}, [X, PICK], 1),
            ('Embedding', {'input_dim': 5, 'output_dim': 3}, [IDX, W.astype(np.float32)], 0),
            ('one_hot', {'depth': 4}, [IDX], 0)):
        spec = get_op(op)
        p = spec.params.parse(op, params)
        ins = [array(x, dtype=x.dtype) for x in inputs]
        out = run(op, params, inputs)[0]
        grads = [array(np.full(x.shape, 9.0), dtype=x.dtype) for x in inputs]
        spec.backward(p, ['write'] * len(ins), [array(np.ones_like(out), dtype=out.dtype)],
                      ins, [array(out, dtype=out.dtype)], grads, [])
        np.testing.assert_array_equal(grads[idx_pos].asnumpy(), 0, err_msg=op)


def test_embedding_repeated_indices_accumulate():
    spec = get_op('Embedding')
    p = spec.params.parse('Embedding', {'input_dim': 4, 'output_dim': 2})
    data = array(np.array([[1, 1], [3, 1]], dtype=np.float32))
    w = array(np.zeros((4, 2), np.float32))
    dy = array(np.arange(8, dtype=np.float32).reshape(2, 2, 2))
    dw = array(np.zeros((4, 2), np.float32))
    spec.backward(p, ['null', 'write'], [dy], [data, w], [None], [None, dw], [])
    np.testing.assert_allclose(dw.asnumpy(), [[0, 0], [0 + 2 + 6, 1 + 3 + 7], [0, 0], [4, 5]])
    assert spec.infer_type(p, ['int32', None]) == (['int32', 'float32'], ['float32'], [])
    # MXNet 1.9.1: a given weight's dtype wins over the dtype parameter (golden-checked)
    assert spec.infer_type(p, ['float32', 'float64']) == (['float32', 'float64'],
                                                          ['float64'], [])


def test_take_raise_mode_fails_the_op():
    from mxcy import engine
    from mxcy.base import MXNetError
    spec = get_op('take')
    p = spec.params.parse('take', {'mode': 'raise'})
    out = _ndarray.new_empty((2, 3), DTYPE_CODES[np.dtype(np.float32)], cpu())
    spec.forward(p, False, ['write'], [array(W.astype(np.float32)), array(np.array([1., 5.]))],
                 [out], [])
    with pytest.raises((IndexError, MXNetError), match=r"take: index 5 is out of bounds for "
                                                       r"axis 0 with size 5"):
        out.asnumpy()
    # the engine also reports an op's error to the next wait_all: drain it here so it does
    # not surface in another test's wait_all
    try:
        engine.wait_all()
    except (IndexError, MXNetError):
        pass


def test_inferred_shapes():
    assert infer('Concat', {'num_args': 2}, (2, 3), (2, 4)) == ([(2, 3), (2, 4)], [(2, 7)], [])
    # as MXNet 1.x: an unknown input gets the common dims and 0 (unknown) along dim
    assert infer('Concat', {'num_args': 2}, (2, 3), None) == ([(2, 3), (2, 0)], [(2, 0)], [])
    # stack ties every argument to one shape, in both directions
    assert infer('stack', {'num_args': 3}, None, (2, 3), None) == \
        ([(2, 3)] * 3, [(3, 2, 3)], [])
    assert infer('SliceChannel', {'num_outputs': 2}, (4, 6))[1] == [(4, 3), (4, 3)]
    assert infer('SliceChannel', {'num_outputs': 2, 'squeeze_axis': 1}, (4, 2))[1] == \
        [(4,), (4,)]
    assert infer('slice', {'begin': (1,), 'end': (None,)}, (5, 2))[1] == [(4, 2)]
    assert infer('take', {'axis': 1}, (4, 5, 6), (2, 3))[1] == [(4, 2, 3, 6)]
    assert infer('pick', {'axis': 0}, (4, 5), None) == ([(4, 5), (5,)], [(5,)], [])
    # as MXNet: the weight is inferred with the data, not from the parameters alone
    assert infer('Embedding', {'input_dim': 7, 'output_dim': 2}, None, None) == \
        ([None, None], [None], [])
    assert infer('Embedding', {'input_dim': 7, 'output_dim': 2}, (3, 4), None)[1] == \
        [(3, 4, 2)]
    assert infer('one_hot', {'depth': 6}, (3,))[1] == [(3, 6)]
    # as MXNet: where infers nothing before the condition's shape is known
    assert infer('where', {}, None, (2, 3), None) == ([None, (2, 3), None], [None], [])
    assert infer('where', {}, (2,), (2, 3), None) == ([(2,), (2, 3), (2, 3)], [(2, 3)], [])
    spec = get_op('SliceChannel')
    p = spec.params.parse('SliceChannel', {'num_outputs': 3})
    assert spec.outputs(p) == ['output0', 'output1', 'output2']
    spec = get_op('Concat')
    assert spec.arguments(spec.params.parse('Concat', {'num_args': 2})) == ['arg0', 'arg1']


@pytest.mark.parametrize('op, params, shapes, match', [
    ('Concat', {'num_args': 2}, [(2, 3), (3, 4)],
     r"Concat: shape mismatch for argument 'arg1': expected \(2, \*\), given \(3, 4\)"),
    ('Concat', {'num_args': 2, 'dim': 2}, [(2, 3), (2, 3)], r"Concat: parameter 'dim'=2"),
    ('Concat', {'num_args': 2}, [(2, 3), (2, 3, 1)], r"'arg1'.*given \(2, 3, 1\)"),
    ('stack', {'num_args': 2}, [(2, 3), (2, 4)],
     r"stack: shape mismatch for argument 'arg1': expected \(2, 3\), given \(2, 4\)"),
    ('SliceChannel', {'num_outputs': 4}, [(2, 6)],
     r"SliceChannel: .*'data': expected axis 1 size divisible by num_outputs=4"),
    ('SliceChannel', {'num_outputs': 2, 'squeeze_axis': True}, [(2, 6)],
     r"SliceChannel: .*expected axis 1 of size num_outputs=2"),
    ('slice', {'begin': (0, 0, 0), 'end': (1, 1, 1)}, [(2, 3)],
     r"slice: shape mismatch for argument 'data': expected at least 3 dimensions"),
    ('slice', {'begin': (0, 0), 'end': (1,)}, [(2, 3)], r"slice: parameters begin"),
    ('slice', {'begin': (0,), 'end': (1,), 'step': (0,)}, [(2, 3)], r"'step' must not"),
    ('slice_axis', {'axis': 0, 'begin': 2, 'end': 1}, [(3, 3)],
     r"slice_axis: .*'data': expected axis 0 holding begin=2, end=1"),
    ('slice_axis', {'axis': 2, 'begin': 0, 'end': 1}, [(3, 3)], r"slice_axis: parameter 'axis'"),
    ('take', {'axis': 2}, [(3, 3), (2,)], r"take: parameter 'axis'=2 is out of range"),
    ('pick', {'axis': 1}, [(3, 4), (4,)],
     r"pick: shape mismatch for argument 'index': expected \(3,\), given \(4,\)"),
    ('Embedding', {'input_dim': 5, 'output_dim': 3}, [(2,), (5, 4)],
     r"Embedding: shape mismatch for argument 'weight': expected \(5, 3\), given \(5, 4\)"),
    ('where', {}, [(2, 3), (2, 3), (3, 2)],
     r"where: shape mismatch for argument 'y': expected \(2, 3\), given \(3, 2\)"),
    ('where', {}, [(3,), (2, 3), (2, 3)], r"where: .*'condition'.*given \(3,\)"),
    ('one_hot', {'depth': -1}, [(3,)], r"one_hot: parameter 'depth' must be >= 0"),
])
def test_shape_errors(op, params, shapes, match):
    with pytest.raises(ValueError, match=match):
        infer(op, params, *shapes)


def test_dtype_rules():
    spec = get_op('Concat')
    p = spec.params.parse('Concat', {'num_args': 2})
    assert spec.infer_type(p, [None, 'float64']) == (['float64'] * 2, ['float64'], [])
    with pytest.raises(TypeError, match=r"Concat: argument 'arg1' has dtype float64, "
                                        r"expected float32"):
        spec.infer_type(p, ['float32', 'float64'])
    spec = get_op('where')
    p = spec.params.parse('where', {})
    assert spec.infer_type(p, ['int32', 'float32', None]) == \
        (['int32', 'float32', 'float32'], ['float32'], [])
    spec = get_op('take')
    assert spec.infer_type(spec.params.parse('take', {}), ['float32', 'int64'])[1] == \
        ['float32']


def test_generated_nd_functions():
    """mx.nd.<Op> generated from these declarations: variadic num_args, list outputs."""
    a, b = array(X.astype(np.float32)), array(Y.astype(np.float32))
    c = make_function('Concat')(a, b, dim=1)
    np.testing.assert_allclose(c.asnumpy(), np.concatenate([X, Y], 1), rtol=1e-6)
    parts = make_function('SliceChannel')(a, num_outputs=3, axis=1)
    assert isinstance(parts, list) and len(parts) == 3
    np.testing.assert_allclose(parts[2].asnumpy(), X[:, 2:3], rtol=1e-6)
    s = make_function('stack')(a, a, axis=1)
    assert s.shape == (2, 2, 3, 4)


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64', 'int32'])
@pytest.mark.parametrize('idx_dtype', ['float32', 'int64'])
def test_take_axis0_clip_gathers_rows_in_every_dtype(dtype, idx_dtype):
    # axis 0, mode clip: Embedding's C row gather straight into the output (indices
    # truncated toward zero, then clipped), also for 3-D data and 2-D indices
    a = np.arange(5 * 3 * 2).reshape(5, 3, 2).astype(dtype)
    idx = np.array([[-3.0, 7.0, 4.9], [0.2, 2.0, -0.9]]).astype(idx_dtype)
    got = mx.nd.take(mx.nd.array(a, dtype=dtype), mx.nd.array(idx, dtype=idx_dtype))
    want = a[np.clip(np.trunc(idx.astype(np.float64)).astype(int), 0, 4)]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), want)
    out = mx.nd.ones(want.shape, dtype=dtype)                      # into a given output
    mx.nd.take(mx.nd.array(a, dtype=dtype), mx.nd.array(idx, dtype=idx_dtype), out=out)
    np.testing.assert_array_equal(out.asnumpy(), want)
    empty = mx.nd.take(mx.nd.array(a, dtype=dtype), mx.nd.array(np.zeros((0,)), dtype=idx_dtype))
    assert empty.shape == (0, 3, 2)
