"""NDArray creation, properties, copies, repr, pickle and memory lifetime (MXNet 1.x).

Contract points pinned here (MXNet 1.x `python/mxnet/ndarray/ndarray.py`):
* `mx.nd.array(src)` is float32 unless `dtype` is given or `src` is an NDArray (then its
  dtype) -- this holds for NumPy int and float64 arrays too (mx#16048 is that surprise);
* `empty/zeros/ones/full` default to float32; shapes may be an int, tuple, list or NumPy
  integers; `arange(start, stop, step, repeat, dtype)`;
* `repr` is '\\n<str(asnumpy())>\\n<NDArray AxB @ctx>'; `asscalar` needs shape (1,).
"""
import gc
import pickle

import numpy as np
import pytest

import mxcy as mx

DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int32, np.int64]




# ---------------------------------------------------------------- mx.nd.array
def test_array_from_nested_list_is_float32():
    a = mx.nd.array([[1, 2], [3, 4]])
    assert a.dtype == np.float32
    assert a.shape == (2, 2)
    np.testing.assert_array_equal(a.asnumpy(), [[1, 2], [3, 4]])


@pytest.mark.parametrize('src_dtype', DTYPES + [np.bool_])
def test_array_from_numpy_of_any_dtype_is_float32_like_mxnet1(src_dtype):
    # MXNet 1.x: `dtype = mx_real_t if dtype is None else dtype` for every non-NDArray
    # source, so NumPy int32/int64/float64 arrays silently become float32 (mx#16048).
    src = np.array([[0, 1, 2], [3, 4, 5]]).astype(src_dtype)
    a = mx.nd.array(src)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a.asnumpy(), src.astype(np.float32))


def test_array_from_numpy_int64_keeps_int64_only_when_asked():
    src = np.array([2**40 + 1, -3], dtype=np.int64)
    a = mx.nd.array(src, dtype=np.int64)
    assert a.dtype == np.int64
    np.testing.assert_array_equal(a.asnumpy(), src)
    assert mx.nd.array(src).asnumpy()[0] == np.float32(2**40)    # float32 rounding


@pytest.mark.parametrize('dtype', DTYPES)
def test_array_from_ndarray_keeps_its_dtype_and_copies(dtype):
    src = mx.nd.array([1, 2, 3], dtype=dtype)
    a = mx.nd.array(src)
    assert a.dtype == dtype
    src[:] = 9
    np.testing.assert_array_equal(a.asnumpy(), np.array([1, 2, 3], dtype=dtype))


def test_array_from_ndarray_with_dtype_casts():
    a = mx.nd.array(mx.nd.array([1.7, -2.7]), dtype='int32')
    assert a.dtype == np.int32
    np.testing.assert_array_equal(a.asnumpy(), [1, -2])


@pytest.mark.parametrize('dtype', DTYPES)
def test_array_with_dtype_by_name_and_by_type(dtype):
    name = np.dtype(dtype).name
    for spec in (dtype, name, np.dtype(dtype)):
        a = mx.nd.array([1, 2, 3], dtype=spec)
        assert a.dtype == dtype
        np.testing.assert_array_equal(a.asnumpy(), np.array([1, 2, 3], dtype=dtype))


def test_array_copies_the_source_at_the_call():
    src = np.arange(6, dtype=np.float32)
    a = mx.nd.array(src)
    src[:] = -1
    np.testing.assert_array_equal(a.asnumpy(), np.arange(6))


def test_array_from_a_non_contiguous_numpy_view():
    src = np.arange(12.0).reshape(3, 4)[:, ::2]
    np.testing.assert_array_equal(mx.nd.array(src).asnumpy(), src)


@pytest.mark.parametrize('bad', ['abc', [[1, 2], [3]], [1, 'a'], {'a': 1}, [1 + 2j]])
def test_array_from_non_numeric_source_raises_typeerror(bad):
    with pytest.raises(TypeError, match='array'):
        mx.nd.array(bad)


def test_array_unsupported_dtype_raises_typeerror_naming_it():
    with pytest.raises(TypeError, match='uint16'):
        mx.nd.array([1, 2], dtype=np.uint16)
    with pytest.raises(TypeError, match='not a dtype'):
        mx.nd.array([1, 2], dtype='nonsense')


def test_array_can_be_created_inside_an_engine_op():
    # MXNet custom ops build arrays in forward (`mx.nd.array(y)`); that must not wait
    made = {}

    def op():
        made['list'] = mx.nd.array([1, 2, 3])
        made['numpy'] = mx.nd.array(np.arange(4), dtype='int64')
        made['arange'] = mx.nd.arange(3)
        made['zeros'] = mx.nd.zeros((2,))
    mx.engine.push(op, writes=[mx.engine.new_var()], name='builds_arrays')
    mx.nd.waitall()
    np.testing.assert_array_equal(made['list'].asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(made['numpy'].asnumpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(made['arange'].asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(made['zeros'].asnumpy(), [0, 0])


# ---------------------------------------------------------------- empty/zeros/ones/full
@pytest.mark.parametrize('shape, expected', [
    (3, (3,)), ((2, 3), (2, 3)), ([2, 3], (2, 3)), (np.int64(3), (3,)),
    ((np.int32(2), np.int64(3)), (2, 3)), ((0, 4), (0, 4)), ((1, 1, 1, 1, 2), (1, 1, 1, 1, 2)),
])
def test_shapes_accepted_as_int_tuple_list_and_numpy_ints(shape, expected):
    for make in (mx.nd.zeros, mx.nd.ones, mx.nd.empty):
        a = make(shape)
        assert a.shape == expected
        assert all(type(d) is int for d in a.shape)
    assert mx.nd.full(shape, 2).shape == expected


@pytest.mark.parametrize('shape, exc, text', [
    (-1, ValueError, r'\(-1,\)'), ((2, -3), ValueError, r'\(2, -3\)'),
    (2.0, TypeError, '2.0'), ((2, 3.0), TypeError, '3.0'), ('3', TypeError, "'3'"),
    ((2, '3'), TypeError, "'3'"), ((True, 2), TypeError, 'True'), (None, TypeError, 'None'),
])
def test_bad_shapes_raise_naming_the_shape(shape, exc, text):
    for make in (mx.nd.zeros, mx.nd.ones, mx.nd.empty):
        with pytest.raises(exc, match=text):
            make(shape)
    with pytest.raises(exc, match=text):
        mx.nd.full(shape, 1)


@pytest.mark.parametrize('dtype', DTYPES)
def test_zeros_ones_full_in_every_dtype(dtype):
    np.testing.assert_array_equal(mx.nd.zeros((2, 3), dtype=dtype).asnumpy(),
                                  np.zeros((2, 3), dtype=dtype))
    np.testing.assert_array_equal(mx.nd.ones((2, 3), dtype=dtype).asnumpy(),
                                  np.ones((2, 3), dtype=dtype))
    f = mx.nd.full((4,), 7, dtype=dtype)
    assert f.dtype == dtype
    np.testing.assert_array_equal(f.asnumpy(), np.full((4,), 7, dtype=dtype))
    e = mx.nd.empty((2, 2), dtype=dtype)
    assert e.dtype == dtype and e.shape == (2, 2)


def test_creation_defaults_to_float32():
    for a in (mx.nd.zeros(2), mx.nd.ones(2), mx.nd.empty(2), mx.nd.full(2, 1.5),
              mx.nd.arange(3)):
        assert a.dtype == np.float32


def test_full_casts_the_value_to_the_dtype():
    np.testing.assert_array_equal(mx.nd.full((3,), 2.7, dtype='int32').asnumpy(), [2, 2, 2])
    np.testing.assert_allclose(mx.nd.full((2,), 0.1).asnumpy(), np.float32(0.1))
    np.testing.assert_array_equal(mx.nd.full((2,), -1.5, dtype='float16').asnumpy(),
                                  np.float16(-1.5))


def test_full_into_out():
    out = mx.nd.zeros((2, 2))
    res = mx.nd.full((2, 2), 5, out=out)
    assert res is out
    np.testing.assert_array_equal(out.asnumpy(), 5)


@pytest.mark.parametrize('n', [5, 20000])
def test_zeros_ones_small_and_large(n):
    # sizes on both sides of the 16384-element inline limit of the engine
    np.testing.assert_array_equal(mx.nd.zeros((n,)).asnumpy(), np.zeros(n))
    np.testing.assert_array_equal(mx.nd.ones((n,), dtype='int64').asnumpy(), np.ones(n))


@pytest.mark.parametrize('dtype', DTYPES)
def test_zeros_like_ones_like_keep_shape_dtype_context(dtype):
    with mx.cpu(1):
        src = mx.nd.full((2, 3), 4, dtype=dtype)
    z = mx.nd.zeros_like(src)
    o = mx.nd.ones_like(src)
    for a, v in ((z, 0), (o, 1)):
        assert a.shape == (2, 3) and a.dtype == dtype and a.context == mx.cpu(1)
        np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), v, dtype=dtype))
    np.testing.assert_array_equal(src.asnumpy(), 4)
    np.testing.assert_array_equal(src.zeros_like().asnumpy(), 0)    # also a method


# ---------------------------------------------------------------- arange
@pytest.mark.parametrize('args, kwargs', [
    ((5,), {}), ((2, 8), {}), ((1, 10, 3), {}), ((10, 0, -2.5), {}), ((0, 1, 0.1), {}),
    ((-3, 3), {'step': 1.5}), ((4,), {'repeat': 3}), ((1, 7, 2), {'repeat': 2}),
    ((5,), {'dtype': 'int32'}), ((1, 7, 2), {'repeat': 2, 'dtype': np.int64}),
    ((0, 6), {'dtype': 'float64'}), ((3,), {'dtype': 'float16'}), ((1, 4), {'dtype': 'uint8'}),
])
def test_arange_matches_numpy_with_repeat(args, kwargs):
    # MXNet: values start + (i // repeat) * step, size ceil((stop - start) / step) * repeat
    a = mx.nd.arange(*args, **kwargs)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
    step = kwargs.get('step', step)
    dtype = kwargs.get('dtype', np.float32)
    expected = np.repeat(np.arange(start, stop, step), kwargs.get('repeat', 1))
    assert a.dtype == np.dtype(dtype)
    assert a.shape == expected.shape
    np.testing.assert_allclose(a.asnumpy(), expected.astype(dtype), rtol=1e-6, atol=1e-6)


def test_arange_keyword_names_are_mxnets():
    a = mx.nd.arange(start=1, stop=5, step=2, repeat=2, ctx=mx.cpu(1), dtype='int32')
    np.testing.assert_array_equal(a.asnumpy(), [1, 1, 3, 3])
    assert a.context == mx.cpu(1)


@pytest.mark.parametrize('args, kwargs, text', [
    ((0, 5, 0), {}, 'step'), ((3,), {'repeat': 0}, 'repeat'), ((3,), {'repeat': 1.5}, 'repeat'),
    ((5, 1), {}, 'empty range'), ((1, 5, -1), {}, 'empty range'), ((0,), {}, 'empty range'),
])
def test_arange_bad_arguments_raise(args, kwargs, text):
    # MXNet 1.x RangeShape: CHECK_NE(step, 0), CHECK(repeat > 0), CHECK(start < stop) for
    # a positive step ("Invalid range"); it never returned an empty array.
    with pytest.raises(ValueError, match=text):
        mx.nd.arange(*args, **kwargs)


# ---------------------------------------------------------------- astype
@pytest.mark.parametrize('src', DTYPES)
@pytest.mark.parametrize('dst', DTYPES)
def test_astype_between_all_dtypes(src, dst):
    values = np.array([0, 1, 5, 100, 127], dtype=src)
    a = mx.nd.array(values, dtype=src)
    b = a.astype(dst)
    assert b.dtype == dst and b.shape == a.shape
    np.testing.assert_array_equal(b.asnumpy(), values.astype(dst))


def test_astype_truncates_floats_toward_zero():
    a = mx.nd.array([1.7, -1.7, 2.5, -0.5])
    np.testing.assert_array_equal(a.astype('int32').asnumpy(), [1, -1, 2, 0])


def test_astype_copy_false_same_dtype_returns_self_else_a_copy():
    a = mx.nd.ones((2,))
    assert a.astype('float32', copy=False) is a
    b = a.astype('float32')
    assert b is not a
    b[:] = 3
    np.testing.assert_array_equal(a.asnumpy(), 1)
    assert a.astype('float64', copy=False).dtype == np.float64


def test_astype_bad_dtype_raises_typeerror():
    with pytest.raises(TypeError, match='astype'):
        mx.nd.ones(2).astype('complex64')


# ---------------------------------------------------------------- properties
def test_shape_size_ndim_dtype_context():
    a = mx.nd.zeros((2, 3, 4), dtype='int8', ctx=mx.cpu(2))
    assert a.shape == (2, 3, 4)
    assert a.size == 24
    assert a.ndim == 3
    assert a.dtype is np.int8
    assert a.context == mx.cpu(2) and a.ctx == mx.cpu(2)
    assert a.stype == 'default'


def test_asnumpy_is_an_independent_copy():
    a = mx.nd.array([1, 2, 3])
    n = a.asnumpy()
    assert isinstance(n, np.ndarray) and n.dtype == np.float32
    n[0] = 100
    np.testing.assert_array_equal(a.asnumpy(), [1, 2, 3])
    a[:] = 7
    assert n[1] == 2


def test_numpy_asarray_uses_array_protocol():
    a = mx.nd.array([[1, 2], [3, 4]], dtype='int32')
    n = np.asarray(a)
    assert n.dtype == np.int32
    np.testing.assert_array_equal(n, [[1, 2], [3, 4]])
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    assert np.array(a).shape == (2, 2)


def test_asscalar_needs_shape_1_like_mxnet():
    assert mx.nd.array([3.5]).asscalar() == np.float32(3.5)
    assert isinstance(mx.nd.array([3], dtype='int64').asscalar(), np.int64)
    # MXNet 1.x: `if self.shape != (1,): raise ValueError("The current array is not a scalar")`
    for shape in [(2,), (1, 1), (0,)]:
        with pytest.raises(ValueError, match='asscalar'):
            mx.nd.zeros(shape).asscalar()


def test_wait_to_read_returns_after_pending_writes():
    a = mx.nd.zeros((30000,))
    for _ in range(5):
        a += 1
    assert a.wait_to_read() is None
    np.testing.assert_array_equal(a._np_view(), 5)   # safe to look at after the wait


def test_len_iter_bool():
    a = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    assert len(a) == 3
    rows = list(a)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    np.testing.assert_array_equal(rows[2].asnumpy(), [5, 6])
    # iterating a 1-D array gives shape-(1,) arrays (MXNet 1.x `a[i]` on 1-D)
    assert [x.shape for x in mx.nd.arange(3)] == [(1,)] * 3
    assert [x.asscalar() for x in mx.nd.arange(3)] == [0, 1, 2]
    assert bool(mx.nd.array([2])) is True
    assert bool(mx.nd.array([0])) is False
    assert bool(mx.nd.zeros((0,))) is False
    with pytest.raises(ValueError, match='ambiguous'):
        bool(mx.nd.ones((2,)))


def test_repr_is_exactly_mxnets():
    assert repr(mx.nd.array([[1, 2], [3, 4]])) == \
        '\n[[1. 2.]\n [3. 4.]]\n<NDArray 2x2 @cpu(0)>'
    assert repr(mx.nd.array([1, 2, 3], dtype='int32', ctx=mx.cpu(1))) == \
        '\n[1 2 3]\n<NDArray 3 @cpu(1)>'
    assert repr(mx.nd.zeros((2, 1, 3))).endswith('<NDArray 2x1x3 @cpu(0)>')


# ---------------------------------------------------------------- copies
@pytest.mark.parametrize('dtype', DTYPES)
def test_copy_is_deep(dtype):
    a = mx.nd.array([1, 2, 3], dtype=dtype)
    b = a.copy()
    assert b.dtype == dtype and b.context == a.context
    a[:] = 0
    np.testing.assert_array_equal(b.asnumpy(), np.array([1, 2, 3], dtype=dtype))


def test_copyto_ndarray_writes_into_it_and_returns_it():
    a = mx.nd.array([[1, 2], [3, 4]])
    b = mx.nd.zeros((2, 2))
    alias = b
    assert a.copyto(b) is b
    np.testing.assert_array_equal(alias.asnumpy(), [[1, 2], [3, 4]])


def test_copyto_ndarray_of_another_dtype_casts():
    b = mx.nd.zeros((2,), dtype='int32')
    mx.nd.array([1.9, -2.9]).copyto(b)
    np.testing.assert_array_equal(b.asnumpy(), [1, -2])


def test_copyto_shape_mismatch_raises_naming_both_shapes():
    with pytest.raises(ValueError, match=r'\(2, 2\).*\(4,\)'):
        mx.nd.zeros((2, 2)).copyto(mx.nd.zeros((4,)))


def test_copyto_bad_target_raises_typeerror():
    with pytest.raises(TypeError, match='copyto'):
        mx.nd.zeros((2,)).copyto(np.zeros(2))


def test_copyto_context_and_as_in_context():
    a = mx.nd.array([1, 2])
    b = a.copyto(mx.cpu(1))
    assert b.context == mx.cpu(1) and b is not a
    np.testing.assert_array_equal(b.asnumpy(), [1, 2])
    assert a.as_in_context(mx.cpu(0)) is a       # same context: the array itself
    c = a.as_in_context(mx.cpu(3))
    assert c.context == mx.cpu(3)
    a[:] = 0
    np.testing.assert_array_equal(c.asnumpy(), [1, 2])


def test_copyto_a_view_target_writes_through_to_the_base():
    base = mx.nd.zeros((3, 2))
    mx.nd.array([7, 8]).copyto(base[1])
    np.testing.assert_array_equal(base.asnumpy(), [[0, 0], [7, 8], [0, 0]])


# ---------------------------------------------------------------- pickle
@pytest.mark.parametrize('dtype', DTYPES)
def test_pickle_round_trip(dtype):
    a = mx.nd.array(np.arange(6).reshape(2, 3), dtype=dtype, ctx=mx.cpu(1))
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b, mx.nd.NDArray)
    assert b.shape == (2, 3) and b.dtype == dtype and b.context == mx.cpu(1)
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())


def test_pickle_of_a_view_holds_only_the_view():
    base = mx.nd.arange(12).reshape(3, 4)
    b = pickle.loads(pickle.dumps(base[1]))
    np.testing.assert_array_equal(b.asnumpy(), [4, 5, 6, 7])


# ---------------------------------------------------------------- lifetime
def test_view_keeps_memory_alive_after_base_is_deleted():
    base = mx.nd.arange(40000)
    view = base[10:20]
    row = base.reshape(200, 200)[3]
    del base
    gc.collect()
    junk = [mx.nd.full((40000,), -1) for _ in range(4)]   # reuse freed pool chunks if any
    mx.nd.waitall()
    np.testing.assert_array_equal(view.asnumpy(), np.arange(10, 20))
    np.testing.assert_array_equal(row.asnumpy(), np.arange(600, 800))
    del junk


def test_deleting_inputs_with_pending_ops_is_safe():
    n = 300 * 300                                   # above the inline limit: worker path
    results = []
    for i in range(20):
        a = mx.nd.full((n,), float(i))
        b = mx.nd.ones((n,))
        results.append(a * 2 + b)
        del a, b                                     # ops reading them are still queued
        gc.collect()
    for i, r in enumerate(results):
        np.testing.assert_array_equal(r.asnumpy(), 2 * i + 1)


def test_deleting_the_output_of_a_pending_op_is_safe():
    keep = mx.nd.ones((50000,))
    for _ in range(20):
        out = keep * 3
        del out
    mx.nd.waitall()
    np.testing.assert_array_equal(keep.asnumpy(), 1)


def test_deleting_a_view_target_while_writes_are_pending():
    base = mx.nd.zeros((200, 200))
    for i in range(10):
        v = base[i * 20:(i + 1) * 20]
        v += i
        del v
    expected = np.repeat(np.arange(10.0), 20)[:, None] * np.ones((1, 200))
    np.testing.assert_array_equal(base.asnumpy(), expected)
