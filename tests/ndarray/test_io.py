"""mx.nd.save / load / load_frombuffer and pickling of NDArrays."""
import io
import pathlib
import pickle
import struct
import time

import numpy as np
import pytest

import mxcy as mx

DATA = pathlib.Path(__file__).resolve().parent / 'data'
DTYPES = ['float32', 'float64', 'float16', 'uint8', 'int8', 'int32', 'int64']


def sample(dtype, shape, seed=0):
    rng = np.random.RandomState(seed)
    if dtype.startswith('float'):
        return (rng.randn(*shape) * 50).astype(dtype)
    info = np.iinfo(dtype)
    return rng.randint(info.min, info.max, size=shape, dtype=dtype)


def assert_same(expected, arr):
    assert isinstance(arr, mx.nd.NDArray)
    got = arr.asnumpy()
    assert arr.dtype == expected.dtype and arr.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


# ---------------------------------------------------------------- round trips
@pytest.mark.parametrize('dtype', DTYPES)
def test_round_trip_single_list_and_dict(tmp_path, dtype):
    a, b = sample(dtype, (3, 4), 1), sample(dtype, (5,), 2)
    single = tmp_path / 'single.nd'
    mx.nd.save(str(single), mx.nd.array(a, dtype=dtype))
    out = mx.nd.load(str(single))
    assert isinstance(out, list) and len(out) == 1       # a single array comes back as a list
    assert_same(a, out[0])

    mx.nd.save(str(tmp_path / 'list.nd'), [mx.nd.array(a, dtype=dtype),
                                           mx.nd.array(b, dtype=dtype)])
    out = mx.nd.load(str(tmp_path / 'list.nd'))
    assert isinstance(out, list) and len(out) == 2
    assert_same(a, out[0])
    assert_same(b, out[1])

    mx.nd.save(str(tmp_path / 'dict.params'), {'arg:w': mx.nd.array(a, dtype=dtype),
                                               'aux:b': mx.nd.array(b, dtype=dtype)})
    out = mx.nd.load(str(tmp_path / 'dict.params'))
    assert isinstance(out, dict) and list(out) == ['arg:w', 'aux:b']
    assert_same(a, out['arg:w'])
    assert_same(b, out['aux:b'])
    assert out['arg:w'].context == mx.cpu()


def test_mixed_dtypes_tuple_views_and_empty_arrays(tmp_path):
    base = mx.nd.array(np.arange(12).reshape(4, 3))
    arrays = (base[1:3], base[2], mx.nd.zeros((0, 5), dtype='int64'),
              mx.nd.array([2 ** 62, -5], dtype='int64'), mx.nd.array([1.5, -2], dtype='float16'))
    path = tmp_path / 'mixed.nd'
    mx.nd.save(path, arrays)                          # a pathlib.Path works too
    out = mx.nd.load(path)
    assert [o.dtype for o in out] == [np.float32, np.float32, np.int64, np.int64, np.float16]
    assert out[0].asnumpy().tolist() == [[3, 4, 5], [6, 7, 8]]
    assert out[1].asnumpy().tolist() == [6, 7, 8]
    assert out[2].shape == (0, 5)
    assert out[3].asnumpy().tolist() == [2 ** 62, -5]
    assert out[4].asnumpy().tolist() == [1.5, -2.0]


def test_file_objects_and_buffers(tmp_path):
    d = {'a': mx.nd.array([1, 2, 3]), 'b': mx.nd.array([[7]], dtype='int32')}
    buf = io.BytesIO()
    mx.nd.save(buf, d)
    raw = buf.getvalue()
    for source in (raw, bytearray(raw), memoryview(raw)):
        out = mx.nd.load_frombuffer(source)
        assert out['a'].asnumpy().tolist() == [1, 2, 3] and out['b'].dtype == np.int32
    out = mx.nd.load(io.BytesIO(raw))
    assert out['b'].asnumpy().tolist() == [[7]]
    with open(tmp_path / 'f.params', 'wb') as f:
        mx.nd.save(f, d)
    assert (tmp_path / 'f.params').read_bytes() == raw


def test_bytes_match_mxnet_1_9_1():
    # mx.nd.save(f, {'w': mx.nd.array([0, 1, 2])}) in MXNet 1.9.1 writes exactly this
    expected = bytes.fromhex(
        '1201000000000000' '0000000000000000' '0100000000000000'
        'c9fa93f9' '00000000' '01000000' '0300000000000000'
        '01000000' '00000000' '00000000'
        '00000000' '0000803f' '00000040'
        '0100000000000000' '0100000000000000' '77')
    buf = io.BytesIO()
    mx.nd.save(buf, {'w': mx.nd.array([0, 1, 2])})
    assert buf.getvalue() == expected


def test_save_waits_for_pending_writes(tmp_path):
    a = mx.nd.zeros((1000,))

    def late_write():
        time.sleep(0.05)
        a._np_view()[...] = 3.0
    mx.engine.push(late_write, (), [a], name='late_write')
    b = a * 2                                         # queued behind the slow write
    mx.nd.save(str(tmp_path / 'x.nd'), [a, b])
    out = mx.nd.load(str(tmp_path / 'x.nd'))
    assert np.all(out[0].asnumpy() == 3.0) and np.all(out[1].asnumpy() == 6.0)


def test_loaded_arrays_are_independent(tmp_path):
    path = str(tmp_path / 'x.nd')
    src = mx.nd.array([1.0, 2.0])
    mx.nd.save(path, src)
    first = mx.nd.load(path)[0]
    first[:] = 9
    src[:] = 5
    assert mx.nd.load(path)[0].asnumpy().tolist() == [1.0, 2.0]
    assert first.asnumpy().tolist() == [9.0, 9.0]


def test_large_array_round_trip(tmp_path):
    a = np.arange(2_000_000, dtype=np.float32)
    mx.nd.save(str(tmp_path / 'big.nd'), {'big': mx.nd.array(a)})
    out = mx.nd.load(str(tmp_path / 'big.nd'))['big']
    assert out.shape == a.shape and np.array_equal(out.asnumpy(), a)


# ---------------------------------------------------------------- files written by MXNet
def test_mxnet_written_dict_fixture():
    out = mx.nd.load(str(DATA / 'mxnet191_dict_f32_i64.params'))
    assert list(out) == ['arg:fc1_weight', 'aux:steps']
    w, s = out['arg:fc1_weight'], out['aux:steps']
    assert w.dtype == np.float32 and w.shape == (2, 3)
    assert w.asnumpy().tolist() == [[0.5, -1.25, 3.0], [2.0, 0.0, -0.125]]
    assert s.dtype == np.int64 and s.asnumpy().tolist() == [7, -3, 2 ** 40]
    assert (w * 2).asnumpy().tolist() == [[1.0, -2.5, 6.0], [4.0, 0.0, -0.25]]  # usable


def test_mxnet_written_list_fixture(tmp_path):
    raw = (DATA / 'mxnet191_list_f16_u8.nd').read_bytes()
    out = mx.nd.load(str(DATA / 'mxnet191_list_f16_u8.nd'))
    assert isinstance(out, list) and len(out) == 2
    assert out[0].dtype == np.float16 and out[0].shape == (4,)
    assert out[0].asnumpy().view(np.uint16).tolist() == [0x3E00, 0xC000, 0x7BFF, 0x2E66]
    assert out[1].dtype == np.uint8 and out[1].asnumpy().tolist() == [[0, 1, 255], [128, 7, 42]]
    buf = io.BytesIO()
    mx.nd.save(buf, out)                              # written back byte for byte
    assert buf.getvalue() == raw


# ---------------------------------------------------------------- errors
def test_missing_file_names_the_path(tmp_path):
    path = tmp_path / 'no_such_dir' / 'missing.params'
    with pytest.raises(FileNotFoundError) as info:
        mx.nd.load(str(path))
    assert str(path) in str(info.value) and 'mx.nd.load' in str(info.value)
    assert info.value.filename == str(path)


def test_truncated_and_corrupt_files(tmp_path):
    buf = io.BytesIO()
    mx.nd.save(buf, {'w': mx.nd.ones((4, 4)), 'b': mx.nd.zeros(4, dtype='int64')})
    raw = buf.getvalue()
    path = tmp_path / 'cut.params'
    for cut in (0, 10, 30, len(raw) // 2, len(raw) - 1):
        path.write_bytes(raw[:cut])
        with pytest.raises(ValueError, match='^mx.nd.load: (truncated file|array count 2)'):
            mx.nd.load(str(path))
    path.write_bytes(b'PK\x03\x04 definitely not an ndarray file at all')
    with pytest.raises(ValueError, match='^mx.nd.load: not an MXNet NDArray file'):
        mx.nd.load(str(path))
    with pytest.raises(ValueError, match='^mx.nd.load: .*trailing garbage'):
        mx.nd.load_frombuffer(raw + b'x')


def test_bool_array_in_file():
    # MXNet's type flag 7 (bool) is a dtype of mxcy's arrays (mx.np needs it)
    raw = (struct.pack('<QQQ', 0x112, 0, 1) + struct.pack('<Iiiq', 0xF993FAC9, 0, 1, 2)
           + struct.pack('<iii', 1, 0, 7) + b'\x01\x00' + struct.pack('<QQ', 1, 4) + b'mask')
    loaded = mx.nd.load_frombuffer(raw)['mask']
    assert loaded.dtype == np.bool_ and loaded.asnumpy().tolist() == [True, False]


def test_unsupported_dtype_in_file():
    raw = (struct.pack('<QQQ', 0x112, 0, 1) + struct.pack('<Iiiq', 0xF993FAC9, 0, 1, 2)
           + struct.pack('<iii', 1, 0, 8) + b'\x01\x00\x00\x00' + struct.pack('<QQ', 1, 4)
           + b'mask')
    with pytest.raises(ValueError, match="mx.nd.load: array 0 has int16 type flag 8"):
        mx.nd.load_frombuffer(raw)


@pytest.mark.parametrize('data,pattern', [
    ([mx.nd.ones(2), np.ones(2)], r'data\[1\] must be an NDArray, got ndarray'),
    ({'w': mx.nd.ones(2), 'b': 3}, r"data\['b'\] must be an NDArray, got int"),
    ({1: mx.nd.ones(2)}, 'dict keys must be str, got int 1'),
    (5, 'data must be an NDArray, a list of NDArrays or a dict'),
    (np.ones(3), 'data must be an NDArray'),
])
def test_save_rejects_bad_data(tmp_path, data, pattern):
    path = tmp_path / 'bad.nd'
    with pytest.raises(TypeError, match=pattern):
        mx.nd.save(str(path), data)
    assert not path.exists()                          # nothing written on error


def test_bad_fname_types():
    with pytest.raises(TypeError, match='mx.nd.save: fname must be a path'):
        mx.nd.save(42, mx.nd.ones(1))
    with pytest.raises(TypeError, match='mx.nd.load: fname must be a path'):
        mx.nd.load(42)
    with pytest.raises(TypeError, match='mx.nd.load: expected bytes'):
        mx.nd.load_frombuffer('a string')


# ---------------------------------------------------------------- pickle
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('protocol', [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip_every_dtype(dtype, protocol):
    a = sample(dtype, (2, 3, 4), 3)
    arr = mx.nd.array(a, dtype=dtype)
    back = pickle.loads(pickle.dumps(arr, protocol=protocol))
    assert_same(a, back)
    assert back.context == arr.context
    back[:] = 0                                       # a new array, not a view of the old
    assert_same(a, arr)


def test_pickle_views_lists_and_pending_writes():
    base = mx.nd.array(np.arange(20).reshape(5, 4))
    view = base[1:3]
    c = base * 10                                     # pending op, pickled after it runs
    objs = pickle.loads(pickle.dumps({'view': view, 'row': base[4], 'list': [c, base]}))
    assert objs['view'].asnumpy().tolist() == [[4, 5, 6, 7], [8, 9, 10, 11]]
    assert objs['row'].asnumpy().tolist() == [16, 17, 18, 19]
    assert np.array_equal(objs['list'][0].asnumpy(), np.arange(20).reshape(5, 4) * 10)
    assert objs['list'][1].shape == (5, 4)
