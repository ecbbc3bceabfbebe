"""Operators that create arrays from parameters: ``_zeros``, ``_ones``, ``_full``.

They take no inputs: ``mx.sym.zeros(shape=(2, 3))`` is a node whose output is a constant
(MXNet's ``_zeros`` / ``_ones`` / ``_full``, params ``shape``, ``dtype`` and ``ctx``; ``ctx``
is accepted and ignored, binding decides the device). They have no gradient.

A ``0`` in ``shape`` means "unknown" in MXNet 1.x, which back-infers it from the node's
consumers. mxcy's shape inference runs forwards (an operator sees its input shapes), so a
node without inputs cannot learn it, and inference raises naming the node. RNN cells
(``mx.rnn``) use ``begin_state()`` zeros of shape ``(0, num_hidden)``; they replace each
such node by ``_full_batch_like(data)``, whose ``0`` dimensions take the batch size of the
cell's input, so the unrolled graph binds from the data shape alone.
"""
import numpy as np

from mxcy import _ndarray
from mxcy._ops import BINARY_OPS
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op


def _check_shape(op, shape):
    if not shape:
        raise ValueError(f"{op.name}: parameter 'shape' must be given, e.g. shape=(2, 3); got "
                         f"{shape!r}")
    if any(d is None or d < 0 for d in shape):
        raise ValueError(f"{op.name}: parameter 'shape' must hold non-negative sizes, got "
                         f"{shape!r}")


def _fill(value, outs, req):
    if req[0] in ('write', 'inplace'):
        _ndarray.full(outs[0].shape, value, out=outs[0])
    elif req[0] == 'add' and value:
        _ndarray.binary(outs[0], value, BINARY_OPS['add'], out=outs[0])


class _Init(OpSpec):
    """A constant array of ``shape`` and ``dtype`` (no inputs, no gradient)."""
    params = ParamSchema(
        Param('shape', 'shape', ()),
        Param('ctx', 'any', None, optional=True),
        Param('dtype', 'dtype', 'float32'),
    )
    backward_needs = ()
    has_backward = False
    value = 0.0

    def arguments(self, p):
        return []

    def fill_value(self, p):
        return self.value

    def infer_shape(self, p, in_shapes):
        _check_shape(self, p.shape)
        if 0 in p.shape:
            raise self.shape_error(
                'shape', 'a fully known shape', p.shape,
                'a 0 (unknown) dimension cannot be inferred for an operator without inputs; '
                'give the full shape, or let an RNN cell resolve its begin_state() from its '
                'input in unroll')
        return [], [tuple(p.shape)], []

    def infer_type(self, p, in_types):
        return [], [np.dtype(p.dtype or 'float32').name], []

    def forward(self, p, is_train, req, ins, outs, aux):
        _fill(self.fill_value(p), outs, req)


@register_op
class _zeros(_Init):
    """Zeros of ``shape`` and ``dtype``."""
    name = '_zeros'
    aliases = ('zeros',)


@register_op
class _ones(_Init):
    """Ones of ``shape`` and ``dtype``."""
    name = '_ones'
    aliases = ('ones',)
    value = 1.0


@register_op
class _full(_Init):
    """``value`` everywhere, of ``shape`` and ``dtype``."""
    name = '_full'
    params = ParamSchema(
        Param('shape', 'shape', ()),
        Param('ctx', 'any', None, optional=True),
        Param('dtype', 'dtype', 'float32'),
        Param('value', 'float'),
    )

    def fill_value(self, p):
        return p.value


@register_op
class _full_batch_like(OpSpec):
    """``value`` everywhere, of ``shape`` where every 0 becomes ``data.shape[axis]``.

    The batch-resolved form of a ``zeros(shape=(0, H))`` begin state (see the module
    docstring). ``dtype`` None: data's dtype. Data is only read for its shape; no gradient
    flows to it.
    """
    name = '_full_batch_like'
    params = ParamSchema(
        Param('shape', 'shape'),
        Param('value', 'float', 0.0),
        Param('axis', 'int', 0),
        Param('dtype', 'dtype', None, optional=True),
    )
    backward_needs = ()
    has_backward = False

    def _out_shape(self, p, dshape):
        axis = p.axis + len(dshape) if p.axis < 0 else p.axis
        if not 0 <= axis < len(dshape):
            raise self.shape_error('data', f'an array with an axis {p.axis}', tuple(dshape),
                                   f'axis={p.axis} names its batch dimension')
        return tuple(dshape[axis] if d == 0 else d for d in p.shape)

    def infer_shape(self, p, in_shapes):
        _check_shape(self, p.shape)
        dshape = in_shapes[0]
        out = self._out_shape(p, dshape) if dshape is not None else None
        return list(in_shapes), [out], []

    def infer_type(self, p, in_types):
        out = p.dtype if p.dtype is not None else in_types[0]
        return list(in_types), [out], []

    def forward(self, p, is_train, req, ins, outs, aux):
        _fill(p.value, outs, req)
