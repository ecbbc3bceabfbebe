"""Generate ``mx.nd.<Op>`` functions from the operator registry (MXNet's _init_op_module).

A generated function takes the op's arguments positionally (or by name), its parameters
as keywords (typed values or MXNet's strings), an optional ``out=`` and ``name=`` (kept
for MXNet compatibility, unused imperatively). It infers output shapes and dtypes before
anything is pushed, so bad input raises at the call with the op, argument and shapes.
"""
import numpy as np

from mxcy._ndarray import NDArray, new_empty
from mxcy.base import DTYPE_CODES
from mxcy.operator._spec import get_op


def _split_call(spec, op_name, args, kwargs):
    """(params, inputs): positional and named NDArrays in argument order, parsed params."""
    named = {k: v for k, v in kwargs.items() if isinstance(v, NDArray)}
    param_kwargs = {k: v for k, v in kwargs.items() if not isinstance(v, NDArray)}
    for i, a in enumerate(args):
        if not isinstance(a, NDArray):
            raise TypeError(f"{op_name}: positional argument {i} must be an NDArray, got "
                            f"{type(a).__name__}; pass parameters as keywords")
    if spec.variadic and spec.variadic not in param_kwargs:
        param_kwargs[spec.variadic] = len(args) + len(named)
    p = spec.params.parse(op_name, param_kwargs)
    names = spec.arguments(p) + spec.aux_states(p)
    if len(args) > len(names):
        raise TypeError(f"{op_name}: takes {len(names)} array arguments {names}, got "
                        f"{len(args)}")
    inputs = list(args) + [None] * (len(names) - len(args))
    for key, value in named.items():
        if key not in names:
            raise TypeError(f"{op_name}: unexpected array argument '{key}'; expected {names}")
        idx = names.index(key)
        if inputs[idx] is not None:
            raise TypeError(f"{op_name}: argument '{key}' given twice")
        inputs[idx] = value
    missing = [n for n, x in zip(names, inputs) if x is None]
    if missing:
        raise TypeError(f"{op_name}: missing array argument(s) {missing}")
    return p, inputs


def invoke(spec, op_name, args, kwargs, out=None, is_train=False):
    """Run one registered operator imperatively; returns its visible output(s)."""
    p, inputs = _split_call(spec, op_name, args, kwargs)
    nargs = len(spec.arguments(p))
    ins, aux = inputs[:nargs], inputs[nargs:]
    in_shapes = [x.shape for x in ins]
    _, out_shapes, aux_shapes = spec.infer_shape(p, in_shapes)
    for name, want, x in zip(spec.aux_states(p), aux_shapes, aux):
        if want is not None and tuple(want) != x.shape:
            raise spec.shape_error(name, tuple(want), x.shape)
    _, out_types, _ = spec.infer_type(p, [np.dtype(x.dtype).name for x in ins])
    n_out = len(spec.outputs(p))
    if out is None:
        outs = []
        for shape, dtype in zip(out_shapes, out_types):
            if shape is None or any(d is None for d in shape):
                raise spec.shape_error('output', 'a known shape', shape,
                                       'could not infer the output shape from the inputs')
            outs.append(new_empty(tuple(shape), DTYPE_CODES[np.dtype(dtype)],
                                  ins[0].context if ins else None))
    else:
        given = [out] if isinstance(out, NDArray) else list(out)
        visible = spec.num_visible_outputs(p)
        if len(given) != visible:
            raise TypeError(f"{op_name}: out= needs {visible} array(s), got {len(given)}")
        for i, (o, shape) in enumerate(zip(given, out_shapes)):
            if o.shape != tuple(shape):
                raise spec.shape_error(f'out[{i}]', tuple(shape), o.shape)
        outs = given + [new_empty(tuple(s), DTYPE_CODES[np.dtype(t)], ins[0].context)
                        for s, t in zip(out_shapes[visible:], out_types[visible:])]
    spec.forward(p, is_train, ['write'] * n_out, ins, outs, aux)
    visible = outs[:spec.num_visible_outputs(p)]
    return visible[0] if len(visible) == 1 else visible


def make_function(op_name):
    spec = get_op(op_name)

    def fn(*args, out=None, name=None, **kwargs):
        return invoke(spec, op_name, args, kwargs, out=out)
    fn.__name__ = op_name
    fn.__qualname__ = op_name
    args = ', '.join(spec.params.names())
    fn.__doc__ = (spec.__class__.__doc__ or op_name) + f"\n\nParameters: {args or 'none'}."
    return fn


def install(namespace):
    """Add ``mx.nd.<Op>`` for every registered operator the namespace does not define yet."""
    import mxcy.operator  # noqa: F401  (registers the built-in operators)
    from mxcy.operator import list_ops
    for op_name in list_ops():
        if op_name not in namespace:
            namespace[op_name] = make_function(op_name)
