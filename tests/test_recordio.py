"""mx.recordio against files MXNet 1.9.1 wrote (tools/mxnet_recordio_fixtures.py)."""
import json
import os
import pickle
import shutil
import struct

import numpy as np
import pytest

import mxcy as mx
from mxcy import recordio

FILES = os.path.join(os.path.dirname(__file__), 'mxnet_files', 'recordio')
MAGIC = struct.pack('<I', 0xced7230a)


@pytest.fixture(scope='module')
def expected():
    with open(os.path.join(FILES, 'expected.json')) as f:
        return json.load(f)


def _mxnet_reader(tmp_path):
    """A copy of MXNet's files (tests may damage them)."""
    for name in ('data.rec', 'data.idx'):
        shutil.copy(os.path.join(FILES, name), tmp_path / name)
    return str(tmp_path / 'data.idx'), str(tmp_path / 'data.rec')


def test_sequential_read_of_mxnet_file(expected):
    rec = recordio.MXRecordIO(os.path.join(FILES, 'data.rec'), 'r')
    got = []
    while True:
        buf = rec.read()
        if buf is None:
            break
        got.append(buf)
    assert got == [bytes.fromhex(e['hex']) for e in expected]
    assert rec.read() is None                     # stays at the end
    rec.reset()
    assert rec.read() == b''                      # the first record is empty
    assert rec.read() == bytes.fromhex(expected[1]['hex'])
    rec.close()
    rec.close()                                   # twice is fine
    assert not rec.is_open


def test_indexed_read_of_mxnet_file(expected):
    rec = recordio.MXIndexedRecordIO(os.path.join(FILES, 'data.idx'),
                                     os.path.join(FILES, 'data.rec'), 'r')
    assert rec.keys == [e['key'] for e in expected]
    for e in reversed(expected):                  # random access, backwards
        assert rec.read_idx(e['key']) == bytes.fromhex(e['hex'])
    # records with the magic number inside were stored by MXNet in several parts
    split = [e for e in expected if MAGIC.hex() in e['hex']]
    assert len(split) == 5
    assert rec.read_idx(split[2]['key']) == b'abcd' + MAGIC + b'12345678' + MAGIC + b'xyz'
    rec.close()


def test_unpack_mxnet_headers(expected):
    rec = recordio.MXIndexedRecordIO(os.path.join(FILES, 'data.idx'),
                                     os.path.join(FILES, 'data.rec'), 'r')
    packed = [e for e in expected if 'header' in e]
    assert len(packed) == 4
    for e in packed:
        header, payload = recordio.unpack(rec.read_idx(e['key']))
        flag, label, id1, id2 = e['header']
        assert (header.flag, header.id, header.id2) == (flag, id1, id2)
        assert payload == bytes.fromhex(e['payload_hex'])
        if flag == 0:
            assert header.label == label
        else:
            assert header.label.dtype == np.float32
            np.testing.assert_array_equal(header.label, label)
    assert [e['header'][0] for e in packed] == [0, 3, 5, 1]
    assert recordio.unpack(rec.read_idx(packed[2]['key']))[0].id == 2 ** 40
    rec.close()


def _write_same_records(expected, idx, uri):
    rec = recordio.MXIndexedRecordIO(idx, uri, 'w')
    for e in expected:
        assert rec.tell() == os.path.getsize(uri)
        rec.write_idx(e['key'], bytes.fromhex(e['hex']))
    rec.close()


def test_mxcy_writes_the_bytes_mxnet_writes(expected, tmp_path):
    # byte-identical files: MXNet 1.9.1 reads what mxcy writes (also checked by hand)
    idx, uri = str(tmp_path / 'ours.idx'), str(tmp_path / 'ours.rec')
    _write_same_records(expected, idx, uri)
    for ours, theirs in ((uri, 'data.rec'), (idx, 'data.idx')):
        with open(ours, 'rb') as a, open(os.path.join(FILES, theirs), 'rb') as b:
            assert a.read() == b.read()


def test_pack_matches_mxnet(expected):
    packed = [e for e in expected if 'header' in e]
    headers = [recordio.IRHeader(0, 3.5, 11, 12),
               recordio.IRHeader(0, [1.0, 2.5, -3.0], 21, 22),
               (7, np.arange(5, dtype=np.float32), 2 ** 40, 7),   # flag is recomputed
               recordio.IRHeader(0, [0.25], 0, 0)]
    payloads = [b'payload', b'multi', b'', b'one label, 13']
    for e, h, s in zip(packed, headers, payloads):
        assert recordio.pack(h, s) == bytes.fromhex(e['hex'])


def test_round_trip_and_split_records(tmp_path):
    uri = str(tmp_path / 'r.rec')
    records = [b'', b'x', MAGIC, b'a' + MAGIC + b'bcd', MAGIC * 3, b'1234' + MAGIC,
               bytes(range(256)) * 3 + b'z']
    w = recordio.MXRecordIO(uri, 'w')
    for r in records:
        w.write(r)
    w.write(bytearray(b'ba'))
    w.write(memoryview(b'mv'))
    w.close()
    assert os.path.getsize(uri) % 4 == 0
    r = recordio.MXRecordIO(uri, 'r')
    assert [r.read() for _ in range(len(records) + 3)] == records + [b'ba', b'mv', None]
    r.close()


def test_pack_unpack_round_trip():
    h, s = recordio.unpack(recordio.pack((0, [3, 4], 5, 6), b'body'))
    assert h.flag == 2 and h.id == 5 and h.id2 == 6 and s == b'body'
    np.testing.assert_array_equal(h.label, [3.0, 4.0])
    h, s = recordio.unpack(recordio.pack(recordio.IRHeader(9, 2, 1, 0), b''))
    assert h == recordio.IRHeader(0, 2.0, 1, 0) and s == b''


def test_unpack_bad_input():
    with pytest.raises(mx.MXNetError, match='needs 24 bytes of IRHeader, got 10'):
        recordio.unpack(b'0123456789')
    buf = recordio.pack((0, [1, 2, 3], 0, 0), b'')
    with pytest.raises(mx.MXNetError, match=r'3 float32 labels \(12 bytes\), the record has 8'):
        recordio.unpack(buf[:-4])
    with pytest.raises(TypeError, match='bytes, got str'):
        recordio.pack((0, 1, 0, 0), 'text')


@pytest.mark.parametrize('cut, what', [
    (2, r'byte offset 0: truncated part header \(2 of 8 bytes\)'),
    (9, r'byte offset 8: truncated part header \(1 of 8 bytes\)'),
    (20, r'byte offset 8: truncated record: the header declares 6 bytes, the file has 4'),
])
def test_truncated_head(tmp_path, cut, what):
    uri = str(tmp_path / 't.rec')
    w = recordio.MXRecordIO(uri, 'w')
    w.write(b'')
    w.write(b'abcdef')
    w.close()
    with open(uri, 'r+b') as f:
        f.truncate(cut)
    r = recordio.MXRecordIO(uri, 'r')
    with pytest.raises(mx.MXNetError, match=f"{tmp_path.name}.*({what})"):
        while r.read() is not None:
            pass


def test_truncated_and_corrupt_records(tmp_path):
    idx, uri = _mxnet_reader(tmp_path)
    size = os.path.getsize(uri)
    rec = recordio.MXIndexedRecordIO(idx, uri, 'r')
    thousand = rec.keys[9]                       # the 1000-byte record
    pos = rec.idx[thousand]
    rec.close()
    with open(uri, 'r+b') as f:
        f.truncate(pos + 500)
    rec = recordio.MXIndexedRecordIO(idx, uri, 'r')
    with pytest.raises(mx.MXNetError, match=rf"data\.rec'?, byte offset {pos}: truncated record: "
                       r"the header declares 1000 bytes, the file has 492 after it"):
        rec.read_idx(thousand)
    with pytest.raises(mx.MXNetError, match='outside the file'):
        rec.read_idx(rec.keys[-1])
    rec.close()
    # wrong magic
    with open(uri, 'r+b') as f:
        f.seek(8)
        f.write(b'\xff\xff\xff\xff')
    rec = recordio.MXIndexedRecordIO(idx, uri, 'r')
    with pytest.raises(mx.MXNetError, match=r"data\.rec'?, byte offset 8: bad magic number "
                       r"0xffffffff \(expected 0xced7230a\)"):
        rec.read_idx(rec.keys[1])
    assert rec.read_idx(rec.keys[2]) == b'/\xaa'    # other records still read
    assert size > pos + 500


def test_split_record_cut_between_parts(tmp_path):
    uri = str(tmp_path / 's.rec')
    w = recordio.MXRecordIO(uri, 'w')
    w.write(b'abcd' + MAGIC + b'efgh')          # two parts: 8 + 4 bytes, then 8 + 4
    w.close()
    with open(uri, 'r+b') as f:
        f.truncate(12)
    with pytest.raises(mx.MXNetError, match='byte offset 12: the file ends inside a record '
                       'split in parts'):
        recordio.MXRecordIO(uri, 'r').read()
    with open(uri, 'wb') as f:                  # a middle part where a record starts
        f.write(struct.pack('<II', 0xced7230a, (2 << 29) | 0))
    with pytest.raises(mx.MXNetError, match='byte offset 0: continuation flag 2 where a '
                       'record starts'):
        recordio.MXRecordIO(uri, 'r').read()


def test_random_corruption_never_hangs(tmp_path):
    idx, uri = _mxnet_reader(tmp_path)
    with open(uri, 'rb') as f:
        good = f.read()
    rng = np.random.RandomState(1)
    outcomes = set()
    for trial in range(60):
        data = bytearray(good)
        for i in rng.randint(0, len(data), size=3):
            data[i] = rng.randint(256)
        if trial % 2:
            data = data[:rng.randint(len(data) // 2, len(data) + 1)]
        with open(uri, 'wb') as f:
            f.write(data)
        r = recordio.MXRecordIO(uri, 'r')
        try:
            for _ in range(len(data)):          # at most one record per 4 bytes
                if r.read() is None:
                    outcomes.add('end')
                    break
        except mx.MXNetError as err:
            assert 'byte offset' in str(err)
            outcomes.add('error')
        r.close()
    assert outcomes == {'end', 'error'}


def test_missing_key_and_bad_index(tmp_path):
    idx, uri = _mxnet_reader(tmp_path)
    rec = recordio.MXIndexedRecordIO(idx, uri, 'r')
    with pytest.raises(KeyError, match=r"key 2 is not in the index .*data\.idx"):
        rec.read_idx(2)
    with pytest.raises(KeyError, match="key '1' is not in the index"):
        rec.read_idx('1')                        # int keys by default
    rec.close()
    with open(idx, 'a') as f:
        f.write('99 oops\n')
    with pytest.raises(mx.MXNetError, match=r"data\.idx'?, line 20: expected 'key<TAB>offset', "
                       "got '99 oops'"):
        recordio.MXIndexedRecordIO(idx, uri, 'r')


def test_string_keys(tmp_path):
    idx, uri = str(tmp_path / 'k.idx'), str(tmp_path / 'k.rec')
    w = recordio.MXIndexedRecordIO(idx, uri, 'w', key_type=str)
    for k in ('b', 'a', 'c'):
        w.write_idx(k, k.encode() * 5)
    w.close()
    with open(idx) as f:
        assert f.read() == 'b\t0\na\t16\nc\t32\n'
    r = recordio.MXIndexedRecordIO(idx, uri, 'r', key_type=str)
    assert r.keys == ['b', 'a', 'c'] and r.read_idx('c') == b'ccccc'
    r.seek('a')
    assert r.read() == b'aaaaa' and r.read() == b'ccccc' and r.read() is None


def test_modes_and_misuse(tmp_path):
    uri = str(tmp_path / 'm.rec')
    with pytest.raises(ValueError, match="invalid flag 'a'"):
        recordio.MXRecordIO(uri, 'a')
    w = recordio.MXRecordIO(uri, 'w')
    with pytest.raises(mx.MXNetError, match='opened for writing'):
        w.read()
    with pytest.raises(TypeError, match='bytes, got str'):
        w.write('text')
    w.write(b'one')
    w.close()
    with pytest.raises(mx.MXNetError, match='is closed'):
        w.write(b'two')
    r = recordio.MXRecordIO(uri, 'r')
    with pytest.raises(mx.MXNetError, match='opened for reading'):
        r.write(b'x')
    assert r.read() == b'one'
    del r                                        # __del__ closes



def test_pickle(tmp_path):
    idx, uri = _mxnet_reader(tmp_path)
    r = recordio.MXIndexedRecordIO(idx, uri, 'r')
    copy = pickle.loads(pickle.dumps(r))
    assert copy.is_open and copy.keys == r.keys
    assert copy.read_idx(r.keys[3]) == r.read_idx(r.keys[3])
    r.close()
    closed = pickle.loads(pickle.dumps(r))
    assert not closed.is_open
    w = recordio.MXRecordIO(str(tmp_path / 'w.rec'), 'w')
    w.write(b'kept')
    with pytest.raises(mx.MXNetError, match='cannot pickle a writer .* while it is open'):
        pickle.dumps(w)
    w.close()
    assert pickle.loads(pickle.dumps(w)).flag == 'w'
    assert recordio.MXRecordIO(str(tmp_path / 'w.rec'), 'r').read() == b'kept'


def test_forked_child_reopens_reader(tmp_path):
    idx, uri = _mxnet_reader(tmp_path)
    r = recordio.MXIndexedRecordIO(idx, uri, 'r')
    r.read_idx(r.keys[9])                        # parent's offset mid-file
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:                                 # child: must reopen, not share the offset
        try:
            ok = r.read_idx(r.keys[1]) == b'\xac' and r.pid == os.getpid()
            os.write(wfd, b'1' if ok else b'0')
        finally:
            os._exit(0)
    os.close(wfd)
    assert os.read(rfd, 1) == b'1'
    os.waitpid(pid, 0)
    assert r.read() == MAGIC                     # the parent's offset did not move
    assert r.pid == os.getpid()


def test_writer_refuses_other_process(tmp_path):
    w = recordio.MXRecordIO(str(tmp_path / 'w.rec'), 'w')
    w.pid = -1                                   # as if opened in another process
    with pytest.raises(RuntimeError, match='opened for writing in process -1'):
        w.write(b'x')
