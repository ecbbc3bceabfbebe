"""``mx.image`` augmenters: callables that map one HWC image to an augmented one.

Each augmenter takes an HWC image, an NDArray (the result is an NDArray, as in MXNet)
or a NumPy array (the result stays NumPy: ImageIter chains them without copies), and
remembers its constructor arguments for ``dumps()``. Random draws come from Python's
``random`` (crops, flips, jitter factors) and NumPy's global generator (lighting noise),
as in MXNet. ``CreateAugmenter`` builds MXNet's standard list.
"""
import json
import random

import numpy as np

from mxcy._ndarray import NDArray
from mxcy.image.image import (center_crop_array, random_crop_array,
                              random_size_crop_array, resize_array, resize_short_array,
                              to_nd, _get_interp_method)

__all__ = ['Augmenter', 'SequentialAug', 'ResizeAug', 'ForceResizeAug', 'RandomCropAug',
           'RandomSizedCropAug', 'CenterCropAug', 'RandomOrderAug', 'BrightnessJitterAug',
           'ContrastJitterAug', 'SaturationJitterAug', 'HueJitterAug', 'ColorJitterAug',
           'LightingAug', 'ColorNormalizeAug', 'RandomGrayAug', 'HorizontalFlipAug',
           'CastAug', 'CreateAugmenter']

_GRAY_COEF = np.array([0.299, 0.587, 0.114], dtype=np.float32)


class _Described:
    """An augmenter's constructor arguments (arrays as lists) and their ``dumps``; shared by
    Augmenter and DetAugmenter, which MXNet keeps as unrelated classes."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for k, v in self._kwargs.items():
            if isinstance(v, NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self):
        """``[name, kwargs]`` as JSON (name: the class name in lower case)."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])


class Augmenter(_Described):
    """Base augmenter: subclasses implement ``_apply(numpy_hwc) -> numpy_hwc``."""

    def __call__(self, src):
        if isinstance(src, NDArray):
            return to_nd(self._apply(src.asnumpy()))
        return self._apply(np.asarray(src))

    def _apply(self, src):
        raise TypeError(f"{type(self).__name__}: Augmenter is a base class; a subclass "
                        "overrides _apply (NumPy HWC in and out) or __call__")


def apply_aug(aug, src):
    """`aug` applied to NumPy `src`, whether it overrides ``_apply`` or ``__call__``."""
    if type(aug).__call__ is Augmenter.__call__:
        return aug._apply(src)
    out = aug(to_nd(src))
    return out.asnumpy() if isinstance(out, NDArray) else np.asarray(out)


def _as_float(src):
    return src if src.dtype == np.float32 else src.astype(np.float32)


class _ListAug(Augmenter):
    """An augmenter over a list of augmenters `ts`; dumps lists theirs."""

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]


class SequentialAug(_ListAug):
    """Apply the augmenters `ts` in order."""

    def _apply(self, src):
        for aug in self.ts:
            src = apply_aug(aug, src)
        return src


class RandomOrderAug(_ListAug):
    """Apply the augmenters `ts` in a random order."""

    def _apply(self, src):
        ts = list(self.ts)
        random.shuffle(ts)
        for aug in ts:
            src = apply_aug(aug, src)
        return src


class _SizeAug(Augmenter):
    """An augmenter of a target `size` and an `interp` method."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp


class ResizeAug(_SizeAug):
    """Resize the shorter edge to `size`."""

    def _apply(self, src):
        return resize_short_array(src, self.size, self.interp)


class ForceResizeAug(_SizeAug):
    """Resize to `size` (w, h), ignoring the aspect ratio."""

    def _apply(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return resize_array(src, self.size[0], self.size[1],
                            _get_interp_method(self.interp, sizes))


class RandomCropAug(_SizeAug):
    """A random crop of `size` (w, h)."""

    def _apply(self, src):
        return random_crop_array(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """A crop of random area and aspect ratio, resized to `size` (w, h)."""

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size, self.area, self.ratio, self.interp = size, area, ratio, interp
        if 'min_area' in kwargs:
            self.area = kwargs.pop('min_area')
        if kwargs:
            raise TypeError(f"RandomSizedCropAug: unexpected arguments {sorted(kwargs)}")

    def _apply(self, src):
        return random_size_crop_array(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(_SizeAug):
    """The central crop of `size` (w, h)."""

    def _apply(self, src):
        return center_crop_array(src, self.size, self.interp)[0]


class BrightnessJitterAug(Augmenter):
    """Multiply by 1 + U(-brightness, brightness)."""

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def _apply(self, src):
        alpha = 1.0 + random.uniform(-self.brightness, self.brightness)
        return _as_float(src) * np.float32(alpha)


class ContrastJitterAug(Augmenter):
    """Blend with the mean gray level: alpha = 1 + U(-contrast, contrast)."""

    def __init__(self, contrast):
        super().__init__(contrast=contrast)
        self.contrast = contrast

    def _apply(self, src):
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        src = _as_float(src)
        gray = float((src * _GRAY_COEF).sum()) * 3.0 * (1.0 - alpha) / src.size
        return src * np.float32(alpha) + np.float32(gray)


class SaturationJitterAug(Augmenter):
    """Blend with the per-pixel gray level: alpha = 1 + U(-saturation, saturation)."""

    def __init__(self, saturation):
        super().__init__(saturation=saturation)
        self.saturation = saturation

    def _apply(self, src):
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        src = _as_float(src)
        gray = (src * _GRAY_COEF).sum(axis=2, keepdims=True) * np.float32(1.0 - alpha)
        return src * np.float32(alpha) + gray


class HueJitterAug(Augmenter):
    """Rotate the hue in YIQ space by U(-hue, hue) half-turns."""
    _TYIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321],
                      [0.211, -0.523, 0.311]])
    _ITYIQ = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = hue

    def _apply(self, src):
        alpha = random.uniform(-self.hue, self.hue)
        u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        bt = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = np.dot(np.dot(self._ITYIQ, bt), self._TYIQ).T.astype(np.float32)
        return np.dot(_as_float(src), t)


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter in a random order."""

    def __init__(self, brightness, contrast, saturation):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet-style PCA noise: add ``eigvec @ (alpha * eigval)``, alpha ~ N(0, alphastd)."""

    def __init__(self, alphastd, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = np.asarray(eigval)
        self.eigvec = np.asarray(eigvec)

    def _apply(self, src):
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = np.dot(self.eigvec * alpha, self.eigval).astype(np.float32)
        return _as_float(src) + rgb


class ColorNormalizeAug(Augmenter):
    """``(src - mean) / std``."""

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        to_np = lambda v: None if v is None else np.asarray(
            v.asnumpy() if isinstance(v, NDArray) else v, dtype=np.float32)
        self.mean, self.std = to_np(mean), to_np(std)

    def _apply(self, src):
        src = _as_float(src)
        if self.mean is not None:
            src = src - self.mean
        if self.std is not None:
            src = src / self.std
        return src


class RandomGrayAug(Augmenter):
    """With probability `p`, replace the colours by their gray level."""
    _MAT = np.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]],
                    dtype=np.float32)

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def _apply(self, src):
        if random.random() < self.p:
            src = np.dot(_as_float(src), self._MAT)
        return src


class HorizontalFlipAug(Augmenter):
    """With probability `p`, mirror left-right."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def _apply(self, src):
        if random.random() < self.p:
            src = src[:, ::-1]
        return src


class CastAug(Augmenter):
    """Cast to `typ` (float32 by default)."""

    def __init__(self, typ='float32'):
        super().__init__(type=typ)
        self.typ = typ

    def _apply(self, src):
        return src.astype(self.typ, copy=False)


_DEFAULT_MEAN = [123.68, 116.28, 103.53]
_DEFAULT_STD = [58.395, 57.12, 57.375]
_PCA_EIGVAL = [55.46, 4.794, 1.148]
_PCA_EIGVEC = [[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
               [-0.5836, -0.6948, 0.4203]]


def _channel_stat(value, default, name):
    if value is True:
        return np.array(default)
    if value is None:
        return None
    arr = np.asarray(value.asnumpy() if isinstance(value, NDArray) else value)
    if arr.size not in (1, 3):
        raise ValueError(f"CreateAugmenter: {name} must have 1 or 3 values, got shape "
                         f"{arr.shape}")
    return arr


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False,
                    rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                    saturation=0, hue=0, pca_noise=0, rand_gray=0, inter_method=2):
    """MXNet's standard augmenter list for images of `data_shape` (C, H, W): optional
    resize of the shorter edge, a center / random / random-sized crop to (W, H), mirror,
    float32 cast, colour jitter, hue, PCA lighting, random gray and normalisation
    (``mean=True`` / ``std=True`` select ImageNet's statistics)."""
    if len(data_shape) != 3:
        raise ValueError(f"CreateAugmenter: data_shape must be (channels, height, width), "
                         f"got {data_shape!r}")
    auglist = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise ValueError("CreateAugmenter: rand_resize=True needs rand_crop=True")
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0),
                                          inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        auglist.append(LightingAug(pca_noise, np.array(_PCA_EIGVAL), np.array(_PCA_EIGVEC)))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    mean = _channel_stat(mean, _DEFAULT_MEAN, 'mean')
    std = _channel_stat(std, _DEFAULT_STD, 'std')
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist
