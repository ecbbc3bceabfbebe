"""``mx.recordio``: MXNet's RecordIO files (``.rec``) and their text indexes (``.idx``).

Format (dmlc-core's, byte-compatible with MXNet 1.9.1): a file is a sequence of parts,
each an 8-byte little-endian header -- the magic ``0xced7230a`` and a word whose top three
bits are the continuation flag and whose low 29 bits are the part's length -- followed by
the part's bytes and zero padding to a multiple of 4. A record whose bytes contain the
magic at a 4-aligned offset is written as several parts split there (flag 1 = first,
2 = middle, 3 = last; 0 = a whole record), the magic itself dropped; the reader puts it
back between the parts. So a reader can always resynchronise on the magic.

An index file has one ``key<TAB>byte offset`` line per record.

``pack``/``unpack`` put an ``IRHeader`` (flag, label, id, id2 as ``'IfQQ'``, 24 bytes) in
front of a payload; a label that is not a number is stored as ``flag`` float32 values
right after the header. ``pack_img``/``unpack_img`` encode the payload as a JPEG or PNG
image with OpenCV (as MXNet does) and decode it back to a NumPy HWC array in BGR order.

Readers and writers are per process: a reader used in a forked child (a DataLoader
worker) reopens its file there; a writer refuses, as in MXNet. Every length read from a
file is checked against the file's size before it is read; a truncated or corrupt file
raises ``MXNetError`` naming the file, the byte offset and what was wrong.
"""
import numbers
import os
import struct
from collections import namedtuple

import numpy as np

from mxcy.base import MXNetError

__all__ = ['MXRecordIO', 'MXIndexedRecordIO', 'IRHeader', 'pack', 'unpack', 'pack_img',
           'unpack_img']

_MAGIC = 0xced7230a
_MAGIC_BYTES = struct.pack('<I', _MAGIC)
_HEAD = struct.Struct('<II')
_LEN_MASK = (1 << 29) - 1
_MAX_RECORD = 1 << 29


def _padded(n):
    return (n + 3) & ~3


def _encode(buf):
    """The bytes that store record `buf`: its parts split at 4-aligned magic numbers."""
    out = []
    start = 0
    pos = buf.find(_MAGIC_BYTES)
    while pos != -1:
        if pos % 4 == 0:
            out.append(_HEAD.pack(_MAGIC, ((1 if start == 0 else 2) << 29) | (pos - start)))
            out.append(buf[start:pos])            # 4-aligned length: no padding
            start = pos + 4
            pos = buf.find(_MAGIC_BYTES, start)
        else:
            pos = buf.find(_MAGIC_BYTES, pos + 1)
    n = len(buf) - start
    out.append(_HEAD.pack(_MAGIC, ((3 if start else 0) << 29) | n))
    out.append(buf[start:])
    out.append(b'\0' * (_padded(n) - n))
    return b''.join(out)


class MXRecordIO:
    """Sequential reader (``flag='r'``) or writer (``flag='w'``) of a RecordIO file.

    ``read()`` returns the next record's bytes, or None at the end of the file.
    """

    def __init__(self, uri, flag):
        self.uri = os.fspath(uri)
        self.flag = flag
        self.pid = None
        self.is_open = False
        self.writable = None
        self._file = None
        self.open()

    def open(self):
        """Open the file (a writer truncates it)."""
        if self.flag == 'w':
            self._file = open(self.uri, 'wb', buffering=0)   # noqa: SIM115 (kept open)
            self.writable = True
        elif self.flag == 'r':
            self._file = open(self.uri, 'rb')                # noqa: SIM115 (kept open)
            self._size = os.fstat(self._file.fileno()).st_size
            self.writable = False
        else:
            raise ValueError(f"MXRecordIO: invalid flag {self.flag!r}; use 'r' or 'w'")
        self.pid = os.getpid()
        self.is_open = True

    def __del__(self):
        self.close()

    def __getstate__(self):
        if self.is_open and self.writable:
            # MXNet closes the writer and the copy reopens it with 'w', truncating the
            # file both were writing: refuse instead
            raise MXNetError(f"MXRecordIO: cannot pickle a writer of {self.uri!r} while it "
                             "is open (the copy would truncate the file); close it first")
        state = dict(self.__dict__)
        state['_file'] = None
        state.pop('_size', None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        was_open = self.is_open
        self.is_open = False
        self._file = None
        if was_open:
            self.open()

    def _check_pid(self, allow_reset=False):
        """Reopen in a forked child (readers) or refuse (writers)."""
        if self.pid != os.getpid():
            if not allow_reset:
                raise RuntimeError(f"MXRecordIO: {self.uri!r} was opened for writing in "
                                   f"process {self.pid}; it cannot be written from process "
                                   f"{os.getpid()}")
            self.reset()

    def close(self):
        """Close the file (no-op if closed)."""
        if not getattr(self, 'is_open', False):
            return
        f, self._file = self._file, None
        self.is_open = False
        self.pid = None
        if f is not None:
            f.close()

    def reset(self):
        """Close and reopen: a reader starts again at the first record."""
        self.close()
        self.open()

    def _require_open(self, what):
        if not self.is_open:
            raise MXNetError(f"MXRecordIO.{what}: {self.uri!r} is closed")

    def write(self, buf):
        """Append one record (bytes-like, under 2**29 bytes)."""
        if not self.writable:
            raise MXNetError(f"MXRecordIO.write: {self.uri!r} is opened for reading")
        self._require_open('write')
        self._check_pid(allow_reset=False)
        if isinstance(buf, str):
            raise TypeError("MXRecordIO.write: a record is bytes, got str (encode it first)")
        buf = bytes(buf)
        if len(buf) >= _MAX_RECORD:
            raise ValueError(f"MXRecordIO.write: a record must be under 2**29 bytes, got "
                             f"{len(buf)}")
        self._file.write(_encode(buf))

    def _corrupt(self, offset, what):
        return MXNetError(f"RecordIO file {self.uri!r}, byte offset {offset}: {what}")

    def read(self):
        """The next record's bytes, or None at the end of the file."""
        if self.writable:
            raise MXNetError(f"MXRecordIO.read: {self.uri!r} is opened for writing")
        self._require_open('read')
        self._check_pid(allow_reset=True)
        f, parts = self._file, []
        while True:
            start = f.tell()
            head = f.read(8)
            if not head and not parts:
                return None
            if len(head) < 8:
                what = ('the file ends inside a record split in parts' if not head else
                        f'truncated part header ({len(head)} of 8 bytes)')
                raise self._corrupt(start, what)
            magic, lrec = _HEAD.unpack(head)
            if magic != _MAGIC:
                raise self._corrupt(start, f"bad magic number 0x{magic:08x} (expected "
                                    f"0x{_MAGIC:08x}): not a RecordIO file, corrupt, or "
                                    "an offset that is not a record's start")
            cflag, length = lrec >> 29, lrec & _LEN_MASK
            if cflag > 3 or (cflag in (0, 1)) != (not parts):
                raise self._corrupt(start, f"continuation flag {cflag} where "
                                    f"{'a record starts' if not parts else 'a part follows'}")
            end = start + 8 + _padded(length)
            if end > self._size:
                raise self._corrupt(start, f"truncated record: the header declares {length} "
                                    f"bytes, the file has {max(self._size - start - 8, 0)} "
                                    "after it")
            data = f.read(_padded(length))[:length]
            if cflag == 0:
                return data
            parts.append(data)
            if cflag == 3:
                return _MAGIC_BYTES.join(parts)


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with random access through an index file (``key<TAB>offset`` lines).

    ``keys`` lists the keys in file order; ``read_idx(key)`` reads one record,
    ``write_idx(key, buf)`` appends one and its index line.
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = os.fspath(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        if self.writable:
            try:
                self.fidx = open(self.idx_path, 'wb', buffering=0)  # noqa: SIM115
            except OSError:
                self.close()
                raise
            return
        try:
            self._read_index()
        except BaseException:
            self.close()
            raise

    def _read_index(self):
        with open(self.idx_path) as fidx:
            for lineno, line in enumerate(fidx, 1):
                line = line.strip()
                if not line:
                    continue
                fields = line.split('\t')
                try:
                    key, pos = self.key_type(fields[0]), int(fields[1])
                except (ValueError, IndexError, TypeError) as err:
                    raise MXNetError(f"index file {self.idx_path!r}, line {lineno}: expected "
                                     f"'key<TAB>offset', got {line!r} ({err})") from None
                self.idx[key] = pos
                self.keys.append(key)

    def close(self):
        if not getattr(self, 'is_open', False):
            return
        super().close()
        fidx, self.fidx = self.fidx, None
        if fidx is not None:
            fidx.close()

    def __getstate__(self):
        state = super().__getstate__()
        state['fidx'] = None
        return state

    def seek(self, idx):
        """Position the reader at the record of key `idx`."""
        if self.writable:
            raise MXNetError(f"MXIndexedRecordIO.seek: {self.uri!r} is opened for writing")
        self._require_open('seek')
        self._check_pid(allow_reset=True)
        try:
            pos = self.idx[idx]
        except KeyError:
            raise KeyError(f"key {idx!r} is not in the index {self.idx_path!r}") from None
        except TypeError:
            raise KeyError(f"key {idx!r} ({type(idx).__name__}) is not in the index "
                           f"{self.idx_path!r}") from None
        if pos < 0 or pos > self._size:
            raise self._corrupt(pos, f"index {self.idx_path!r} gives key {idx!r} an offset "
                                f"outside the file ({self._size} bytes)")
        self._file.seek(pos)

    def tell(self):
        """The writer's current byte offset (where the next record starts)."""
        if not self.writable:
            raise MXNetError(f"MXIndexedRecordIO.tell: {self.uri!r} is opened for reading")
        self._require_open('tell')
        return self._file.tell()

    def read_idx(self, idx):
        """The record of key `idx`."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Append record `buf` under key `idx` (converted by ``key_type``)."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write(f"{key}\t{pos}\n".encode())
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple('HEADER', ['flag', 'label', 'id', 'id2'])
IRHeader.__doc__ = """A record's header: ``flag`` (0, or the number of float32 labels),
``label`` (a number, or the labels when flag > 0), ``id`` and ``id2`` (uint64)."""
_IR_FORMAT = 'IfQQ'
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """Bytes of `header` (an IRHeader or 4-tuple) followed by payload `s`.

    A label that is a number goes in the header (flag 0); otherwise its values are
    stored as float32 after the header and flag becomes their count.
    """
    header = IRHeader(*header)
    if isinstance(s, str):
        raise TypeError("pack: the payload is bytes, got str (encode it first)")
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    return struct.pack(_IR_FORMAT, *header) + bytes(s)


def unpack(s):
    """Split a record made by `pack` into (IRHeader, payload bytes); with flag > 0 the
    header's label is a float32 array of `flag` values."""
    s = bytes(s)
    if len(s) < _IR_SIZE:
        raise MXNetError(f"unpack: a record needs {_IR_SIZE} bytes of IRHeader, got {len(s)}")
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        need = header.flag * 4
        if len(s) < need:
            raise MXNetError(f"unpack: the header announces {header.flag} float32 labels "
                             f"({need} bytes), the record has {len(s)} after the header")
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[need:]
    return header, s


def pack_img(header, img, quality=95, img_fmt='.jpg'):
    """``pack(header, encoded)`` where `img` (a NumPy HWC or HW uint8 array, BGR as in
    OpenCV) is encoded as `img_fmt` ('.jpg'/'.jpeg' with JPEG `quality` 1-100, '.png'
    with compression level `quality` 0-9, larger values meaning 9)."""
    import cv2
    fmt = img_fmt.lower()
    if fmt in ('.jpg', '.jpeg'):
        params = [cv2.IMWRITE_JPEG_QUALITY, int(quality)]
    elif fmt == '.png':
        params = [cv2.IMWRITE_PNG_COMPRESSION, min(int(quality), 9)]   # 95 means 'most'
    else:
        raise ValueError(f"pack_img: img_fmt must be '.jpg', '.jpeg' or '.png', got {img_fmt!r}")
    img = np.asarray(img)
    ok, buf = cv2.imencode(fmt, img, params)
    if not ok:
        raise MXNetError(f"pack_img: OpenCV could not encode an image of shape {img.shape} "
                         f"and dtype {img.dtype} as {img_fmt}")
    return pack(header, buf.tobytes())


def unpack_img(s, iscolor=-1):
    """(IRHeader, image) from a record made by `pack_img`: the image decoded by OpenCV as
    a NumPy array (BGR; `iscolor` 1 colour, 0 grayscale, -1 as stored)."""
    import cv2
    header, payload = unpack(s)
    img = cv2.imdecode(np.frombuffer(payload, dtype=np.uint8), iscolor)
    if img is None:
        raise MXNetError(f"unpack_img: the record's {len(payload)}-byte payload is not a "
                         "decodable image (corrupt or truncated)")
    return header, img
