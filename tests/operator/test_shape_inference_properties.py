"""Property-based tests (hypothesis) of shape inference: for random shapes and parameters,
the shape an operator infers is the shape its forward actually produces, symbol-level
inference agrees with the operator's, and weight shapes inferred from the data fit."""
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import mxcy as mx
from mxcy.operator import get_op

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def run_forward(op_name, params, shapes, rng=np.random.default_rng(0)):
    spec = get_op(op_name)
    p = spec.params.parse(op_name, params)
    _, out_shapes, aux_shapes = spec.infer_shape(p, list(shapes))
    ins = [mx.nd.array(rng.standard_normal(s)) for s in shapes]
    aux = [mx.nd.zeros(s) for s in aux_shapes]
    outs = [mx.nd.empty(s) for s in out_shapes]
    spec.forward(p, False, ['write'] * len(outs), ins, outs, aux)
    return out_shapes, outs


dims = st.integers(1, 5)


@SETTINGS
@given(batch=dims, features=st.lists(dims, min_size=1, max_size=3),
       hidden=st.integers(1, 7), no_bias=st.booleans(), flatten=st.booleans())
def test_fully_connected_infers_weights_and_output(batch, features, hidden, no_bias,
                                                   flatten):
    dshape = (batch, *features)
    data = mx.sym.Variable('data')
    fc = mx.sym.FullyConnected(data, num_hidden=hidden, no_bias=no_bias, flatten=flatten,
                               name='fc')
    arg_shapes, out_shapes, _ = fc.infer_shape(data=dshape)
    shapes = dict(zip(fc.list_arguments(), arg_shapes))
    k = int(np.prod(features)) if flatten else features[-1]
    assert shapes['fc_weight'] == (hidden, k)
    assert ('fc_bias' in shapes) == (not no_bias)
    inputs = [shapes[n] for n in fc.list_arguments()]
    inferred, outs = run_forward('FullyConnected', dict(num_hidden=hidden, no_bias=no_bias,
                                                        flatten=flatten), inputs)
    assert outs[0].shape == tuple(inferred[0]) == tuple(out_shapes[0])


@SETTINGS
@given(n=st.integers(1, 2), c=st.integers(1, 3), h=st.integers(3, 9), w=st.integers(3, 9),
       k=st.integers(1, 3), stride=st.integers(1, 3), pad=st.integers(0, 1),
       dilate=st.integers(1, 2), filters=st.integers(1, 4))
def test_convolution_output_shape_matches_forward(n, c, h, w, k, stride, pad, dilate,
                                                  filters):
    if dilate * (k - 1) + 1 > min(h, w) + 2 * pad:
        return
    params = dict(kernel=(k, k), stride=(stride, stride), pad=(pad, pad),
                  dilate=(dilate, dilate), num_filter=filters)
    sym = mx.sym.Convolution(mx.sym.Variable('data'), name='conv', **params)
    arg_shapes, out_shapes, _ = sym.infer_shape(data=(n, c, h, w))
    inferred, outs = run_forward('Convolution', params, arg_shapes)
    assert outs[0].shape == tuple(inferred[0]) == tuple(out_shapes[0])
    expect = ((h + 2 * pad - dilate * (k - 1) - 1) // stride + 1,
              (w + 2 * pad - dilate * (k - 1) - 1) // stride + 1)
    assert out_shapes[0] == (n, filters) + expect


@SETTINGS
@given(h=st.integers(2, 9), w=st.integers(2, 9), k=st.integers(1, 3),
       stride=st.integers(1, 3), pool_type=st.sampled_from(['max', 'avg', 'sum']),
       convention=st.sampled_from(['valid', 'full']))
def test_pooling_output_shape_matches_forward(h, w, k, stride, pool_type, convention):
    if k > min(h, w):
        return
    params = dict(kernel=(k, k), stride=(stride, stride), pool_type=pool_type,
                  pooling_convention=convention)
    inferred, outs = run_forward('Pooling', params, [(1, 2, h, w)])
    assert outs[0].shape == tuple(inferred[0])


@SETTINGS
@given(a=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_broadcast_inference_is_numpy_broadcasting(a, data):
    b = [data.draw(st.sampled_from([d, 1])) for d in a[data.draw(st.integers(0, len(a) - 1)):]]
    inferred, outs = run_forward('broadcast_add', {}, [tuple(a), tuple(b)])
    assert outs[0].shape == tuple(inferred[0]) == np.broadcast_shapes(tuple(a), tuple(b))


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4), data=st.data())
def test_reshape_special_values_keep_the_size(shape, data):
    target = [data.draw(st.sampled_from([0, d])) for d in shape[:-1]] + [-1]
    inferred, outs = run_forward('Reshape', dict(shape=tuple(target)), [tuple(shape)])
    assert outs[0].shape == tuple(inferred[0])
    assert int(np.prod(inferred[0])) == int(np.prod(shape))


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), count=st.integers(1, 3),
       data=st.data())
def test_concat_sums_the_axis(shape, count, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    shapes = []
    for _ in range(count):
        s = list(shape)
        s[axis] = data.draw(st.integers(1, 3))
        shapes.append(tuple(s))
    inferred, outs = run_forward('Concat', dict(dim=axis, num_args=count), shapes)
    assert outs[0].shape == tuple(inferred[0])
    assert inferred[0][axis] == sum(s[axis] for s in shapes)


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4), data=st.data())
def test_transpose_permutes(shape, data):
    axes = tuple(data.draw(st.permutations(range(len(shape)))))
    inferred, outs = run_forward('transpose', dict(axes=axes), [tuple(shape)])
    assert outs[0].shape == tuple(inferred[0]) == tuple(shape[i] for i in axes)
