"""``mx.nd.imdecode``: MXNet's deprecated decoder (``mx.image.imdecode`` is the current one).

It decodes with the same OpenCV decoder as ``mx.image`` but keeps the old layout: a float
(channels, height, width) array in OpenCV's channel order (BGR, no conversion), ``channels=1``
decoding to grey; ``clip_rect=(x0, y0, x1, y1)`` keeps columns x0:x1 and rows y0:y1 (all
zeros: the whole image); ``mean`` (channels, h, w) is subtracted. With ``out`` of shape
(c, h, w) the image is written there, with ``out`` of shape (n, c, h, w) into ``out[index]``.
(MXNet 1.9.1's own Python 3 binding fails on every call: it passes the bytes as their
``repr`` string; this is the documented behaviour.)
"""
import numpy as np

from mxcy._ndarray import NDArray
from mxcy.base import MXNetError


def imdecode(str_img, clip_rect=(0, 0, 0, 0), out=None, index=0, channels=3, mean=None):
    """Decode an encoded image (bytes) to a (channels, h, w) float array (see the module
    docstring: OpenCV's BGR order, clip_rect (x0, y0, x1, y1), mean subtracted, written
    into out or out[index])."""
    from mxcy.image.image import decode_array, to_nd
    if isinstance(str_img, str):
        str_img = str_img.encode('latin-1')
    if not isinstance(str_img, (bytes, bytearray, memoryview)):
        raise TypeError(f"imdecode: str_img must be bytes, got {type(str_img).__name__}")
    if channels not in (1, 3, 4):
        raise MXNetError(f"imdecode: channels must be 1, 3 or 4, got {channels}")
    img = decode_array(bytes(str_img), 0 if channels == 1 else -1, to_rgb=False)
    if img.shape[2] < channels:
        raise MXNetError(f"imdecode: channels={channels} but the image has "
                         f"{img.shape[2]}")
    try:
        x0, y0, x1, y1 = (int(v) for v in clip_rect)
    except (TypeError, ValueError):
        raise TypeError(f"imdecode: clip_rect must be 4 ints (x0, y0, x1, y1), got "
                        f"{clip_rect!r}") from None
    if y1 - y0 == 0:
        x0, y0, x1, y1 = 0, 0, img.shape[1], img.shape[0]
    if not (0 <= x0 < x1 <= img.shape[1] and 0 <= y0 < y1 <= img.shape[0]):
        raise MXNetError(f"imdecode: clip_rect {tuple(clip_rect)} is outside the "
                         f"{img.shape[1]}x{img.shape[0]} (width x height) image")
    chw = np.ascontiguousarray(img[y0:y1, x0:x1, :channels].transpose(2, 0, 1))
    dtype = np.dtype(mean.dtype) if isinstance(mean, NDArray) else np.dtype(np.float32)
    res = chw.astype(dtype)
    if mean is not None:
        if not isinstance(mean, NDArray):
            raise TypeError(f"imdecode: mean must be an NDArray, got {type(mean).__name__}")
        if mean.shape != res.shape:
            raise MXNetError(f"imdecode: mean must have the image's shape {res.shape} "
                             f"(channels, h, w), got {mean.shape}")
        res -= mean.asnumpy()
    if out is None:
        return to_nd(res)
    if not isinstance(out, NDArray):
        raise TypeError(f"imdecode: out must be an NDArray, got {type(out).__name__}")
    target = out if len(out.shape) == 3 else None
    if len(out.shape) == 4:
        if not 0 <= index < out.shape[0]:
            raise MXNetError(f"imdecode: index {index} out of range for out of shape "
                             f"{out.shape}")
        target = out[index]
    if target is None or target.shape != res.shape:
        raise MXNetError(f"imdecode: out must have shape {res.shape} or (n,) + {res.shape}"
                         f", got {out.shape}")
    target[:] = res.astype(np.dtype(out.dtype))
    return out
