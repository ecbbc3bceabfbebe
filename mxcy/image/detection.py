"""``mx.image`` detection augmenters: callables mapping ``(image, label)`` to an augmented
``(image, label)`` pair (MXNet 1.9.1 names, arguments and ``dumps()``).

Contract: the image is HWC (an NDArray, or NumPy inside ImageDetIter); the label is a
NumPy array of shape ``(objects, 5+)``, each row ``[cls, xmin, ymin, xmax, ymax, ...]``
with coordinates normalised to [0, 1] of the image. Every augmenter keeps labels
consistent with the pixels it returns: a flip mirrors x, a crop re-normalises boxes to the
crop (clipping, and ejecting objects that keep less than `min_eject_coverage` of their
area), a pad shrinks them into the larger canvas. Randomness comes from Python's
``random`` (as the classification augmenters), so ``random.seed`` fixes it.
"""
import logging
import math
import random

import numpy as np

from mxcy._ndarray import NDArray
from mxcy.image.augmenters import (_Described, Augmenter, CastAug, ColorJitterAug,
                                   ColorNormalizeAug,
                                   ForceResizeAug, HueJitterAug, LightingAug, RandomGrayAug,
                                   ResizeAug, apply_aug, _PCA_EIGVAL, _PCA_EIGVEC,
                                   _channel_stat, _DEFAULT_MEAN, _DEFAULT_STD)
from mxcy.image.image import crop_array, cv2_module, to_nd

__all__ = ['DetAugmenter', 'DetBorrowAug', 'DetRandomSelectAug', 'DetHorizontalFlipAug',
           'DetRandomCropAug', 'DetRandomPadAug', 'CreateMultiRandCropAugmenter',
           'CreateDetAugmenter']


def _areas(boxes):
    """Areas of (N, 4+) boxes [xmin, ymin, xmax, ymax, ...] (0 for empty ones)."""
    w = np.maximum(0, boxes[:, 2] - boxes[:, 0])
    h = np.maximum(0, boxes[:, 3] - boxes[:, 1])
    return w * h


class DetAugmenter(_Described):
    """Base detection augmenter: subclasses implement ``_apply(numpy_hwc, label)``."""

    def __call__(self, src, label):
        label = label.asnumpy() if isinstance(label, NDArray) else np.asarray(label)
        if label.ndim != 2 or label.shape[1] < 5:
            raise ValueError(f"{type(self).__name__}: label must have shape (objects, 5+), "
                             f"rows [cls, xmin, ymin, xmax, ymax, ...], got {label.shape}")
        if isinstance(src, NDArray):
            out, label = self._apply(src.asnumpy(), label)
            return to_nd(out), label
        return self._apply(np.asarray(src), label)

    def _apply(self, src, label):
        raise TypeError(f"{type(self).__name__}: DetAugmenter is a base class; a subclass "
                        "overrides _apply (NumPy HWC, label in and out) or __call__")


def apply_det_aug(aug, src, label):
    """`aug` applied to NumPy `src` and `label`, whether it overrides ``_apply`` or
    ``__call__`` (the latter is given an NDArray image, as in MXNet)."""
    if isinstance(aug, DetAugmenter) and type(aug).__call__ is DetAugmenter.__call__:
        return aug._apply(src, label)
    out, label = aug(to_nd(src), label)
    return (out.asnumpy() if isinstance(out, NDArray) else np.asarray(out)), label


class DetBorrowAug(DetAugmenter):
    """Apply a classification `augmenter` to the image; the label is unchanged."""

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError(f"DetBorrowAug: augmenter must be an mx.image.Augmenter, got "
                            f"{type(augmenter).__name__}")
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        return [self.__class__.__name__.lower(), self.augmenter.dumps()]

    def _apply(self, src, label):
        return apply_aug(self.augmenter, src), label


class DetRandomSelectAug(DetAugmenter):
    """With probability `skip_prob` do nothing, else apply one augmenter of `aug_list`
    chosen at random (the list is shuffled in place, as in MXNet)."""

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise TypeError(f"DetRandomSelectAug: aug_list must hold DetAugmenters, got "
                                f"{type(aug).__name__}")
        if not aug_list:
            skip_prob = 1
        self.aug_list = list(aug_list)
        self.skip_prob = skip_prob

    def dumps(self):
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.aug_list]]

    def _apply(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        random.shuffle(self.aug_list)
        return apply_det_aug(self.aug_list[0], src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """With probability `p`, mirror left-right (boxes: x -> 1 - x)."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def _apply(self, src, label):
        if random.random() < self.p:
            src = src[:, ::-1]
            label = np.array(label, dtype=np.float32, copy=True)
            xmin = 1.0 - label[:, 3]
            label[:, 3] = 1.0 - label[:, 1]
            label[:, 1] = xmin
        return src, label


def _check_range(value, name, where):
    rng = tuple(value)
    if len(rng) != 2:
        raise ValueError(f"{where}: {name} must be (low, high), got {value!r}")
    if rng[1] <= 0 or rng[0] > rng[1]:
        logging.warning("%s: %s %r is empty, the augmenter is disabled", where, name, rng)
        return rng, False
    return rng, True


def _proposal_height(lo_area, hi_area, ratio):
    """(lowest, highest) box height of aspect `ratio` with area in [lo_area, hi_area]."""
    return int(round(math.sqrt(lo_area / ratio))), int(round(math.sqrt(hi_area / ratio)))


class DetRandomCropAug(DetAugmenter):
    """Random crop with constraints (see the module docstring): the crop has an aspect
    ratio in `aspect_ratio_range`, a fraction of the image area in `area_range`, and
    covers every object it touches by more than `min_object_covered`; objects left with
    less than `min_eject_coverage` of their area are dropped. After `max_attempts`
    failed proposals the input is returned unchanged."""

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range, ok_ratio = _check_range(aspect_ratio_range,
                                                         'aspect_ratio_range', 'DetRandomCropAug')
        self.area_range, ok_area = _check_range(area_range, 'area_range', 'DetRandomCropAug')
        self.enabled = ok_ratio and ok_area

    def _apply(self, src, label):
        crop = self._proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = crop_array(src, x, y, w, h, None, where='DetRandomCropAug')
        return src, label

    def _covers(self, label, x0, y0, x1, y1, width, height):
        """Whether the crop (pixels) covers each object it touches enough."""
        if (x1 - x0) * (y1 - y0) < 2:
            return False
        box = np.array([x0 / width, y0 / height, x1 / width, y1 / height])
        areas = _areas(label[:, 1:])
        inter = np.stack([np.maximum(label[:, 1], box[0]), np.maximum(label[:, 2], box[1]),
                          np.minimum(label[:, 3], box[2]), np.minimum(label[:, 4], box[3])],
                         axis=1)
        with np.errstate(divide='ignore', invalid='ignore'):
            cover = _areas(inter) / areas
        cover = cover[cover > 0]
        return cover.size > 0 and np.amin(cover) > self.min_object_covered

    def _crop_labels(self, label, x, y, w, h, height, width):
        """Boxes re-normalised to the crop; None if no object survives."""
        sx, sy, sw, sh = x / width, y / height, w / width, h / height
        out = np.array(label, dtype=np.float32, copy=True)
        out[:, (1, 3)] = (out[:, (1, 3)] - sx) / sw
        out[:, (2, 4)] = (out[:, (2, 4)] - sy) / sh
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        with np.errstate(divide='ignore', invalid='ignore'):
            coverage = _areas(out[:, 1:]) * sw * sh / _areas(label[:, 1:])
        keep = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & \
            (coverage > self.min_eject_coverage)
        return out[keep] if keep.any() else None

    def _proposal(self, label, height, width):
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        lo_area = self.area_range[0] * width * height
        hi_area = self.area_range[1] * width * height
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h, max_h = _proposal_height(lo_area, hi_area, ratio)
            if round(max_h * ratio) > width:
                max_h = int((width + 0.4999999) / ratio)       # keep w = h * ratio <= width
            max_h = min(max_h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            area = w * h
            if area < lo_area:
                h += 1
                w = int(round(h * ratio))
                area = w * h
            if area > hi_area:
                h -= 1
                w = int(round(h * ratio))
                area = w * h
            if not (lo_area <= area <= hi_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._covers(label, x, y, x + w, y + h, width, height):
                new_label = self._crop_labels(label, x, y, w, h, height, width)
                if new_label is not None:
                    return x, y, w, h, new_label
        return ()


class DetRandomPadAug(DetAugmenter):
    """Random padding: place the image in a larger canvas (aspect ratio in
    `aspect_ratio_range`, area `area_range` times the image's, filled with `pad_val`)
    and shrink the boxes to match. After `max_attempts` failures the input is returned."""

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple)):
            if not isinstance(pad_val, (int, float)):
                raise TypeError(f"DetRandomPadAug: pad_val must be a number or a tuple of "
                                f"numbers, got {type(pad_val).__name__}")
            pad_val = (pad_val,)
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.max_attempts = max_attempts
        self.aspect_ratio_range, ok_ratio = _check_range(aspect_ratio_range,
                                                         'aspect_ratio_range', 'DetRandomPadAug')
        self.area_range, ok_area = _check_range(area_range, 'area_range', 'DetRandomPadAug')
        if self.area_range[1] < 1.0:
            logging.warning("DetRandomPadAug: area_range %r is below 1, padding disabled",
                            self.area_range)
            ok_area = False
        self.enabled = ok_ratio and ok_area

    def _apply(self, src, label):
        height, width = src.shape[:2]
        pad = self._proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            fill = list(self.pad_val) * (src.shape[2] if len(self.pad_val) == 1 else 1)
            src = cv2_module().copyMakeBorder(np.ascontiguousarray(src), y, h - y - height, x,
                                              w - x - width, 0, value=fill[:4])
            if src.ndim == 2:
                src = src[:, :, None]
        return src, label

    def _proposal(self, label, height, width):
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        lo_area = self.area_range[0] * height * width
        hi_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h, max_h = _proposal_height(lo_area, hi_area, ratio)
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)            # wide enough for the image
            h = max(h, height)
            if h > max_h:
                continue
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if h - height < 2 or w - width < 2:
                continue
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            out = np.array(label, dtype=np.float32, copy=True)
            out[:, (1, 3)] = (out[:, (1, 3)] * width + x) / w
            out[:, (2, 4)] = (out[:, (2, 4)] * height + y) / h
            return x, y, w, h, out
        return ()


def _align(params, names):
    """Broadcast per-augmenter parameter lists to one length (scalars count as one)."""
    lists = [p if isinstance(p, list) else [p] for p in params]
    num = max(len(p) for p in lists)
    for k, p in enumerate(lists):
        if len(p) not in (1, num):
            raise ValueError(f"CreateMultiRandCropAugmenter: {names[k]} has {len(p)} values, "
                             f"others have {num}; give 1 or {num}")
        lists[k] = p * num if len(p) == 1 else p
    return lists


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A DetRandomSelectAug over DetRandomCropAugs, one per value of the list-valued
    arguments (a list of (low, high) pairs for the two ranges); scalars are shared."""
    names = ['min_object_covered', 'aspect_ratio_range', 'area_range', 'min_eject_coverage',
             'max_attempts']
    params = _align([min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
                     max_attempts], names)
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2,
                       min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                       area_range=(0.05, 3.0), min_eject_coverage=0.3, max_attempts=50,
                       pad_val=(127, 127, 127)):
    """MXNet's standard detection augmenter list for `data_shape` (C, H, W): optional
    resize of the shorter edge, random crop (probability `rand_crop`), mirror, random pad
    (probability `rand_pad`), a forced resize to (W, H), float32 cast, colour jitter,
    hue, PCA lighting, random gray and normalisation (``mean=True`` / ``std=True``:
    ImageNet's statistics)."""
    if len(data_shape) != 3:
        raise ValueError(f"CreateDetAugmenter: data_shape must be (channels, height, width), "
                         f"got {data_shape!r}")
    auglist = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(
            min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
            max_attempts, skip_prob=(1 - rand_crop)))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:
        pad_aug = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts,
                                  pad_val)
        auglist.append(DetRandomSelectAug([pad_aug], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        auglist.append(DetBorrowAug(LightingAug(pca_noise, np.array(_PCA_EIGVAL),
                                                np.array(_PCA_EIGVEC))))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    mean = _channel_stat(mean, _DEFAULT_MEAN, 'mean')
    std = _channel_stat(std, _DEFAULT_STD, 'std')
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist
