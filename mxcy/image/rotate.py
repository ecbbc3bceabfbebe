"""``mx.image.imrotate`` / ``random_rotate``: rotate float32 CHW images or NCHW batches.

Contract (MXNet 1.9.1's): a positive angle turns the picture counter-clockwise about the
image centre; the output keeps the input shape; pixels are sampled bilinearly and points
that fall outside the source read as 0. With ``zoom_out`` the source is shrunk by
``cos|a| + sin|a| * max(W/H, H/W)`` so that the whole image stays inside; ``zoom_in``
magnifies by the same factor so that no padding shows. ``random_rotate`` draws the angles
from NumPy's global generator (``np.random.uniform``), one per image of a batch.
"""
import math

import numpy as np

from mxcy._ndarray import NDArray
from mxcy.image.image import to_nd

__all__ = ['imrotate', 'random_rotate']


def _sample(img, fx, fy):
    """Bilinear sample of `img` (C, H, W) at pixel coordinates fx, fy (H, W); 0 outside."""
    c, h, w = img.shape
    out = np.zeros((c,) + fx.shape, dtype=np.float64)
    x0, y0 = np.floor(fx).astype(np.int64), np.floor(fy).astype(np.int64)
    wx, wy = fx - x0, fy - y0
    for dy in (0, 1):
        for dx in (0, 1):
            xi, yi = x0 + dx, y0 + dy
            weight = (wx if dx else 1.0 - wx) * (wy if dy else 1.0 - wy)
            inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            vals = img[:, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]
            out += np.where(inside, weight, 0.0) * vals
    return out.astype(np.float32)


def rotate_array(img, degrees, zoom_in=False, zoom_out=False):
    """NumPy twin of imrotate for one CHW float32 image."""
    _, h, w = img.shape
    theta = math.radians(degrees)
    cos, sin = math.cos(theta), math.sin(theta)
    scale = 1.0
    if zoom_in or zoom_out:
        factor = abs(cos) + abs(sin) * max(w / h, h / w)
        scale = factor if zoom_out else 1.0 / factor
    cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
    py, px = np.mgrid[0:h, 0:w].astype(np.float64)
    px, py = px - cx, py - cy
    # the output pixel p reads the source at R(-theta) p (image y axis points down)
    sx = (cos * px - sin * py) * scale + cx
    sy = (sin * px + cos * py) * scale + cy
    return _sample(img, sx, sy)


def _check(src, where):
    if not isinstance(src, NDArray):
        raise TypeError(f"{where}: src must be an NDArray (CHW or NCHW), got "
                        f"{type(src).__name__}")
    if src.dtype != np.float32:
        raise TypeError(f"{where}: src must be float32, got {np.dtype(src.dtype).name}")
    if src.ndim not in (3, 4):
        raise ValueError(f"{where}: src must be CHW (3-D) or NCHW (4-D), got shape "
                         f"{src.shape}")


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """`src` (float32 CHW image or NCHW batch) rotated by `rotation_degrees` (a scalar, or
    for a batch an NDArray / sequence of one angle per image)."""
    _check(src, 'imrotate')
    if zoom_in and zoom_out:
        raise ValueError("imrotate: zoom_in and zoom_out cannot both be True")
    arr = src.asnumpy()
    if isinstance(rotation_degrees, NDArray):
        rotation_degrees = rotation_degrees.asnumpy()
    angles = np.asarray(rotation_degrees, dtype=np.float64).reshape(-1)
    if arr.ndim == 3:
        if angles.size != 1:
            raise ValueError(f"imrotate: one CHW image takes one angle, got {angles.size}")
        return to_nd(rotate_array(arr, float(angles[0]), zoom_in, zoom_out))
    n = arr.shape[0]
    if angles.size == 1:
        angles = np.repeat(angles, n)
    if angles.size != n:
        raise ValueError(f"imrotate: the batch holds {n} images but rotation_degrees gives "
                         f"{angles.size} angles")
    return to_nd(np.stack([rotate_array(im, float(a), zoom_in, zoom_out)
                           for im, a in zip(arr, angles)]))


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """`src` rotated by an angle drawn uniformly from `angle_limits` = (low, high) degrees
    (one per image of a batch)."""
    _check(src, 'random_rotate')
    limits = tuple(angle_limits)
    if len(limits) != 2:
        raise ValueError(f"random_rotate: angle_limits must be (low, high), got "
                         f"{angle_limits!r}")
    if src.ndim == 3:
        angle = np.random.uniform(limits[0], limits[1])
    else:
        angle = np.random.uniform(limits[0], limits[1], size=src.shape[0])
    return imrotate(src, angle, zoom_in, zoom_out)
