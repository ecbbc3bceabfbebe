"""_zeros / _ones / _full (no inputs) and _full_batch_like: values, dtypes, inferred
shapes, req='add', no gradient, and clear errors for unknown (0) dimensions."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError
from mxcy.operator import get_op
from mxcy.test_utils import _run_forward, check_op_forward


@pytest.mark.parametrize('name,params,value', [
    ('_zeros', {'shape': (2, 3)}, 0.0),
    ('_ones', {'shape': (4,), 'dtype': 'float64'}, 1.0),
    ('_full', {'shape': '(2, 2)', 'value': 2.5, 'dtype': 'int32'}, 2),
])
def test_fills_have_shape_dtype_and_value(name, params, value):
    spec = get_op(name)
    p = spec.params.parse(name, params)
    shape = spec.infer_shape(p, [])[1][0]
    dtype = spec.infer_type(p, [])[1][0]
    out = check_op_forward(name, params, [], [np.full(shape, value, dtype)])[0]
    assert out.dtype == np.dtype(dtype) == np.dtype(params.get('dtype', 'float32'))
    # req='add' adds the fill onto what the output held
    held = mx.nd.array(np.arange(np.prod(shape)).reshape(shape), dtype=dtype)
    outs, _, _ = _run_forward(spec, p, [], [], req='add', outs=[held])
    np.testing.assert_array_equal(outs[0].asnumpy(),
                                  np.arange(np.prod(shape)).reshape(shape) + value)


def test_symbol_zeros_and_ones_bind_without_inputs():
    net = mx.sym.zeros(shape=(2, 3)) + mx.sym.ones(shape=(2, 3)) * 3
    assert net.list_arguments() == []
    assert net.infer_shape() == ([], [(2, 3)], [])
    np.testing.assert_array_equal(net.eval()[0].asnumpy(), np.full((2, 3), 3.0))
    x = mx.sym.Variable('x')
    exe = (x * mx.sym.ones(shape=(3,))).simple_bind(mx.cpu(), x=(3,))
    exe.arg_dict['x'][:] = np.array([1.0, 2.0, 3.0])
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((3,)))
    np.testing.assert_array_equal(exe.grad_dict['x'].asnumpy(), np.ones(3))


def test_unknown_dimension_is_an_error_naming_the_node():
    with pytest.raises(MXNetError, match=r"node 'init'.*_zeros.*'shape'.*\(0, 4\)"):
        (mx.sym.zeros(shape=(0, 4), name='init') + mx.sym.Variable('x')).infer_shape(x=(2, 4))
    with pytest.raises(ValueError, match="_ones: parameter 'shape' must be given"):
        get_op('_ones').infer_shape(get_op('_ones').params.parse('_ones', {}), [])


def test_full_batch_like_takes_the_batch_size_from_data():
    data = np.zeros((5, 2, 7), np.float64)
    out = check_op_forward('_full_batch_like', {'shape': (3, 0, 4), 'axis': 1, 'value': 1.5},
                           [data], [np.full((3, 2, 4), 1.5)])[0]
    assert out.dtype == np.float64                          # data's dtype by default
    spec = get_op('_full_batch_like')
    p = spec.params.parse('_full_batch_like', {'shape': (0, 4), 'dtype': 'float32'})
    assert spec.infer_type(p, ['float64'])[1] == ['float32']
    assert spec.infer_shape(p, [None])[1] == [None]         # not yet known
    assert spec.has_backward is False
    bad = spec.params.parse('_full_batch_like', {'shape': (0, 4), 'axis': 3})
    with pytest.raises(ValueError, match=r"_full_batch_like: shape mismatch for argument "
                                         r"'data'.*axis=3"):
        spec.infer_shape(bad, [(2, 3)])
