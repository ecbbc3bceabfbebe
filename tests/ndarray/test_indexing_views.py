"""Indexing, slice assignment and reshape views of NDArray (MXNet 1.x semantics).

MXNet 1.x contract:
* `a[i]`, `a[(i,)]`, `a[i:j]` (step 1) and `reshape` are views: writes through them show
  up in the base and the other way round (mx#13166 made `a[(0,)]` a copy; here it is the
  same view as `a[0]`);
* `a[i]` on a 1-D array has shape (1,), like `a[i, j]` on a 2-D one: no 0-d arrays;
* negative indices and slices follow NumPy (mx#8164 `a[-1]`, mx#7606 `a[1:-1]`,
  mx#14105 `a[::-1]`); other keys (steps, tuples with slices, integer arrays) give copies;
* `reshape` takes MXNet's special values 0, -1, -2, -3, -4 and `reverse=True`
  (examples from the MXNet `Reshape` operator docs).
"""
import gc

import numpy as np
import pytest

import mxcy as mx




def grid(shape=(4, 5), dtype='float32'):
    n = int(np.prod(shape))
    ref = np.arange(n).reshape(shape).astype(dtype)
    return mx.nd.array(ref, dtype=dtype), ref


# ---------------------------------------------------------------- integer and slice views
@pytest.mark.parametrize('key', [0, 2, -1, -4, np.int64(1), np.int32(-2)])
def test_integer_index_matches_numpy_and_is_a_view(key):
    a, ref = grid()
    v = a[key]
    assert v.shape == (5,)
    np.testing.assert_array_equal(v.asnumpy(), ref[key])
    v[:] = -7                                      # write through the view ...
    ref[key] = -7
    np.testing.assert_array_equal(a.asnumpy(), ref)
    a[:] = 3                                       # ... and through the base
    np.testing.assert_array_equal(v.asnumpy(), 3)


def test_tuple_of_one_int_is_the_same_view_as_the_int():
    a, ref = grid()
    v = a[(1,)]
    np.testing.assert_array_equal(v.asnumpy(), a[1].asnumpy())
    v += 100
    ref[1] += 100
    np.testing.assert_array_equal(a.asnumpy(), ref)
    a[(2,)] = 0
    ref[2] = 0
    np.testing.assert_array_equal(a.asnumpy(), ref)


def test_int_index_on_1d_has_shape_1_like_mxnet1():
    a = mx.nd.array([10, 20, 30])
    for key in (1, -1, (2,)):
        assert a[key].shape == (1,)
    assert a[1].asscalar() == 20
    assert a[-1].asscalar() == 30
    a[1][:] = 5                                    # still a view
    np.testing.assert_array_equal(a.asnumpy(), [10, 5, 30])


def test_chained_int_indices_are_views():
    a, ref = grid((2, 3, 4))
    v = a[1][2]
    assert v.shape == (4,)
    np.testing.assert_array_equal(v.asnumpy(), ref[1][2])
    w = a[1][2][3]
    assert w.shape == (1,) and w.asscalar() == ref[1, 2, 3]
    w[:] = -1
    ref[1, 2, 3] = -1
    np.testing.assert_array_equal(a.asnumpy(), ref)


@pytest.mark.parametrize('key', [slice(1, 3), slice(1, -1), slice(None, 2), slice(-2, None),
                                 slice(0, 100), slice(3, 1), slice(-100, 2), slice(1, 3, 1)])
def test_step_one_slices_match_numpy_and_are_views(key):
    a, ref = grid((5, 3))
    v = a[key]
    assert v.shape == ref[key].shape
    np.testing.assert_array_equal(v.asnumpy(), ref[key])
    v[:] = -5
    ref[key] = -5
    np.testing.assert_array_equal(a.asnumpy(), ref)


def test_slice_of_1d_with_negative_stop_like_mx7606():
    a = mx.nd.arange(6)
    np.testing.assert_array_equal(a[1:-1].asnumpy(), [1, 2, 3, 4])
    np.testing.assert_array_equal(a[-1].asnumpy(), [5])


@pytest.mark.parametrize('key', [slice(None, None, -1), slice(None, None, 2),
                                 slice(4, 0, -2), slice(1, None, 3)])
def test_stepped_slices_match_numpy_and_are_copies(key):
    a, ref = grid((6, 2))
    c = a[key]
    np.testing.assert_array_equal(c.asnumpy(), ref[key])
    c[:] = -1
    np.testing.assert_array_equal(a.asnumpy(), ref)     # base untouched


def test_view_of_a_view_and_slice_of_a_row():
    a, ref = grid((4, 6))
    v = a[1:4][1][2:5]
    np.testing.assert_array_equal(v.asnumpy(), ref[1:4][1][2:5])
    v[:] = 0
    ref[2, 2:5] = 0
    np.testing.assert_array_equal(a.asnumpy(), ref)


# ---------------------------------------------------------------- tuple and advanced keys
@pytest.mark.parametrize('key', [(1, 2), (-1, -1), (slice(None), 1), (1, slice(1, 4)),
                                 (slice(0, 2), slice(1, 3)), (Ellipsis, 0),
                                 (slice(None), slice(None, None, -1))])
def test_tuple_keys_match_numpy(key):
    a, ref = grid()
    expected = ref[key]
    got = a[key]
    assert got.shape == (expected.shape or (1,))      # MXNet 1.x has no 0-d results
    np.testing.assert_array_equal(got.asnumpy(), expected.reshape(got.shape))


def test_element_index_gives_shape_1():
    a, ref = grid()
    assert a[1, 2].shape == (1,)
    assert a[1, 2].asscalar() == ref[1, 2]


@pytest.mark.parametrize('make_key', [
    lambda: np.array([0, 2, 3]), lambda: [0, 2, 3], lambda: mx.nd.array([0, 2, 3]),
    lambda: mx.nd.array([0, 2, 3], dtype='int64'), lambda: np.array([-1, 0]),
    lambda: (np.array([0, 1]), np.array([2, 4])), lambda: (slice(None), [0, 4]),
])
def test_advanced_indexing_with_numpy_list_and_ndarray_keys(make_key):
    a, ref = grid()
    key = make_key()
    np_key = tuple(k.asnumpy().astype(np.int64) if isinstance(k, mx.nd.NDArray) else k
                   for k in key) if isinstance(key, tuple) else key
    if isinstance(np_key, mx.nd.NDArray):
        np_key = np_key.asnumpy().astype(np.int64)
    expected = ref[np_key]
    got = a[key]
    np.testing.assert_array_equal(got.asnumpy(), expected)
    got[:] = -9                                    # a copy: the base is untouched
    np.testing.assert_array_equal(a.asnumpy(), ref)


def test_advanced_index_array_changed_after_the_call_does_not_change_the_result():
    # the gather runs later on a worker; the key must be captured at the call
    a = mx.nd.arange(50000)
    key = np.array([1, 2, 3])
    lst = [4, 5]
    got, got_list = a[key], a[lst]
    key[:] = 0
    lst[:] = [0, 0]
    np.testing.assert_array_equal(got.asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(got_list.asnumpy(), [4, 5])


@pytest.mark.parametrize('key, text', [
    (4, '4'), (-5, '-5'), ((0, 5), '5'), ((4, 0), '4'), (np.array([0, 7]), '7'),
    ([1, 9], '9'),
])
def test_out_of_range_index_raises_indexerror_naming_it(key, text):
    a, _ = grid()
    with pytest.raises(IndexError, match=text):
        a[key]
    with pytest.raises(IndexError, match=text):
        a[key] = 1


def test_index_into_1d_out_of_range():
    with pytest.raises(IndexError, match='3'):
        mx.nd.arange(3)[3]


def test_zero_size_arrays_index_and_assign():
    z = mx.nd.zeros((0, 3))
    assert z[0:0].shape == (0, 3)
    z[:] = 1
    assert z.asnumpy().shape == (0, 3)
    with pytest.raises(IndexError):
        z[0]
    assert mx.nd.arange(5)[[]].shape == (0,)


def test_float_index_raises_indexerror():
    with pytest.raises(IndexError):
        mx.nd.arange(3)[1.0]


# ---------------------------------------------------------------- assignment
@pytest.mark.parametrize('value', [
    5, 2.5, np.float32(-1), mx.nd.full((4, 5), 3), np.full((4, 5), 4.0), [[1] * 5] * 4,
    mx.nd.arange(5), np.arange(5), [0, 1, 2, 3, 4], mx.nd.ones((4, 1)), np.ones((1, 5)),
    mx.nd.array([7]),
])
def test_assign_whole_array_from_scalar_ndarray_numpy_list_with_broadcast(value):
    a, ref = grid()
    alias = a
    a[:] = value
    np_value = value.asnumpy() if isinstance(value, mx.nd.NDArray) else value
    ref[:] = np_value
    assert a is alias
    np.testing.assert_array_equal(a.asnumpy(), ref)


@pytest.mark.parametrize('key, value', [
    (slice(1, 3), 9), (slice(1, 3), np.arange(10).reshape(2, 5)), (slice(1, 3), [1, 2, 3, 4, 5]),
    (1, mx.nd.arange(5)), (-1, 0), ((slice(None), 0), mx.nd.array([1, 2, 3, 4])),
    ((slice(None), 0), 7), ((slice(None), slice(1, 3)), [[8, 9]]), ((2, 3), 42),
    (slice(None, None, 2), -1), (np.array([0, 3]), mx.nd.ones((2, 5))), ([1, 2], 6),
    ((Ellipsis, -1), np.array([1, 2, 3, 4])), (mx.nd.array([1, 3]), 0),
])
def test_partial_assignment_matches_numpy(key, value):
    a, ref = grid()
    np_key = key.asnumpy().astype(np.int64) if isinstance(key, mx.nd.NDArray) else key
    a[key] = value
    ref[np_key] = value.asnumpy() if isinstance(value, mx.nd.NDArray) else value
    np.testing.assert_array_equal(a.asnumpy(), ref)


def test_assignment_casts_to_the_target_dtype():
    a = mx.nd.zeros((3,), dtype='int32')
    a[:] = mx.nd.array([1.9, -1.9, 2.5])           # float32 NDArray into int32
    np.testing.assert_array_equal(a.asnumpy(), [1, -1, 2])
    a[:] = np.array([4.7, 5.2, 6.9])
    np.testing.assert_array_equal(a.asnumpy(), [4, 5, 6])
    a[1] = 8.9
    np.testing.assert_array_equal(a.asnumpy(), [4, 8, 6])


def test_assignment_from_an_overlapping_view_of_itself():
    a = mx.nd.arange(6)
    a[1:5] = a[0:4]
    np.testing.assert_array_equal(a.asnumpy(), [0, 0, 1, 2, 3, 5])
    b = mx.nd.arange(6)
    b[0:4] = b[2:6]
    np.testing.assert_array_equal(b.asnumpy(), [2, 3, 4, 5, 4, 5])


def test_assigned_numpy_value_is_copied_at_the_call():
    a = mx.nd.zeros((60000,))
    src = np.ones(60000, dtype=np.float32)
    a[:] = src
    a[::2] = src[::2] * 2
    src[:] = -1
    expected = np.ones(60000)
    expected[::2] = 2
    np.testing.assert_array_equal(a.asnumpy(), expected)


def test_assignment_index_array_changed_after_the_call_does_not_matter():
    a = mx.nd.zeros((50000,))
    key = np.array([1, 2])
    a[key] = 5
    key[:] = 7
    expected = np.zeros(50000)
    expected[[1, 2]] = 5
    np.testing.assert_array_equal(a.asnumpy(), expected)


@pytest.mark.parametrize('key, value', [
    (slice(None), mx.nd.ones((3,))), (slice(None), np.ones((4, 4))), (slice(None), [1, 2]),
    (slice(1, 3), mx.nd.ones((3, 5))), (0, mx.nd.ones((4,))), ((slice(None), 0), [1, 2]),
    (slice(None), mx.nd.ones((2, 4, 5))),
])
def test_wrong_shape_assignment_raises_valueerror_naming_shapes(key, value):
    a, ref = grid()
    vshape = np.shape(value.asnumpy() if isinstance(value, mx.nd.NDArray) else value)
    with pytest.raises(ValueError, match=r'\(' + ', '.join(map(str, vshape))):
        a[key] = value
    np.testing.assert_array_equal(a.asnumpy(), ref)    # nothing written


# ---------------------------------------------------------------- reshape
@pytest.mark.parametrize('src, target, expected', [
    # examples of MXNet's Reshape docs
    ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), (6, 1, 4)),
    ((2, 3, 4), (3, -1, 8), (3, 1, 8)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (-2,), (2, 3, 4)),
    ((2, 3, 4), (2, -2), (2, 3, 4)),
    ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), (6, 4)),
    ((2, 3, 4, 5), (-3, -3), (6, 20)),
    ((2, 3, 4), (0, -3), (2, 12)),
    ((2, 3, 4), (-3, -2), (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)),
    # plain shapes
    ((2, 3, 4), (4, 6), (4, 6)), ((6,), (2, 3), (2, 3)), ((2, 3), (-1, 2), (3, 2)),
    ((4, 0), (0, -1), (4, 0)),
])
def test_reshape_special_values_as_in_mxnet_docs(src, target, expected):
    a = mx.nd.array(np.arange(int(np.prod(src))).reshape(src))
    b = a.reshape(target)
    assert b.shape == expected
    np.testing.assert_array_equal(b.asnumpy(), np.arange(int(np.prod(src))).reshape(expected))
    assert a.reshape(*target).shape == expected
    assert a.reshape(shape=target).shape == expected
    assert a.reshape(list(target)).shape == expected


@pytest.mark.parametrize('src, target, expected, expected_rev', [
    ((10, 5, 4), (-1, 0), (40, 5), (50, 4)),                  # MXNet docs
    ((2, 3, 4), (0, -1), (2, 12), (3, 8)),       # reversed: (4,3,2) by (-1,0) -> (8,3)
    ((2, 3, 4), (-3, 0), (6, 4), (6, 4)),        # reversed: (4,3,2) by (0,-3) -> (4,6)
    ((2, 3, 4), (-1, 3, 2), (4, 3, 2), (4, 3, 2)),
    ((2, 3, 4), (-1, 0), (8, 3), (6, 4)),        # reversed: (4,3,2) by (0,-1) -> (4,6)
])
def test_reshape_reverse_infers_from_the_right(src, target, expected, expected_rev):
    a = mx.nd.zeros(src)
    assert a.reshape(target).shape == expected
    assert a.reshape(target, reverse=True).shape == expected_rev
    assert a.reshape(*target, reverse=True).shape == expected_rev


def test_reshape_reverse_reverses_the_target_too_so_a_leading_minus4_fails():
    # MXNet reverses both shapes before inference: (-4, 1, 2, -2) becomes (-2, 2, 1, -4),
    # and a -4 with nothing after it is an error there too.
    with pytest.raises(ValueError, match='-4'):
        mx.nd.zeros((2, 3, 4)).reshape((-4, 1, 2, -2), reverse=True)


def test_reshape_shares_memory_both_ways():
    a = mx.nd.arange(12)
    b = a.reshape((3, 4))
    c = b.reshape(-1, 2)
    b[1] = -1
    expected = np.arange(12.0)
    expected[4:8] = -1
    np.testing.assert_array_equal(a.asnumpy(), expected)
    np.testing.assert_array_equal(c.asnumpy(), expected.reshape(6, 2))
    a += 1
    np.testing.assert_array_equal(b.asnumpy(), (expected + 1).reshape(3, 4))


def test_reshape_of_a_row_view_is_a_view_of_the_base():
    a = mx.nd.zeros((3, 4))
    r = a[1].reshape(2, 2)
    r[:] = 1
    np.testing.assert_array_equal(a.asnumpy(), [[0] * 4, [1] * 4, [0] * 4])


@pytest.mark.parametrize('target, exc, text', [
    ((5, 5), ValueError, 'reshape'), ((-1, -1), ValueError, '-1'), ((7, -1), ValueError, 'reshape'),
    ((2, 3, 4, 0), ValueError, '0'), ((-5,), ValueError, '-5'), ((-3, -3), ValueError, '-3'),
    ((-4, 5, -1, -2), ValueError, '-4'), ((-4, -1, -1, -2), ValueError, '-4'),
    ((-4, -2, -3), ValueError, '-4'), ((-4, 1), ValueError, '-4'), ((2.0, 12), TypeError, 'integers'),
    (('2', 12), TypeError, 'integers'),
])
def test_bad_reshape_raises(target, exc, text):
    a = mx.nd.zeros((2, 3, 4))
    with pytest.raises(exc, match=text):
        a.reshape(target)


def test_reshape_needs_a_shape_and_accepts_an_int_keyword():
    a = mx.nd.ones((2, 3))
    with pytest.raises(TypeError, match='shape is required'):
        a.reshape()
    assert a.reshape(shape=6).shape == (6,)
    assert a.reshape(6).shape == (6,)


def test_reshape_rejects_unknown_keywords():
    with pytest.raises(TypeError, match='order'):
        mx.nd.zeros((2, 2)).reshape((4,), order='F')


def test_reshape_view_keeps_memory_alive():
    a = mx.nd.arange(30000)
    b = a.reshape(100, 300)
    del a
    gc.collect()
    np.testing.assert_array_equal(b[99].asnumpy(), np.arange(29700, 30000))
