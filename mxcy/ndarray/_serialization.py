"""Pure-NumPy codec for MXNet 1.x's binary NDArray list format.

This is the format of ``mx.nd.save`` / ``mx.nd.load`` and of ``.params`` files.
Everything is little-endian.  A file is::

    uint64  list magic 0x112
    uint64  reserved (0; ignored on load, as MXNet does)
    uint64  number of arrays N, then N arrays (below)
    uint64  number of keys K (0 for a list, else K == N), then K times:
            uint64 byte length + UTF-8 bytes

One array, in the layouts MXNet 1.x has written over time:

* V2 (``uint32 0xF993FAC9``; what MXNet 1.9.1 writes): ``int32`` storage type
  (only 0 = dense is supported), shape as ``int32 ndim`` + ``ndim x int64``
  dims; if ``ndim == 0`` the array is "none" and the record ends here.
  Otherwise context ``int32 dev_type, int32 dev_id``, ``int32`` mshadow type
  flag, then the raw C-order data.
* V3 (``0xF993FACA``; written under ``npx.set_np()``): as V2, but ``ndim == 0``
  is a real 0-d array with one element and ``ndim == -1`` means unknown shape.
* V1 (``0xF993FAC8``): no storage type; ``uint32 ndim`` + int64 dims.
* legacy (no magic): the first ``uint32`` is ndim, dims are ``uint32``.

Type flags: float32=0 float64=1 float16=2 uint8=3 int32=4 int8=5 int64=6 bool=7.

Choices: a "none" array (V1/V2/legacy with ndim 0) loads as an empty float32
array of shape ``(0,)``.  ``dumps`` writes V2 unless some array is 0-d or
NumPy shape semantics are on (``npx.set_np()``); then the whole file is V3, exactly as
MXNet does in numpy-shape mode (MXNet reads
such a file only under ``npx.set_np()``).  Loading an empty list or empty dict
gives ``[]``, like MXNet.  Duplicate keys are an error.

Files are data, never code: nothing is unpickled or evaluated, and every count,
length and shape read from the buffer is checked against the bytes that remain
before anything is allocated.  Malformed input raises ``ValueError`` whose
message starts with ``"mx.nd.load:"`` and gives the byte offset.
"""
import struct

import numpy as np

__all__ = ['dumps', 'loads']

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
MAX_NDIM = 32

_FLAG_TO_DTYPE = {0: 'float32', 1: 'float64', 2: 'float16', 3: 'uint8',
                  4: 'int32', 5: 'int8', 6: 'int64', 7: 'bool'}
_LE_DTYPES = {flag: np.dtype(name).newbyteorder('<')
              for flag, name in _FLAG_TO_DTYPE.items()}
_DTYPE_TO_FLAG = {dt: flag for flag, dt in _LE_DTYPES.items()}
_UNSUPPORTED_FLAGS = {8: 'int16', 9: 'uint16', 10: 'uint32', 11: 'uint64',
                      12: 'bfloat16'}
_STYPE_NAMES = {-1: 'undefined', 1: 'row_sparse', 2: 'csr'}
_SUPPORTED = ', '.join(_FLAG_TO_DTYPE.values())

_U32, _I32, _U64 = struct.Struct('<I'), struct.Struct('<i'), struct.Struct('<Q')
_HEAD = struct.Struct('<QQQ')


# ----------------------------------------------------------------------------
# save
# ----------------------------------------------------------------------------
def _as_saveable(arr, what):
    if not isinstance(arr, (np.ndarray, np.generic)):
        raise TypeError('mx.nd.save: %s must be a numpy array, got %s'
                        % (what, type(arr).__name__))
    le = arr.dtype.newbyteorder('<')
    flag = _DTYPE_TO_FLAG.get(le)
    if flag is None:
        raise TypeError('mx.nd.save: %s has unsupported dtype %s; supported '
                        'dtypes are %s' % (what, arr.dtype, _SUPPORTED))
    return np.asarray(arr, dtype=le, order='C'), flag


def dumps(arrays, np_shape=False):
    """Serialize a list/tuple of numpy arrays, or a dict str -> numpy array,
    to the bytes that MXNet 1.9.1's ``mx.nd.save`` writes (in the NumPy-shape layout,
    V3, with `np_shape`: MXNet writes that under ``npx.set_np()`` and then loads only
    that)."""
    if isinstance(arrays, dict):
        keys = list(arrays)
        for k in keys:
            if not isinstance(k, str):
                raise TypeError('mx.nd.save: keys must be str, got %r (%s)'
                                % (k, type(k).__name__))
        items = [_as_saveable(arrays[k], 'array %r' % k) for k in keys]
    elif isinstance(arrays, (list, tuple)):
        keys = []
        items = [_as_saveable(a, 'array %d' % i) for i, a in enumerate(arrays)]
    else:
        raise TypeError('mx.nd.save: expected a list, tuple or dict of numpy '
                        'arrays, got %s' % type(arrays).__name__)
    np_shape = np_shape or any(a.ndim == 0 for a, _ in items)
    magic = V3_MAGIC if np_shape else V2_MAGIC
    out = [_HEAD.pack(LIST_MAGIC, 0, len(items))]
    for a, flag in items:
        out.append(struct.pack('<Iii%dq' % a.ndim, magic, 0, a.ndim, *a.shape))
        out.append(struct.pack('<iii', 1, 0, flag))    # cpu(0), type flag
        out.append(a.reshape(-1).view(np.uint8))
    out.append(_U64.pack(len(keys)))
    for k in keys:
        b = k.encode('utf-8')
        out.append(_U64.pack(len(b)))
        out.append(b)
    return b''.join(out)


# ----------------------------------------------------------------------------
# load
# ----------------------------------------------------------------------------
def _fail(msg):
    raise ValueError('mx.nd.load: ' + msg)


class _Reader(object):
    def __init__(self, buf):
        try:
            mv = memoryview(buf)
        except TypeError:
            raise TypeError('mx.nd.load: expected bytes, bytearray or memoryview, '
                            'got %s' % type(buf).__name__) from None
        if mv.ndim != 1 or mv.format != 'B':
            mv = mv.cast('B')
        self.mv, self.pos, self.end = mv, 0, mv.nbytes

    def remain(self):
        return self.end - self.pos

    def need(self, n, what):
        if n > self.end - self.pos:
            _fail('truncated file: %s needs %d bytes at offset %d, only %d remain'
                  % (what, n, self.pos, self.end - self.pos))

    def unpack(self, st, what):
        self.need(st.size, what)
        vals = st.unpack_from(self.mv, self.pos)
        self.pos += st.size
        return vals if len(vals) > 1 else vals[0]


def _read_shape(r, ndim, fmt, what):
    at = r.pos
    if ndim < 0 or ndim > MAX_NDIM:
        _fail('%s has ndim %d at offset %d; expected 0..%d'
              % (what, ndim, at - 4, MAX_NDIM))
    shape = r.unpack(struct.Struct('<%d%s' % (ndim, fmt)), '%s shape (%d dims)'
                     % (what, ndim)) if ndim else ()
    shape = (shape,) if ndim == 1 else tuple(shape)
    for d in shape:
        if d < 0:
            _fail('%s has negative dimension %d in shape %s at offset %d'
                  % (what, d, shape, at))
    return shape


def _read_array(r, i):
    what = 'array %d' % i
    at = r.pos
    magic = r.unpack(_U32, what + ' header')
    none = np.empty((0,), np.float32)
    if magic in (V2_MAGIC, V3_MAGIC):
        stype = r.unpack(_I32, what + ' storage type')
        if stype != 0:
            _fail('%s has storage type %s (%d) at offset %d; only dense (0) '
                  'arrays are supported' % (what, _STYPE_NAMES.get(
                      stype, 'unknown'), stype, r.pos - 4))
        ndim = r.unpack(_I32, what + ' ndim')
        if magic == V3_MAGIC and ndim == -1:
            _fail('%s has unknown shape (ndim -1) at offset %d' % (what, r.pos - 4))
        shape = _read_shape(r, ndim, 'q', what)
        if magic == V2_MAGIC and ndim == 0:
            return none
    elif magic == V1_MAGIC:
        shape = _read_shape(r, r.unpack(_U32, what + ' ndim'), 'q', what)
        if not shape:
            return none
    else:   # legacy: the "magic" is ndim, dims are uint32
        if magic > MAX_NDIM:
            _fail('%s has unknown magic 0x%08X at offset %d; expected 0x%08X '
                  '(V2), 0x%08X (V3), 0x%08X (V1) or a legacy ndim <= %d'
                  % (what, magic, at, V2_MAGIC, V3_MAGIC, V1_MAGIC, MAX_NDIM))
        shape = _read_shape(r, magic, 'I', what)
        if not shape:
            return none
    _dev_type, _dev_id, flag = r.unpack(struct.Struct('<iii'),
                                        what + ' context and type flag')
    dtype = _LE_DTYPES.get(flag)
    if dtype is None:
        name = _UNSUPPORTED_FLAGS.get(flag, 'unknown')
        _fail('%s has %s type flag %d at offset %d; supported flags are %s'
              % (what, name, flag, r.pos - 4, ', '.join(
                  '%d (%s)' % kv for kv in _FLAG_TO_DTYPE.items())))
    size = 1
    for d in shape:
        size *= d
    nbytes = size * dtype.itemsize
    if nbytes > r.remain():
        _fail('truncated file: %s of shape %s and dtype %s needs %d bytes of '
              'data at offset %d, only %d remain'
              % (what, shape, dtype.name, nbytes, r.pos, r.remain()))
    if size == 0:
        try:
            return np.empty(shape, dtype.newbyteorder('='))
        except (ValueError, MemoryError):
            _fail('%s has impossible shape %s' % (what, shape))
    if flag == 7:   # bool: normalise any nonzero byte to True
        raw = np.frombuffer(r.mv, np.uint8, size, r.pos)
        arr = raw.reshape(shape) != 0
    else:
        raw = np.frombuffer(r.mv, dtype, size, r.pos)
        arr = raw.reshape(shape).astype(dtype.newbyteorder('='))  # a copy
    r.pos += nbytes
    return arr


def loads(buf):
    """Parse bytes in MXNet 1.x's NDArray list format (``mx.nd.save`` output
    or a ``.params`` file).  Returns a dict if the file has keys, else a list;
    the arrays are fresh numpy arrays that own their memory."""
    r = _Reader(buf)
    header, _reserved, count = r.unpack(_HEAD, 'file header')
    if header != LIST_MAGIC:
        _fail('not an MXNet NDArray file: expected list magic 0x%X at offset 0, '
              'found 0x%X' % (LIST_MAGIC, header))
    if count > r.remain() // 4:
        _fail('array count %d at offset 16 is impossible: each array needs at '
              'least 4 bytes and only %d remain' % (count, r.remain()))
    arrays = [_read_array(r, i) for i in range(count)]
    nkeys = r.unpack(_U64, 'key count')
    if nkeys not in (0, count):
        _fail('file has %d arrays but %d keys (at offset %d); expected 0 or %d'
              % (count, nkeys, r.pos - 8, count))
    if nkeys > r.remain() // 8:
        _fail('key count %d at offset %d is impossible: each key needs at '
              'least 8 bytes and only %d remain' % (nkeys, r.pos - 8, r.remain()))
    keys = []
    for i in range(nkeys):
        n = r.unpack(_U64, 'key %d length' % i)
        r.need(n, 'key %d (%d bytes)' % (i, n))
        try:
            keys.append(str(r.mv[r.pos:r.pos + n], 'utf-8'))
        except UnicodeDecodeError as e:
            _fail('key %d at offset %d is not valid UTF-8 (%s)' % (i, r.pos, e))
        r.pos += n
    if r.pos != r.end:
        _fail('%d bytes of trailing garbage after the keys at offset %d; '
              'expected end of file' % (r.end - r.pos, r.pos))
    if not keys:
        return arrays
    out = {}
    for k, a in zip(keys, arrays):
        if k in out:
            _fail('duplicate key %r' % k)
        out[k] = a
    return out
