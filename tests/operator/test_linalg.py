"""dot and batch_dot (mxcy/operator/linalg.py): MXNet's flattening semantics, BLAS for
float32/float64 and NumPy for other dtypes, backward against finite differences in
float64 for every transpose combination, req='add', shape inference and its errors."""
import numpy as np
import pytest

from mxcy.ndarray.utils import array
from mxcy.operator import get_op
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(5)


def rand(*shape):
    return RNG.standard_normal(shape)


def mx_dot(a, b, ta=False, tb=False):
    """NumPy transcription of MXNet's dot: flatten to matrices, multiply, unflatten."""
    if a.ndim == 1 and b.ndim == 1:
        return np.array([a @ b])
    am = a.reshape(a.shape[0], -1).T if ta else a.reshape(-1, a.shape[-1])
    bm = b.reshape(-1, b.shape[-1]).T if tb else b.reshape(b.shape[0], -1)
    rest = (a.shape[1:] if ta else a.shape[:-1]) + (b.shape[:-1] if tb else b.shape[1:])
    return (am @ bm).reshape(rest or (1,))


def mx_batch_dot(a, b, ta=False, tb=False):
    a = np.swapaxes(a, -1, -2) if ta else a
    b = np.swapaxes(b, -1, -2) if tb else b
    return np.matmul(a, b)


DOT_CASES = [
    ((3, 4), (4, 5), False, False),
    ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True),
    ((4, 3), (5, 4), True, True),
    ((2, 3, 4), (4, 5), False, False),        # lhs flattened to (6, 4)
    ((2, 3, 4), (4, 2, 3), False, False),     # -> (2, 3, 2, 3)
    ((4, 2, 3), (4, 5), True, False),         # lhs read as (4, 6) transposed
    ((2, 3), (5, 2, 3), False, True),         # rhs read as (10, 3) transposed
    ((4,), (4,), False, False),               # vector . vector -> (1,)
    ((4,), (4, 3), False, False),
    ((3, 4), (4,), False, False),
    ((4,), (3, 4), False, True),
]


@pytest.mark.parametrize('ls, rs, ta, tb', DOT_CASES)
def test_dot(ls, rs, ta, tb):
    a, b = rand(*ls), rand(*rs)
    params = {'transpose_a': ta, 'transpose_b': tb}
    want = mx_dot(a, b, ta, tb)
    check_op_forward('dot', params, [a, b], [want])
    check_op_forward('dot', params, [a.astype(np.float32), b.astype(np.float32)],
                     [want.astype(np.float32)], rtol=1e-5, atol=1e-5)
    check_op_backward('dot', params, [a, b])


BATCH_CASES = [
    ((2, 3, 4), (2, 4, 5), False, False),
    ((2, 4, 3), (2, 4, 5), True, False),
    ((2, 3, 4), (2, 5, 4), False, True),
    ((2, 4, 3), (2, 5, 4), True, True),
    ((2, 2, 3, 4), (2, 2, 4, 1), False, False),    # N-D batch dims
]


@pytest.mark.parametrize('ls, rs, ta, tb', BATCH_CASES)
def test_batch_dot(ls, rs, ta, tb):
    a, b = rand(*ls), rand(*rs)
    params = {'transpose_a': ta, 'transpose_b': tb}
    want = mx_batch_dot(a, b, ta, tb)
    check_op_forward('batch_dot', params, [a, b], [want])
    check_op_forward('batch_dot', params, [a.astype(np.float32), b.astype(np.float32)],
                     [want.astype(np.float32)], rtol=1e-5, atol=1e-5)
    check_op_backward('batch_dot', params, [a, b])


def test_other_dtypes_use_numpy():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = np.arange(8, dtype=np.int32).reshape(4, 2) - 3
    check_op_forward('dot', {}, [a, b], [a @ b])
    check_op_forward('batch_dot', {'transpose_b': True}, [a[None], b.T.copy()[None]],
                     [(a @ b)[None]])
    a16, b16 = rand(3, 4).astype(np.float16), rand(4, 2).astype(np.float16)
    want = (a16.astype(np.float32) @ b16.astype(np.float32)).astype(np.float16)
    check_op_forward('dot', {}, [a16, b16], [want], rtol=1e-2, atol=1e-2)


def test_req_add_forward_and_null_gradient():
    spec = get_op('dot')
    p = spec.params.parse('dot', {})
    a, b, base = rand(3, 4), rand(4, 2), rand(3, 2)
    f64 = lambda v: array(v, dtype=np.float64)  # noqa: E731
    out = f64(base)
    spec.forward(p, False, ['add'], [f64(a), f64(b)], [out], [])
    np.testing.assert_allclose(out.asnumpy(), base + a @ b)
    # req 'null' for lhs: only rhs's gradient is written
    db = f64(np.zeros((4, 2)))
    spec.backward(p, ['null', 'write'], [f64(np.ones((3, 2)))], [f64(a), f64(b)],
                  [out], [None, db], [])
    np.testing.assert_allclose(db.asnumpy(), a.T @ np.ones((3, 2)))
    assert spec.backward_needs == ('out_grads', 'inputs')


def test_empty_contraction_gives_zeros():
    spec = get_op('dot')
    p = spec.params.parse('dot', {})
    out = array(np.full((2, 3), 5.0, np.float32))
    spec.forward(p, False, ['write'], [array(np.zeros((2, 0), np.float32)),
                                       array(np.zeros((0, 3), np.float32))], [out], [])
    np.testing.assert_array_equal(out.asnumpy(), 0)


def infer(op, params, *shapes):
    spec = get_op(op)
    return spec.infer_shape(spec.params.parse(op, params), list(shapes))


def test_inferred_shapes():
    assert infer('dot', {}, (2, 3, 4), (4, 5, 6)) == ([(2, 3, 4), (4, 5, 6)], [(2, 3, 5, 6)],
                                                      [])
    assert infer('dot', {'transpose_a': True}, (4, 2, 3), (4,))[1] == [(2, 3)]
    assert infer('dot', {}, None, (4, 5))[1] == [None]
    assert infer('batch_dot', {'transpose_a': True}, (7, 4, 3), (7, 4, 5))[1] == [(7, 3, 5)]


@pytest.mark.parametrize('op, params, shapes, match', [
    ('dot', {}, [(3, 4), (5, 6)],
     r"dot: shape mismatch for argument 'rhs': expected 4 on the contracted axis \(lhs "
     r"\(3, 4\), transpose_a=False, transpose_b=False\), given \(5, 6\)"),
    ('dot', {'transpose_a': True}, [(3,), (3,)], r"dot: .*vectors cannot be transposed"),
    ('dot', {}, [(), (3,)], r"dot: .*'lhs': expected at least 1 dimension"),
    ('batch_dot', {}, [(2, 3), (2, 3, 4)],
     r"batch_dot: shape mismatch for argument 'lhs': expected N-D arrays with the same "
     r"N >= 3"),
    ('batch_dot', {}, [(2, 3, 4), (3, 4, 5)],
     r"batch_dot: .*'rhs': expected batch dimensions \(2,\)"),
    ('batch_dot', {'transpose_b': True}, [(2, 3, 4), (2, 4, 5)],
     r"batch_dot: .*'rhs': expected 4 on the contracted axis.*transpose_b=True"),
])
def test_shape_errors(op, params, shapes, match):
    with pytest.raises(ValueError, match=match):
        infer(op, params, *shapes)
