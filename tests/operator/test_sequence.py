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
