"""``mx.io.ImageRecordIter`` (+ ``ImageRecordUInt8Iter``, ``ImageRecordInt8Iter``).

Reads a RecordIO file of ``pack``-ed images (im2rec's output) into ``(batch, C, H, W)``
batches, MXNet 1.9.1's arguments and, with augmentation off, MXNet's batches:
decode (grayscale when C == 1, else RGB), optional resize of the shorter edge to
`resize` (bilinear, width = w * resize // h), an image smaller than (H, W) scaled up to
cover it, a centre crop (or a random one with `rand_crop`), an optional mirror
(`rand_mirror`), then ``(x - mean) * scale / std`` per channel (float32). The UInt8 and
Int8 forms keep the pixels (int8 saturating at 127).

Partitioning follows dmlc's InputSplit: the file's bytes are cut into `num_parts` equal
4-aligned ranges and a part owns the records that start in its range. With
``round_batch`` the last batch of an epoch wraps around to the first records, ``pad``
says how many, and the next epoch starts after them (MXNet's roll-over); without it the
last batch is partial, its missing rows zero and ``pad`` counting them.

Work: `preprocess_threads` threads decode and augment whole batches (OpenCV releases
the GIL), up to `prefetch_buffer` batches ahead of the consumer, so decoding overlaps
training. A corrupt image raises MXNetError naming the file, the record and its byte
offset at the ``next()`` that reaches its batch (MXNet died in OpenCV's resize); the
iterator then goes on with the following batch. A truncated file is refused when the
iterator is made.
"""
import os
import random
import struct
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from mxcy.base import MXNetError
from mxcy.image.image import cv2_module, decode_array
from mxcy.io.base import DataBatch, DataDesc, DataIter, check_batch_size, register
from mxcy.ndarray.utils import array

__all__ = ['ImageRecordIter', 'ImageRecordUInt8Iter', 'ImageRecordInt8Iter',
           'scan_records']

_MAGIC = 0xced7230a
_HEAD = struct.Struct('<II')
_IR = struct.Struct('<IfQQ')

_ARGS = dict(path_imgrec='', path_imglist='', path_imgidx='', data_shape=None, batch_size=None,
             label_width=1, resize=-1, rand_crop=False, rand_mirror=False, mean_r=0.0,
             mean_g=0.0, mean_b=0.0, std_r=1.0, std_g=1.0, std_b=1.0,
             scale=1.0, shuffle=False, seed=0, num_parts=1, part_index=0, round_batch=True,
             preprocess_threads=4, prefetch_buffer=4, data_name='data',
             label_name='softmax_label', inter_method=1, verbose=True, ctx='cpu',
             seed_aug=None)


def scan_records(path):
    """Byte offsets of the records of RecordIO file `path` (MXNetError if it is cut short
    or corrupt)."""
    offsets = []
    size = os.path.getsize(path)
    with open(path, 'rb') as f:
        pos, in_record = 0, False
        while pos < size:
            f.seek(pos)
            head = f.read(8)
            if len(head) < 8:
                raise MXNetError(f"{path!r}: truncated record header at byte {pos}")
            magic, lrec = _HEAD.unpack(head)
            if magic != _MAGIC:
                raise MXNetError(f"{path!r}: bad magic number 0x{magic:08x} at byte {pos}: "
                                 "not a RecordIO file, or corrupt")
            cflag, length = lrec >> 29, lrec & ((1 << 29) - 1)
            if cflag in (0, 1):
                offsets.append(pos)
            in_record = cflag in (1, 2)
            end = pos + 8 + ((length + 3) & ~3)
            if end > size:
                raise MXNetError(f"{path!r}: record {len(offsets) - 1} at byte "
                                 f"{offsets[-1] if offsets else pos} is truncated: it "
                                 f"declares {length} bytes, the file has {size - pos - 8}")
            pos = end
        if in_record:
            raise MXNetError(f"{path!r}: the file ends inside record {len(offsets) - 1}")
    return offsets


def _read_record(fd, path, offset):
    parts = []
    pos = offset
    while True:
        magic, lrec = _HEAD.unpack(os.pread(fd, 8, pos))
        if magic != _MAGIC:
            raise MXNetError(f"{path!r}: no record at byte {pos}")
        cflag, length = lrec >> 29, lrec & ((1 << 29) - 1)
        parts.append(os.pread(fd, length, pos + 8))
        pos += 8 + ((length + 3) & ~3)
        if cflag in (0, 3):
            return struct.pack('<I', _MAGIC).join(parts)


def _part_offsets(offsets, size, num_parts, part_index):
    step = (size + num_parts - 1) // num_parts
    step = (step + 3) // 4 * 4
    begin, end = min(step * part_index, size), min(step * (part_index + 1), size)
    return [o for o in offsets if begin <= o < end]


class ImageRecordIter(DataIter):
    """Batches of decoded, cropped and normalised images from a ``.rec`` file."""
    _out_dtype = np.float32
    _args = _ARGS

    def __init__(self, **kwargs):
        unknown = sorted(set(kwargs) - set(self._args))
        if unknown:
            raise TypeError(f"{type(self).__name__}: unsupported argument(s) {unknown}; "
                            f"supported: {sorted(self._args)}")
        p = dict(self._args, **kwargs)
        if not p['path_imgrec']:
            raise ValueError(f"{type(self).__name__}: path_imgrec is required")
        if p['data_shape'] is None or p['batch_size'] is None:
            raise ValueError(f"{type(self).__name__}: data_shape and batch_size are required")
        super().__init__(check_batch_size(p['batch_size'], type(self).__name__))
        shape = tuple(int(v) for v in p['data_shape'])
        if len(shape) != 3 or shape[0] not in (1, 3):
            raise ValueError(f"{type(self).__name__}: data_shape must be (1 or 3, height, "
                             f"width), got {p['data_shape']!r}")
        if not 0 <= p['part_index'] < p['num_parts']:
            raise ValueError(f"{type(self).__name__}: part_index must be in [0, num_parts="
                             f"{p['num_parts']}), got {p['part_index']}")
        self._p, self.data_shape = p, shape
        self.path = os.fspath(p['path_imgrec'])
        if not os.path.isfile(self.path):
            raise MXNetError(f"{type(self).__name__}: path_imgrec {self.path!r} is not a file")
        if p['path_imgidx']:
            offsets = self._index_offsets(os.fspath(p['path_imgidx']))
        else:
            offsets = scan_records(self.path)
        self._offsets = _part_offsets(offsets, os.path.getsize(self.path), p['num_parts'],
                                      p['part_index'])
        if not self._offsets:
            raise MXNetError(f"{type(self).__name__}: part {p['part_index']} of "
                             f"{p['num_parts']} of {self.path!r} holds no record")
        self._labels = self._read_imglist(os.fspath(p['path_imglist'])) \
            if p['path_imglist'] else None
        nch = shape[0]
        self._mean = np.array([p['mean_r'], p['mean_g'], p['mean_b']][:nch], np.float32)
        self._std = np.array([p['std_r'], p['std_g'], p['std_b']][:nch], np.float32)
        lshape = self._label_shape()
        self.provide_data = [DataDesc(p['data_name'], (self.batch_size,) + shape,
                                      self._out_dtype)]
        self.provide_label = [DataDesc(p['label_name'], lshape, np.float32)]
        self._fd = os.open(self.path, os.O_RDONLY)
        self._pool = ThreadPoolExecutor(max(1, int(p['preprocess_threads'])),
                                        thread_name_prefix='ImageRecordIter')
        self._ahead = max(1, int(p['prefetch_buffer']))
        self._epoch, self._carry = 0, 0
        self._rng_lock = threading.Lock()
        self._aug_rng = random.Random(p['seed'] if p['seed_aug'] is None else p['seed_aug'])
        self._queue = deque()
        self.reset()

    def _label_shape(self):
        self._lw = int(self._p['label_width'])
        return (self.batch_size,) if self._lw == 1 else (self.batch_size, self._lw)

    def _index_offsets(self, idx_path):
        offsets = []
        with open(idx_path) as f:
            for lineno, line in enumerate(f, 1):
                fields = line.split()
                if not fields:
                    continue
                if len(fields) != 2:
                    raise MXNetError(f"{type(self).__name__}: index {idx_path!r}, line "
                                     f"{lineno}: expected 'key<TAB>offset', got {line!r}")
                offsets.append(int(fields[1]))
        return sorted(offsets)

    def _read_imglist(self, path):
        labels = {}
        with open(path) as f:
            for line in f:
                fields = line.strip().split('\t')
                if len(fields) >= 3:
                    labels[int(fields[0])] = np.array(fields[1:-1], dtype=np.float32)
        return labels

    def _order(self, epoch):
        n = len(self._offsets)
        if not self._p['shuffle']:
            return np.arange(n)
        return np.random.RandomState(self._p['seed'] + epoch).permutation(n)

    def _plan(self):
        """The record indices of each batch of this epoch, and each batch's pad."""
        order, n, bs = self._order(self._epoch), len(self._offsets), self.batch_size
        rows = list(order[self._carry:])
        plan, self._next_carry = [], 0
        for start in range(0, len(rows), bs):
            chunk = rows[start:start + bs]
            pad = bs - len(chunk)
            if pad and self._p['round_batch']:
                nxt = list(self._order(self._epoch + 1)) * (pad // n + 1)
                chunk = chunk + nxt[:pad]
                self._next_carry = pad % n
            plan.append((chunk, pad))
        return plan

    def reset(self):
        """Start the next epoch (after a round_batch wrap, past the records it used)."""
        while self._queue:
            self._queue.popleft().cancel()
        if getattr(self, '_plan_list', None) is not None:
            self._epoch += 1
            self._carry = self._next_carry
        self._plan_list = self._plan()
        self._submitted = 0
        for _ in range(self._ahead):
            self._submit()

    def _submit(self):
        if self._submitted < len(self._plan_list):
            rows, pad = self._plan_list[self._submitted]
            with self._rng_lock:
                seed = self._aug_rng.getrandbits(32)
            self._queue.append(self._pool.submit(self._make_batch, rows, pad, seed))
            self._submitted += 1

    def next(self):
        if not self._queue:
            raise StopIteration
        fut = self._queue.popleft()
        self._submit()
        data, label, index, pad = fut.result()
        return DataBatch([array(data, dtype=data.dtype)], [array(label)], pad=pad,
                         index=index)

    def _make_batch(self, rows, pad, seed):
        rng = random.Random(seed)
        bs, (c, h, w) = self.batch_size, self.data_shape
        data = np.zeros((bs, c, h, w), dtype=self._out_dtype)
        label = np.zeros(self.provide_label[0].shape, dtype=np.float32)
        index = np.zeros(bs, dtype=np.uint64)
        for i, r in enumerate(rows):
            rec = _read_record(self._fd, self.path, self._offsets[r])
            lab, ident, payload = self._unpack(rec, r)
            try:
                img = decode_array(payload, 1 if c == 3 else 0, True, what='decode')
            except MXNetError as err:
                raise MXNetError(f"{type(self).__name__}: {self.path!r}, record {r} (id "
                                 f"{ident}, byte {self._offsets[r]}): {err}") from None
            img, label[i] = self._sample(img, lab, rng)
            self._store(img, data[i])
            index[i] = ident
        return data, label, index, pad

    def _sample(self, img, lab, rng):
        """(augmented image, label row) of one decoded record (detection overrides it)."""
        return self._augment(img, rng), lab

    def _unpack(self, rec, r):
        if len(rec) < _IR.size:
            raise MXNetError(f"{type(self).__name__}: {self.path!r}, record {r}: "
                             f"{len(rec)} bytes, shorter than the 24-byte image header")
        flag, lab, ident, _ = _IR.unpack_from(rec)
        labels = np.frombuffer(rec, np.float32, flag, _IR.size) if flag else np.array([lab])
        payload = memoryview(rec)[_IR.size + 4 * flag:]
        if self._labels is not None:
            if ident not in self._labels:
                raise MXNetError(f"{type(self).__name__}: image id {ident} (record {r}) "
                                 f"is not in path_imglist {self._p['path_imglist']!r}")
            labels = self._labels[ident]
        if labels.size < self._lw:
            raise MXNetError(f"{type(self).__name__}: {self.path!r}, record {r}: "
                             f"{labels.size} label(s), label_width is {self._lw}")
        return labels[0] if self._lw == 1 else labels[:self._lw], ident, payload

    def _resize_shorter(self, img):
        """`img` with its shorter edge resized to ``resize`` (when > 0), aspect kept."""
        size = self._p['resize']
        if size <= 0:
            return img
        ih, iw = img.shape[:2]
        nh, nw = (size, iw * size // ih) if ih < iw else (ih * size // iw, size)
        return cv2_module().resize(img, (nw, nh), interpolation=int(self._p['inter_method']))

    def _augment(self, img, rng):
        p, (_, h, w) = self._p, self.data_shape
        interp = int(p['inter_method'])
        cv2 = cv2_module()
        img = self._resize_shorter(img)
        ih, iw = img.shape[:2]
        if ih < h or iw < w:
            f = max(h / ih, w / iw)
            nh, nw = max(h, int(round(ih * f))), max(w, int(round(iw * f)))
            img = cv2.resize(img, (nw, nh), interpolation=interp)
            ih, iw = nh, nw
        if p['rand_crop']:
            y0, x0 = rng.randint(0, ih - h), rng.randint(0, iw - w)
        else:
            y0, x0 = (ih - h) // 2, (iw - w) // 2
        img = img[y0:y0 + h, x0:x0 + w]
        if img.ndim == 2:
            img = img[:, :, None]
        if p['rand_mirror'] and rng.random() < 0.5:
            img = img[:, ::-1]
        return img

    def _store(self, img, out):
        chw = np.transpose(img, (2, 0, 1))
        out[...] = chw
        out -= self._mean[:, None, None]
        out *= (self._p['scale'] / self._std)[:, None, None]

    def __del__(self):
        pool = getattr(self, '_pool', None)
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        fd = getattr(self, '_fd', None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


class ImageRecordUInt8Iter(ImageRecordIter):
    """ImageRecordIter with uint8 pixels (no mean/std/scale)."""
    _out_dtype = np.uint8

    def _store(self, img, out):
        out[...] = np.transpose(img, (2, 0, 1))


class ImageRecordInt8Iter(ImageRecordIter):
    """ImageRecordIter with int8 pixels (saturating at 127)."""
    _out_dtype = np.int8

    def _store(self, img, out):
        out[...] = np.minimum(np.transpose(img, (2, 0, 1)), 127)


for _cls in (ImageRecordIter, ImageRecordUInt8Iter, ImageRecordInt8Iter):
    register(_cls)
