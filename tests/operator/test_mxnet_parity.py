"""Registry behaviour taken over from the former hand-written mx.nd functions (checked
against MXNet 1.9.1 by their author): MXNet's rint, the NumPy-computed unary rows,
softmin, softmax's temperature/length checks, topk's k bound, empty reductions, pick's
axis, optional axes/step, same-shape elemwise errors and typed parameter errors."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.operator import get_op
from mxcy.operator._params import ParamError
from mxcy.test_utils import check_op_backward, check_op_forward

RNG = np.random.default_rng(7)


def test_rint_halves_down_and_round_halves_away():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.9, -1.2])
    check_op_forward('rint', {}, [x], [[-3, -2, -1, 0, 1, 2, 2, -1]])
    check_op_forward('round', {}, [x], [[-3, -2, -1, 1, 2, 3, 2, -1]])
    for dtype in ('float16', 'float32', 'int32'):
        a = mx.nd.array(x, dtype=dtype)
        want = np.where(x - np.floor(x) <= 0.5, np.floor(x), np.floor(x) + 1)
        if dtype == 'int32':
            want = a.asnumpy()              # integers are already whole
        np.testing.assert_array_equal(mx.nd.rint(a).asnumpy(), want.astype(dtype))


# name -> (NumPy reference, input range)
NUMPY_ROWS = {'arcsin': (np.arcsin, (-0.9, 0.9)), 'arccos': (np.arccos, (-0.9, 0.9)),
              'sinh': (np.sinh, (-2, 2)), 'cosh': (np.cosh, (-2, 2)),
              'arcsinh': (np.arcsinh, (-2, 2)), 'arccosh': (np.arccosh, (1.2, 3)),
              'arctanh': (np.arctanh, (-0.9, 0.9)), 'degrees': (np.degrees, (-3, 3)),
              'radians': (np.radians, (-90, 90))}


@pytest.mark.parametrize('name', sorted(NUMPY_ROWS))
def test_numpy_unary_rows_forward_backward(name):
    ref, (low, high) = NUMPY_ROWS[name]
    x = RNG.uniform(low, high, (3, 4))
    check_op_forward(name, {}, [x], [ref(x)])
    check_op_backward(name, {}, [x])
    spec = get_op(name)
    assert spec.infer_shape(spec.params.parse(name, {}), [(3, 4)]) == ([(3, 4)], [(3, 4)], [])


def test_numpy_unary_rows_keep_integer_dtypes_and_accumulate():
    got = mx.nd.degrees(mx.nd.array([1, 2], dtype='int32'))
    assert got.dtype == np.int32 and got.asnumpy().tolist() == [57, 114]   # truncated
    spec, x = get_op('sinh'), mx.nd.array([0.5, 1.0], dtype='float64')
    out = mx.nd.ones((2,), dtype='float64')
    spec.forward(spec.params.parse('sinh', {}), False, ['add'], [x], [out], [])
    np.testing.assert_allclose(out.asnumpy(), 1 + np.sinh([0.5, 1.0]))


def np_softmax(z, axis):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize('axis', [-1, 0])
@pytest.mark.parametrize('temperature', [None, 2.5])
def test_softmin_forward_backward(axis, temperature):
    x = RNG.uniform(-2, 2, (3, 4))
    params = {'axis': axis, 'temperature': temperature}
    check_op_forward('softmin', params, [x], [np_softmax(-x / (temperature or 1), axis)])
    check_op_backward('softmin', params, [x])
    got = mx.nd.softmin(mx.nd.array(x, dtype='float32'), axis=axis, dtype='float64')
    assert got.dtype == np.float64


def test_softmax_family_parameter_and_length_checks():
    a = mx.nd.ones((2, 4))
    for name in ('softmax', 'log_softmax', 'softmin'):
        with pytest.raises(ValueError, match=f"{name}: parameter 'temperature' must not be "
                                             "zero"):
            getattr(mx.nd, name)(a, temperature=0)
    for name in ('log_softmax', 'softmin'):
        with pytest.raises(ValueError, match=f"{name}: use_length=True is not supported"):
            getattr(mx.nd, name)(a, use_length=True)
    bad = mx.nd.softmax(a, use_length=True, length=mx.nd.array([1, 9], dtype='int32'))
    with pytest.raises(ValueError, match=r"softmax: length values must be in \[0, 4\]"):
        bad.asnumpy()


def test_topk_k_bound():
    x = mx.nd.array([[3, 1, 2], [1, 3, 3]])
    with pytest.raises(ValueError, match=r"topk: .*'data': expected at least k=4 elements "
                                         r"along axis -1, given \(2, 3\)"):
        mx.nd.topk(x, k=4)
    assert mx.nd.topk(x, k=3).shape == (2, 3)
    assert mx.nd.topk(x, k=0, axis=None).shape == (6,)        # k <= 0: all of them


def test_norm_accumulates_float16_in_float64():
    got = mx.nd.norm(mx.nd.array(np.full((100,), 300.0), dtype='float16'))
    assert got.dtype == np.float16 and got.asnumpy().tolist() == [3000.0]


def test_empty_reductions():
    with pytest.raises(ValueError, match=r"max: .*cannot reduce axis 0 of size 0"):
        mx.nd.max(mx.nd.zeros((0, 3)), axis=0)
    with pytest.raises(ValueError, match="min: .*cannot reduce axis 0 of size 0"):
        mx.nd.min(mx.nd.zeros((0, 3)))
    got = mx.nd.min(mx.nd.zeros((0, 3)), axis=(0, 1), exclude=True)   # reduces no axis
    assert got.shape == (0, 3)
    assert mx.nd.max(mx.nd.zeros((0, 3)), axis=1).shape == (0,)   # empty result, defined
    assert mx.nd.sum(mx.nd.zeros((0, 3))).asnumpy().tolist() == [0]


def test_optional_parameters_that_accept_none():
    x = np.arange(6.0).reshape(2, 3)
    check_op_forward('transpose', {'axes': None}, [x], [x.T])
    check_op_forward('slice', {'begin': (0, 1), 'end': (2, None), 'step': None}, [x],
                     [x[0:2, 1:]])
    with pytest.raises(ValueError, match=r"pick: parameter 'axis'=None \(picking from the "
                                         r"flattened input\) is not supported"):
        mx.nd.pick(mx.nd.array(x), mx.nd.array([0, 1]), axis=None)


def test_elemwise_rows_need_equal_shapes():
    spec = get_op('elemwise_add')
    with pytest.raises(ValueError, match=r"elemwise_add: shape mismatch for argument 'rhs': "
                                         r"expected "
                                         r"\(2, 1\), given \(1, 3\) \(lhs and rhs must have "
                                         r"the same shape"):
        spec.infer_shape(spec.params.parse('elemwise_add', {}), [(2, 1), (1, 3)])
    assert spec.infer_shape(spec.params.parse('elemwise_add', {}), [(2, 1), None]) == \
        ([(2, 1), (2, 1)], [(2, 1)], [])


def test_wrong_parameter_types_are_type_and_value_errors():
    with pytest.raises(TypeError, match="argmax: parameter 'axis' expects an integer"):
        get_op('argmax').params.parse('argmax', {'axis': (0, 1)})
    with pytest.raises(ParamError, match="clip: parameter 'a_max' expects a value, got None"):
        get_op('clip').params.parse('clip', {'a_min': 0, 'a_max': None})
    with pytest.raises(ValueError, match=r"norm: parameter 'ord' must be one of"):
        get_op('norm').params.parse('norm', {'ord': 3})
