"""PythonModule and PythonLossModule: modules whose computation is written in Python.

``PythonModule`` holds names and shapes and implements the parameter and optimizer
methods as "nothing to do" (it has no parameters); a subclass writes ``forward``,
``backward``, ``get_outputs``, ``get_input_grads`` and ``_compute_output_shapes``.
``PythonLossModule`` is one: its output is its first data input (the scores), and
``backward`` hands ``grad_func(scores, labels)`` back as the gradient of the scores, so it
can end a ``SequentialModule``.
"""
import logging

from mxcy import ndarray as nd
from mxcy.base import MXNetError
from mxcy.io import DataDesc
from mxcy.module.base_module import BaseModule, _stored

__all__ = ['PythonModule', 'PythonLossModule']


def _names_of(shapes):
    return [s.name if isinstance(s, DataDesc) else s[0] for s in shapes]


class PythonModule(BaseModule):
    """A module with no parameters whose computation a subclass writes in Python."""

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        self._data_names = list(data_names)
        self._label_names = list(label_names) if label_names is not None else []
        self._output_names = list(output_names)
        self._data_shapes = None
        self._label_shapes = None
        self._output_shapes = None

    data_names = _stored('_data_names')
    output_names = _stored('_output_names')
    data_shapes = _stored('_data_shapes')
    label_shapes = _stored('_label_shapes')
    output_shapes = _stored('_output_shapes')

    def get_params(self):
        """No parameters: ``({}, {})``."""
        return {}, {}

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """No parameters to initialise."""

    def update(self):
        """No parameters to update."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update `eval_metric` with the labels and this module's outputs (nothing when the
        module was bound without labels)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise MXNetError(f"{type(self).__name__}.update_metric: pre-sliced labels are "
                             "not supported (the module runs on one context)")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Check the shapes' names against the module's and compute the output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if grad_req != 'write':
            raise MXNetError(f"{type(self).__name__}.bind: only grad_req='write' is "
                             f"supported, got {grad_req!r}")
        if shared_module is not None:
            raise MXNetError(f"{type(self).__name__}.bind: shared_module is not supported")
        if _names_of(data_shapes) != self._data_names:
            raise MXNetError(f"{type(self).__name__}.bind: data shapes are for "
                             f"{_names_of(data_shapes)}, the module's data names are "
                             f"{self._data_names}")
        if label_shapes is not None and _names_of(label_shapes) != self._label_names:
            raise MXNetError(f"{type(self).__name__}.bind: label shapes are for "
                             f"{_names_of(label_shapes)}, the module's label names are "
                             f"{self._label_names}")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = list(data_shapes)
        self._label_shapes = list(label_shapes) if label_shapes is not None else None
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        """``[(output name, shape), ...]`` from ``self._data_shapes`` (subclass)."""
        raise MXNetError(f"{type(self).__name__} must define _compute_output_shapes")

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """No parameters, so no optimizer."""


class PythonLossModule(PythonModule):
    """A loss written in Python: the output is the scores (the first data input) and the
    gradient handed back to the previous module is ``grad_func(scores, labels)``."""

    def __init__(self, name='pyloss', data_names=('data',), label_names=('softmax_label',),
                 logger=logging, grad_func=None):
        super().__init__(data_names, label_names, [name + '_output'], logger=logger)
        self._name = name
        if len(self._data_names) != 1 or len(self._label_names) != 1:
            raise MXNetError(f"PythonLossModule: needs one data and one label name, got "
                             f"{self._data_names} and {self._label_names}")
        if grad_func is not None and not callable(grad_func):
            raise TypeError(f"PythonLossModule: grad_func must be callable, got "
                            f"{type(grad_func).__name__}")
        self._scores = None
        self._labels = None
        self._scores_grad = None
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        first = self._data_shapes[0]
        shape = first.shape if isinstance(first, DataDesc) else first[1]
        return [(self._name + '_output', tuple(shape))]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (and, when training, the labels)."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        if not merge_multi_context:
            return [[self._scores]]
        return [self._scores]

    def backward(self, out_grads=None):
        if out_grads is not None:
            raise MXNetError("PythonLossModule.backward: a loss module takes no out_grads")
        if not self.for_training:
            raise MXNetError("PythonLossModule.backward: bound with for_training=False")
        self._backward_impl()

    def _backward_impl(self):
        """The scores' gradient := grad_func(scores, labels) (a subclass may override)."""
        if self._grad_func is None:
            raise MXNetError("PythonLossModule.backward: no grad_func was given; pass "
                             "grad_func=f(scores, labels) or override _backward_impl")
        grad = self._grad_func(self._scores, self._labels)
        if not isinstance(grad, nd.NDArray):
            grad = nd.array(grad)
        self._scores_grad = grad

    def get_input_grads(self, merge_multi_context=True):
        if not merge_multi_context:
            return [[self._scores_grad]]
        return [self._scores_grad]

    def install_monitor(self, mon):
        raise MXNetError("PythonLossModule.install_monitor: the module runs no executor, "
                         "so there is nothing to monitor")
