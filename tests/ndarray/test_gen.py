"""mx.nd functions generated from the operator registry: every registered name is one,
MXNet's calling convention (positional arrays then parameters, names, strings, out=,
name=, variadic lists), errors that name the function as called, caches that never
change a result, the ufunc-style dispatchers and the old module import paths."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.operator import list_ops

rng = np.random.default_rng(5)


def arr(shape, dtype=np.float32):
    x = rng.uniform(-2, 2, shape).astype(dtype)
    return x, mx.nd.array(x, dtype=dtype)


def close(got, want, dtype=np.float32):
    assert got.dtype == dtype
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- one declaration
def test_every_registered_name_is_generated():
    hand = [n for n in list_ops() if getattr(mx.nd, n).__module__ != 'mxcy.ndarray._gen']
    # MXNet's own hand-written allocators, and reset_arrays: an op without outputs that
    # zeroes its inputs in place (its nd function checks them, then runs the op's forward)
    assert hand == ['ones', 'reset_arrays', 'zeros']
    assert mx.nd.concat is mx.nd.concat and mx.nd.flip.__name__ == 'flip'
    assert 'axis' in mx.nd.sum.__doc__


def test_methods_resolve_to_the_generated_functions():
    x, a = arr((2, 3))
    assert a.sum.fn is mx.nd.sum and a.transpose.fn is mx.nd.transpose
    close(a.T, x.T)
    close(a.sum(1), x.sum(axis=1))
    close(a.clip(-1, 1), np.clip(x, -1, 1))


def test_old_module_paths_give_the_generated_functions():
    from mxcy.ndarray.elemwise import sqrt
    from mxcy.ndarray.linalg import dot
    from mxcy.ndarray.reduce import sum as nd_sum
    from mxcy.ndarray.shaping import concat
    assert (sqrt, dot, nd_sum, concat) == (mx.nd.sqrt, mx.nd.dot, mx.nd.sum, mx.nd.concat)
    from mxcy.ndarray import reduce
    with pytest.raises(AttributeError, match="has no attribute 'no_such_op'"):
        reduce.__getattr__('no_such_op')


# ---------------------------------------------------------------- calling convention
def test_positional_values_fill_the_parameters_in_order():
    x, a = arr((2, 3, 4))
    close(mx.nd.sum(a, 1), x.sum(axis=1))
    close(mx.nd.sum(a, (0, 2), True), x.sum(axis=(0, 2), keepdims=True))
    close(mx.nd.clip(a, -0.5, 0.5), np.clip(x, -0.5, 0.5))
    close(mx.nd.slice_axis(a, 1, 0, 2), x[:, 0:2])
    close(mx.nd.swapaxes(a, 0, 2), np.swapaxes(x, 0, 2))
    close(mx.nd.one_hot(mx.nd.array([0, 2]), 3), np.eye(3)[[0, 2]])
    close(mx.nd.sum(a, axis='(0, 1)', keepdims='True'), x.sum(axis=(0, 1), keepdims=True))
    close(mx.nd.transpose(a, axes=None), x.T)
    close(mx.nd.slice(a, (0,), (1,), None), x[0:1])
    close(mx.nd.exp(a, name='ignored'), np.exp(x))


def test_arrays_by_name_and_argument_errors():
    x, a = arr((3, 4))
    y, b = arr((4, 2))
    close(mx.nd.dot(lhs=a, rhs=b), x @ y)
    close(mx.nd.dot(a, rhs=b, transpose_a=False), x @ y)
    with pytest.raises(TypeError, match="dot: argument 'lhs' given twice"):
        mx.nd.dot(a, b, lhs=a)
    with pytest.raises(TypeError, match=r"dot: unexpected array argument 'rsh'; it takes "
                                        r"\['lhs', 'rhs'\]"):
        mx.nd.dot(a, rsh=b)
    with pytest.raises(TypeError, match=r"dot: missing array argument\(s\) \['rhs'\]"):
        mx.nd.dot(a)
    with pytest.raises(TypeError, match="take: indices must be an NDArray, got list"):
        mx.nd.take(a, indices=[0, 1])
    with pytest.raises(TypeError, match="sum: parameter 'axis' given twice"):
        mx.nd.sum(a, 1, axis=0)
    with pytest.raises(TypeError, match=r"exp: takes the parameters \[\] after the array "
                                        r"arguments, got 1 positional"):
        mx.nd.exp(a, 2)
    with pytest.raises(TypeError, match=r"sum: unexpected parameter\(s\) \['axes'\]"):
        mx.nd.sum(a, axes=1)


def test_auxiliary_states_are_inputs_after_the_arguments():
    x = mx.nd.array(rng.normal(size=(2, 3, 4, 4)))
    g, b, mv = mx.nd.ones((3,)), mx.nd.zeros((3,)), mx.nd.ones((3,))
    y = mx.nd.BatchNorm(x, g, b, mx.nd.zeros((3,)), mv, use_global_stats=True)
    close(y, x.asnumpy() / np.sqrt(1 + 1e-3), np.float32)
    with pytest.raises(ValueError, match=r"BatchNorm: .*'moving_mean': expected \(3,\), "
                                         r"given \(4,\)"):
        mx.nd.BatchNorm(x, g, b, mx.nd.zeros((4,)), mv)


def test_out_receives_the_result_and_is_checked():
    x, a = arr((2, 3))
    out = mx.nd.zeros((3, 2))
    assert mx.nd.transpose(a, out=out) is out
    close(out, x.T)
    with pytest.raises(ValueError, match=r"transpose: out has shape \(2, 3\) and dtype "
                                         r"float32, the result has shape \(3, 2\)"):
        mx.nd.transpose(a, out=mx.nd.zeros((2, 3)))
    with pytest.raises(TypeError, match="exp: out must be an NDArray, got ndarray"):
        mx.nd.exp(a, out=np.zeros((2, 3)))
    pair = [mx.nd.zeros((2, 1)), mx.nd.zeros((2, 1))]
    assert mx.nd.topk(a, k=1, ret_typ='both', out=pair) is pair
    close(pair[0], np.sort(x, axis=1)[:, -1:])
    with pytest.raises(TypeError, match=r"topk: out must be 2 NDArray\(s\) for this call"):
        mx.nd.topk(a, k=1, ret_typ='both', out=pair[0])


def test_hidden_outputs_and_operators_without_inputs():
    sorted_ = mx.nd.sort(mx.nd.array([3, 1, 2]))       # the index output stays hidden
    assert isinstance(sorted_, mx.nd.NDArray)
    close(sorted_, [1, 2, 3])
    full = mx.nd._full(shape=(2, 2), value=3, dtype='float64')
    assert full.context == mx.current_context()
    close(full, np.full((2, 2), 3.0), np.float64)


def test_variadic_ops_take_arrays_or_one_list():
    x, a = arr((2, 3))
    y, b = arr((2, 1))
    want = np.concatenate([x, y], axis=1)
    close(mx.nd.concat(a, b), want)
    close(mx.nd.concat([a, b]), want)
    close(mx.nd.Concat((a, b), dim=1), want)
    close(mx.nd.stack(a, a, axis=1), np.stack([x, x], axis=1))
    with pytest.raises(ValueError, match="concat: num_args=3 but 2 arrays given"):
        mx.nd.concat(a, b, num_args=3)
    with pytest.raises(TypeError, match=r"concat: data\[1\] must be an NDArray, got int"):
        mx.nd.concat(a, 1)
    with pytest.raises(ValueError, match="stack: needs at least one array"):
        mx.nd.stack([])


def test_errors_name_the_function_as_called():
    a = mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match="^split: parameter 'num_outputs' must be >= 1"):
        mx.nd.split(a, num_outputs=0)
    with pytest.raises(ValueError, match="^SliceChannel: parameter 'num_outputs' must be"):
        mx.nd.SliceChannel(a, num_outputs=0)
    with pytest.raises(ValueError, match="^flip: parameter 'axis'=2 is out of range"):
        mx.nd.flip(a, 2)
    with pytest.raises(ValueError, match="^elemwise_add: shape mismatch"):
        mx.nd.elemwise_add(a, mx.nd.ones((3, 2)))


# ---------------------------------------------------------------- caches
def test_cached_parameters_keep_their_types():
    a = mx.nd.ones((2, 3))
    assert mx.nd.argmax(a, axis=1).shape == (2,)
    with pytest.raises(TypeError, match="argmax: parameter 'axis' expects an integer, got "
                                        "True"):
        mx.nd.argmax(a, axis=True)           # equal to 1 for Python, not for the op
    mx.nd.transpose(a, axes=(1, 0))
    with pytest.raises(TypeError, match="transpose: parameter 'axes' expects a tuple"):
        mx.nd.transpose(a, axes=(1.0, 0))
    close(mx.nd.sum(a, axis=[0]), np.full((3,), 2.0))       # unhashable values parse too


def test_cached_inference_follows_shapes_and_dtypes():
    for shape in [(2, 3), (4,), (2, 3), (1, 1, 5)]:
        for dtype in (np.float32, np.float64):
            x, a = arr(shape, dtype)
            close(mx.nd.exp(a), np.exp(x), dtype)
            close(mx.nd.sum(a, axis=-1), x.sum(axis=-1), dtype)
    with pytest.raises(ValueError, match="broadcast_add: shape mismatch"):
        mx.nd.broadcast_add(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)))
    with pytest.raises(ValueError, match="broadcast_add: shape mismatch"):     # not cached
        mx.nd.broadcast_add(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)))


# ---------------------------------------------------------------- dispatchers
@pytest.mark.parametrize('name,ufunc', [('add', np.add), ('subtract', np.subtract),
                                        ('divide', np.divide), ('power', np.power),
                                        ('greater', np.greater), ('lesser_equal', np.less_equal),
                                        ('maximum', np.maximum), ('modulo', np.mod)])
def test_dispatchers_pick_the_broadcast_or_scalar_op(name, ufunc):
    x = rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    y = rng.uniform(0.5, 2, (1, 3)).astype(np.float32)
    fn = getattr(mx.nd, name)
    close(fn(mx.nd.array(x), mx.nd.array(y)), ufunc(x, y))
    close(fn(mx.nd.array(x), 1.5), ufunc(x, np.float32(1.5)))
    close(fn(1.5, mx.nd.array(x)), ufunc(np.float32(1.5), x))
    assert fn(3, 2) == ufunc(3, 2)


def test_dispatchers_run_registry_ops_and_name_themselves():
    a = mx.nd.ones((2, 3))
    close(mx.nd.add(a, True), np.full((2, 3), 2.0))
    with pytest.raises(ValueError, match=r"^add: shape mismatch for argument 'rhs'"):
        mx.nd.add(a, mx.nd.ones((4, 3)))            # broadcast_add's inference
    with pytest.raises(ValueError, match=r"^subtract: out has shape \(2, 3\) and dtype "
                                         r"float64"):
        mx.nd.subtract(1, a, out=mx.nd.zeros((2, 3), dtype='float64'))   # _rminus_scalar
    with pytest.raises(TypeError, match="maximum: lhs must be an NDArray or a number"):
        mx.nd.maximum('x', a)
