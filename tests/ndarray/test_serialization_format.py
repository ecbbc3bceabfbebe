"""Tests for mxcy/ndarray/_serialization.py, the MXNet 1.x NDArray file codec.

The module is imported by file path so these tests run without the package's
``__init__`` files.  Expected byte strings are built by hand with ``struct``
(independently of the codec) or were written by real MXNet 1.9.1.
"""
import importlib.util
import pathlib
import struct
import time
import tracemalloc

import numpy as np
import pytest

_ROOT = pathlib.Path(__file__).resolve().parents[2]
_DATA = pathlib.Path(__file__).resolve().parent / 'data'
_spec = importlib.util.spec_from_file_location(
    '_mxcy_serialization_under_test', _ROOT / 'mxcy' / 'ndarray' / '_serialization.py')
ser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ser)

DTYPES = ['float32', 'float64', 'float16', 'uint8', 'int8', 'int32', 'int64', 'bool']
FLAGS = {'float32': 0, 'float64': 1, 'float16': 2, 'uint8': 3, 'int32': 4,
         'int8': 5, 'int64': 6, 'bool': 7}
V1, V2, V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA


# -- hand-built encoders, independent of the module under test -------------
def head(n):
    return struct.pack('<QQQ', 0x112, 0, n)


def keys(*names):
    out = struct.pack('<Q', len(names))
    for k in names:
        b = k.encode('utf-8')
        out += struct.pack('<Q', len(b)) + b
    return out


def v2(shape, flag, payload, magic=V2, stype=0):
    return (struct.pack('<Iii', magic, stype, len(shape))
            + struct.pack('<%dq' % len(shape), *shape)
            + struct.pack('<iii', 1, 0, flag) + payload)


def sample(dtype, shape, seed=0):
    rng = np.random.RandomState(seed)
    if dtype == 'bool':
        return rng.rand(*shape) > 0.5
    if dtype.startswith('float'):
        return (rng.randn(*shape) * 50).astype(dtype)
    info = np.iinfo(dtype)
    return rng.randint(info.min, info.max, size=shape, dtype=dtype)


def assert_same(a, b):
    assert isinstance(b, np.ndarray)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def load_error(buf, *fragments):
    with pytest.raises(ValueError) as info:
        ser.loads(buf)
    msg = str(info.value)
    assert msg.startswith('mx.nd.load:'), msg
    for f in fragments:
        assert f in msg, (f, msg)
    return msg


# -- round trips ------------------------------------------------------------
@pytest.mark.parametrize('dtype', DTYPES)
def test_round_trip_list_every_dtype(dtype):
    arrs = [sample(dtype, s, i) for i, s in enumerate([(5,), (2, 3), (2, 1, 4), (0, 3)])]
    out = ser.loads(ser.dumps(arrs))
    assert isinstance(out, list) and len(out) == 4
    for a, b in zip(arrs, out):
        assert_same(a, b)


@pytest.mark.parametrize('dtype', DTYPES)
def test_round_trip_dict_every_dtype_and_flag(dtype):
    a = sample(dtype, (3, 2))
    buf = ser.dumps({'arg:w': a})
    # type flag sits after list header (24), magic/stype/ndim (12), dims (16), ctx (8)
    assert struct.unpack_from('<i', buf, 24 + 12 + 16 + 8)[0] == FLAGS[dtype]
    out = ser.loads(buf)
    assert list(out) == ['arg:w']
    assert_same(a, out['arg:w'])


def test_dict_order_preserved_and_unicode_keys():
    d = {'z': np.ones(1, 'f4'), 'a': np.zeros(2, 'i8'), 'gewicht_\u00e9\u6f22': np.arange(3.0)}
    out = ser.loads(ser.dumps(d))
    assert list(out) == list(d)
    for k in d:
        assert_same(d[k], out[k])


def test_tuple_input_and_bytes_types():
    buf = ser.dumps((np.arange(4, dtype='int32'),))
    for b in (buf, bytearray(buf), memoryview(buf), memoryview(np.frombuffer(buf, np.uint32))):
        out = ser.loads(b)
        assert out[0].tolist() == [0, 1, 2, 3] and out[0].dtype == np.int32


def test_empty_list_and_empty_dict():
    assert ser.dumps([]) == head(0) + keys()
    assert ser.loads(ser.dumps([])) == []
    assert ser.dumps({}) == head(0) + keys()
    assert ser.loads(ser.dumps({})) == []       # MXNet also returns [] here


def test_zero_size_arrays():
    a = np.zeros((0, 3), 'float32')
    buf = ser.dumps([a])
    assert buf == head(1) + v2((0, 3), 0, b'') + keys()
    out = ser.loads(buf)[0]
    assert out.shape == (0, 3) and out.dtype == np.float32


def test_large_array_round_trip_and_speed():
    a = np.arange(8 * 1024 * 1024, dtype='float32')  # 32 MB
    buf = ser.dumps({'big': a})
    assert len(buf) == 24 + 12 + 8 + 12 + a.nbytes + 8 + 8 + 3
    t = time.perf_counter()
    out = ser.loads(buf)['big']
    assert time.perf_counter() - t < 1.0
    assert np.array_equal(out, a) and out[-1] == 8 * 1024 * 1024 - 1


def test_non_contiguous_and_big_endian_inputs_saved_in_c_order():
    base = np.arange(24, dtype='>f8').reshape(4, 6)
    view = base[::2, ::3].T                      # shape (2, 2), not contiguous
    buf = ser.dumps([view])
    expected = np.array([[0, 12], [3, 15]], '<f8').tobytes()
    assert buf == head(1) + v2((2, 2), 1, expected) + keys()
    out = ser.loads(buf)[0]
    assert out.tolist() == [[0.0, 12.0], [3.0, 15.0]] and out.dtype.isnative


def test_zero_dim_arrays_written_as_v3():
    buf = ser.dumps([np.array(2.5, 'float32'), np.int64(7)])
    expected = (head(2)
                + struct.pack('<Iii', V3, 0, 0) + struct.pack('<iii', 1, 0, 0) + struct.pack('<f', 2.5)
                + struct.pack('<Iii', V3, 0, 0) + struct.pack('<iii', 1, 0, 6) + struct.pack('<q', 7)
                + keys())
    assert buf == expected
    out = ser.loads(buf)
    assert out[0].shape == () and out[0] == 2.5 and out[0].dtype == np.float32
    assert out[1].shape == () and out[1] == 7 and out[1].dtype == np.int64


def test_loaded_arrays_own_their_memory():
    buf = bytearray(ser.dumps({'w': np.arange(6, dtype='int32').reshape(2, 3),
                               'b': np.array([True, False])}))
    out = ser.loads(buf)
    for a in out.values():
        assert a.flags.owndata and a.flags.writeable and a.flags.c_contiguous
    buf[:] = b'\xff' * len(buf)                  # clobbering the source is harmless
    assert out['w'].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert out['b'].tolist() == [True, False]


def test_bool_nonzero_bytes_normalised():
    out = ser.loads(head(1) + v2((3,), 7, b'\x00\x02\xff') + keys())[0]
    assert out.dtype == np.bool_ and out.tolist() == [False, True, True]
    assert out.view(np.uint8).tolist() == [0, 1, 1]


# -- byte-exact layout (pinned to what MXNet 1.9.1 writes) ------------------
def test_byte_exact_dict_matches_mxnet_1_9_1():
    # mx.nd.save(f, {'w': mx.nd.array([0, 1, 2])}) in MXNet 1.9.1 writes exactly this
    expected = bytes.fromhex(
        '1201000000000000' '0000000000000000' '0100000000000000'   # 0x112, 0, 1 array
        'c9fa93f9' '00000000'                                      # V2 magic, dense
        '01000000' '0300000000000000'                              # ndim 1, dim 3
        '01000000' '00000000' '00000000'                           # cpu, dev 0, float32
        '00000000' '0000803f' '00000040'                           # 0.0, 1.0, 2.0
        '0100000000000000' '0100000000000000' '77')                # 1 key, len 1, 'w'
    assert ser.dumps({'w': np.arange(3, dtype='float32')}) == expected
    out = ser.loads(expected)
    assert list(out) == ['w'] and out['w'].tolist() == [0.0, 1.0, 2.0]


def test_byte_exact_list_no_keys():
    expected = head(1) + v2((1, 2), 4, struct.pack('<ii', -1, 5)) + struct.pack('<Q', 0)
    assert ser.dumps([np.array([[-1, 5]], 'int32')]) == expected


# -- older layouts ----------------------------------------------------------
def test_load_v1():
    rec = (struct.pack('<II', V1, 2) + struct.pack('<qq', 2, 2)
           + struct.pack('<iii', 1, 0, 1) + struct.pack('<4d', 1.0, -2.0, 3.5, 0.25))
    out = ser.loads(head(1) + rec + keys('p'))
    assert out['p'].dtype == np.float64 and out['p'].tolist() == [[1.0, -2.0], [3.5, 0.25]]


def test_load_legacy_no_magic():
    rec = (struct.pack('<III', 2, 1, 3)                 # ndim 2, uint32 dims (1, 3)
           + struct.pack('<iii', 2, 1, 0)               # saved from gpu(1), float32
           + struct.pack('<3f', 1.5, -1.0, 8.0))
    rec2 = struct.pack('<II', 1, 2) + struct.pack('<iii', 1, 0, 3) + b'\x07\xfe'
    out = ser.loads(head(2) + rec + rec2 + keys())
    assert out[0].shape == (1, 3) and out[0].tolist() == [[1.5, -1.0, 8.0]]
    assert out[1].dtype == np.uint8 and out[1].tolist() == [7, 254]


def test_load_v3_shapes():
    rec = struct.pack('<Iii', V3, 0, 0) + struct.pack('<iii', 1, 0, 5) + b'\xfd'
    rec2 = v2((2,), 2, np.array([1.5, -0.5], '<f2').tobytes(), magic=V3)
    out = ser.loads(head(2) + rec + rec2 + keys())
    assert out[0].shape == () and out[0].dtype == np.int8 and int(out[0]) == -3
    assert out[1].dtype == np.float16 and out[1].tolist() == [1.5, -0.5]


@pytest.mark.parametrize('rec', [
    struct.pack('<Iii', V2, 0, 0),          # V2 "none": ndim 0, record ends
    struct.pack('<II', V1, 0),              # V1 none
    struct.pack('<I', 0),                   # legacy none
])
def test_none_array_loads_as_empty_float32(rec):
    out = ser.loads(head(2) + rec + v2((1,), 3, b'\x09') + keys())
    assert out[0].shape == (0,) and out[0].dtype == np.float32
    assert out[1].tolist() == [9]


# -- real MXNet 1.9.1 fixtures ----------------------------------------------
def test_mxnet_written_dict_fixture():
    out = ser.loads((_DATA / 'mxnet191_dict_f32_i64.params').read_bytes())
    assert list(out) == ['arg:fc1_weight', 'aux:steps']
    w = out['arg:fc1_weight']
    assert w.dtype == np.float32 and w.tolist() == [[0.5, -1.25, 3.0], [2.0, 0.0, -0.125]]
    s = out['aux:steps']
    assert s.dtype == np.int64 and s.tolist() == [7, -3, 2 ** 40]


def test_mxnet_written_list_fixture():
    raw = (_DATA / 'mxnet191_list_f16_u8.nd').read_bytes()
    out = ser.loads(raw)
    assert isinstance(out, list) and len(out) == 2
    assert out[0].dtype == np.float16 and out[0].shape == (4,)
    assert out[0].view(np.uint16).tolist() == [0x3E00, 0xC000, 0x7BFF, 0x2E66]
    assert out[0].tolist() == [1.5, -2.0, 65504.0, 0.0999755859375]
    assert out[1].dtype == np.uint8 and out[1].tolist() == [[0, 1, 255], [128, 7, 42]]
    assert ser.dumps(out) == raw                 # and we write the same bytes back


# -- malformed input --------------------------------------------------------
GOOD = head(1) + v2((2,), 0, struct.pack('<2f', 1.0, 2.0)) + keys('k')


def test_error_wrong_list_magic():
    load_error(b'\x13\x01' + GOOD[2:], 'expected list magic 0x112', 'found 0x113', 'offset 0')


def test_error_truncated_header():
    load_error(GOOD[:10], 'truncated file', 'file header', 'needs 24 bytes', 'only 10 remain')


def test_error_huge_array_count_fails_fast():
    buf = struct.pack('<QQQ', 0x112, 0, 2 ** 60) + b'\0' * 76
    tracemalloc.start()
    t = time.perf_counter()
    load_error(buf, 'array count 1152921504606846976', 'only 76 remain')
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert time.perf_counter() - t < 0.5 and peak < 1 << 20


def test_error_huge_key_count_and_key_length():
    body = head(1) + v2((1,), 0, b'\0' * 4)
    load_error(body + struct.pack('<Q', 2 ** 62), 'file has 1 arrays but 4611686018427387904 keys')
    nones = head(3) + struct.pack('<I', 0) * 3          # three legacy "none" arrays
    load_error(nones + struct.pack('<QQ', 3, 0), 'key count 3 at offset 36 is impossible',
               'only 8 remain')
    load_error(body + struct.pack('<QQ', 1, 2 ** 63) + b'abc', 'truncated file', 'key 0',
               'needs 9223372036854775808 bytes', 'only 3 remain')


def test_error_key_count_mismatch():
    buf = head(2) + v2((1,), 0, b'\0' * 4) * 2 + keys('only_one')
    load_error(buf, 'file has 2 arrays but 1 keys', 'expected 0 or 2')


def test_error_negative_dim():
    load_error(head(1) + v2((2, -3), 0, b'') + keys(), 'negative dimension -3', 'offset 36')
    rec = v2((-1, 2), 0, b'', magic=V3)
    load_error(head(1) + rec + keys(), 'negative dimension -1')


def test_error_ndim_too_large():
    rec = struct.pack('<Iii', V2, 0, 33) + b'\0' * 8 * 33
    load_error(head(1) + rec + keys(), 'ndim 33', 'expected 0..32', 'offset 32')
    rec = struct.pack('<Iii', V2, 0, -5)
    load_error(head(1) + rec + keys(), 'ndim -5')
    load_error(head(1) + struct.pack('<II', V1, 2 ** 31) + keys(), 'ndim 2147483648')


def test_error_v3_unknown_shape():
    rec = struct.pack('<Iii', V3, 0, -1)
    load_error(head(1) + rec + keys(), 'unknown shape (ndim -1)', 'offset 32')


@pytest.mark.parametrize('flag,name', [(99, 'unknown'), (8, 'int16'), (12, 'bfloat16'), (-1, 'unknown')])
def test_error_type_flag(flag, name):
    msg = load_error(head(1) + v2((1,), flag, b'\0' * 8) + keys(),
                     '%s type flag %d' % (name, flag), 'offset 52')
    assert '0 (float32)' in msg and '7 (bool)' in msg


def test_error_unknown_magic():
    load_error(head(1) + struct.pack('<I', 0xDEADBEEF) + b'\0' * 40 + keys(),
               'unknown magic 0xDEADBEEF', 'offset 24', '0xF993FAC9')


@pytest.mark.parametrize('stype,name', [(1, 'row_sparse'), (2, 'csr'), (-1, 'undefined'), (7, 'unknown')])
def test_error_sparse_storage(stype, name):
    load_error(head(1) + v2((2,), 0, b'\0' * 8, stype=stype) + keys(),
               'storage type %s (%d)' % (name, stype), 'only dense (0)')


def test_error_truncated_data():
    buf = head(1) + v2((10, 100), 1, b'\0' * 56) + keys()
    load_error(buf, 'truncated file', 'array 0', 'needs 8000 bytes of data at offset 64',
               'only 64 remain')


def test_error_huge_shape_does_not_allocate():
    tracemalloc.start()
    load_error(head(1) + v2((2 ** 40, 2 ** 40), 6, b'\0' * 16) + keys(),
               'needs 9671406556917033397649408 bytes')
    load_error(head(1) + v2((0, 2 ** 62, 2 ** 62), 0, b'') + keys(), 'impossible shape')
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20


def test_error_trailing_garbage():
    load_error(GOOD + b'xyz', '3 bytes of trailing garbage', 'offset %d' % len(GOOD))


def test_error_invalid_utf8_key():
    buf = head(1) + v2((1,), 0, b'\0' * 4) + struct.pack('<QQ', 1, 2) + b'\xc3\x28'
    load_error(buf, 'key 0', 'not valid UTF-8', 'offset %d' % (len(buf) - 2))


def test_error_duplicate_keys():
    buf = head(2) + v2((1,), 0, b'\0' * 4) * 2 + keys('a', 'a')
    load_error(buf, "duplicate key 'a'")


def test_loads_rejects_non_bytes():
    with pytest.raises(TypeError, match='mx.nd.load: expected bytes'):
        ser.loads('not bytes')


@pytest.mark.parametrize('dtype', ['complex64', 'uint16', 'object', 'U3', 'datetime64[s]'])
def test_dumps_unsupported_dtype(dtype):
    a = np.zeros(2, dtype=dtype)
    with pytest.raises(TypeError) as info:
        ser.dumps({'x': a})
    msg = str(info.value)
    assert str(a.dtype) in msg and 'float32, float64, float16, uint8' in msg and 'bool' in msg


def test_dumps_bad_keys_and_containers():
    with pytest.raises(TypeError, match='keys must be str'):
        ser.dumps({1: np.zeros(1)})
    with pytest.raises(TypeError, match='keys must be str'):
        ser.dumps({b'w': np.zeros(1)})
    with pytest.raises(TypeError, match='array 1 must be a numpy array, got list'):
        ser.dumps([np.zeros(1), [1, 2]])
    with pytest.raises(TypeError, match='expected a list, tuple or dict'):
        ser.dumps(np.zeros(3))


# -- fuzz ---------------------------------------------------------------------
def _fuzz_seed():
    return ser.dumps({'w': sample('float32', (2, 3)), 'i': sample('int64', (3,)),
                      'b': sample('bool', (2, 2)), 'h': sample('float16', (0, 4)),
                      'u': sample('uint8', (5,))})


def test_fuzz_every_truncation():
    buf = _fuzz_seed()
    assert len(ser.loads(buf)) == 5
    for n in range(len(buf)):
        with pytest.raises(ValueError, match='^mx.nd.load:'):
            ser.loads(buf[:n])


def test_fuzz_random_mutations():
    buf = _fuzz_seed()
    rng = np.random.RandomState(1234)
    outcomes = {'ok': 0, 'error': 0}
    tracemalloc.start()
    for _ in range(300):
        b = bytearray(buf)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randint(len(b))
            if rng.rand() < 0.5:
                b[pos] ^= 1 << rng.randint(8)
            else:
                b[pos] = rng.choice([0x00, 0x7F, 0x80, 0xFF])
        try:
            out = ser.loads(bytes(b))
        except (ValueError, TypeError) as e:
            assert str(e).startswith('mx.nd.load:'), e
            outcomes['error'] += 1
        else:
            assert isinstance(out, (list, dict))
            outcomes['ok'] += 1
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4 << 20
    assert outcomes['error'] > 50 and outcomes['ok'] > 10, outcomes
