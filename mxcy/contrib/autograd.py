"""``mx.contrib.autograd``: MXNet's first autograd API, kept for old scripts; it runs on
``mx.autograd`` (the same tape).

``set_is_training(True)`` turns recording and training mode on together (as
``train_section()`` does for a block); ``backward`` / ``compute_gradient`` run backward
from `outputs`; ``grad_and_loss(func, argnum)`` returns a function giving
``(gradients, outputs)`` of `func` with respect to the arguments numbered `argnum`
(all by default), which must be NDArrays.
"""
import functools

from mxcy import autograd as _ag
from mxcy._ndarray import NDArray
from mxcy import ndarray as _nd

__all__ = ['set_is_training', 'train_section', 'test_section', 'mark_variables',
           'backward', 'compute_gradient', 'grad_and_loss', 'grad', 'TrainingStateScope']


def set_is_training(is_train):
    """Turn recording and training mode on or off; returns the previous state."""
    previous = _ag.is_recording()
    _ag.set_recording(bool(is_train))
    _ag.set_training(bool(is_train))
    return previous


class TrainingStateScope:
    """A ``with`` scope that sets recording and training mode, restoring them on exit."""

    def __init__(self, enter_state):
        self._enter_state = bool(enter_state)
        self._prev = None

    def __enter__(self):
        self._prev = (_ag.is_recording(), _ag.is_training())
        _ag.set_recording(self._enter_state)
        _ag.set_training(self._enter_state)

    def __exit__(self, *exc):
        _ag.set_recording(self._prev[0])
        _ag.set_training(self._prev[1])


def train_section():
    """A scope that records operations in training mode."""
    return TrainingStateScope(True)


def test_section():
    """A scope that does not record, in prediction mode."""
    return TrainingStateScope(False)


def mark_variables(variables, gradients, grad_reqs='write'):
    """Attach `gradients` buffers to `variables` (see ``mx.autograd.mark_variables``)."""
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    _ag.mark_variables(variables, gradients, grad_reqs)


def backward(outputs, out_grads=None, retain_graph=False):
    """Backward from `outputs` (an NDArray or a list), with head gradients `out_grads`."""
    _ag.backward(outputs, head_grads=out_grads, retain_graph=retain_graph)


def compute_gradient(outputs):
    """``backward(outputs)``."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """A function returning ``(gradients, outputs)`` of ``func(*args)`` with respect to
    the positional arguments numbered `argnum` (an int or a list; default all)."""
    @functools.wraps(func)
    def wrapped(*args):
        variables = list(args)
        if argnum is not None:
            numbers = argnum if isinstance(argnum, list) else [argnum]
            variables = [args[i] for i in numbers]
        for i, x in enumerate(variables):
            if not isinstance(x, NDArray):
                raise TypeError(f"grad_and_loss: argument {i} to differentiate must be an "
                                f"NDArray, got {type(x).__name__}")
        grads = [_nd.zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """A function returning the gradients of ``func(*args)`` (see ``grad_and_loss``)."""
    grad_with_loss = grad_and_loss(func, argnum)

    @functools.wraps(grad_with_loss)
    def wrapped(*args):
        return grad_with_loss(*args)[0]
    return wrapped
