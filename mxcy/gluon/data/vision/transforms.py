"""``gluon.data.vision.transforms``: image transforms as Gluon blocks (MXNet 1.9.1 names).

Inputs are images as NDArrays, HWC (or NHWC batches where MXNet allows it), uint8 or
float; outputs are NDArrays. ``Cast``, ``ToTensor`` and ``Normalize`` are HybridBlocks
written with ``F`` operators, so ``HybridCompose`` of them hybridizes (a hybridized
``ToTensor`` takes HWC images). The resize/crop transforms use ``mx.image`` (OpenCV,
interpolation codes as there). Random transforms draw from Python's ``random`` (seed it
with ``random.seed``); the colour ones keep the input dtype, saturating integer images
to [0, 255] as MXNet's kernels do.
"""
import random

import numpy as np

from mxcy._ndarray import NDArray
from mxcy.gluon.block import Block, HybridBlock
from mxcy.gluon.nn import HybridSequential, Sequential
from mxcy.image import image as _img
from mxcy.image.augmenters import HueJitterAug, LightingAug, _PCA_EIGVAL, _PCA_EIGVEC
from mxcy.gluon.data.vision._rotate import RandomRotation, Rotate

__all__ = ['Compose', 'HybridCompose', 'Cast', 'ToTensor', 'Normalize', 'Resize',
           'CenterCrop', 'RandomResizedCrop', 'CropResize', 'RandomFlipLeftRight',
           'RandomFlipTopBottom', 'RandomBrightness', 'RandomContrast', 'RandomSaturation',
           'RandomHue', 'RandomColorJitter', 'RandomLighting', 'RandomApply', 'Rotate',
           'RandomRotation']

_GRAY = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def _np(x, where):
    if not isinstance(x, NDArray):
        raise TypeError(f"{where}: expected an image NDArray (HWC), got {type(x).__name__}")
    if x.ndim not in (3, 4):
        raise ValueError(f"{where}: expected an HWC image or NHWC batch, got shape {x.shape}")
    return x.asnumpy()


def _like(out, dtype):
    """`out` (float) as `dtype`, rounded and saturated for integer dtypes."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        out = np.clip(np.rint(out), max(info.min, 0), min(info.max, 255))
    return _img.to_nd(out.astype(dtype, copy=False))


def _per_image(x, fn):
    return fn(x) if x.ndim == 3 else np.stack([fn(im) for im in x])


class Compose(Sequential):
    """Apply `transforms` in order (runs of HybridBlocks are grouped and hybridized)."""

    def __init__(self, transforms):
        super().__init__()
        transforms.append(None)
        hybrid = []
        for t in transforms:
            if isinstance(t, HybridBlock):
                hybrid.append(t)
                continue
            if len(hybrid) == 1:
                self.add(hybrid[0])
            elif len(hybrid) > 1:
                hblock = HybridSequential()
                for j in hybrid:
                    hblock.add(j)
                hblock.hybridize()
                self.add(hblock)
            hybrid = []
            if t is not None:
                self.add(t)
        transforms.pop()


class HybridCompose(HybridSequential):
    """Apply HybridBlock `transforms` in order, as one hybridizable block."""

    def __init__(self, transforms):
        super().__init__()
        for t in transforms:
            if not isinstance(t, HybridBlock):
                raise TypeError(f"HybridCompose: every transform must be a HybridBlock, got "
                                f"{type(t).__name__} (use Compose)")
            self.add(t)


class Cast(HybridBlock):
    """Cast to `dtype`."""

    def __init__(self, dtype='float32'):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """HWC (NHWC) image(s) in [0, 255] to CHW (NCHW) float32 in [0, 1]."""

    def hybrid_forward(self, F, x):
        ndim = getattr(x, 'ndim', 3)
        if ndim not in (3, 4):
            raise ValueError(f"ToTensor: expected an HWC image or NHWC batch, got shape "
                             f"{x.shape}")
        axes = (2, 0, 1) if ndim == 3 else (0, 3, 1, 2)
        return F.transpose(F.cast(x, 'float32'), axes=axes) / 255.0


class Normalize(HybridBlock):
    """``(x - mean) / std`` per channel of a CHW (NCHW) tensor."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = tuple(np.atleast_1d(np.asarray(mean, dtype=np.float64)).tolist())
        self._std = tuple(np.atleast_1d(np.asarray(std, dtype=np.float64)).tolist())
        if min(self._std) <= 0:
            raise ValueError(f"Normalize: std must be positive, got {std!r}")

    def _channel(self, F, values):
        return F.concat(*[F.zeros(shape=(1, 1, 1)) + v for v in values], dim=0)

    def hybrid_forward(self, F, x):
        nch = x.shape[-3] if isinstance(x, NDArray) else None
        if nch is not None:
            for name, vals in (('mean', self._mean), ('std', self._std)):
                if len(vals) not in (1, nch):
                    raise ValueError(f"Normalize: {name} has {len(vals)} values, the tensor "
                                     f"{x.shape} has {nch} channels (CHW)")
        return F.broadcast_div(F.broadcast_sub(x, self._channel(F, self._mean)),
                               self._channel(F, self._std))


def _size(size):
    return (size, size) if isinstance(size, (int, np.integer)) else tuple(size)


class Resize(Block):
    """Resize to `size` (int: square, or the shorter edge with `keep_ratio`; (w, h))."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._size, self._keep, self._interp = size, keep_ratio, interpolation

    def forward(self, x):
        arr = _np(x, 'Resize')

        def one(im):
            h, w = im.shape[:2]
            if isinstance(self._size, (int, np.integer)) and self._keep:
                nw, nh = (self._size, int(h * self._size / w)) if h > w else \
                    (int(w * self._size / h), self._size)
            else:
                nw, nh = _size(self._size)
            return _img.resize_array(im, nw, nh, self._interp)
        return _img.to_nd(_per_image(arr, one))


class CenterCrop(Block):
    """The central `size` (int or (w, h)) crop, scaled down to fit and resized back."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._size, self._interp = _size(size), interpolation

    def forward(self, x):
        return _img.to_nd(_per_image(_np(x, 'CenterCrop'), lambda im: _img.center_crop_array(
            im, self._size, self._interp)[0]))


class RandomResizedCrop(Block):
    """A crop of random area fraction `scale` and aspect `ratio`, resized to `size`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._args = (_size(size), scale, ratio, interpolation)

    def forward(self, x):
        size, scale, ratio, interp = self._args
        return _img.to_nd(_per_image(_np(x, 'RandomResizedCrop'), lambda im: (
            _img.random_size_crop_array(im, size, scale, ratio, interp)[0])))


class CropResize(Block):
    """The `width` x `height` region at (`x`, `y`), resized to `size` when given."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._args = (x, y, width, height, None if size is None else _size(size),
                      1 if interpolation is None else interpolation)

    def forward(self, x):
        x0, y0, w, h, size, interp = self._args
        return _img.to_nd(_per_image(_np(x, 'CropResize'), lambda im: _img.crop_array(
            im, x0, y0, w, h, size, interp, 'CropResize')))


class _RandomFlip(Block):
    _axis = 1

    def forward(self, x):
        arr = _np(x, type(self).__name__)
        axis = self._axis + (arr.ndim - 3)
        return _img.to_nd(np.flip(arr, axis)) if random.random() < 0.5 else x


class RandomFlipLeftRight(_RandomFlip):
    """Mirror left-right with probability 0.5."""
    _axis = 1


class RandomFlipTopBottom(_RandomFlip):
    """Flip top-bottom with probability 0.5."""
    _axis = 0


def _factor(amount, name):
    if amount < 0:
        raise ValueError(f"{name}: the jitter amount must be >= 0, got {amount}")
    return random.uniform(max(0.0, 1.0 - amount), 1.0 + amount)


class RandomBrightness(Block):
    """Multiply by a factor from [max(0, 1 - brightness), 1 + brightness]."""

    def __init__(self, brightness):
        super().__init__()
        self._amount = brightness

    def forward(self, x):
        arr = _np(x, 'RandomBrightness')
        return _like(arr.astype(np.float32) * _factor(self._amount, 'RandomBrightness'),
                     arr.dtype)


class RandomContrast(Block):
    """Blend with the image's mean gray level by a factor from [1 - c, 1 + c]."""

    def __init__(self, contrast):
        super().__init__()
        self._amount = contrast

    def forward(self, x):
        arr = _np(x, 'RandomContrast')
        alpha = _factor(self._amount, 'RandomContrast')

        def one(im):
            im = im.astype(np.float32)
            gray = float((im * _GRAY).sum(axis=-1).mean())
            return im * alpha + gray * (1.0 - alpha)
        return _like(_per_image(arr, one), arr.dtype)


class RandomSaturation(Block):
    """Blend with each pixel's gray level by a factor from [1 - s, 1 + s]."""

    def __init__(self, saturation):
        super().__init__()
        self._amount = saturation

    def forward(self, x):
        arr = _np(x, 'RandomSaturation')
        alpha = _factor(self._amount, 'RandomSaturation')
        im = arr.astype(np.float32)
        gray = (im * _GRAY).sum(axis=-1, keepdims=True)
        return _like(im * alpha + gray * (1.0 - alpha), arr.dtype)


class RandomHue(Block):
    """Rotate the hue (YIQ space) by a random amount in [-hue, hue] half-turns."""

    def __init__(self, hue):
        super().__init__()
        self._aug = HueJitterAug(hue)

    def forward(self, x):
        arr = _np(x, 'RandomHue')
        return _like(self._aug._apply(arr.astype(np.float32)), arr.dtype)


class RandomColorJitter(Block):
    """Brightness, contrast, saturation and hue jitter, in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._ts = [cls(v) for cls, v in ((RandomBrightness, brightness),
                                          (RandomContrast, contrast),
                                          (RandomSaturation, saturation),
                                          (RandomHue, hue)) if v]

    def forward(self, x):
        ts = list(self._ts)
        random.shuffle(ts)
        for t in ts:
            x = t(x)
        return x


class RandomLighting(Block):
    """AlexNet-style PCA lighting noise with standard deviation `alpha`."""

    def __init__(self, alpha):
        super().__init__()
        self._aug = LightingAug(alpha, _PCA_EIGVAL, _PCA_EIGVEC)

    def forward(self, x):
        arr = _np(x, 'RandomLighting')
        return _like(self._aug._apply(arr.astype(np.float32)), arr.dtype)


class RandomApply(Sequential):
    """Apply `transforms` (a block) with probability `p`."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x, *args):
        if random.random() >= self.p:
            return x if not args else (x,) + args
        return self.transforms(x, *args)
