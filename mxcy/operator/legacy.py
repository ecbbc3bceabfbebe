"""``mx.operator``'s introspection (get_all_registered_operators,
get_operator_arguments) and the legacy Python operator front ends (PythonOp, NumpyOp,
NDArrayOp) that MXNet kept from before CustomOp; here they run on top of CustomOp.

Legacy usage: subclass NumpyOp (forward/backward on NumPy arrays, results written into
``out_data``/``in_grad`` in place) or NDArrayOp (the same on NDArrays), define
list_arguments/list_outputs/infer_shape, and call ``op.get_symbol(*inputs, name=...)``.
"""
import collections
import itertools

import numpy as np

from mxcy.operator._params import REQUIRED
from mxcy.operator._spec import _REGISTRY, input_names
from mxcy.operator.custom import CustomOp, CustomOpProp, register

OperatorArguments = collections.namedtuple('OperatorArguments', ['narg', 'names', 'types'])

_KINDS = {'int': 'int', 'float': 'float', 'bool': 'boolean', 'shape': 'Shape(tuple)',
          'str': 'string', 'dtype': "{'float16', 'float32', 'float64', ...}", 'any': 'any'}


def get_all_registered_operators():
    """The names of every registered operator (aliases included), sorted."""
    return sorted(_REGISTRY)


def get_operator_arguments(op_name):
    """OperatorArguments(narg, names, types) of an operator: its inputs, then its
    parameters, with MXNet-style type strings ('NDArray-or-Symbol', 'int, required',
    "float, optional, default='0.5'")."""
    from mxcy.operator._spec import get_op
    spec = get_op(op_name)
    names, types = [], []
    inputs = ['data'] if spec.variadic else list(input_names(spec))
    for n in inputs:
        names.append(n)
        types.append('NDArray-or-Symbol[]' if spec.variadic else 'NDArray-or-Symbol')
    for n, p in spec.params.params.items():
        kind = _KINDS.get(p.kind, p.kind)
        if p.choices:
            kind = '{' + ', '.join(repr(c) for c in p.choices) + '}'
        names.append(n)
        types.append(f"{kind}, required" if p.default is REQUIRED else
                     f"{kind}, optional, default='{p.default}'")
    return OperatorArguments(len(names), names, types)


_COUNTER = itertools.count()


class PythonOp:
    """Base of the legacy Python operators (use CustomOp for new code)."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """A Symbol running this operator on the input symbols."""
        import mxcy.symbol as sym
        op_type = f'_legacy_{type(self).__name__}_{next(_COUNTER)}'
        _register_legacy(op_type, self)
        return sym.Custom(*args, op_type=op_type, **kwargs)

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        return ['output']

    def list_arguments(self):
        return ['data']

    def need_top_grad(self):
        return self.need_top_grad_


class NumpyOp(PythonOp):
    """Legacy operator whose forward/backward write into NumPy arrays."""
    numpy = True


class NDArrayOp(PythonOp):
    """Legacy operator whose forward/backward write into NDArrays."""
    numpy = False

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = list(in_data) + list(out_data)
        return deps + list(out_grad) if self.need_top_grad() else deps


def _register_legacy(op_type, legacy):
    class _Op(CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            if getattr(legacy, 'numpy', False):
                ins = [x.asnumpy() for x in in_data]
                outs = [np.zeros(o.shape, o.dtype) for o in out_data]
                legacy.forward(ins, outs)
                for dst, r, src in zip(out_data, req, outs):
                    self.assign(dst, r, src)
            else:
                legacy.forward(list(in_data), list(out_data))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            if getattr(legacy, 'numpy', False):
                grads = [np.zeros(g.shape, g.dtype) for g in in_grad]
                legacy.backward([g.asnumpy() for g in out_grad],
                                [x.asnumpy() for x in in_data],
                                [o.asnumpy() for o in out_data], grads)
                for dst, r, src in zip(in_grad, req, grads):
                    self.assign(dst, r, src)
            else:
                legacy.backward(list(out_grad), list(in_data), list(out_data), list(in_grad))

    class _Prop(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=legacy.need_top_grad())

        def list_arguments(self):
            return legacy.list_arguments()

        def list_outputs(self):
            return legacy.list_outputs()

        def infer_shape(self, in_shape):
            shapes = legacy.infer_shape(in_shape)
            return (list(shapes[0]), list(shapes[1]), []) if len(shapes) == 2 else shapes

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return _Op()
    register(op_type)(_Prop)
