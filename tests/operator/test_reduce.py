"""Operators of mxcy/operator/reduce.py: sum/mean/max/min/prod/nansum/nanprod, norm,
argmax/argmin/argmax_channel, topk/sort/argsort, softmax/log_softmax. Forward against
NumPy (MXNet semantics), backward against finite differences (float64), req='add', shape
and dtype inference and errors."""
import numpy as np
import pytest

import mxcy as mx

from mxcy import _ndarray
from mxcy.base import DTYPE_CODES
from mxcy.context import cpu
from mxcy.ndarray.utils import array
from mxcy.operator import get_op
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(11)


def rand(*shape):
    return RNG.standard_normal(shape)


def infer(op, params, *shapes):
    spec = get_op(op)
    return spec.infer_shape(spec.params.parse(op, params), list(shapes))


def run(op, params, inputs, req='write', base=None):
    spec = get_op(op)
    p = spec.params.parse(op, params)
    ins = [array(x, dtype=x.dtype) for x in inputs]
    _, shapes, _ = spec.infer_shape(p, [x.shape for x in ins])
    _, types, _ = spec.infer_type(p, [x.dtype.name for x in inputs])
    outs = [array(b, dtype=b.dtype) for b in base] if base is not None else \
        [_ndarray.new_empty(s, DTYPE_CODES[np.dtype(t)], cpu()) for s, t in zip(shapes, types)]
    spec.forward(p, False, [req] * len(outs), ins, outs, [])
    return [o.asnumpy() for o in outs]


def softmax(x, axis, t=1.0):
    e = np.exp((x - x.max(axis, keepdims=True)) / t)
    return e / e.sum(axis, keepdims=True)


X = rand(2, 3, 4)
XN = X.copy()
XN[0, 1, 2] = XN[1, 0, 0] = np.nan

REDUCE_CASES = [
    ('sum', {}, X, np.sum(X).reshape(1)),
    ('sum', {'axis': 1}, X, X.sum(1)),
    ('sum_axis', {'axis': (0, 2), 'keepdims': True}, X, X.sum((0, 2), keepdims=True)),
    ('sum', {'axis': 1, 'exclude': True}, X, X.sum((0, 2))),
    ('sum', {'axis': ()}, X, np.sum(X).reshape(1)),
    ('sum', {'axis': '(0, -1)'}, X, X.sum((0, 2))),
    ('mean', {'axis': -1}, X, X.mean(-1)),
    ('mean', {'axis': 0, 'keepdims': True, 'exclude': True}, X, X.mean((1, 2), keepdims=True)),
    ('max', {'axis': 1}, X, X.max(1)),
    ('max_axis', {}, X, X.max().reshape(1)),
    ('min', {'axis': (0, 1)}, X, X.min((0, 1))),
    ('min_axis', {'axis': 2, 'keepdims': True}, X, X.min(2, keepdims=True)),
    ('prod', {'axis': 2}, X, X.prod(2)),
    ('prod', {'axis': 0, 'exclude': True}, X, X.prod((1, 2))),
    ('nansum', {'axis': 1}, XN, np.nansum(XN, 1)),
    ('nanprod', {'axis': 2}, XN, np.nanprod(XN, 2)),
    ('norm', {}, X, np.sqrt((X ** 2).sum()).reshape(1)),
    ('norm', {'ord': 1, 'axis': 1}, X, np.abs(X).sum(1)),
    ('norm', {'axis': (0, 2), 'keepdims': True}, X, np.sqrt((X ** 2).sum((0, 2), keepdims=True))),
]


def _id(case):
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize('case', REDUCE_CASES, ids=[_id(c) for c in REDUCE_CASES])
def test_reduce_forward(case):
    op, params, x, expected = case
    check_op_forward(op, params, [x], [expected])
    check_op_forward(op, params, [x.astype(np.float32)], [expected.astype(np.float32)],
                     rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('case', REDUCE_CASES, ids=[_id(c) for c in REDUCE_CASES])
def test_reduce_backward(case):
    """Finite differences (req write and add); no ties, so max/min are differentiable.
    NaN entries give NaN differences, so the nan* ops are checked on clean data."""
    op, params, x, _ = case
    check_op_backward(op, params, [X if op.startswith('nan') else x])


def test_nan_reductions_skip_nans_in_backward():
    for op in ('nansum', 'nanprod'):
        spec = get_op(op)
        p = spec.params.parse(op, {'axis': 1})
        x = array(XN)
        y = array(run(op, {'axis': 1}, [XN])[0])
        g = array(np.full(XN.shape, 7.0))
        spec.backward(p, ['write'], [array(np.ones(y.shape))], [x], [y], [g], [])
        got = g.asnumpy()
        assert got[0, 1, 2] == 0 and got[1, 0, 0] == 0 and np.isfinite(got).all()
    # nanprod: the gradient of the clean entries is the product of the other clean ones
    row = np.array([[2.0, np.nan, 3.0, 5.0]])
    spec, p = get_op('nanprod'), get_op('nanprod').params.parse('nanprod', {'axis': 1})
    g = array(np.zeros((1, 4)))
    spec.backward(p, ['write'], [array(np.ones(1))], [array(row)], [array(np.array([30.]))],
                  [g], [])
    np.testing.assert_allclose(g.asnumpy(), [[15, 0, 10, 6]])


def test_max_gradient_goes_to_every_tied_position():
    spec = get_op('max')
    p = spec.params.parse('max', {'axis': 1})
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]])
    g = array(np.zeros((2, 3)))
    spec.backward(p, ['write'], [array(np.array([10.0, 20.0]))], [array(x)],
                  [array(np.array([3.0, 2.0]))], [g], [])
    np.testing.assert_allclose(g.asnumpy(), [[0, 10, 10], [20, 0, 0]])


def test_prod_gradient_is_exact_with_zeros():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0]])
    spec = get_op('prod')
    p = spec.params.parse('prod', {'axis': 1})
    g = array(np.zeros((2, 3)))
    spec.backward(p, ['write'], [array(np.ones(2))], [array(x)], [array(np.zeros(2))], [g], [])
    np.testing.assert_allclose(g.asnumpy(), [[0, 6, 0], [0, 0, 0]])


def test_integer_reductions_keep_dtype():
    x = np.array([[100, 100, 100], [1, 2, 4]], dtype=np.int8)
    assert run('sum', {'axis': 1}, [x])[0].tolist() == [44, 7]       # 300 wraps in int8
    assert run('mean', {'axis': 1}, [x.astype(np.int32) * -1])[0].tolist() == [-100, -2]
    assert run('prod', {'axis': 1}, [x.astype(np.int32)])[0].tolist() == [1000000, 8]
    spec = get_op('sum')
    assert spec.infer_type(spec.params.parse('sum', {}), ['int8'])[1] == ['int8']
    spec = get_op('norm')
    assert spec.infer_type(spec.params.parse('norm', {'out_dtype': 'float64'}),
                           ['float32'])[1] == ['float64']
    np.testing.assert_allclose(run('norm', {}, [np.array([3, 4], np.int32)])[0], [5])


@pytest.mark.parametrize('case', REDUCE_CASES[:8], ids=[_id(c) for c in REDUCE_CASES[:8]])
def test_reduce_req_add(case):
    op, params, x, expected = case
    base = rand(*expected.shape)
    np.testing.assert_allclose(run(op, params, [x], 'add', [base.copy()])[0], base + expected)


# ---------------------------------------------------------------- arg-reductions, sorting
Y = np.array([[3.0, 1.0, 3.0, 2.0], [0.0, 5.0, 5.0, -1.0], [4.0, 4.0, 4.0, 4.0]])


@pytest.mark.parametrize('op, params, expected', [
    ('argmax', {'axis': 1}, np.array([0, 1, 0.])),
    ('argmax', {}, np.array([5.0])),
    ('argmax', {'axis': 0, 'keepdims': True}, np.array([[2, 1, 1, 2.]])),
    ('argmin', {'axis': -1}, np.array([1, 3, 0.])),
    ('argmin', {'keepdims': True}, np.array([[7.0]])),
    ('argmax_channel', {}, np.array([0, 1, 0.])),
    ('argsort', {}, np.argsort(Y, 1, kind='stable').astype(np.float32)),
    ('argsort', {'axis': 0, 'is_ascend': False, 'dtype': 'int32'},
     np.argsort(-Y, 0, kind='stable').astype(np.int32)),
    ('argsort', {'axis': None}, np.argsort(Y.reshape(-1), kind='stable').astype(np.float32)),
    ('sort', {}, np.sort(Y, 1)),
    ('sort', {'axis': 0, 'is_ascend': False}, -np.sort(-Y, 0)),
    ('topk', {}, np.array([[0], [1], [0]], np.float32)),
    ('topk', {'k': 2, 'ret_typ': 'value'}, np.array([[3, 3], [5, 5], [4, 4.]])),
    ('topk', {'k': 2, 'ret_typ': 'indices', 'is_ascend': True, 'dtype': 'int64'},
     np.array([[1, 3], [3, 0], [0, 1]])),
    ('topk', {'k': 3, 'axis': None, 'ret_typ': 'value'}, np.array([5, 5, 4.])),
    ('topk', {'k': 1, 'axis': 0, 'ret_typ': 'mask'},
     np.array([[0, 0, 0, 0], [0, 1, 1, 0], [1, 0, 0, 1.]])),
    ('topk', {'k': 0, 'ret_typ': 'value', 'is_ascend': True}, np.sort(Y, 1)),
])
def test_arg_and_sort_forward(op, params, expected):
    out = run(op, params, [Y])[0]
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    np.testing.assert_array_equal(out, expected)


def test_topk_both_outputs_and_names():
    spec = get_op('topk')
    p = spec.params.parse('topk', {'k': 2, 'ret_typ': 'both'})
    assert spec.outputs(p) == ['output0', 'output1'] and spec.num_visible_outputs(p) == 2
    values, idx = run('topk', {'k': 2, 'ret_typ': 'both'}, [Y])
    np.testing.assert_array_equal(values, [[3, 3], [5, 5], [4, 4]])
    np.testing.assert_array_equal(idx, [[0, 2], [1, 2], [0, 1]])
    p = spec.params.parse('topk', {'ret_typ': 'value'})
    assert spec.num_visible_outputs(p) == 1 and len(spec.outputs(p)) == 2
    assert get_op('argmax').has_backward is False and get_op('argsort').has_backward is False
    spec = get_op('sort')
    assert spec.infer_type(spec.params.parse('sort', {}), ['float16'])[1] == \
        ['float16', 'int64']


@pytest.mark.parametrize('op, params', [
    ('sort', {}), ('sort', {'axis': 0, 'is_ascend': False}), ('sort', {'axis': None}),
    ('topk', {'k': 2, 'ret_typ': 'value'}), ('topk', {'k': 2, 'ret_typ': 'both', 'axis': 0}),
    ('topk', {'k': 3, 'axis': None, 'ret_typ': 'value'}),
])
def test_sort_backward(op, params):
    check_op_backward(op, params, [rand(3, 4)])


def test_topk_indices_gradient_is_zero():
    check_op_backward('topk', {'k': 2}, [rand(3, 4)])


# ---------------------------------------------------------------- softmax
@pytest.mark.parametrize('op, params, ref', [
    ('softmax', {}, lambda x: softmax(x, -1)),
    ('softmax', {'axis': 0, 'temperature': 2.0}, lambda x: softmax(x, 0, 2.0)),
    ('softmax', {'axis': 1, 'temperature': 0.5}, lambda x: softmax(x, 1, 0.5)),
    ('log_softmax', {}, lambda x: np.log(softmax(x, -1))),
    ('log_softmax', {'axis': 1, 'temperature': 3.0}, lambda x: np.log(softmax(x, 1, 3.0))),
])
@pytest.mark.parametrize('dtype', [np.float64, np.float32, np.float16])
def test_softmax_forward(op, params, ref, dtype):
    x = X.astype(dtype)
    tol = {np.float16: 3e-3, np.float32: 1e-5, np.float64: 1e-12}[dtype]
    check_op_forward(op, params, [x], [ref(X).astype(dtype)], rtol=tol, atol=tol)


@pytest.mark.parametrize('op, params', [
    ('softmax', {}), ('softmax', {'axis': 0, 'temperature': 2.0}),
    ('softmax', {'axis': 1, 'dtype': 'float64'}),
    ('log_softmax', {'axis': 1}), ('log_softmax', {'temperature': 0.7}),
])
def test_softmax_backward(op, params):
    check_op_backward(op, params, [X])


def test_softmax_req_add_and_output_dtype():
    base = rand(2, 3, 4)
    np.testing.assert_allclose(run('softmax', {}, [X], 'add', [base.copy()])[0],
                               base + softmax(X, -1))
    out = run('softmax', {'dtype': 'float64'}, [X.astype(np.float32)])[0]
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, softmax(X.astype(np.float32).astype(np.float64), -1),
                               rtol=1e-6)
    # float16 and a different output dtype take the NumPy path; backward too
    spec = get_op('softmax')
    p = spec.params.parse('softmax', {'dtype': 'float32'})
    x16 = X.astype(np.float16)
    y = array(run('softmax', {'dtype': 'float32'}, [x16])[0], dtype=np.float32)
    dy = array(rand(2, 3, 4).astype(np.float32), dtype=np.float32)
    g = array(np.zeros((2, 3, 4), np.float16), dtype=np.float16)
    spec.backward(p, ['write'], [dy], [array(x16, dtype=np.float16)], [y], [g], [])
    yv, dv = y.asnumpy(), dy.asnumpy()
    np.testing.assert_allclose(g.asnumpy(), yv * (dv - (dv * yv).sum(-1, keepdims=True)),
                               rtol=2e-2, atol=2e-3)


def test_softmax_with_length():
    x = rand(2, 5)
    length = np.array([3.0, 5.0])
    want = np.zeros_like(x)
    want[0, :3] = softmax(x[:1, :3], -1)
    want[1] = softmax(x[1:], -1)
    check_op_forward('softmax', {'use_length': True}, [x, length], [want])
    check_op_backward('softmax', {'use_length': True}, [x, length], grad_nodes=['data'])
    spec = get_op('softmax')
    p = spec.params.parse('softmax', {'use_length': True, 'axis': 1})
    assert spec.arguments(p) == ['data', 'length']
    assert spec.infer_shape(p, [(2, 5, 3), None]) == ([(2, 5, 3), (2, 3)], [(2, 5, 3)], [])
    assert spec.infer_type(p, ['float32', 'int32']) == (['float32', 'int32'], ['float32'], [])


# ---------------------------------------------------------------- inference and errors
def test_inferred_shapes():
    assert infer('sum', {}, (2, 3)) == ([(2, 3)], [(1,)], [])
    assert infer('sum', {'keepdims': True}, (2, 3))[1] == [(1, 1)]
    assert infer('mean', {'axis': 0, 'exclude': True}, (2, 3, 4))[1] == [(2,)]
    assert infer('max', {}, None)[1] == [None]
    assert infer('argmax', {'axis': 1}, (2, 3, 4))[1] == [(2, 4)]
    assert infer('argmax_channel', {}, (5, 3))[1] == [(5,)]
    assert infer('topk', {'k': 2, 'ret_typ': 'value'}, (4, 5))[1] == [(4, 2), (4, 2)]
    assert infer('topk', {'ret_typ': 'mask'}, (4, 5))[1] == [(4, 5)]
    assert infer('sort', {'axis': None}, (4, 5))[1] == [(20,), (20,)]
    assert infer('softmax', {}, (2, 3)) == ([(2, 3)], [(2, 3)], [])


@pytest.mark.parametrize('op, params, shape, match', [
    ('sum', {'axis': 3}, (2, 3), r"sum: parameter 'axis'=3 is out of range for input shape "
                                 r"\(2, 3\) \(valid: -2 to 1\)"),
    ('mean', {'axis': (0, -2)}, (2, 3), r"mean: parameter 'axis'=\(0, -2\) repeats an axis"),
    ('max', {'axis': 1}, (2, 0), r"max: shape mismatch for argument 'data': expected "
                                 r"non-empty reduced axes, given \(2, 0\)"),
    ('argmax', {'axis': 0}, (0, 3), r"argmax: .*'data': expected a non-empty axis"),
    ('norm', {'axis': 2}, (2, 3), r"norm: parameter 'axis'=2"),
    ('softmax', {'axis': 2}, (2, 3), r"softmax: parameter 'axis'=2 is out of range"),
    ('topk', {'axis': -3}, (2, 3), r"topk: parameter 'axis'=-3"),
    ('topk', {'dtype': 'uint8'}, (2, 300), r"topk: parameter dtype=uint8 cannot represent "
                                           r"the indices 0..299 of input shape \(2, 300\)"),
    ('argsort', {'axis': None, 'dtype': 'float16'}, (50, 50), r"argsort: parameter dtype="),
])
def test_shape_errors(op, params, shape, match):
    with pytest.raises(ValueError, match=match):
        infer(op, params, shape)


def test_param_errors():
    from mxcy.operator._params import ParamError
    with pytest.raises(ParamError, match=r"norm: parameter 'ord' must be one of \[1, 2\]"):
        get_op('norm').params.parse('norm', {'ord': 3})
    with pytest.raises(ParamError, match=r"topk: parameter 'ret_typ' must be one of"):
        get_op('topk').params.parse('topk', {'ret_typ': 'values'})
    with pytest.raises(TypeError, match=r"softmax: argument 'data' must be float16/32/64"):
        spec = get_op('softmax')
        spec.infer_type(spec.params.parse('softmax', {}), ['int32'])


@pytest.mark.parametrize('op, params', [
    ('sort', {}), ('topk', {'k': 2, 'ret_typ': 'both'}), ('topk', {'ret_typ': 'mask'}),
    ('argsort', {'axis': 0}), ('argmax', {'axis': 1}),
])
def test_sort_family_req_add(op, params):
    want = run(op, params, [Y])
    base = [rand(*w.shape).astype(w.dtype) for w in want]
    got = run(op, params, [Y], 'add', [b.copy() for b in base])
    for g, b, w in zip(got, base, want):
        np.testing.assert_allclose(g, b + w, rtol=1e-6)


@pytest.mark.parametrize('op', ['sum', 'mean'])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('shape,axis,exclude', [
    ((6, 5), 1, False), ((6, 5), 0, False), ((2, 3, 4), (1, 2), False),
    ((2, 3, 4), (0, 1), False), ((7, 1), 0, True), ((3, 4), None, False),
    ((2, 3, 4), 1, False)])              # the last: a middle axis (the NumPy path)
def test_sum_mean_forward_and_accumulated_backward(op, dtype, shape, axis, exclude):
    """The GEMM paths (leading or trailing axes) and the NumPy path agree with NumPy,
    forward and backward, also when the gradient accumulates (grad_req='add')."""
    rng = np.random.default_rng(3)
    xn = rng.standard_normal(shape).astype(dtype)
    x = mx.nd.array(xn, dtype=dtype)
    x.attach_grad(grad_req='add')
    kwargs = {} if axis is None else {'axis': axis, 'exclude': exclude}
    for _ in range(2):
        with mx.autograd.record():
            y = getattr(mx.nd, op)(x, **kwargs)
        y.backward(mx.nd.array(np.arange(y.size).reshape(y.shape) + 1, dtype=dtype))
    axes = None if axis is None else tuple(
        a for a in range(len(shape)) if (a in np.atleast_1d(axis)) != exclude)
    want = getattr(np, op)(xn.astype(np.float64), axis=axes)
    np.testing.assert_allclose(y.asnumpy(), np.reshape(want, y.shape), rtol=1e-5, atol=1e-6)
    dy = (np.arange(y.size).reshape(np.shape(want) or (1,)) + 1).reshape(
        np.shape(np.sum(xn, axis=axes, keepdims=True)))
    n = xn.size // max(1, np.size(want))
    want_grad = 2 * np.broadcast_to(dy, shape) / (n if op == 'mean' else 1)
    np.testing.assert_allclose(x.grad.asnumpy(), want_grad, rtol=1e-6)
