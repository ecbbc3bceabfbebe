"""``mx.io.ImageDetRecordIter``: detection batches from a RecordIO file of packed images.

MXNet 1.9.1's arguments and, for the paths below, its batches. Each record holds an
image and a packed detection label ``[A, B, <header>, (cls, xmin, ymin, xmax, ymax,
...)*]`` (coordinates normalised to [0, 1]). An image is decoded (grayscale when C == 1,
else RGB), its shorter edge optionally resized to `resize`, then resized to the
data_shape's (H, W) (``resize_mode='force'``) with `inter_method`, mirrored with
probability `rand_mirror_prob` (boxes too), and stored as ``(x - mean) * scale / std``
per channel (a std of 0, the default, divides by 1).

The batch label row is ``[C, H, W, n, <the n raw label values>]`` (objects with an
empty box dropped, as MXNet drops them) padded with
`label_pad_value` to ``label_pad_width + 4`` values; ``label_pad_width=0`` (or -1) uses
the longest raw label in the file, a smaller positive width is refused.

Partitioning, shuffling, ``round_batch`` and the prefetching threads are
ImageRecordIter's. Not supported (refused when set away from their defaults, naming
the argument): the random crop / pad / colour augmentations (``rand_crop_prob``,
``rand_pad_prob``, ``random_*_prob``), ``resize_mode`` other than 'force', ``mean_img``,
and output dtypes other than float32.
"""
import os

import numpy as np

from mxcy.base import MXNetError
from mxcy.image.image import cv2_module
from mxcy.io.base import register
from mxcy.io.image_record import _ARGS, _IR, ImageRecordIter, _read_record

__all__ = ['ImageDetRecordIter']

# argument -> default; these are accepted only at their default (see the docstring)
_UNSUPPORTED = dict(aug_seq='det_aug_default', shuffle_chunk_size=0, shuffle_chunk_seed=0,
                    rand_crop_prob=0.0, min_crop_scales=(0.0,), max_crop_scales=(1.0,),
                    min_crop_aspect_ratios=(1.0,), max_crop_aspect_ratios=(1.0,),
                    min_crop_overlaps=(0.0,), max_crop_overlaps=(1.0,),
                    min_crop_sample_coverages=(0.0,), max_crop_sample_coverages=(1.0,),
                    min_crop_object_coverages=(0.0,), max_crop_object_coverages=(1.0,),
                    num_crop_sampler=1, crop_emit_mode='center', emit_overlap_thresh=0.3,
                    max_crop_trials=(25,), rand_pad_prob=0.0, max_pad_scale=1.0,
                    max_random_hue=0, random_hue_prob=0.0, max_random_saturation=0,
                    random_saturation_prob=0.0, max_random_illumination=0,
                    random_illumination_prob=0.0, max_random_contrast=0.0,
                    random_contrast_prob=0.0, fill_value=127, resize_mode='force',
                    mean_img='', dtype=None, mean_a=0.0, std_a=0.0)
_CHECKED = {'aug_seq', 'rand_crop_prob', 'rand_pad_prob', 'random_hue_prob',
            'random_saturation_prob', 'random_illumination_prob', 'random_contrast_prob',
            'resize_mode', 'mean_img', 'dtype'}
_DET_ARGS = dict({k: v for k, v in _ARGS.items()
                  if k not in ('rand_crop', 'rand_mirror', 'seed_aug', 'path_imgidx')},
                 label_width=-1, label_pad_width=0, label_pad_value=-1.0,
                 rand_mirror_prob=0.0, std_r=0.0, std_g=0.0, std_b=0.0, seed_aug=None,
                 path_imgidx='', **_UNSUPPORTED)


def _drop_empty(raw):
    """Packed label `raw` without its objects whose box is empty (xmax <= xmin or
    ymax <= ymin), as MXNet's parser drops them."""
    head, width = int(raw[0]), int(raw[1])
    objs = raw[head:].reshape(-1, width)
    keep = (objs[:, 3] > objs[:, 1]) & (objs[:, 4] > objs[:, 2])
    return raw if keep.all() else np.concatenate([raw[:head], objs[keep].ravel()])


class ImageDetRecordIter(ImageRecordIter):
    """Batches of resized, normalised images and padded detection labels from a ``.rec``
    file (see the module docstring)."""
    _args = _DET_ARGS

    def __init__(self, **kwargs):
        for name in sorted(_CHECKED & set(kwargs)):
            value, default = kwargs[name], _UNSUPPORTED[name]
            if name == 'dtype' and value in (None, 'float32', np.float32):
                continue
            if value != default:
                raise ValueError(f"ImageDetRecordIter: {name}={value!r} is not supported "
                                 f"(only {default!r}); the random crop/pad/colour "
                                 "augmentations of MXNet's C++ detection iterator are left out")
        super().__init__(**kwargs)

    def _label_shape(self):
        p = self._p
        self._lw = int(p['label_width'])
        longest = self._longest_label()
        pad = int(p['label_pad_width'])
        if pad <= 0:
            pad = longest
        elif pad < longest:
            raise MXNetError(f"ImageDetRecordIter: label_pad_width {pad} is smaller than the "
                             f"longest label in {self.path!r} ({longest} values)")
        self._pad_width = pad
        return (self.batch_size, pad + 4)

    def _longest_label(self):
        fd = os.open(self.path, os.O_RDONLY)
        try:
            longest = 0
            for r, offset in enumerate(self._offsets):
                rec = _read_record(fd, self.path, offset)
                longest = max(longest, self._unpack(rec, r)[0].size)
            return longest
        finally:
            os.close(fd)

    def _unpack(self, rec, r):
        if len(rec) < _IR.size:
            raise MXNetError(f"ImageDetRecordIter: {self.path!r}, record {r}: {len(rec)} "
                             "bytes, shorter than the 24-byte image header")
        flag, lab, ident, _ = _IR.unpack_from(rec)
        raw = np.frombuffer(rec, np.float32, flag, _IR.size) if flag else \
            np.array([lab], np.float32)
        if self._labels is not None:
            if ident not in self._labels:
                raise MXNetError(f"ImageDetRecordIter: image id {ident} (record {r}) is not "
                                 f"in path_imglist {self._p['path_imglist']!r}")
            raw = self._labels[ident]
        if self._lw > 0 and raw.size != self._lw:
            raise MXNetError(f"ImageDetRecordIter: {self.path!r}, record {r}: {raw.size} "
                             f"label values, label_width is {self._lw}")
        if raw.size < 2 or int(raw[0]) < 2 or int(raw[1]) < 5 or \
                (raw.size - int(raw[0])) % int(raw[1]):
            raise MXNetError(f"ImageDetRecordIter: {self.path!r}, record {r}: not a packed "
                             f"detection label [header width >= 2, object width >= 5, ...]: "
                             f"{raw[:8].tolist()}{' ...' if raw.size > 8 else ''}")
        return raw, ident, memoryview(rec)[_IR.size + 4 * flag:]

    def _sample(self, img, raw, rng):
        """The augmented image and its label row: [C, H, W, n, raw label...], padded."""
        img, raw = self._augment_det(img, _drop_empty(raw), rng)
        c, h, w = self.data_shape
        row = np.full(self.provide_label[0].shape[1:], self._p['label_pad_value'],
                      dtype=np.float32)
        row[:4] = (c, h, w, raw.size)
        row[4:4 + raw.size] = raw
        return img, row

    def _augment_det(self, img, raw, rng):
        p, (_, h, w) = self._p, self.data_shape
        img = self._resize_shorter(img)
        if img.shape[:2] != (h, w):
            img = cv2_module().resize(img, (w, h), interpolation=int(p['inter_method']))
        if img.ndim == 2:
            img = img[:, :, None]
        if p['rand_mirror_prob'] > 0 and rng.random() < p['rand_mirror_prob']:
            img = img[:, ::-1]
            raw = raw.copy()
            objs = raw[int(raw[0]):].reshape(-1, int(raw[1]))
            xmin = 1.0 - objs[:, 3]
            objs[:, 3] = 1.0 - objs[:, 1]
            objs[:, 1] = xmin
        return img, raw

    def _store(self, img, out):
        out[...] = np.transpose(img, (2, 0, 1))
        out -= self._mean[:, None, None]
        std = np.where(self._std == 0, 1.0, self._std).astype(np.float32)
        out *= (self._p['scale'] / std)[:, None, None]


register(ImageDetRecordIter)
