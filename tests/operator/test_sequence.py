"""SequenceMask, SequenceLast, SequenceReverse (mxcy/operator/sequence.py): forward against
NumPy loops (MXNet semantics), backward against finite differences (float64), req='add',
shape inference and errors."""
import numpy as np
import pytest

from mxcy.ndarray.utils import array
from mxcy.operator import get_op
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(9)
X = RNG.standard_normal((4, 3, 2))           # (max_len, batch, feature)
LENS = np.array([2.0, 4.0, 1.0])


def ref_mask(x, lens, axis, value):
    out = x.copy()
    for b, n in enumerate(lens.astype(int)):
        if axis == 0:
            out[n:, b] = value
        else:
            out[b, n:] = value
    return out


def ref_last(x, lens, axis):
    xs = x if axis == 0 else np.swapaxes(x, 0, 1)
    return np.stack([xs[int(n) - 1, b] for b, n in enumerate(lens)])


def ref_reverse(x, lens):
    out = x.copy()
    for b, n in enumerate(lens.astype(int)):
        out[:n, b] = x[:n, b][::-1]
    return out


XT = np.swapaxes(X, 0, 1).copy()             # (batch, max_len, feature) for axis=1
FULL = np.full(3, 4.0)

CASES = [
    ('SequenceMask', {'use_sequence_length': True}, [X, LENS], ref_mask(X, LENS, 0, 0)),
    ('SequenceMask', {'use_sequence_length': True, 'value': -1.5, 'axis': 1}, [XT, LENS],
     ref_mask(XT, LENS, 1, -1.5)),
    ('SequenceMask', {}, [X], X),
    ('SequenceLast', {'use_sequence_length': True}, [X, LENS], ref_last(X, LENS, 0)),
    ('SequenceLast', {'use_sequence_length': True, 'axis': 1}, [XT, LENS],
     ref_last(XT, LENS, 1)),
    ('SequenceLast', {}, [X], X[-1]),
    ('SequenceReverse', {'use_sequence_length': True}, [X, LENS], ref_reverse(X, LENS)),
    ('SequenceReverse', {}, [X], X[::-1]),
]


def _id(case):
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize('case', CASES, ids=[_id(c) for c in CASES])
def test_forward_and_backward(case):
    op, params, inputs, want = case
    check_op_forward(op, params, inputs, [want])
    check_op_forward(op, params, [inputs[0].astype(np.float32)] + inputs[1:],
                     [want.astype(np.float32)])
    check_op_backward(op, params, inputs, grad_nodes=['data'])


def test_lengths_are_clamped_and_get_zero_gradient():
    lens = np.array([0.0, 9.0, 2.7])
    check_op_forward('SequenceMask', {'use_sequence_length': True}, [X, lens],
                     [ref_mask(X, np.array([0, 4, 2.]), 0, 0)])
    # an empty sequence's "last" step is its first (lengths clamp to [1, max_len])
    check_op_forward('SequenceLast', {'use_sequence_length': True}, [X, lens],
                     [ref_last(X, np.array([1, 4, 2.]), 0)])
    spec = get_op('SequenceMask')
    p = spec.params.parse('SequenceMask', {'use_sequence_length': True})
    g = [array(np.ones_like(X)), array(np.ones(3))]
    spec.backward(p, ['add', 'write'], [array(np.ones_like(X))], [array(X), array(lens)],
                  [None], g, [])
    np.testing.assert_array_equal(g[1].asnumpy(), 0)
    np.testing.assert_array_equal(g[0].asnumpy(), 1 + (ref_mask(np.ones_like(X), lens, 0, 0)))


def test_req_add():
    spec = get_op('SequenceReverse')
    p = spec.params.parse('SequenceReverse', {'use_sequence_length': True})
    base = RNG.standard_normal(X.shape)
    out = array(base)
    spec.forward(p, False, ['add'], [array(X), array(LENS)], [out], [])
    np.testing.assert_allclose(out.asnumpy(), base + ref_reverse(X, LENS))


def infer(op, params, *shapes):
    spec = get_op(op)
    return spec.infer_shape(spec.params.parse(op, params), list(shapes))


def test_inference():
    assert infer('SequenceMask', {'use_sequence_length': True}, (5, 3, 2), None) == \
        ([(5, 3, 2), (3,)], [(5, 3, 2)], [])
    assert infer('SequenceLast', {'use_sequence_length': True, 'axis': 1}, (3, 5, 2), None) \
        == ([(3, 5, 2), (3,)], [(3, 2)], [])
    spec = get_op('SequenceLast')
    p = spec.params.parse('SequenceLast', {'use_sequence_length': True})
    assert spec.arguments(p) == ['data', 'sequence_length']
    assert spec.infer_type(p, ['float32', 'int32']) == (['float32', 'int32'], ['float32'], [])
    assert spec.arguments(spec.params.parse('SequenceLast', {})) == ['data']


@pytest.mark.parametrize('op, params, shapes, match', [
    ('SequenceMask', {'use_sequence_length': True}, [(5, 3), (4,)],
     r"SequenceMask: shape mismatch for argument 'sequence_length': expected \(3,\), given "
     r"\(4,\)"),
    ('SequenceLast', {}, [(5,)], r"SequenceLast: .*'data': expected \(max_len, batch"),
    ('SequenceReverse', {'axis': 1}, [(5, 3)], r"SequenceReverse: parameter 'axis' must be "
                                               r"one of \[0\], got 1"),
    ('SequenceMask', {'axis': 2}, [(5, 3)], r"SequenceMask: parameter 'axis' must be one of"),
])
def test_errors(op, params, shapes, match):
    with pytest.raises(ValueError, match=match):
        infer(op, params, *shapes)


def run(op, params, inputs, req='write', start=None, backward=False):
    """Forward of one op on NDArrays, or (backward=True) a random head gradient and the
    data gradient; the array written holds `start` first."""
    spec = get_op(op)
    p = spec.params.parse(op, params)
    ins = [array(x, dtype=x.dtype) for x in inputs]
    _, shapes, _ = spec.infer_shape(p, [x.shape for x in inputs])
    dt = inputs[0].dtype
    if not backward:
        first = np.zeros(shapes[0]) if start is None else start
        out = array(first.astype(dt), dtype=dt)
        spec.forward(p, False, [req], ins, [out], [])
        return out.asnumpy()
    dy = RNG2.standard_normal(shapes[0]).astype(dt)
    grads = [array((np.zeros(x.shape) if start is None else start).astype(x.dtype),
                   dtype=x.dtype) for x in inputs]
    spec.backward(p, [req, 'write'][:len(inputs)], [array(dy, dtype=dt)], ins, [None],
                  grads, [])
    return dy, grads[0].asnumpy()


# lengths 0 and full, an odd size, int and float16 length dtypes, a NaN length (-> 0),
# big enough (2 MB) to be split between workers
RNG2 = np.random.default_rng(10)
BIG = RNG2.standard_normal((33, 67, 129)).astype(np.float32)
BIG_LENS = RNG2.integers(0, 34, 67).astype(np.float32)
BIG_LENS[:3] = [0, 33, 40]


@pytest.mark.parametrize('axis', [0, 1])
@pytest.mark.parametrize('lens_dtype', [np.float32, np.float64, np.int32, np.int64,
                                        np.uint8, np.float16])
def test_big_batches_every_length_dtype(axis, lens_dtype):
    x = BIG if axis == 0 else np.ascontiguousarray(np.swapaxes(BIG, 0, 1))
    lens = BIG_LENS.astype(lens_dtype)
    clamped = np.clip(BIG_LENS, 0, 33)
    p = {'use_sequence_length': True, 'axis': axis}
    np.testing.assert_array_equal(run('SequenceMask', dict(p, value=-2.5), [x, lens]),
                                  ref_mask(x, clamped, axis, -2.5))
    np.testing.assert_array_equal(run('SequenceLast', p, [x, lens]),
                                  ref_last(x, np.maximum(clamped, 1), axis))
    if axis == 0:
        np.testing.assert_array_equal(run('SequenceReverse', p, [x, lens]),
                                      ref_reverse(x, clamped))


def test_nan_and_negative_lengths_count_as_the_lowest():
    lens = np.array([np.nan, -3.0, 2.9])
    np.testing.assert_array_equal(run('SequenceMask', {'use_sequence_length': True},
                                      [X, lens]), ref_mask(X, np.array([0, 0, 2]), 0, 0))
    np.testing.assert_array_equal(run('SequenceLast', {'use_sequence_length': True},
                                      [X, lens]), ref_last(X, np.array([1, 1, 2]), 0))


@pytest.mark.parametrize('dtype', [np.float16, np.int32, np.uint8])
def test_other_data_dtypes(dtype):
    x = (X * 10).astype(dtype)
    p = {'use_sequence_length': True}
    np.testing.assert_array_equal(run('SequenceMask', dict(p, value=3), [x, LENS]),
                                  ref_mask(x, LENS, 0, 3))
    np.testing.assert_array_equal(run('SequenceReverse', p, [x, LENS]), ref_reverse(x, LENS))
    np.testing.assert_array_equal(run('SequenceLast', p, [x, LENS]), ref_last(x, LENS, 0))
    got = run('SequenceReverse', p, [x, LENS], 'add', np.ones(x.shape))      # req 'add'
    np.testing.assert_array_equal(got, ref_reverse(x, LENS) + np.ones(1, dtype))


@pytest.mark.parametrize('axis', [0, 1])
@pytest.mark.parametrize('req', ['write', 'add'])
def test_gradients_write_and_add(axis, req):
    x = X if axis == 0 else XT
    lens = np.array([0.0, 4.0, 3.0])
    start = RNG2.standard_normal(x.shape) if req == 'add' else np.full(x.shape, np.nan)
    base = start if req == 'add' else 0
    p = {'use_sequence_length': True, 'axis': axis}
    dy, g = run('SequenceMask', p, [x, lens], req, start, backward=True)
    np.testing.assert_allclose(g, base + ref_mask(dy, lens, axis, 0))
    dy, g = run('SequenceLast', p, [x, lens], req, start, backward=True)
    want = np.zeros_like(x)
    for b, n in enumerate(np.maximum(lens, 1).astype(int)):
        want[(n - 1, b) if axis == 0 else (b, n - 1)] = dy[b]
    np.testing.assert_allclose(g, base + want)
    if axis == 0:
        dy, g = run('SequenceReverse', p, [x, lens], req, start, backward=True)
        np.testing.assert_allclose(g, base + ref_reverse(dy, lens))


def test_mask_in_place_and_plain_ops():
    x = array(X)                        # float32
    spec = get_op('SequenceMask')
    p = spec.params.parse('SequenceMask', {'use_sequence_length': True, 'value': 9.0})
    spec.forward(p, False, ['inplace'], [x, array(LENS)], [x], [])
    np.testing.assert_array_equal(x.asnumpy(), ref_mask(X.astype(np.float32), LENS, 0, 9.0))
    np.testing.assert_array_equal(run('SequenceReverse', {}, [BIG]), BIG[::-1])
    np.testing.assert_array_equal(run('SequenceLast', {'axis': 1}, [BIG]), BIG[:, -1])


def test_last_needs_a_step():
    with pytest.raises(ValueError, match=r"SequenceLast: .*'data': expected at least one "
                                         r"step on axis 0"):
        infer('SequenceLast', {}, (0, 3, 2))
