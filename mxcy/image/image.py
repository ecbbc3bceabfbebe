"""``mx.image`` functions: decode, resize and crop images held as HWC uint8 NDArrays.

Contract (MXNet 1.9.1's): images are ``(height, width, channels)`` NDArrays, RGB by
default (``to_rgb=False`` keeps OpenCV's BGR), uint8 after decoding; the crop and
resize helpers keep the dtype they are given. Interpolation codes are OpenCV's, which
MXNet passes through: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos; 9 picks
bicubic to enlarge, area to shrink and bilinear otherwise; 10 picks one of 0-4 at random.

Decoding and resizing use OpenCV (``opencv-python-headless``), the library MXNet itself
links, so results match MXNet's pixel for pixel up to the libjpeg build (within +-2).
Randomness comes from Python's ``random`` module, as in MXNet, so ``random.seed`` fixes
the crops.
"""
import math
import os
import random

import numpy as np

from mxcy._ndarray import NDArray, from_numpy_copy
from mxcy.base import MXNetError

__all__ = ['imdecode', 'imread', 'imresize', 'resize_short', 'fixed_crop', 'random_crop',
           'center_crop', 'color_normalize', 'random_size_crop', 'scale_down',
           'copyMakeBorder']

_CV2 = []


def cv2_module():
    """OpenCV, imported on first use (it adds ~0.2 s to ``import mxcy``). Its own
    thread pool is set to one thread: the iterators parallelise across images."""
    if not _CV2:
        import cv2
        cv2.setNumThreads(1)
        _CV2.append(cv2)
    return _CV2[0]

_BORDER_TYPES = (0, 1, 2, 3, 4)


def to_numpy(src, where='image'):
    """The NumPy array behind `src` (an NDArray or array-like)."""
    if isinstance(src, NDArray):
        return src.asnumpy()
    if isinstance(src, np.ndarray):
        return src
    raise TypeError(f"{where}: src must be an NDArray (HWC), got {type(src).__name__}")


def to_nd(arr):
    """A new NDArray holding the NumPy array `arr` (its dtype kept)."""
    arr = np.ascontiguousarray(arr)
    return from_numpy_copy(arr, None, arr.dtype)


def _check_hwc(arr, where):
    if arr.ndim != 3:
        raise MXNetError(f"{where}: expected an HWC image of 3 dimensions, got shape "
                         f"{arr.shape}")


def decode_array(buf, flag=1, to_rgb=True, what='imdecode'):
    """Decode encoded bytes to a NumPy HWC uint8 array (the helper behind imdecode)."""
    data = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else \
        buf.reshape(-1).view(np.uint8)
    if data.size == 0:
        raise MXNetError(f"{what}: empty buffer, nothing to decode")
    cv2 = cv2_module()
    mode = cv2.IMREAD_COLOR if flag > 0 else (cv2.IMREAD_GRAYSCALE if flag == 0
                                              else cv2.IMREAD_UNCHANGED)
    img = cv2.imdecode(data, mode)
    if img is None:
        raise MXNetError(f"{what}: decoding failed: the {data.size} bytes are not a valid "
                         "JPEG/PNG image (corrupt or truncated)")
    if img.ndim == 2:
        img = img[:, :, None]
    elif to_rgb and img.shape[2] == 3:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    elif to_rgb and img.shape[2] == 4:
        img = cv2.cvtColor(img, cv2.COLOR_BGRA2RGBA)
    return img


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decode an image (JPEG, PNG, ...) from bytes or a uint8 NDArray to an HWC uint8
    NDArray: 3 channels with ``flag=1``, 1 (grayscale) with ``flag=0``; RGB unless
    ``to_rgb=False`` (then OpenCV's BGR)."""
    if isinstance(buf, NDArray):
        buf = buf.asnumpy()
    if isinstance(buf, np.ndarray):
        if buf.dtype != np.uint8:
            raise TypeError(f"imdecode: buf must hold uint8 bytes, got dtype {buf.dtype}")
    elif not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"imdecode: buf must be bytes, bytearray or a uint8 NDArray, got "
                        f"{type(buf).__name__}")
    img = to_nd(decode_array(buf, flag, to_rgb))
    if out is not None:
        out[:] = img
        return out
    return img


def imread(filename, flag=1, to_rgb=True, out=None):
    """Read and decode the image file `filename` (see imdecode)."""
    filename = os.fspath(filename)
    try:
        with open(filename, 'rb') as f:
            buf = f.read()
    except OSError as err:
        raise MXNetError(f"imread: cannot read {filename!r}: {err}") from None
    img = to_nd(decode_array(buf, flag, to_rgb, what=f"imread({filename!r})"))
    if out is not None:
        out[:] = img
        return out
    return img


def _get_interp_method(interp, sizes=()):
    """The OpenCV interpolation code for MXNet's `interp` (9: by size, 10: random)."""
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
        return 1
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f"interp must be 0-4, 9 or 10 (OpenCV codes), got {interp!r}")
    return interp


def resize_array(arr, w, h, interp=1):
    """`arr` (HWC NumPy) resized to width `w`, height `h` with OpenCV."""
    out = cv2_module().resize(arr, (int(w), int(h)), interpolation=_get_interp_method(interp))
    return out.reshape(int(h), int(w), -1) if out.ndim == 2 else out


def imresize(src, w, h, interp=1, out=None):
    """`src` (HWC) resized to width `w` and height `h` (interp: OpenCV code, see module)."""
    arr = to_numpy(src, 'imresize')
    _check_hwc(arr, 'imresize')
    if int(w) <= 0 or int(h) <= 0:
        raise MXNetError(f"imresize: w and h must be positive, got w={w}, h={h}")
    res = to_nd(resize_array(arr, w, h, interp))
    if out is not None:
        out[:] = res
        return out
    return res


def scale_down(src_size, size):
    """`size` (w, h) scaled down, keeping its aspect ratio, to fit in `src_size` (w, h)."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def resize_short(src, size, interp=2):
    """`src` resized so that its shorter edge is `size`, keeping the aspect ratio."""
    arr = to_numpy(src, 'resize_short')
    _check_hwc(arr, 'resize_short')
    return to_nd(resize_short_array(arr, size, interp))


def resize_short_array(arr, size, interp=2):
    """NumPy twin of resize_short."""
    h, w = arr.shape[:2]
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return resize_array(arr, new_w, new_h, _get_interp_method(interp, (h, w, new_h, new_w)))


def crop_array(arr, x0, y0, w, h, size=None, interp=2, where='fixed_crop'):
    """NumPy twin of fixed_crop."""
    _check_hwc(arr, where)
    x0, y0, w, h = int(x0), int(y0), int(w), int(h)
    H, W = arr.shape[:2]
    if x0 < 0 or y0 < 0 or w <= 0 or h <= 0 or x0 + w > W or y0 + h > H:
        raise MXNetError(f"{where}: region x0={x0}, y0={y0}, w={w}, h={h} is outside "
                         f"the {W}x{H} (w x h) image")
    out = arr[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        sizes = (h, w, size[1], size[0])
        out = resize_array(out, size[0], size[1], _get_interp_method(interp, sizes))
    return out


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """The `w` x `h` region of `src` at (x0, y0), resized to `size` (w, h) when given."""
    return to_nd(crop_array(to_numpy(src, 'fixed_crop'), x0, y0, w, h, size, interp))


def _fitted_crop(arr, size, interp, where, corner):
    """The crop of `size` scaled down to fit `arr`, its corner ``corner(spare_w, spare_h)``
    (the room left around it); returns (image, (x0, y0, w, h))."""
    h, w = arr.shape[:2]
    new_w, new_h = scale_down((w, h), size)
    x0, y0 = corner(w - new_w, h - new_h)
    return crop_array(arr, x0, y0, new_w, new_h, size, interp, where), \
        (x0, y0, new_w, new_h)


def random_crop_array(arr, size, interp=2):
    """NumPy twin of random_crop."""
    return _fitted_crop(arr, size, interp, 'random_crop',
                        lambda dw, dh: (random.randint(0, dw), random.randint(0, dh)))


def random_crop(src, size, interp=2):
    """A random crop of `size` (w, h), scaled down to fit, then resized to `size`.
    Returns (image, (x0, y0, w, h))."""
    out, rect = random_crop_array(to_numpy(src, 'random_crop'), size, interp)
    return to_nd(out), rect


def center_crop_array(arr, size, interp=2):
    """NumPy twin of center_crop."""
    return _fitted_crop(arr, size, interp, 'center_crop',
                        lambda dw, dh: (int(dw / 2), int(dh / 2)))


def center_crop(src, size, interp=2):
    """The central crop of `size` (w, h), scaled down to fit, then resized to `size`.
    Returns (image, (x0, y0, w, h))."""
    out, rect = center_crop_array(to_numpy(src, 'center_crop'), size, interp)
    return to_nd(out), rect


def color_normalize(src, mean, std=None):
    """``(src - mean) / std`` (std optional), broadcasting over the channel axis."""
    src = src - mean
    if std is not None:
        src = src / std
    return src


def random_size_crop_array(arr, size, area, ratio, interp=2, **kwargs):
    """A crop of random area (fraction `area` = (min, max) or min of the image) and aspect
    ratio (`ratio` = (min, max), drawn log-uniformly), resized to `size` (w, h); falls back
    to center_crop after 10 tries. Returns (image, (x0, y0, w, h))."""
    h, w = arr.shape[:2]
    src_area = h * w
    if 'min_area' in kwargs:
        area = kwargs.pop('min_area')
    if kwargs:
        raise TypeError(f"random_size_crop: unexpected arguments {sorted(kwargs)}")
    if isinstance(area, (int, float)):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * src_area
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        new_ratio = math.exp(random.uniform(*log_ratio))
        new_w = int(round(math.sqrt(target_area * new_ratio)))
        new_h = int(round(math.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return crop_array(arr, x0, y0, new_w, new_h, size, interp, 'random_size_crop'), \
                (x0, y0, new_w, new_h)
    return center_crop_array(arr, size, interp)


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """See random_size_crop_array; returns (NDArray, (x0, y0, w, h))."""
    out, rect = random_size_crop_array(to_numpy(src, 'random_size_crop'), size, area, ratio,
                                       interp, **kwargs)
    return to_nd(out), rect


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None):
    """`src` (HWC) padded by top/bot/left/right pixels; `type` is OpenCV's border code
    (0 constant, 1 replicate, 2 reflect, 3 wrap, 4 reflect-101); constant borders use
    `values` (one per channel) or `value`."""
    arr = to_numpy(src, 'copyMakeBorder')
    _check_hwc(arr, 'copyMakeBorder')
    pads = (int(top), int(bot), int(left), int(right))
    if min(pads) < 0:
        raise MXNetError(f"copyMakeBorder: top, bot, left, right must be >= 0, got {pads}")
    if type not in _BORDER_TYPES:
        raise MXNetError(f"copyMakeBorder: type must be an OpenCV border code 0-4, got {type!r}")
    fill = list(values) if len(values) else [value] * arr.shape[2]
    res = cv2_module().copyMakeBorder(arr, *pads, borderType=type, value=fill[:4])
    res = to_nd(res.reshape(res.shape[0], res.shape[1], -1))
    if out is not None:
        out[:] = res
        return out
    return res
