"""mx.nd elementwise functions against NumPy: unary math, binary ops, broadcasting, clip,
where, softmax; MXNet rules (round/rint, no promotion, strict broadcast_*/elemwise_*),
``out=``, method forms, bad input, and equal results under NaiveEngine."""
import threading

import numpy as np
import pytest

import mxcy as mx

rng = np.random.default_rng(0)




SHAPES = [(5,), (3, 4), (2, 3, 4)]


def tol(dtype):
    return {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}.get(dtype, 0)


def check(got, want, dtype):
    assert got.dtype == dtype
    np.testing.assert_allclose(got.asnumpy().astype(np.float64),
                               np.asarray(want).astype(np.float64),
                               rtol=tol(dtype), atol=tol(dtype))


def rand(shape, dtype, low=-3.0, high=3.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


# ---------------------------------------------------------------- unary
# name -> (NumPy reference, input range)
UNARY = {
    'exp': (np.exp, (-3, 3)), 'log': (np.log, (0.1, 5)), 'sqrt': (np.sqrt, (0, 5)),
    'rsqrt': (lambda x: 1 / np.sqrt(x), (0.2, 5)), 'square': (np.square, (-3, 3)),
    'abs': (np.abs, (-3, 3)), 'sign': (np.sign, (-3, 3)),
    'relu': (lambda x: np.maximum(x, 0), (-3, 3)),
    'sigmoid': (lambda x: 1 / (1 + np.exp(-x)), (-3, 3)), 'tanh': (np.tanh, (-3, 3)),
    'floor': (np.floor, (-3, 3)), 'ceil': (np.ceil, (-3, 3)), 'trunc': (np.trunc, (-3, 3)),
    'fix': (np.trunc, (-3, 3)), 'log1p': (np.log1p, (-0.5, 3)),
    'expm1': (np.expm1, (-3, 3)), 'log2': (np.log2, (0.1, 5)),
    'log10': (np.log10, (0.1, 5)), 'sin': (np.sin, (-3, 3)), 'cos': (np.cos, (-3, 3)),
    'tan': (np.tan, (-1, 1)), 'arctan': (np.arctan, (-3, 3)),
    'reciprocal': (np.reciprocal, (0.5, 3)), 'cbrt': (np.cbrt, (-3, 3)),
    'negative': (np.negative, (-3, 3)), 'arcsin': (np.arcsin, (-0.9, 0.9)),
    'cosh': (np.cosh, (-2, 2)), 'softsign': (lambda x: x / (1 + np.abs(x)), (-3, 3)),
    'round': (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), (-3, 3)),
    'rint': (lambda x: np.where(x - np.floor(x) <= 0.5, np.floor(x), np.floor(x) + 1),
             (-3, 3)),
}


@pytest.mark.parametrize('name', sorted(UNARY))
@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.float16])
def test_unary_matches_numpy(name, dtype):
    ref, (low, high) = UNARY[name]
    x = rand((3, 4), dtype, low, high)
    got = getattr(mx.nd, name)(mx.nd.array(x, dtype=dtype))
    want = ref(x.astype(np.float64))
    if dtype == np.float16 and name in ('floor', 'ceil', 'trunc', 'fix', 'round', 'rint',
                                        'sign'):
        want = ref(x)       # rounding of the float16 input itself
    check(got, want, dtype)


@pytest.mark.parametrize('dtype', [np.int32, np.int64, np.int8, np.uint8])
@pytest.mark.parametrize('name', ['abs', 'square', 'relu', 'sign', 'sqrt', 'negative'])
def test_unary_integers_keep_dtype(name, dtype):
    x = rng.integers(0 if dtype == np.uint8 or name == 'sqrt' else -9, 10, 12).astype(dtype)
    got = getattr(mx.nd, name)(mx.nd.array(x, dtype=dtype))
    want = UNARY[name][0](x.astype(np.float64))
    check(got, np.trunc(want).astype(dtype), dtype)


def test_round_and_rint_follow_mxnet_not_numpy():
    x = mx.nd.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.9])
    assert mx.nd.round(x).asnumpy().tolist() == [-3, -2, -1, 1, 2, 3, 2]
    assert mx.nd.rint(x).asnumpy().tolist() == [-3, -2, -1, 0, 1, 2, 2]
    assert mx.nd.fix(x).asnumpy().tolist() == [-2, -1, 0, 0, 1, 2, 1]
    h = mx.nd.round(x.astype('float16')).asnumpy()
    assert h.tolist() == [-3, -2, -1, 1, 2, 3, 2]


def test_unary_out_and_method_forms():
    x = mx.nd.array(rand((2, 3), np.float32))
    out = mx.nd.zeros((2, 3))
    assert mx.nd.exp(x, out=out) is out
    check(out, np.exp(x.asnumpy()), np.float32)
    check(x.abs(), np.abs(x.asnumpy()), np.float32)
    check(x.sigmoid(), 1 / (1 + np.exp(-x.asnumpy().astype(np.float64))), np.float32)
    with pytest.raises(ValueError, match=r"exp: out has shape \(3, 2\)"):
        mx.nd.exp(x, out=mx.nd.zeros((3, 2)))
    with pytest.raises(ValueError, match="dtype float64"):
        mx.nd.exp(x, out=mx.nd.zeros((2, 3), dtype='float64'))
    with pytest.raises(TypeError, match="exp: data must be an NDArray"):
        mx.nd.exp(np.ones(3))


# ---------------------------------------------------------------- binary
BINARY = {'add': np.add, 'subtract': np.subtract, 'multiply': np.multiply,
          'divide': np.divide, 'modulo': np.mod, 'power': np.power,
          'maximum': np.maximum, 'minimum': np.minimum, 'equal': np.equal,
          'not_equal': np.not_equal, 'greater': np.greater,
          'greater_equal': np.greater_equal, 'lesser': np.less,
          'lesser_equal': np.less_equal}
PAIRS = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((5,), (1,))]


def operands(name, shape, dtype):
    x = rand(shape, dtype, 0.5, 3) if name in ('power', 'modulo', 'divide') else \
        np.round(rand(shape, dtype)) if name.endswith('equal') else rand(shape, dtype)
    return x.astype(dtype)


@pytest.mark.parametrize('name', sorted(BINARY))
@pytest.mark.parametrize('lshape,rshape', PAIRS)
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_binary_arrays_broadcast(name, lshape, rshape, dtype):
    x, y = operands(name, lshape, dtype), operands(name, rshape, dtype)
    got = getattr(mx.nd, name)(mx.nd.array(x, dtype=dtype), mx.nd.array(y, dtype=dtype))
    check(got, BINARY[name](x, y), dtype)


@pytest.mark.parametrize('name', sorted(BINARY))
def test_binary_with_scalars_on_either_side(name):
    x = operands(name, (3, 4), np.float64)
    a = mx.nd.array(x, dtype='float64')
    check(getattr(mx.nd, name)(a, 2.0), BINARY[name](x, 2.0), np.float64)
    check(getattr(mx.nd, name)(2.0, a), BINARY[name](2.0, x), np.float64)
    assert getattr(mx.nd, name)(3, 2) == BINARY[name](3, 2)


@pytest.mark.parametrize('dtype', [np.int32, np.int64, np.float16])
def test_binary_other_dtypes(dtype):
    x = rng.integers(1, 9, (3, 4)).astype(dtype)
    y = rng.integers(1, 9, (1, 4)).astype(dtype)
    a, b = mx.nd.array(x, dtype=dtype), mx.nd.array(y, dtype=dtype)
    check(mx.nd.add(a, b), x + y, dtype)
    check(mx.nd.modulo(a, b), np.mod(x, y), dtype)
    check(mx.nd.maximum(a, 4), np.maximum(x, 4), dtype)
    check(mx.nd.broadcast_mul(a, b), x * y, dtype)


def test_modulo_has_the_sign_of_the_divisor():
    check(mx.nd.modulo(mx.nd.array([-5, 5, -7]), 3), [1, 2, 2], np.float32)


SHORT = {'add': np.add, 'sub': np.subtract, 'mul': np.multiply, 'div': np.divide,
         'mod': np.mod, 'power': np.power, 'maximum': np.maximum, 'minimum': np.minimum,
         'equal': np.equal, 'not_equal': np.not_equal, 'greater': np.greater,
         'greater_equal': np.greater_equal, 'lesser': np.less,
         'lesser_equal': np.less_equal, 'hypot': np.hypot}


@pytest.mark.parametrize('short', sorted(SHORT))
def test_broadcast_functions(short):
    x, y = rand((2, 1, 4), np.float32, 0.5, 3), rand((3, 1), np.float32, 0.5, 3)
    got = getattr(mx.nd, 'broadcast_' + short)(mx.nd.array(x), mx.nd.array(y))
    check(got, SHORT[short](x.astype(np.float64), y), np.float32)


def test_broadcast_functions_need_two_arrays():
    with pytest.raises(TypeError, match="broadcast_add: rhs must be an NDArray"):
        mx.nd.broadcast_add(mx.nd.ones((2,)), 3)
    with pytest.raises(ValueError, match=r"broadcast_add: .*'rhs': expected a shape "
                                         r"broadcastable with lhs \(2, 3\), given \(4, 3\)"):
        mx.nd.broadcast_add(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)))


@pytest.mark.parametrize('short', ['add', 'sub', 'mul', 'div'])
def test_elemwise_functions_need_equal_shapes(short):
    x, y = rand((3, 4), np.float64, 1, 2), rand((3, 4), np.float64, 1, 2)
    got = getattr(mx.nd, 'elemwise_' + short)(mx.nd.array(x, dtype='float64'),
                                             mx.nd.array(y, dtype='float64'))
    check(got, SHORT[short](x, y), np.float64)
    with pytest.raises(ValueError, match=rf"elemwise_{short}: .*'rhs': expected \(2, 1\), "
                                         r"given \(1, 3\) \(lhs and rhs must have the same "
                                         r"shape"):
        getattr(mx.nd, 'elemwise_' + short)(mx.nd.ones((2, 1)), mx.nd.ones((1, 3)))


def test_binary_errors_and_out():
    a = mx.nd.ones((2, 3))
    with pytest.raises(TypeError, match="add: argument 'rhs' has dtype float64, expected "
                                        "float32"):
        mx.nd.add(a, mx.nd.ones((2, 3), dtype='float64'))
    with pytest.raises(TypeError, match="add: rhs must be an NDArray or a number"):
        mx.nd.add(a, 'x')
    with pytest.raises(ValueError, match=r"maximum: out has shape \(2, 3\) .* \(4, 2, 3\)"):
        mx.nd.maximum(a, mx.nd.ones((4, 1, 1)), out=mx.nd.zeros((2, 3)))
    with pytest.raises(ValueError, match="dtype float64"):
        mx.nd.add(a, 1, out=mx.nd.zeros((2, 3), dtype='float64'))
    out = mx.nd.zeros((2, 3))
    assert mx.nd.add(a, a, out=out) is out
    check(out, np.full((2, 3), 2.0), np.float32)
    check(mx.nd.add(a, a, out=a), np.full((2, 3), 2.0), np.float32)   # in place


# ---------------------------------------------------------------- clip, where
@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.float16, np.int32, np.uint8])
def test_clip(dtype):
    x = rng.integers(0, 20, (4, 5)).astype(dtype)
    check(mx.nd.clip(mx.nd.array(x, dtype=dtype), 3, 12), np.clip(x, 3, 12), dtype)
    check(mx.nd.array(x, dtype=dtype).clip(2, 5), np.clip(x, 2, 5), dtype)


def test_clip_mxnet_details():
    got = mx.nd.clip(mx.nd.array([1, 5, 9], dtype='int32'), 2.5, 7.5)
    assert got.asnumpy().tolist() == [2, 5, 7]          # bounds cast to the dtype
    assert np.isnan(mx.nd.clip(mx.nd.array([np.nan]), 0, 1).asnumpy()[0])
    with pytest.raises(TypeError, match="clip: parameter 'a_max' expects a value, got None"):
        mx.nd.clip(mx.nd.ones(2), 0, None)


@pytest.mark.parametrize('shape', SHAPES)
def test_where_same_shape_and_row_condition(shape):
    c = rng.integers(0, 2, shape).astype(np.float32)
    x, y = rand(shape, np.float32), rand(shape, np.float32)
    got = mx.nd.where(mx.nd.array(c), mx.nd.array(x), mx.nd.array(y))
    check(got, np.where(c != 0, x, y), np.float32)
    rows = rng.integers(0, 2, shape[0]).astype(np.int32)
    got = mx.nd.where(mx.nd.array(rows, dtype='int32'), mx.nd.array(x), mx.nd.array(y))
    check(got, np.where(rows.reshape((-1,) + (1,) * (len(shape) - 1)) != 0, x, y),
          np.float32)


def test_where_errors():
    a = mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match=r"where: .*'condition': expected \(2, 3\) or "
                                         r"\(2,\), given \(3,\)"):
        mx.nd.where(mx.nd.ones((3,)), a, a)
    with pytest.raises(ValueError, match=r"where: .*'y': expected \(2, 3\), given \(3, 2\)"):
        mx.nd.where(a, a, mx.nd.ones((3, 2)))
    with pytest.raises(TypeError, match="where: argument 'y' has dtype float64, expected "
                                        "float32"):
        mx.nd.where(a, a, mx.nd.ones((2, 3), dtype='float64'))


# ---------------------------------------------------------------- broadcasting
def test_broadcast_to_like_axis():
    x = rand((1, 3, 1), np.float32)
    a = mx.nd.array(x)
    check(mx.nd.broadcast_to(a, shape=(2, 3, 4)), np.broadcast_to(x, (2, 3, 4)), np.float32)
    check(mx.nd.broadcast_to(a, shape=(2, 0, 4)), np.broadcast_to(x, (2, 3, 4)), np.float32)
    check(a.broadcast_to((5, 3, 2)), np.broadcast_to(x, (5, 3, 2)), np.float32)
    check(mx.nd.broadcast_like(a, mx.nd.ones((2, 3, 4))), np.broadcast_to(x, (2, 3, 4)),
          np.float32)
    check(mx.nd.broadcast_like(a, mx.nd.ones((7, 5)), lhs_axes=(0, -1), rhs_axes=(1, 0)),
          np.broadcast_to(x, (5, 3, 7)), np.float32)
    check(mx.nd.broadcast_axis(a, axis=(0, 2), size=(2, 4)), np.broadcast_to(x, (2, 3, 4)),
          np.float32)
    check(mx.nd.broadcast_axes(a, axis=-1, size=3), np.broadcast_to(x, (1, 3, 3)),
          np.float32)


def test_broadcast_errors():
    a = mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match=r"broadcast_to: .*'data': expected a shape "
                                         r"broadcastable to \(4, 3\) .*given \(2, 3\)"):
        mx.nd.broadcast_to(a, shape=(4, 3))
    with pytest.raises(ValueError, match=r"broadcast_to: .*'data': expected 2 dimensions "
                                         r"\(shape=\(2, 3\)\), given \(3,\)"):
        mx.nd.broadcast_to(mx.nd.ones((3,)), shape=(2, 3))
    with pytest.raises(ValueError, match=r"broadcast_axis: .*'data': expected size 1 on "
                                         r"axis 0, given \(2, 3\)"):
        mx.nd.broadcast_axis(a, axis=0, size=4)
    with pytest.raises(ValueError, match="broadcast_axis: parameter 'axis'=2 is out of "
                                         "range"):
        mx.nd.broadcast_axis(a, axis=2, size=4)
    with pytest.raises(ValueError, match="broadcast_like: .*'lhs': expected a shape "
                                         "broadcastable to"):
        mx.nd.broadcast_like(a, mx.nd.ones((4, 3)))


# ---------------------------------------------------------------- softmax family
def np_softmax(x, axis, t=1.0):
    z = x.astype(np.float64) / t
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize('shape', SHAPES)
@pytest.mark.parametrize('axis', [-1, 0])
@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.float16])
def test_softmax_log_softmax_softmin(shape, axis, dtype):
    x = rand(shape, dtype) * 3
    a = mx.nd.array(x, dtype=dtype)
    check(mx.nd.softmax(a, axis=axis), np_softmax(x, axis), dtype)
    check(mx.nd.log_softmax(a, axis=axis), np.log(np_softmax(x, axis)), dtype)
    check(mx.nd.softmin(a, axis=axis), np_softmax(-x.astype(np.float64), axis), dtype)
    check(mx.nd.softmax(a, axis=axis, temperature=2.5), np_softmax(x, axis, 2.5), dtype)
    check(a.softmax(axis=axis), np_softmax(x, axis), dtype)


def test_softmax_is_numerically_stable_and_takes_dtype():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -990.0]], np.float32)
    check(mx.nd.softmax(mx.nd.array(x)), np_softmax(x, -1), np.float32)
    check(mx.nd.log_softmax(mx.nd.array(x)), np.log(np_softmax(x, -1)), np.float32)
    check(mx.nd.softmax(mx.nd.array(x), dtype='float64'), np_softmax(x, -1), np.float64)


def test_softmax_use_length_masks_the_tail():
    x = rand((2, 4), np.float32)
    length = mx.nd.array([1, 3], dtype='int32')
    got = mx.nd.softmax(mx.nd.array(x), axis=1, use_length=True, length=length)
    want = np.zeros((2, 4))
    want[0, :1] = np_softmax(x[0, :1], -1)
    want[1, :3] = np_softmax(x[1, :3], -1)
    check(got, want, np.float32)
    bad = mx.nd.softmax(mx.nd.array(x), axis=1, use_length=True,
                        length=mx.nd.array([1, 9], dtype='int32'))
    with pytest.raises(ValueError, match=r"softmax: length values must be in \[0, 4\]"):
        bad.asnumpy()


def test_softmax_errors():
    with pytest.raises(TypeError, match="softmax: argument 'data' must be float16/32/64, "
                                        "got int32"):
        mx.nd.softmax(mx.nd.ones((2, 3), dtype='int32'))
    with pytest.raises(ValueError, match=r"softmax: parameter 'axis'=2 is out of range for "
                                         r"input shape \(2, 3\)"):
        mx.nd.softmax(mx.nd.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="softmax: parameter 'temperature' must not be "
                                         "zero"):
        mx.nd.softmax(mx.nd.ones((2, 3)), temperature=0)
    with pytest.raises(ValueError, match=r"softmax: .*'length': expected \(2,\), given "
                                         r"\(3,\)"):
        mx.nd.softmax(mx.nd.ones((2, 3)), use_length=True,
                      length=mx.nd.ones((3,), dtype='int32'))


# ---------------------------------------------------------------- engines
def test_results_are_equal_under_naive_engine():
    x = rand((4, 6), np.float32)
    y = rand((6, 3), np.float32)

    def compute():
        a, b = mx.nd.array(x), mx.nd.array(y)
        outs = [mx.nd.exp(a), mx.nd.broadcast_add(a, a[0:1]), mx.nd.softmax(a),
                mx.nd.sum(a, axis=1), mx.nd.dot(a, b), mx.nd.concat(a, a),
                mx.nd.topk(a, k=2, ret_typ='value'), mx.nd.take(a, mx.nd.array([3, 0])),
                mx.nd.where(a > 0, a, -a), mx.nd.transpose(a)]
        return [o.asnumpy() for o in outs]

    threaded = compute()
    mx.nd.waitall()
    mx.engine.set_engine_type('NaiveEngine')
    try:
        naive = compute()
    finally:
        mx.engine.set_engine_type('ThreadedEngine')
    for t, n in zip(threaded, naive):
        np.testing.assert_array_equal(t, n)
    np.testing.assert_allclose(naive[4], x @ y, rtol=1e-5)
    np.testing.assert_allclose(naive[3], x.sum(axis=1), rtol=1e-5)


def test_functions_push_and_return_without_waiting():
    """A gate op holds the write on `a`: every call must return while it is held (a wait
    would block until the gate times out), and results must see the gate's write."""
    if mx.engine.engine_type() != 'ThreadedEngine':
        pytest.skip("needs the threaded engine")
    x = rand((4, 6), np.float32)
    a, idx = mx.nd.array(x), mx.nd.array([1, 0, 3])
    calls = [
        lambda: mx.nd.exp(a), lambda: mx.nd.rint(a), lambda: mx.nd.add(a, 1),
        lambda: mx.nd.broadcast_mul(a, a[0:1]), lambda: mx.nd.clip(a, -1, 1),
        lambda: mx.nd.where(a, a, a), lambda: mx.nd.broadcast_to(a[0:1], (3, 6)),
        lambda: mx.nd.softmax(a), lambda: mx.nd.log_softmax(a), lambda: mx.nd.sum(a),
        lambda: mx.nd.argmax(a, axis=1), lambda: mx.nd.norm(a), lambda: mx.nd.reshape(a, (6, 4)),
        lambda: mx.nd.transpose(a), lambda: mx.nd.concat(a, a), lambda: mx.nd.stack(a, a),
        lambda: mx.nd.split(a, 2)[1], lambda: mx.nd.slice(a, (1, None), (3, None)),
        lambda: mx.nd.slice_axis(a, 1, 2, 4), lambda: mx.nd.tile(a, 2),
        lambda: mx.nd.repeat(a, 2), lambda: mx.nd.flip(a, 0), lambda: mx.nd.expand_dims(a, 0),
        lambda: mx.nd.pad(a.reshape((1, 1, 4, 6)), 'edge', (0, 0, 0, 0, 1, 1, 1, 1)),
        lambda: mx.nd.take(a, idx), lambda: mx.nd.take(a, idx, mode='raise'),
        lambda: mx.nd.pick(a, idx[0:1].broadcast_to((4,))), lambda: mx.nd.one_hot(a, 3),
        lambda: mx.nd.topk(a, k=2), lambda: mx.nd.sort(a), lambda: mx.nd.argsort(a),
        lambda: mx.nd.diag(a), lambda: mx.nd.dot(a, a.T),
        lambda: mx.nd.batch_dot(a.reshape((2, 2, 6)), a.reshape((2, 6, 2))),
    ]
    gate = threading.Event()
    timed_out = []
    mx.engine.push(lambda: timed_out.append(not gate.wait(5)), writes=[a])
    gated = [call() for call in calls]
    gate.set()
    gated = [r.asnumpy() for r in gated]
    assert timed_out == [False]
    for got, call in zip(gated, calls):
        np.testing.assert_array_equal(got, call().asnumpy())
