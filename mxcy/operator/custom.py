"""Operators written in Python: ``mx.operator.CustomOp``, ``CustomOpProp``, ``register``
and the registry operator ``Custom`` (MXNet 1.x API).

A user subclasses `CustomOpProp` (names of arguments/outputs/auxiliary states, shape and
type inference, `create_operator`) and `CustomOp` (`forward`/`backward` on NDArrays,
writing results with `self.assign(dst, req, src)`), registers the prop with
``@mx.operator.register("name")`` and calls ``mx.sym.Custom(..., op_type="name")`` or
``mx.nd.Custom(...)``. Extra keyword arguments reach the prop's constructor as strings,
as in MXNet.

Where the user's code runs (the design choice)
---------------------------------------------
MXNet users call ``asnumpy()`` inside custom ops, and a wait inside an engine op would
deadlock (the engine raises instead). MXNet therefore runs custom ops on a dedicated
thread, with an asynchronous engine op that completes when the Python code is done. This
engine has no asynchronous completion, so mxcy takes the other consistent option: the
user's ``forward``/``backward`` run directly on the thread that runs the graph
(``Executor.forward``/``backward``, or the ``mx.nd.Custom`` call), in graph order, with
the real NDArrays. Consequences:

* NDArray math inside the op is pushed like any other op, in program order, so it is
  correctly ordered after the ops that produce the inputs and before the ops that
  consume the outputs: nothing waits unless the user's code does.
* ``asnumpy()``/``wait_to_read()`` inside the op are plain waits on the calling thread:
  they work (they only pause the pushing of later nodes until the inputs are ready).
* An exception raised by the user's code does not escape the call: it is stored on the
  op's outputs (and auxiliary states; in backward, the input gradients) through an engine
  op that re-raises it, so it surfaces, with its type and traceback, at the next wait
  on anything derived from them, as any engine error does. Errors in the prop
  (unknown op_type, inference, `create_operator`) raise at once, at bind or call time.

One `CustomOp` instance serves the forward and backward of one graph node in one executor
(`create_operator` is called once per node, executor and shape set), so state kept on
``self`` in forward is seen by the matching backward; ``mx.nd.Custom`` creates one per
call. ``declare_backward_dependency`` is accepted; the memory plan keeps every input,
output and head gradient of a custom node for backward (the declaration only ever narrows
that set, so keeping all is safe).
"""
import warnings
import weakref

import numpy as np

from mxcy import _ndarray, engine
from mxcy._ops import BINARY_OPS
from mxcy.base import MXNetError
from mxcy.operator._params import Param, Params, ParamSchema
from mxcy.operator._spec import OpSpec, register_op, unify_shape

__all__ = ['CustomOp', 'CustomOpProp', 'get_registered', 'register']

_ADD = BINARY_OPS['add']
_PROPS = {}                                  # op_type -> CustomOpProp subclass
_PROP_CACHE = {}                             # (class, kwargs) -> prop instance
_OPERATORS = weakref.WeakKeyDictionary()     # node Params -> {(shapes, dtypes): CustomOp}


class CustomOp:
    """Base class of a Python operator's computation (MXNet's ``mx.operator.CustomOp``)."""

    def __init__(self):
        """Subclasses may take their own arguments; the base keeps no state."""

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute out_data from in_data; write with ``self.assign(out_data[i], req[i], v)``."""

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute in_grad from out_grad (and the data); write with ``self.assign``."""

    def assign(self, dst, req, src):
        """dst (req) src: 'write'/'inplace' overwrite, 'add' accumulates, 'null' skips."""
        if req == 'null':
            return
        if req in ('write', 'inplace'):
            dst[:] = src
        elif req == 'add':
            if isinstance(src, _ndarray.NDArray) and src.shape == dst.shape:
                _ndarray.binary(dst, src, _ADD, out=dst)
            else:
                dst[:] = dst + src
        else:
            raise ValueError(f"CustomOp.assign: req must be 'write', 'inplace', 'add' or "
                             f"'null', got {req!r}")


class CustomOpProp:
    """Declares a Python operator (MXNet's ``mx.operator.CustomOpProp``).

    ``need_top_grad``: whether backward uses the gradient flowing from above (False for
    loss layers, which compute their own gradient).
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """(argument shapes, output shapes, auxiliary shapes); default: all like input 0."""
        return (in_shape, (in_shape[0],) * len(self.list_outputs()),
                (in_shape[0],) * len(self.list_auxiliary_states()))

    def infer_type(self, in_type):
        """(argument types, output types, auxiliary types); default: all like input 0."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def list_arguments(self):
        return ['data']

    def list_outputs(self):
        return ['output']

    def list_auxiliary_states(self):
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The `CustomOp` that computes this operator (ctx is a string such as 'cpu(0)')."""
        return CustomOp()


def register(reg_name):
    """Class decorator registering a `CustomOpProp` subclass as op_type `reg_name`."""
    if not isinstance(reg_name, str) or not reg_name:
        raise TypeError(f"mx.operator.register: the name must be a non-empty string, got "
                        f"{reg_name!r}")

    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise TypeError(f"mx.operator.register({reg_name!r}): expected a CustomOpProp "
                            f"subclass, got {prop_cls!r}")
        if reg_name in _PROPS and _PROPS[reg_name] is not prop_cls:
            warnings.warn(f"mx.operator.register: custom operator {reg_name!r} is "
                          f"registered again; the new class replaces "
                          f"{_PROPS[reg_name].__name__}", stacklevel=2)
        _PROPS[reg_name] = prop_cls
        return prop_cls
    return do_register


def get_registered():
    """{op_type: prop class} of the registered custom operators."""
    return dict(_PROPS)


# ---------------------------------------------------------------- the registry op
class _CustomSchema(ParamSchema):
    """``op_type`` plus any keyword arguments, kept as strings for the prop (MXNet)."""

    # every non-dunder attribute of a Custom node is a parameter (for symbol JSON loading)
    open_kwargs = True

    _RESERVED = ('as_dict', 'attrs')          # would shadow methods of Params

    def __init__(self):
        super().__init__(Param('op_type', 'str'))

    def parse(self, op, kwargs):
        if 'op_type' not in kwargs:
            raise TypeError(f"{op}: required parameter 'op_type' is missing")
        op_type = kwargs['op_type']
        if op_type not in _PROPS:
            raise MXNetError(f"{op}: op_type {op_type!r} is not a registered custom operator; "
                             f"registered: {sorted(_PROPS) or 'none'} (use "
                             "@mx.operator.register)")
        bad = [k for k in kwargs if k in self._RESERVED or k.startswith('_')]
        if bad:
            raise TypeError(f"{op}: parameter name(s) {bad} are reserved")
        values = {'op_type': op_type}
        values.update({k: v if isinstance(v, str) else str(v)
                       for k, v in kwargs.items() if k != 'op_type'})
        return Params(values)


def _prop_kwargs(p):
    return {k: v for k, v in p.as_dict().items() if k != 'op_type'}


def _shape_list(shapes):
    return [list(s) if s is not None else [] for s in shapes]


def _as_known_shape(shape):
    """A returned shape as a tuple, or None for MXNet's 'unknown' (empty or a 0 dim)."""
    if shape is None:
        return None
    shape = tuple(int(d) for d in shape)
    return None if not shape or 0 in shape else shape


@register_op
class Custom(OpSpec):
    """A Python operator registered with ``mx.operator.register`` (see the module doc)."""
    name = 'Custom'
    params = _CustomSchema()
    backward_needs = ('out_grads', 'inputs', 'outputs')
    pure_inference = False      # the user's prop decides (and may be re-registered)

    # ------------------------------------------------------------ the user's prop
    def prop(self, p):
        cls = _PROPS.get(p.op_type)
        if cls is None:
            raise MXNetError(f"Custom: op_type {p.op_type!r} is no longer registered")
        kwargs = _prop_kwargs(p)
        key = (cls, tuple(sorted(kwargs.items())))
        prop = _PROP_CACHE.get(key)
        if prop is None:
            try:
                prop = cls(**kwargs)
            except TypeError as e:
                raise TypeError(f"Custom[{p.op_type}]: {cls.__name__}({kwargs}) failed: "
                                f"{e}") from e
            _PROP_CACHE[key] = prop
        return prop

    def _names(self, p, method):
        names = getattr(self.prop(p), method)()
        if not isinstance(names, (list, tuple)) or \
                not all(isinstance(n, str) for n in names):
            raise TypeError(f"Custom[{p.op_type}]: {method}() must return a list of "
                            f"strings, got {names!r}")
        return list(names)

    def arguments(self, p):
        return self._names(p, 'list_arguments')

    def outputs(self, p):
        return self._names(p, 'list_outputs')

    def aux_states(self, p):
        return self._names(p, 'list_auxiliary_states')

    # ------------------------------------------------------------ inference
    def infer_shape(self, p, in_shapes):
        args, outs, auxs = self.arguments(p), self.outputs(p), self.aux_states(p)
        shapes = [_as_known_shape(s) for s in in_shapes]
        try:
            result = self.prop(p).infer_shape(_shape_list(shapes))
        except Exception as e:
            if any(s is None for s in shapes):     # "not yet": wait for more shapes
                return list(shapes), [None] * len(outs), [None] * len(auxs)
            raise MXNetError(f"Custom[{p.op_type}]: infer_shape failed for input shapes "
                             f"{dict(zip(args, shapes))}: {type(e).__name__}: {e}") from e
        result = list(result)
        if len(result) == 2:
            result.append([])
        if len(result) != 3:
            raise MXNetError(f"Custom[{p.op_type}]: infer_shape must return (in_shapes, "
                             f"out_shapes[, aux_shapes]), got {len(result)} items")
        got_in, got_out, got_aux = (list(r) for r in result)
        for what, got, names in (('argument', got_in, args), ('output', got_out, outs),
                                 ('auxiliary', got_aux, auxs)):
            if len(got) != len(names):
                raise MXNetError(f"Custom[{p.op_type}]: infer_shape returned {len(got)} "
                                 f"{what} shapes for {what}s {names}")
        new_in = [unify_shape(self, name, _as_known_shape(g), s)
                  for name, g, s in zip(args, got_in, shapes)]
        return (new_in, [_as_known_shape(s) for s in got_out],
                [_as_known_shape(s) for s in got_aux])

    def infer_type(self, p, in_types):
        args, outs, auxs = self.arguments(p), self.outputs(p), self.aux_states(p)
        known = next((t for t in in_types if t is not None), None)
        if known is None:
            return list(in_types), [None] * len(outs), [None] * len(auxs)
        given = [np.dtype(t if t is not None else known).type for t in in_types]
        result = list(self.prop(p).infer_type(given))
        if len(result) == 2:
            result.append([])
        if len(result) != 3 or [len(r) for r in result] != [len(args), len(outs), len(auxs)]:
            raise MXNetError(f"Custom[{p.op_type}]: infer_type must return (in_types, "
                             f"out_types, aux_types) for {args}, {outs}, {auxs}; got "
                             f"{result!r}")
        try:
            return tuple([np.dtype(t).name for t in r] for r in result)
        except TypeError as e:
            raise TypeError(f"Custom[{p.op_type}]: infer_type returned a non-dtype: "
                            f"{e}") from None

    # ------------------------------------------------------------ compute
    def operator(self, p, ins, outs, aux):
        """The CustomOp of this node in this executor for these shapes/dtypes.

        An executor hands the same output arrays to every forward and backward of a node,
        so they identify it: each executor gets its own instance, as in MXNet, and an
        imperative call (new outputs each time) a fresh one.
        """
        arrays = list(ins) + list(aux)
        shapes = tuple(a.shape for a in arrays)
        dtypes = tuple(np.dtype(a.dtype).name for a in arrays)
        key = (id(outs[0]) if outs else None, shapes, dtypes)
        per_node = _OPERATORS.setdefault(p, {})
        op = per_node.get(key)
        if op is None:
            ctx = str(arrays[0].context) if arrays else 'cpu(0)'
            op = self.prop(p).create_operator(ctx, [list(s) for s in shapes],
                                              [np.dtype(t).type for t in dtypes])
            if not isinstance(op, CustomOp):
                raise TypeError(f"Custom[{p.op_type}]: create_operator must return a "
                                f"CustomOp, got {type(op).__name__}")
            per_node[key] = op
        return op

    def forward(self, p, is_train, req, ins, outs, aux):
        op = self.operator(p, ins, outs, aux)
        try:
            op.forward(is_train=is_train, req=list(req), in_data=list(ins),
                       out_data=list(outs), aux=list(aux))
        except Exception as exc:     # noqa: BLE001  (kept for the next wait, see doc)
            _defer_error(exc, list(outs) + list(aux), f"Custom[{p.op_type}].forward")

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        op = self.operator(p, ins, outs, aux)
        # MXNet hands every gradient array over; 'null' ones get a scratch array here
        in_grads = [g if g is not None else _ndarray.empty(x.shape, x.context, x.dtype)
                    for g, x in zip(in_grads, ins)]
        out_grads = [g if g is not None else _ndarray.zeros(o.shape, o.context, o.dtype)
                     for g, o in zip(out_grads, outs)]
        try:
            op.backward(req=list(req), out_grad=out_grads, in_data=list(ins),
                        out_data=list(outs), in_grad=in_grads, aux=list(aux))
        except Exception as exc:     # noqa: BLE001
            targets = [g for g, r in zip(in_grads, req) if r != 'null']
            _defer_error(exc, targets, f"Custom[{p.op_type}].backward")


def _defer_error(exc, arrays, name):
    """Store `exc` on `arrays` through an engine op, to be raised at their next wait."""
    def fail():
        raise exc
    engine.push(fail, (), [a._chunk for a in arrays], 0, name)
