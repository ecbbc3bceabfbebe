"""``transforms.Rotate`` and ``transforms.RandomRotation`` (MXNet 1.9.1's): Blocks that
rotate float32 CHW images or NCHW batches with ``mx.image.imrotate`` and keep their shape.
``RandomRotation`` draws from NumPy's global generator: when ``rotate_with_proba < 1``
one ``np.random.random()`` decides (above the probability: the input is returned), then
``random_rotate`` draws the angle(s)."""
import numpy as np

from mxcy._ndarray import NDArray
from mxcy.gluon.block import Block
from mxcy.image.rotate import imrotate, random_rotate

__all__ = ['Rotate', 'RandomRotation']


def _check_zoom(zoom_in, zoom_out, where):
    if zoom_in and zoom_out:
        raise ValueError(f"{where}: zoom_in and zoom_out cannot both be True")


def _check_input(x, where):
    if not isinstance(x, NDArray):
        raise TypeError(f"{where}: expected a float32 NDArray (CHW or NCHW), got "
                        f"{type(x).__name__}")
    if x.dtype != np.float32:
        raise TypeError(f"{where}: only float32 input is supported, got "
                        f"{np.dtype(x.dtype).name}; apply ToTensor first")


class Rotate(Block):
    """Rotate by `rotation_degrees` (counter-clockwise), optionally zooming in (no
    padding shows) or out (the whole image stays in view)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        _check_zoom(zoom_in, zoom_out, 'Rotate')
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        _check_input(x, 'Rotate')
        return imrotate(x, *self._args)


class RandomRotation(Block):
    """Rotate by an angle drawn from `angle_limits` = (low, high) degrees, with
    probability `rotate_with_proba`."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        _check_zoom(zoom_in, zoom_out, 'RandomRotation')
        limits = tuple(angle_limits)
        if len(limits) != 2:
            raise ValueError(f"RandomRotation: angle_limits must be (low, high), got "
                             f"{angle_limits!r}")
        if not 0.0 <= rotate_with_proba <= 1.0:
            raise ValueError(f"RandomRotation: rotate_with_proba must be in [0, 1], got "
                             f"{rotate_with_proba!r}")
        self._args = (limits, zoom_in, zoom_out)
        self._proba = rotate_with_proba

    def forward(self, x):
        _check_input(x, 'RandomRotation')
        if self._proba < 1 and np.random.random() > self._proba:
            return x
        return random_rotate(x, *self._args)
