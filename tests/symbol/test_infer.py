"""infer_shape / infer_shape_partial / infer_type: forward and backward inference, and
errors that name the user's node, the argument, both shapes and the given inputs."""
import numpy as np
import pytest

import mxcy as mx


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.name.NameManager():
        yield


def two_layer(num_hidden=10):
    data = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data, num_hidden=num_hidden, name='fc1')
    act = mx.sym.Activation(fc1, act_type='relu', name='relu1')
    return mx.sym.FullyConnected(act, num_hidden=3, name='fc2')


def test_guide_fully_connected_example():
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data=data, num_hidden=10)
    arg_shapes, out_shapes, aux_shapes = net.infer_shape(data=(10, 64))
    assert arg_shapes == [(10, 64), (10, 64), (10,)]
    assert out_shapes == [(10, 10)]
    assert aux_shapes == []
    assert all(isinstance(s, tuple) for s in arg_shapes + out_shapes)
    # the same from the partial variant when everything is known
    assert net.infer_shape_partial(data=(10, 64)) == (arg_shapes, out_shapes, aux_shapes)


def test_multi_layer_and_group_outputs():
    net = two_layer()
    arg_shapes, out_shapes, _ = net.infer_shape(data=(4, 7))
    assert dict(zip(net.list_arguments(), arg_shapes)) == {
        'data': (4, 7), 'fc1_weight': (10, 7), 'fc1_bias': (10,), 'fc2_weight': (3, 10),
        'fc2_bias': (3,)}
    assert out_shapes == [(4, 3)]
    internals = net.get_internals()
    _, outs, _ = internals.infer_shape(data=(4, 7))
    assert dict(zip(internals.list_outputs(), outs))['relu1_output'] == (4, 10)
    # a 4-d input is flattened by FullyConnected
    _, outs, _ = net.infer_shape(data=(2, 3, 4, 5))
    assert outs == [(2, 3)] and net.infer_shape(data=(2, 3, 4, 5))[0][1] == (10, 60)


def test_backward_inference_from_outputs_and_weights():
    # elementwise ops infer an operand from the other one, in either direction
    a, b = mx.sym.var('a'), mx.sym.var('b')
    arg_shapes, out_shapes, _ = (a * b).infer_shape(b=(2, 3))
    assert arg_shapes == [(2, 3), (2, 3)] and out_shapes == [(2, 3)]
    # the output of a layer fixes a variable added to it downstream
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=5, name='fc')
    bias2 = mx.sym.var('bias2')
    net = fc + bias2
    arg_shapes, out_shapes, _ = net.infer_shape(data=(8, 3))
    assert dict(zip(net.list_arguments(), arg_shapes))['bias2'] == (8, 5)
    # only the weight is known: as in MXNet, the bias and the data stay unknown (a
    # layer's bias is inferred with its data)
    fc1 = two_layer()
    arg_shapes, out_shapes, _ = fc1.infer_shape_partial(fc1_weight=(10, 64))
    shapes = dict(zip(fc1.list_arguments(), arg_shapes))
    assert shapes['fc1_weight'] == (10, 64) and shapes['fc1_bias'] == ()
    assert shapes['data'] == () and out_shapes == [()]
    assert shapes['fc2_bias'] == ()
    # an output known downstream gives the input of a unary op (MXNet's ElemwiseShape)
    d, f = mx.sym.var('d'), mx.sym.var('f')
    assert (mx.sym.exp(d) + f).infer_shape(f=(2,))[0] == [(2,), (2,)]
    # data with an unknown batch (0): the features are known, the batch is not
    arg_shapes, out_shapes, _ = fc1.infer_shape_partial(data=(0, 64))
    assert dict(zip(fc1.list_arguments(), arg_shapes))['fc2_weight'] == (3, 10)
    assert out_shapes == [(0, 3)]
    with pytest.warns(UserWarning, match=r"(?s)Cannot decide shape.*\tdata: \(0, 64\)"):
        assert fc1.infer_shape(data=(0, 64)) == (None, None, None)
    # unknown dimensions (0) from two sides merge, as MXNet's shape_assign does
    a, b = mx.sym.var('a'), mx.sym.var('b')
    assert (a + b).infer_shape(a=(2, 0), b=(0, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])


def test_variable_shape_attribute_is_used():
    x = mx.sym.var('x', shape=(2, 5))
    net = mx.sym.FullyConnected(x, num_hidden=4, name='fc')
    arg_shapes, out_shapes, _ = net.infer_shape()
    assert arg_shapes == [(2, 5), (4, 5), (4,)] and out_shapes == [(2, 4)]
    # a given shape overrides the attribute
    assert net.infer_shape(x=(3, 5))[1] == [(3, 4)]
    # a partly unknown attribute shape is partly known (0 = unknown dimension)
    y = mx.sym.var('y', shape=(0, 5))
    assert mx.sym.FullyConnected(y, num_hidden=4).infer_shape_partial() == \
        ([(0, 5), (4, 5), (4,)], [(0, 4)], [])


def test_incomplete_inference_warns_and_returns_none_as_mxnet():
    net = two_layer()
    with pytest.warns(UserWarning) as caught:
        assert net.infer_shape(fc1_weight=(10, 64)) == (None, None, None)
    assert str(caught[0].message) == (
        "Cannot decide shape for the following arguments (0s in shape means unknown "
        "dimensions). Consider providing them as input:\n\tdata: ()\n\tfc1_bias: ()\n"
        "\tfc2_weight: ()\n\tfc2_bias: ()")
    # each argument is named once (a variable that is also the output included)
    x = mx.sym.var('x')
    with pytest.warns(UserWarning) as caught:
        assert x.infer_shape(x=(2, 0)) == (None, None, None)
    assert str(caught[0].message).endswith("input:\n\tx: (2, 0)")
    # bind and Module need every shape: there it is an error naming what is undecided
    with pytest.raises(mx.MXNetError, match=r"could not infer.*data=\(\).*fc1_bias=\(\)"):
        net._infer_shape_strict(fc1_weight=(10, 64))
    with pytest.raises(mx.MXNetError, match=r"could not infer.*x=\(2, 0\) from"):
        x._infer_shape_strict(x=(2, 0))
    with pytest.raises(mx.MXNetError, match='could not infer'):
        net.simple_bind(mx.cpu(), fc1_weight=(10, 64))


def test_bad_arguments_raise_type_and_value_errors():
    net = two_layer()
    with pytest.raises(TypeError, match='by argument name'):
        net.infer_shape((10,))
    with pytest.raises(TypeError, match='by argument name'):
        net.infer_shape((10))        # noqa: UP034  (the int 10: mx#6893 returned None)
    with pytest.raises(TypeError, match="shape of 'data' must be a tuple of ints, got int"):
        net.infer_shape(data=10)
    with pytest.raises(TypeError, match="shape of 'data' must contain ints"):
        net.infer_shape(data=(10, 2.5))
    with pytest.raises(TypeError, match="shape of 'data' must contain ints"):
        net.infer_shape(data=(10, True))
    with pytest.raises(ValueError, match='negative'):
        net.infer_shape(data=(10, -1))
    with pytest.raises(ValueError, match="'dta' is not an input.*'data'"):
        net.infer_shape(dta=(10, 64))
    with pytest.raises(TypeError, match='by argument name'):
        net.infer_shape_partial((10, 64))
    with pytest.raises(TypeError, match='by argument name'):
        net.infer_type('float32')
    # NumPy integers are accepted as dimensions
    assert net.infer_shape(data=(np.int64(4), np.int32(7)))[1] == [(4, 3)]
    assert net.infer_shape(data=[4, 7])[1] == [(4, 3)]


def test_shape_conflict_names_node_argument_shapes_and_inputs():
    net = two_layer()
    with pytest.raises(mx.MXNetError) as info:
        net.infer_shape(data=(4, 7), fc2_weight=(3, 11))
    msg = str(info.value)
    for part in ("node 'fc2'", 'FullyConnected', "'weight'", 'expected (3, 10)',
                 'given (3, 11)', 'relu1_output=(4, 10)', "'fc2_weight': (3, 11)"):
        assert part in msg, (part, msg)
    a, b = mx.sym.var('a'), mx.sym.var('b')
    diff = a - b
    with pytest.raises(mx.MXNetError) as info:
        diff.infer_shape(a=(128, 5), b=(5,))
    msg = str(info.value)
    assert "node '_minus0'" in msg and 'a=(128, 5)' in msg and 'b=(5,)' in msg
    # the label of a loss layer: the error says which shape was expected
    sm = mx.sym.SoftmaxOutput(net, name='softmax')
    with pytest.raises(mx.MXNetError, match=r"'label'.*expected \(4,\).*given \(4, 3\)"):
        sm.infer_shape(data=(4, 7), softmax_label=(4, 3))
    # a conflict found by partial inference is an error too (never silently skipped)
    with pytest.raises(mx.MXNetError, match="node 'fc2'"):
        net.infer_shape_partial(data=(4, 7), fc2_weight=(3, 11))


def test_infer_type():
    net = two_layer()
    arg_types, out_types, aux_types = net.infer_type(data='float64')
    assert arg_types == [np.float64] * 5 and out_types == [np.float64] and aux_types == []
    assert net.infer_type(data=np.float32)[1] == [np.float32]
    # the variable's dtype attribute is used
    x = mx.sym.var('x', dtype='float64')
    assert (x * 2).infer_type() == ([np.float64], [np.float64], [])
    # a conflict names the node, the argument and both dtypes
    with pytest.raises(mx.MXNetError) as info:
        net.infer_type(data='float64', fc1_weight='float32')
    msg = str(info.value)
    assert "node 'fc1'" in msg and "'weight'" in msg and 'float32' in msg and 'float64' in msg
    # nothing known: MXNet's warning naming the unknowns and (None, None, None), or None
    # entries from the partial call
    with pytest.warns(UserWarning, match=r"Cannot decide type .*\n\tdata: None\n"):
        assert net.infer_type() == (None, None, None)
    with pytest.raises(mx.MXNetError, match=r"could not infer the dtypes of data=None"):
        net._infer_type_strict()
    assert net.infer_type_partial() == ([None] * 5, [None], [])
    with pytest.raises(ValueError, match="'dta' is not an input"):
        net.infer_type(dta='float32')


def test_shape_and_type_of_convolution_net():
    data = mx.sym.var('data')
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name='conv')
    pool = mx.sym.Pooling(conv, kernel=(2, 2), stride=(2, 2), pool_type='max', name='pool')
    fc = mx.sym.FullyConnected(pool, num_hidden=2, name='fc')
    arg_shapes, out_shapes, _ = fc.infer_shape(data=(5, 3, 8, 8))
    assert dict(zip(fc.list_arguments(), arg_shapes)) == {
        'data': (5, 3, 8, 8), 'conv_weight': (4, 3, 3, 3), 'conv_bias': (4,),
        'fc_weight': (2, 64), 'fc_bias': (2,)}
    assert out_shapes == [(5, 2)]
    with pytest.raises(mx.MXNetError, match="node 'conv'"):
        fc.infer_shape(data=(5, 3, 8, 8), conv_weight=(4, 2, 3, 3))


def test_two_variables_with_one_name_are_both_inferred():
    """Two distinct Variable('x') nodes are two arguments named 'x' (list_arguments lists
    both); a shape or dtype given for 'x' applies to each. Numbers from MXNet 1.9.1."""
    s = mx.sym.Variable('x') * 2 + mx.sym.Variable('x')
    assert s.list_arguments() == ['x', 'x'] and s.list_inputs() == ['x', 'x']
    assert s.infer_shape(x=(2,)) == ([(2,), (2,)], [(2,)], [])
    assert s.infer_shape_partial(x=(2,)) == ([(2,), (2,)], [(2,)], [])
    assert s.infer_shape_partial() == ([(), ()], [()], [])
    assert s.infer_type(x='float64') == ([np.float64, np.float64], [np.float64], [])
    assert s.infer_type_partial() == ([None, None], [None], [])
    # not tied by any operator: the given shape still reaches both
    g = mx.sym.Group([mx.sym.Variable('x'), mx.sym.Variable('x') * 2])
    assert g.infer_shape_partial(x=(2,)) == ([(2,), (2,)], [(2,), (2,)], [])
    assert g.infer_type_partial(x='float16') == (
        [np.float16, np.float16], [np.float16, np.float16], [])
    # a shape= attribute belongs to its own node only
    g = mx.sym.Group([mx.sym.Variable('x', shape=(3,)), mx.sym.Variable('x') * 2])
    assert g.infer_shape_partial() == ([(3,), ()], [(3,), ()], [])
    g = mx.sym.Group([mx.sym.Variable('x', dtype='float16'), mx.sym.Variable('x') * 2])
    assert g.infer_type_partial() == ([np.float16, None], [np.float16, None], [])
    fc = mx.sym.FullyConnected(mx.sym.Variable('x'), num_hidden=3, name='fc')
    s = fc + mx.sym.Variable('x')
    assert s.list_arguments() == ['x', 'fc_weight', 'fc_bias', 'x']
    assert s.infer_shape(x=(3, 3)) == ([(3, 3), (3, 3), (3,), (3, 3)], [(3, 3)], [])


def test_type_conflicts_are_mxnet_errors_and_type_errors():
    from mxcy.operator import get_op
    spec = get_op('elemwise_add')
    p = spec.params.parse('elemwise_add', {})
    with pytest.raises(mx.MXNetError) as info:
        spec.infer_type(p, ['float32', 'float64'])
    assert isinstance(info.value, TypeError)
    assert "'rhs' has dtype float64, expected float32" in str(info.value)
    # at symbol level: the node, the argument and both dtypes, once
    a, b = mx.sym.var('a'), mx.sym.var('b')
    with pytest.raises(mx.MXNetError, match=r"node '_plus\d+'.*'rhs' has dtype float32"):
        (a + b).infer_type(a='float16', b='float32')
