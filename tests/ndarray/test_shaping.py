"""mx.nd shape functions against NumPy, with MXNet's rules: concat dim=1 by default,
split returns a list (one NDArray for num_outputs=1) and needs even parts, flatten to
(N, rest), squeeze never 0-d, slice with None entries and steps, slice_axis bounds,
pad's flat pad_width; results are copies; method forms; bad input."""
import numpy as np
import pytest

import mxcy as mx

rng = np.random.default_rng(2)
DTYPES = [np.float32, np.float64, np.int32, np.float16, np.uint8]




def check(got, want):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.asnumpy(), want)


def arr(shape, dtype=np.float32):
    x = np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)
    return x, mx.nd.array(x, dtype=dtype)


@pytest.mark.parametrize('dtype', DTYPES)
def test_reshape_is_a_copy_with_mxnet_codes(dtype):
    x, a = arr((2, 3, 4), dtype)
    check(mx.nd.reshape(a, shape=(4, -1)), x.reshape(4, 6))
    check(mx.nd.reshape(a, shape=(0, -3)), x.reshape(2, 12))
    check(mx.nd.reshape(a, shape=(-1, 0), reverse=True), x.reshape(6, 4))
    r = mx.nd.reshape(a, shape=(24,))
    r[:] = 0
    check(a, x)                     # the input is untouched
    with pytest.raises(ValueError, match="reshape: .*cannot reshape"):
        mx.nd.reshape(a, shape=(5, -1))
    check(mx.nd.reshape_like(a, mx.nd.ones((6, 4))), x.reshape(6, 4))
    with pytest.raises(ValueError, match=r"reshape_like: lhs \(2, 3, 4\) has 24 elements"):
        mx.nd.reshape_like(a, mx.nd.ones((5,)))


@pytest.mark.parametrize('axes', [None, (1, 0, 2), (2, 0, 1), (-1, 0, 1)])
@pytest.mark.parametrize('dtype', DTYPES)
def test_transpose(axes, dtype):
    x, a = arr((2, 3, 4), dtype)
    check(mx.nd.transpose(a, axes=axes), np.transpose(x, axes))
    if axes is None:
        check(a.T, x.T)
        check(a.transpose(), x.T)
    with pytest.raises(ValueError, match=r"transpose: parameter 'axes'=\(0, 0, 1\) is not a permutation"):
        mx.nd.transpose(a, axes=(0, 0, 1))


def test_swapaxes_expand_dims_flatten_squeeze():
    x, a = arr((2, 3, 4))
    check(mx.nd.swapaxes(a, 0, 2), np.swapaxes(x, 0, 2))
    check(mx.nd.SwapAxis(a, dim1=-1, dim2=1), np.swapaxes(x, -1, 1))
    check(a.swapaxes(1, 2), np.swapaxes(x, 1, 2))
    for axis in (0, 3, -1, -4):
        check(mx.nd.expand_dims(a, axis=axis), np.expand_dims(x, axis))
    with pytest.raises(ValueError, match=r"expand_dims: parameter 'axis'=4 is out of range .* -4 to 3"):
        mx.nd.expand_dims(a, axis=4)
    check(mx.nd.flatten(a), x.reshape(2, 12))
    check(mx.nd.Flatten(a), x.reshape(2, 12))
    check(a.flatten(), x.reshape(2, 12))
    check(mx.nd.flatten(mx.nd.ones((3,))), np.ones((3, 1), np.float32))
    y, b = arr((1, 3, 1))
    check(mx.nd.squeeze(b), y.reshape(3))
    check(mx.nd.squeeze(b, axis=2), y.reshape(1, 3))
    check(mx.nd.squeeze(b, axis=(0, -1)), y.reshape(3))
    check(mx.nd.squeeze(mx.nd.ones((1, 1))), np.ones((1,), np.float32))
    with pytest.raises(ValueError, match=r"squeeze: .*'data': expected size 1 on axis 1, given \(1, 3, 1\)"):
        mx.nd.squeeze(b, axis=1)


# ---------------------------------------------------------------- concat, stack, split
@pytest.mark.parametrize('dtype', DTYPES)
def test_concat_defaults_to_dim_1(dtype):
    x, a = arr((2, 3, 4), dtype)
    y, b = arr((2, 5, 4), dtype)
    check(mx.nd.concat(a, b), np.concatenate([x, y], axis=1))
    check(mx.nd.Concat(a, a, dim=0), np.concatenate([x, x], axis=0))
    check(mx.nd.concat(a, a, dim=-1), np.concatenate([x, x], axis=-1))
    check(mx.nd.concat(*[a, b, a], num_args=3), np.concatenate([x, y, x], axis=1))


def test_concat_errors():
    a = mx.nd.ones((2, 3, 4))
    with pytest.raises(ValueError, match=r"concat: .*'arg1': expected \(2, \*, 4\), given "
                                         r"\(2, 3, 5\) \(only dim 1 may differ"):
        mx.nd.concat(a, mx.nd.ones((2, 3, 5)))
    with pytest.raises(ValueError, match=r"concat: parameter 'dim'=1 is out of range for input shape \(3,\)"):
        mx.nd.concat(mx.nd.ones((3,)), mx.nd.ones((2,)))
    with pytest.raises(TypeError, match=r"concat: argument 'arg1' has dtype float64"):
        mx.nd.concat(a, mx.nd.ones((2, 3, 4), dtype='float64'))
    with pytest.raises(ValueError, match="concat: needs at least one array"):
        mx.nd.concat()


@pytest.mark.parametrize('axis', [0, 1, 3, -1])
def test_stack(axis):
    x, a = arr((2, 3, 4))
    check(mx.nd.stack(a, a * 2, axis=axis), np.stack([x, x * 2], axis=axis))
    with pytest.raises(ValueError, match=r"stack: .*'arg1': expected \(2, 3, 4\), given \(2, 3\)"):
        mx.nd.stack(a, mx.nd.ones((2, 3)), axis=axis)


@pytest.mark.parametrize('dtype', DTYPES)
def test_split_returns_a_list_along_axis_1(dtype):
    x, a = arr((2, 6, 4), dtype)
    parts = mx.nd.split(a, num_outputs=3)
    assert isinstance(parts, list) and len(parts) == 3
    for got, want in zip(parts, np.split(x, 3, axis=1)):
        check(got, want)
    parts = mx.nd.SliceChannel(a, num_outputs=2, axis=-1)
    for got, want in zip(parts, np.split(x, 2, axis=-1)):
        check(got, want)
    single = mx.nd.split(a, num_outputs=1, axis=0)
    assert isinstance(single, mx.nd.NDArray)
    check(single, x)
    squeezed = a.split(num_outputs=2, axis=0, squeeze_axis=True)
    check(squeezed[1], x[1])


def test_split_errors():
    a = mx.nd.ones((2, 3, 4))
    with pytest.raises(ValueError, match=r"split: .*'data': expected axis 1 size divisible "
                                         r"by num_outputs=2, given \(2, 3, 4\)"):
        mx.nd.split(a, num_outputs=2)
    with pytest.raises(ValueError, match=r"split: .*'data': expected axis 2 of size "
                                         r"num_outputs=2, given \(2, 3, 4\) "
                                         r"\(squeeze_axis=True\)"):
        mx.nd.split(a, num_outputs=2, axis=2, squeeze_axis=True)
    with pytest.raises(ValueError, match="split: parameter 'num_outputs' must be >= 1, got 0"):
        mx.nd.split(a, num_outputs=0)


# ---------------------------------------------------------------- slicing
SLICES = [((0, 1), (2, 3), None), ((None, 1), (None, None), (None, -1)),
          ((-1,), (None,), None), ((None, None, 3), (None, None, 0), (1, 1, -2)),
          ((1,), (1,), None), ((0,), (5,), None), ((None, -2), (None, None), (None, 1))]


@pytest.mark.parametrize('begin,end,step', SLICES)
def test_slice_follows_python_slicing(begin, end, step):
    x, a = arr((2, 3, 4))
    key = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step or (None,) * len(begin)))
    check(mx.nd.slice(a, begin=begin, end=end, step=step), x[key])
    check(a.slice(begin, end, step), x[key])


def test_slice_errors():
    a = mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match=r"slice: .*'data': expected at least 3 dimensions"):
        mx.nd.slice(a, begin=(0, 0, 0), end=(1, 1, 1))
    with pytest.raises(ValueError, match="slice: parameter 'step' must not contain 0"):
        mx.nd.slice(a, begin=(0,), end=(1,), step=(0,))
    with pytest.raises(ValueError, match="slice: parameters begin=.* must have the same length"):
        mx.nd.slice(a, begin=(0, 0), end=(1,))


@pytest.mark.parametrize('axis,begin,end', [(0, 1, 2), (1, 1, None), (-1, -3, -1),
                                            (2, 0, 4)])
def test_slice_axis(axis, begin, end):
    x, a = arr((2, 3, 4))
    want = np.swapaxes(np.swapaxes(x, 0, axis)[begin:end], 0, axis)
    check(mx.nd.slice_axis(a, axis=axis, begin=begin, end=end), want)
    check(a.slice_axis(axis, begin, end), want)


def test_slice_axis_errors_and_slice_like():
    x, a = arr((2, 3, 4))
    with pytest.raises(ValueError, match=r"slice_axis: .*'data': expected axis 1 holding begin=1, end=5"):
        mx.nd.slice_axis(a, axis=1, begin=1, end=5)
    with pytest.raises(ValueError, match=r"slice_axis: .*begin=2, end=1"):
        mx.nd.slice_axis(a, axis=1, begin=2, end=1)
    check(mx.nd.slice_like(a, mx.nd.ones((1, 2, 3))), x[:1, :2, :3])
    check(mx.nd.slice_like(a, mx.nd.ones((5, 2)), axes=(1,)), x[:, :2])
    check(a.slice_like(mx.nd.ones((9, 9, 2)), axes=(-1,)), x[:, :, :2])
    with pytest.raises(ValueError, match=r"slice_like: .*'shape_like': expected axis 0 at most 2 \(data \(2, 3, 4\)\), "
                                         r"given \(3, 3, 3\)"):
        mx.nd.slice_like(a, mx.nd.ones((3, 3, 3)))


# ---------------------------------------------------------------- tile, repeat, flip
@pytest.mark.parametrize('reps', [2, (2,), (2, 1), (2, 1, 3), (1, 0)])
def test_tile(reps):
    x, a = arr((2, 3))
    check(mx.nd.tile(a, reps=reps), np.tile(x, reps))
    with pytest.raises(ValueError, match="tile: parameter 'reps' must be non-negative"):
        mx.nd.tile(a, reps=(-1,))


@pytest.mark.parametrize('axis', [None, 0, 1, -1])
@pytest.mark.parametrize('repeats', [0, 1, 3])
def test_repeat(axis, repeats):
    x, a = arr((2, 3), np.int32)
    check(mx.nd.repeat(a, repeats=repeats, axis=axis), np.repeat(x, repeats, axis=axis))
    check(a.repeat(repeats, axis), np.repeat(x, repeats, axis=axis))


@pytest.mark.parametrize('axis', [0, 1, -1, (0, 2)])
def test_flip(axis):
    x, a = arr((2, 3, 4))
    check(mx.nd.flip(a, axis=axis), np.flip(x, axis))
    check(mx.nd.reverse(a, axis=axis), np.flip(x, axis))
    check(a.flip(axis=axis), np.flip(x, axis))


# ---------------------------------------------------------------- pad, depth/space, shape
@pytest.mark.parametrize('mode', ['constant', 'edge', 'reflect'])
@pytest.mark.parametrize('shape,width', [((1, 2, 3, 3), (0, 0, 0, 0, 1, 2, 2, 1)),
                                         ((2, 1, 3, 3, 4), (0, 0, 0, 0, 1, 0, 0, 2, 2, 2))])
def test_pad(mode, shape, width):
    x, a = arr(shape)
    pairs = [(width[2 * i], width[2 * i + 1]) for i in range(len(shape))]
    kwargs = {'constant_values': 7} if mode == 'constant' else {}
    got = mx.nd.pad(a, mode=mode, pad_width=width, constant_value=7)
    check(got, np.pad(x, pairs, mode=mode, **kwargs))


def test_pad_errors():
    with pytest.raises(ValueError, match=r"pad: needs a 4-D or 5-D input, got shape \(2, 3\)"):
        mx.nd.pad(mx.nd.ones((2, 3)), mode='constant', pad_width=(0, 0, 1, 1))
    with pytest.raises(ValueError, match="pad: the first two axes cannot be padded"):
        mx.nd.pad(mx.nd.ones((1, 1, 2, 2)), mode='constant', pad_width=(1, 0, 0, 0, 1, 1, 1, 1))
    with pytest.raises(ValueError, match="pad: pad_width must hold 8"):
        mx.nd.pad(mx.nd.ones((1, 1, 2, 2)), mode='edge', pad_width=(0, 0, 1, 1))
    with pytest.raises(ValueError, match="pad: mode must be"):
        mx.nd.pad(mx.nd.ones((1, 1, 2, 2)), mode='wrap', pad_width=(0,) * 8)


def test_depth_to_space_and_back():
    x, a = arr((2, 12, 2, 3))
    b = 2
    want = x.reshape(2, b, b, 3, 2, 3).transpose(0, 3, 4, 1, 5, 2).reshape(2, 3, 4, 6)
    got = mx.nd.depth_to_space(a, block_size=b)
    check(got, want)
    check(mx.nd.space_to_depth(got, block_size=b), x)
    # MXNet 1.9.1's own result for this input (checked once against it)
    small = mx.nd.depth_to_space(mx.nd.arange(48).reshape((1, 12, 2, 2)), 2)
    assert small.asnumpy().ravel()[:8].tolist() == [0, 12, 1, 13, 24, 36, 25, 37]
    with pytest.raises(ValueError, match=r"depth_to_space: .*'data': expected channels a multiple of block_size\*\*2 = 9"):
        mx.nd.depth_to_space(a, block_size=3)
    with pytest.raises(ValueError, match=r"space_to_depth: .*'data': expected height and width multiples of block_size=2, given \(\d+, \d+, 2, 3\)"):
        mx.nd.space_to_depth(a, block_size=2)


def test_shape_and_size_array():
    a = mx.nd.ones((2, 3, 4))
    check(mx.nd.shape_array(a), np.array([2, 3, 4], np.int64))
    check(mx.nd.size_array(a), np.array([24], np.int64))


def test_results_are_copies_and_out_is_checked():
    x, a = arr((2, 3))
    t = mx.nd.transpose(a)
    t[:] = -1
    check(a, x)
    out = mx.nd.zeros((3, 2))
    assert mx.nd.transpose(a, out=out) is out
    check(out, x.T)
    with pytest.raises(ValueError, match=r"transpose: out has shape \(2, 3\)"):
        mx.nd.transpose(a, out=mx.nd.zeros((2, 3)))
