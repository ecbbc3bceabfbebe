"""``mx.image.ImageIter``: batches of augmented images from a ``.rec`` file or an image list.

Sources (MXNet 1.9.1's): ``path_imgrec`` (+ ``path_imgidx`` for random access and
shuffling), or ``path_imglist`` (lines ``index<TAB>label...<TAB>path``, images read from
``path_root``), or ``imglist`` (``[[label, path], ...]``). A label given by the list
overrides the record's. ``num_parts``/``part_index`` give each worker an equal slice
of the sample sequence. Images are decoded, run through ``aug_list`` (by default
``CreateAugmenter(data_shape, **kwargs)``) and stored as ``(batch, C, H, W)``.

An image that does not decode is skipped with a logged warning naming its source, as
MXNet skips invalid images; a truncated record or a key missing from the index raises
MXNetError naming the file and the record.
"""
import logging
import os
import random

import numpy as np

from mxcy import recordio
from mxcy.base import MXNetError
from mxcy.image.augmenters import CreateAugmenter, apply_aug
from mxcy.image.image import decode_array, to_nd
from mxcy.io.base import DataBatch, DataDesc, DataIter, check_batch_size

__all__ = ['ImageIter']


def list_entries(path):
    """Parse the image list file `path`, one ``index<TAB>label...<TAB>path`` a line (blank
    lines skipped): yield ``(line number, (index, [labels], path), None)`` per line, or
    ``(line number, None, why)`` for a line that does not parse."""
    with open(path) as fin:
        for lineno, line in enumerate(fin, 1):
            fields = [f.strip() for f in line.strip().split('\t')]
            if fields == ['']:
                continue
            if len(fields) < 3:
                yield lineno, None, (f"expected 'index<TAB>label...<TAB>path', got "
                                     f"{line.strip()!r}")
                continue
            try:
                entry = int(fields[0]), [float(v) for v in fields[1:-1]], fields[-1]
            except ValueError as err:
                yield lineno, None, str(err)
                continue
            yield lineno, entry, None


class ImageIter(DataIter):
    """Image iterator with augmentation (see the module docstring)."""

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name='data',
                 label_name='softmax_label', dtype='float32', last_batch_handle='pad',
                 **kwargs):
        super().__init__(check_batch_size(batch_size, 'ImageIter'))
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ValueError("ImageIter: give path_imgrec, path_imglist or imglist")
        if len(data_shape) != 3 or data_shape[0] != 3:
            raise ValueError(f"ImageIter: data_shape must be (3, height, width), got "
                             f"{data_shape!r}")
        if last_batch_handle not in ('pad', 'discard', 'roll_over'):
            raise ValueError(f"ImageIter: last_batch_handle must be 'pad', 'discard' or "
                             f"'roll_over', got {last_batch_handle!r}")
        if not 0 <= part_index < num_parts:
            raise ValueError(f"ImageIter: part_index must be in [0, num_parts={num_parts}), "
                             f"got {part_index}")
        self.dtype = np.dtype(dtype)
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.shuffle = shuffle
        self.path_root = path_root
        self.last_batch_handle = last_batch_handle
        self.imgrec, self.imgidx, self.imglist, self.seq = None, None, None, None
        self._src_name = os.fspath(path_imgrec) if path_imgrec else None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, 'r')
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, 'r')
        if path_imglist:
            self.imglist, self.seq = self._read_list(os.fspath(path_imglist))
        elif isinstance(imglist, list):
            self.imglist, self.seq = {}, []
            for key, item in enumerate(imglist, 1):
                label = np.asarray(item[0], dtype=np.float32).reshape(-1)
                self.imglist[key] = (label, item[-1])
                self.seq.append(key)
        elif self.imgidx is not None:
            self.seq = self.imgidx
        if shuffle and self.seq is None:
            raise ValueError("ImageIter: shuffle=True needs random access: give path_imgidx "
                             "with path_imgrec, or an image list")
        if num_parts > 1:
            if self.seq is None:
                raise ValueError("ImageIter: num_parts > 1 needs path_imgidx or an image list")
            n = len(self.seq) // num_parts
            self.seq = self.seq[part_index * n:(part_index + 1) * n]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        lshape = (batch_size,) if label_width == 1 else (batch_size, label_width)
        self.provide_data = [DataDesc(data_name, (batch_size,) + self.data_shape, self.dtype)]
        self.provide_label = [DataDesc(label_name, lshape, np.float32)]
        self.cur = 0
        self._cache = None          # roll_over: (data, labels) carried into the next epoch
        self._allow_read = True
        self.reset()

    def _read_list(self, path):
        imglist, seq = {}, []
        for lineno, entry, error in list_entries(path):
            if error is not None:
                raise MXNetError(f"ImageIter: {path!r}, line {lineno}: {error}")
            key, labels, image_path = entry
            label = np.array(labels, dtype=np.float32)
            if label.size != self.label_width:
                raise MXNetError(f"ImageIter: {path!r}, line {lineno}: {label.size} "
                                 f"labels, label_width is {self.label_width}")
            imglist[key] = (label, image_path)
            seq.append(key)
        return imglist, seq

    def _empty_labels(self):
        """A new label batch, before it is filled."""
        return np.zeros(self.provide_label[0].shape, dtype=np.float32)

    def reset(self):
        """Rewind (and reshuffle when shuffle=True)."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != 'roll_over' or self._cache is None:
            self._cache = None
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True

    def hard_reset(self):
        """Rewind, dropping roll-over samples."""
        self._cache = None
        self.reset()

    def next_sample(self):
        """(label, encoded image bytes) of the next sample; StopIteration at the end."""
        if self.seq is not None:
            if self.cur >= len(self.seq):
                raise StopIteration
            idx = self.seq[self.cur]
            self.cur += 1
            if self.imgrec is not None:
                try:
                    s = self.imgrec.read_idx(idx)
                except KeyError:
                    raise MXNetError(f"ImageIter: record {idx!r} is missing from the index "
                                     f"{self.imgrec.idx_path!r} of {self._src_name!r}") from None
                header, img = recordio.unpack(s)
                return (header.label if self.imglist is None else self.imglist[idx][0]), img
            label, fname = self.imglist[idx]
            return label, self.read_image(fname)
        s = self.imgrec.read()
        if s is None:
            raise StopIteration
        header, img = recordio.unpack(s)
        return header.label, img

    def read_image(self, fname):
        """The bytes of image file `fname` (under path_root)."""
        path = os.path.join(self.path_root, fname) if self.path_root else fname
        try:
            with open(path, 'rb') as fin:
                return fin.read()
        except OSError as err:
            raise MXNetError(f"ImageIter: cannot read image {path!r}: {err}") from None

    def imdecode(self, s):
        """Decode bytes to an HWC uint8 NumPy array (RGB)."""
        return decode_array(s, 1, True, what='ImageIter')

    def augmentation_transform(self, data):
        """Run the augmenter list on one HWC image."""
        for aug in self.auglist:
            data = apply_aug(aug, data)
        return data

    def postprocess_data(self, datum):
        """HWC to CHW."""
        return np.transpose(datum, (2, 0, 1))

    def _fill(self, data, labels, start):
        """Fill rows start.. of the batch; the number of rows filled (short at the end)."""
        i = start
        while i < self.batch_size:
            try:
                label, s = self.next_sample()
            except StopIteration:
                return i
            try:
                img = self.imdecode(s)
            except MXNetError as err:
                where = self._src_name or 'image list'
                logging.warning("ImageIter: invalid image in %s (sample %d), skipping: %s",
                                where, self.cur - 1, err)
                continue
            img = self.augmentation_transform(img)
            if img.shape[:2] != self.data_shape[1:] or img.shape[2] != self.data_shape[0]:
                raise MXNetError(f"ImageIter: an augmented image has shape {img.shape} (HWC); "
                                 f"data_shape {self.data_shape} (CHW) needs the augmenters "
                                 "to crop or resize to it")
            data[i] = self.postprocess_data(img)
            labels[i] = np.asarray(label, dtype=np.float32).reshape(labels[i].shape)
            i += 1
        return i

    def next(self):
        if not self._allow_read:
            raise StopIteration
        data = np.zeros(self.provide_data[0].shape, dtype=self.dtype)
        labels = self._empty_labels()
        start = 0
        if self._cache is not None:
            cdata, clabels = self._cache
            start = len(cdata)
            data[:start], labels[:start] = cdata, clabels
            self._cache = None
        i = self._fill(data, labels, start)
        pad = 0
        if i < self.batch_size:
            if self.last_batch_handle == 'discard' or i == 0:
                raise StopIteration
            if self.last_batch_handle == 'roll_over':
                self._cache = (data[:i].copy(), labels[:i].copy())
                raise StopIteration
            pad = self.batch_size - i
            self.reset()
            if self._fill(data, labels, i) < self.batch_size:
                raise MXNetError("ImageIter: too few valid images to pad the last batch")
            self._allow_read = False
        return DataBatch([to_nd(data)], [to_nd(labels)], pad=pad)
