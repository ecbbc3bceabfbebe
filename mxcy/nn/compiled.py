"""``mx.nn.compile(model, input_shape, ctx)``: a traced model bound to one executor.

Contract of the returned ``CompiledModel`` (``cm``):

* compile traces the model (input variable ``data``, see ``mxcy.nn.tracing``), infers
  every deferred parameter shape from `input_shape`, finishes deferred initializations
  and initializes parameters that have no value yet (their own initializer, else
  ``mx.init.Uniform()``, Gluon's default) and binds an executor with ``grad_req='add'``
  for every parameter whose ``grad_req`` is not 'null' and ``'write'`` for the input
  (each backward replaces its gradient, so it needs no zeroing). The executor binds the
  gluon parameters' own data and gradient arrays: values flow both ways (an update is
  visible in ``layer.weight.data()``, a ``set_data``/``load_parameters`` is visible to
  the executor). ``initialize(force_reinit=True)`` makes new arrays: compile again.
* ``cm(x)`` (NumPy or NDArray) runs forward in training mode and returns a copy of the
  output (an NDArray; pushed, not waited for). ``cm.predict(x)`` runs inference mode
  (Dropout off, BatchNorm on running statistics).
* ``cm.backward(dy)`` backpropagates the head gradient `dy` (parameter gradients
  accumulate: grad_req 'add') and returns the gradient with respect to the input of the
  last ``cm(x)``.
* What ``cm(x)`` and ``cm.backward`` return stays valid: later calls never change it
  while the caller (or a view of it) holds it. An array the caller has dropped is
  written again by the next call instead of allocating a new one (`_references`), so a
  training step costs what the hand-driven executor does plus one output copy.
* ``cm.update(lr)`` does ``w -= lr * lr_mult * grad`` and zeroes ``grad`` for every
  parameter with a gradient, as in-place engine ops.
* An input of another shape (another batch size) switches to an executor made by
  ``Executor.reshape`` that shares parameters, gradients and buffers; the few most
  recent shapes are kept.
"""
import sys
from collections import OrderedDict

import numpy as np

from mxcy import ndarray as nd
from mxcy.base import MXNetError, as_shape
from mxcy.context import current_context
from mxcy.executor import Executor
from mxcy.gluon.parameter import DeferredInitializationError
from mxcy.nn.tracing import trace

_KEEP_SHAPES = 8


def _known(params, sym):
    names = set(sym.list_inputs())
    return {n: p.shape for n, p in params.items() if n in names and _shape_known(p.shape)}


def _shape_known(shape):
    return shape is not None and all(d > 0 for d in shape)


def _infer_param_shapes(traced, input_shape, where):
    """Fill every deferred parameter shape from the input shape (errors name the node
    and the parameter). A recurrent layer's deferred input size is hidden from shape
    inference by its flattened weights: it comes from the shape of its input."""
    symbol, params = traced.symbol, traced.params
    try:
        for layer, x in traced.rnn_inputs:
            weights = [getattr(layer, f'{d}0_i2h_weight', None) for d in 'lr']
            weights = [w for w in weights if w is not None and not _shape_known(w.shape)]
            if not weights:
                continue
            _, (shape,), _ = x.infer_shape_partial(data=input_shape, **_known(params, x))
            if not shape:
                raise MXNetError(f"could not infer the input shape of {layer.name} from "
                                 f"input_shape={input_shape}")
            for w in weights:
                w.shape = (w.shape[0], shape[2])
        arg_shapes, _, aux_shapes = symbol._infer_shape_strict(data=input_shape,
                                                       **_known(params, symbol))
    except MXNetError as e:
        raise MXNetError(f"{where}(input_shape={input_shape}): {e}") from None
    names = symbol.list_arguments() + symbol.list_auxiliary_states()
    for name, shape in zip(names, list(arg_shapes) + list(aux_shapes)):
        if name in params:
            params[name].shape = shape


def _initialized(param):
    try:
        param.data()
    except (RuntimeError, MXNetError):
        return False
    return True


def _finish_init(param, ctx):
    """Run a deferred initialization now that the shape is known; a parameter never
    initialized gets its own initializer, else ``mx.init.Uniform()`` (Gluon's default)."""
    try:
        param.data()
    except DeferredInitializationError:
        param._finish_deferred_init()
    except RuntimeError:
        param.initialize(ctx=ctx)


def _references(holder, name):
    """(references to holder.<name>, references to its memory). Every way to reach an
    NDArray's values holds one of the two: the array object, or its chunk, which each
    view and each NumPy view made inside an engine op keeps. Taken when the model has
    just made the array, the pair counts the model's own references; equal later, the
    caller has dropped the array and every view of it, so the model may write it
    again (the engine orders that write after any pending read of it)."""
    arr = getattr(holder, name)
    return sys.getrefcount(arr), sys.getrefcount(arr._chunk)


class CompiledModel:
    """A model bound to an executor; see the module docstring."""

    def __init__(self, model, input_shape, ctx=None, dtype=None):
        self.model = model
        self._ctx = ctx if ctx is not None else current_context()
        input_shape = as_shape(input_shape, 'compile: input_shape')
        traced = trace(model)
        self.symbol, self.params = traced.symbol, traced.params
        if len(self.symbol.list_outputs()) != 1:
            raise MXNetError(f"compile: the model must have one output, it has "
                             f"{self.symbol.list_outputs()}")
        if 'data' not in self.symbol.list_arguments():
            raise MXNetError("compile: the model's output does not depend on its input")
        _infer_param_shapes(traced, input_shape, 'compile')
        for param in self.params.values():
            _finish_init(param, self._ctx)
        self._dtype = self._input_dtype(dtype)
        self._bind(input_shape)

    def _input_dtype(self, dtype):
        if dtype is not None:
            return np.dtype(dtype).type
        aux = set(self.symbol.list_auxiliary_states())
        first = next((p for n, p in self.params.items() if n not in aux), None)
        return np.float32 if first is None else np.dtype(first.dtype).type

    def _bind(self, input_shape):
        ctx = self._ctx
        args = {'data': nd.zeros(input_shape, ctx=ctx, dtype=self._dtype)}
        grads = {'data': nd.zeros(input_shape, ctx=ctx, dtype=self._dtype)}
        reqs = {'data': 'write'}
        aux = {}
        self._sgd = []
        aux_names = set(self.symbol.list_auxiliary_states())
        for name, param in self.params.items():
            if name in aux_names:
                aux[name] = param.data()
                continue
            args[name] = param.data()
            grad = None if param.grad_req == 'null' else param.grad()
            reqs[name] = 'null' if grad is None else 'add'
            if grad is not None:
                grads[name] = grad
                grad[:] = 0
                self._sgd.append((args[name], grad, param.lr_mult))
        exe = Executor(self.symbol, ctx, args, grads, reqs, aux)
        self._base = exe
        self._use(exe)
        self._y = None              # the array the last cm(x) returned (see _references)
        self._executors = OrderedDict([(tuple(input_shape), exe)])
        self._param_shapes = {n: p.shape for n, p in self.params.items()}
        self._trained = False

    # ------------------------------------------------------------ running
    def _use(self, exe):
        self._exe = exe
        self._x = exe.arg_dict['data']
        self._shape = self._x.shape
        self._out = exe.outputs[0]
        self._dx = None             # this executor's input gradient is bound at backward

    def _executor_for(self, shape):
        exe = self._executors.get(shape)
        if exe is None:
            try:
                exe = self._base.reshape(allow_up_sizing=True, data=shape,
                                         **self._param_shapes)
            except MXNetError as e:
                raise MXNetError(f"CompiledModel: input shape {shape} does not fit the "
                                 f"model compiled for {self.input_shape}: {e}") from None
            if len(self._executors) >= _KEEP_SHAPES:
                oldest = next(k for k in self._executors if self._executors[k] is not
                              self._base)
                del self._executors[oldest]
            self._executors[shape] = exe
        self._use(exe)
        return exe

    def _forward(self, x, is_train):
        # the input copy of Executor.forward(data=x), without its per-call arg_dict
        if isinstance(x, nd.NDArray):
            if x.shape != self._shape:
                self._executor_for(x.shape)
            if x is not self._x:
                x.copyto(self._x)
        else:
            x = np.asarray(x)
            if x.shape != self._shape:
                self._executor_for(x.shape)
            self._x[:] = x
        self._exe.forward(is_train=is_train)
        self._trained = is_train
        out = self._out
        if self._y is None or self._y.shape != out.shape or \
                _references(self, '_y') != self._y_refs:
            self._y = nd.empty(out.shape, ctx=self._ctx, dtype=out.dtype)
            self._y_refs = _references(self, '_y')
        out.copyto(self._y)
        return self._y

    def __call__(self, x):
        """Forward in training mode; returns a copy of the output."""
        return self._forward(x, True)

    def predict(self, x):
        """Forward in inference mode; returns a copy of the output."""
        return self._forward(x, False)

    def backward(self, dy):
        """Backpropagate `dy` (the gradient of the loss with respect to the output) from
        the last ``cm(x)``; returns the gradient with respect to that x."""
        if not self._trained:
            raise MXNetError("CompiledModel.backward: run a training forward cm(x) first "
                             "(predict() does not keep what backward needs)")
        out = self._out
        if not isinstance(dy, nd.NDArray):
            dy = nd.array(np.asarray(dy), dtype=out.dtype)
        elif dy.dtype != out.dtype:
            dy = dy.astype(out.dtype)
        if dy.shape != out.shape:
            raise ValueError(f"CompiledModel.backward: dy has shape {tuple(dy.shape)}, the "
                             f"output has {tuple(out.shape)}")
        # backward writes (grad_req 'write') straight into the array it returns; a new
        # one is bound only while the caller still holds the last one
        if self._dx is None or _references(self, '_dx') != self._dx_refs:
            self._dx = nd.empty(self._shape, ctx=self._ctx, dtype=self._dtype)
            self._exe._rebind_grad('data', self._dx)
            self._dx_refs = _references(self, '_dx')
        self._exe._run_backward([dy])           # dy checked above
        return self._dx

    def update(self, lr):
        """One SGD step ``w -= lr * grad`` on every parameter; zeroes the gradients."""
        lr = float(lr)
        for w, grad, lr_mult in self._sgd:
            grad *= lr * lr_mult
            w -= grad
            grad[:] = 0

    def zero_grad(self):
        for _, grad, _ in self._sgd:
            grad[:] = 0

    # ------------------------------------------------------------ views
    @property
    def executor(self):
        return self._exe

    @property
    def input_shape(self):
        return tuple(self._base.arg_dict['data'].shape)

    def collect_params(self):
        return self.params

    def save_parameters(self, filename):
        save_params(self.params, set(self.symbol.list_auxiliary_states()), filename)

    def load_parameters(self, filename, allow_missing=False, ignore_extra=False):
        self.params.load(filename, allow_missing=allow_missing, ignore_extra=ignore_extra)

    def __repr__(self):
        return (f"CompiledModel(input_shape={self.input_shape}, "
                f"params={list(self.params)})")


def save_params(params, aux_names, filename):
    """Write `params` keyed ``arg:<name>`` / ``aux:<name>`` (``mx.model.save_checkpoint``'s
    format, read by ``mx.model.load_params`` and gluon's ``ParameterDict.load``)."""
    missing = [n for n, p in params.items() if not _initialized(p)]
    if missing:
        raise MXNetError(f"save_parameters: parameter(s) {missing} have no value yet "
                         "(initialize or compile the model first)")
    nd.save(filename, {f"{'aux' if n in aux_names else 'arg'}:{n}": p.data()
                       for n, p in params.items()})


def compile(model, input_shape, ctx=None, dtype=None):
    """Trace `model`, infer its shapes from `input_shape` and bind it (see the module
    docstring). `dtype` is the input's dtype (default: that of the parameters)."""
    return CompiledModel(model, input_shape, ctx, dtype)


def softmax_output_model(model):
    """(symbol, arg_params, aux_params) for ``FeedForward``: the model's trailing softmax
    becomes ``SoftmaxOutput`` named 'softmax' (label ``softmax_label``)."""
    from mxcy import symbol as sym
    traced = trace(model)
    outputs = traced.symbol._outputs
    head = outputs[0][0] if len(outputs) == 1 else None
    if head is None or head.op is None or head.op.name != 'softmax':
        ends = (f"{len(outputs)} outputs" if head is None else
                "its input variable" if head.op is None else
                f"operator {head.op.name} (node {head.name!r})")
        raise MXNetError("FeedForward.from_model: the model must end with softmax "
                         "(mx.nn.softmax), which becomes SoftmaxOutput with label "
                         f"'softmax_label'; this model ends with {ends}")
    p = head.params
    if p.axis not in (-1, 1) or p.temperature not in (None, 1.0) or p.use_length:
        raise MXNetError(f"FeedForward.from_model: the final softmax (node {head.name!r}) "
                         "must use the defaults (axis=-1 or 1, no temperature, no "
                         "use_length) to become SoftmaxOutput")
    logits = sym.Symbol([head.inputs[0]])
    if p.axis == 1:
        out = sym.SoftmaxOutput(data=logits, multi_output=True, name='softmax')
    else:
        out = sym.SoftmaxOutput(data=logits, preserve_shape=True, name='softmax')
    aux = traced.aux_names()
    values = {n: p.data().copy() for n, p in traced.params.items() if _initialized(p)}
    arg_params = {n: v for n, v in values.items() if n not in aux}
    aux_params = {n: v for n, v in values.items() if n in aux}
    return out, arg_params or None, aux_params or None
