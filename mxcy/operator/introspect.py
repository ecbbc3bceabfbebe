"""``mx.operator``'s introspection of the registry: get_all_registered_operators and
get_operator_arguments, with MXNet's argument-type strings."""
import collections

from mxcy.operator._params import REQUIRED
from mxcy.operator._spec import _REGISTRY, input_names

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


