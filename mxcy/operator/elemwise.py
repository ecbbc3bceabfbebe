"""Elementwise operators as table rows (autograd ``defvjp`` style): one row per op.

Binary rows give the kernel code and the gradient of each operand as a function of
(dy, x, y, out) built from NDArray arithmetic (pushed, never waited on). Broadcast ops
sum each gradient back to its operand's shape. Scalar rows take ``scalar``; unary rows
give the kernel code and the derivative.
"""
import numpy as np

from mxcy import _ndarray
from mxcy._ops import BINARY_OPS, UNARY_OPS, GRAD_OPS, push_grad
from mxcy.operator._compute import assign
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op, unify_shape


def _zeros_like(x):
    return _ndarray.full(x.shape, 0, x.context, x.dtype)


def _binary(code):
    return lambda x, y, out: _ndarray.binary(x, y, BINARY_OPS[code], out=out)


# name, aliases, kernel, (d/dx, d/dy) as functions of (dy, x, y, out)
_BINARY_ROWS = [
    ('_Plus', ('elemwise_add', '_plus', '_add'), 'add',
     (lambda dy, x, y, o: dy, lambda dy, x, y, o: dy)),
    ('_Minus', ('elemwise_sub', '_minus', '_sub'), 'subtract',
     (lambda dy, x, y, o: dy, lambda dy, x, y, o: -dy)),
    ('_Mul', ('elemwise_mul', '_mul'), 'multiply',
     (lambda dy, x, y, o: dy * y, lambda dy, x, y, o: dy * x)),
    ('_Div', ('elemwise_div', '_div'), 'divide',
     (lambda dy, x, y, o: dy / y, lambda dy, x, y, o: -dy * o / y)),
    ('_Power', ('_power', '_pow'), 'power',
     (lambda dy, x, y, o: dy * y * x ** (y - 1),
      lambda dy, x, y, o: dy * o * _ndarray.unary(x, UNARY_OPS['log']))),
    ('_Maximum', ('_maximum',), 'maximum',
     (lambda dy, x, y, o: dy * (x >= y), lambda dy, x, y, o: dy * (x < y))),
    ('_Minimum', ('_minimum',), 'minimum',
     (lambda dy, x, y, o: dy * (x <= y), lambda dy, x, y, o: dy * (x > y))),
    ('_Hypot', ('_hypot',), 'hypot',
     (lambda dy, x, y, o: dy * x / o, lambda dy, x, y, o: dy * y / o)),
    ('_Mod', ('_mod',), 'modulo', None),
    ('_equal', ('_Equal',), 'equal', None),
    ('_not_equal', ('_Not_Equal',), 'not_equal', None),
    ('_greater', ('_Greater',), 'greater', None),
    ('_greater_equal', ('_Greater_Equal',), 'greater_equal', None),
    ('_lesser', ('_Lesser',), 'lesser', None),
    ('_lesser_equal', ('_Lesser_Equal',), 'lesser_equal', None),
]

# broadcast_<name> for each binary row, by kernel code
_BROADCAST_NAMES = {'add': ('broadcast_add', ('broadcast_plus',)),
                    'subtract': ('broadcast_sub', ('broadcast_minus',)),
                    'multiply': ('broadcast_mul', ()), 'divide': ('broadcast_div', ()),
                    'power': ('broadcast_power', ()), 'maximum': ('broadcast_maximum', ()),
                    'minimum': ('broadcast_minimum', ()), 'hypot': ('broadcast_hypot', ()),
                    'modulo': ('broadcast_mod', ()), 'equal': ('broadcast_equal', ()),
                    'not_equal': ('broadcast_not_equal', ()),
                    'greater': ('broadcast_greater', ()),
                    'greater_equal': ('broadcast_greater_equal', ()),
                    'lesser': ('broadcast_lesser', ()),
                    'lesser_equal': ('broadcast_lesser_equal', ())}


def sum_to_shape(g, shape):
    """Sum a broadcast gradient back to `shape` (MXNet's ReduceAxes for broadcast ops)."""
    if g.shape == tuple(shape):
        return g
    from mxcy.ndarray.reduce import sum as nd_sum
    lead = len(g.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and g.shape[lead + i] != 1)
    return nd_sum(g, axis=axes, keepdims=False).reshape(tuple(shape))


class _BinaryOp(OpSpec):
    broadcast = False
    code = None
    grads = None

    def arguments(self, p):
        return ['lhs', 'rhs']

    def infer_shape(self, p, in_shapes):
        lhs, rhs = in_shapes
        if self.broadcast:
            if lhs is None or rhs is None:
                return list(in_shapes), [None], []
            try:
                out = np.broadcast_shapes(tuple(lhs), tuple(rhs))
            except ValueError:
                raise self.shape_error('rhs', f'a shape broadcastable with lhs {tuple(lhs)}',
                                       tuple(rhs)) from None
            return [tuple(lhs), tuple(rhs)], [tuple(out)], []
        shape = unify_shape(self, 'rhs', lhs, rhs)
        return [shape, shape], [shape], []

    def forward(self, p, is_train, req, ins, outs, aux):
        f = _binary(self.code)
        assign(outs[0], lambda out: f(ins[0], ins[1], out), req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        dy, x, y = out_grads[0], ins[0], ins[1]
        for i, (g, r) in enumerate(zip(self.grads, req)):
            if r == 'null':
                continue
            value = g(dy, x, y, outs[0])
            if self.broadcast:
                value = sum_to_shape(value, ins[i].shape)
            assign(in_grads[i], lambda out, v=value: out.__setitem__(slice(None), v), r)


class _ZeroGrad:
    has_backward = True

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        for g, r in zip(in_grads, req):
            if r in ('write', 'inplace'):
                _ndarray.full(g.shape, 0, out=g)


def _register_binary(name, aliases, code, grads, broadcast):
    base = (_BinaryOp,) if grads else (_ZeroGrad, _BinaryOp)
    doc = (f"{'Broadcast' if broadcast else 'Elementwise'} {code} of lhs and rhs"
           f"{' (NumPy broadcasting; gradients summed back to each shape)' if broadcast else ''}.")
    cls = type(name, base, {'name': name, 'aliases': aliases, 'code': code, 'grads': grads,
                            'broadcast': broadcast, '__doc__': doc})
    register_op(cls)


for _name, _aliases, _code, _grads in _BINARY_ROWS:
    _register_binary(_name, _aliases, _code, _grads, False)
    _bname, _baliases = _BROADCAST_NAMES[_code]
    _register_binary(_bname, _baliases, _code, _grads, True)


# ---------------------------------------------------------------- scalar ops
# name, aliases, kernel code applied as (x OP scalar), gradient of x as f(dy, x, s, out)
_SCALAR_ROWS = [
    ('_PlusScalar', ('_plus_scalar',), 'add', lambda dy, x, s, o: dy),
    ('_MinusScalar', ('_minus_scalar',), 'subtract', lambda dy, x, s, o: dy),
    ('_RMinusScalar', ('_rminus_scalar',), 'rsubtract', lambda dy, x, s, o: -dy),
    ('_MulScalar', ('_mul_scalar',), 'multiply', lambda dy, x, s, o: dy * s),
    ('_DivScalar', ('_div_scalar',), 'divide', lambda dy, x, s, o: dy / s),
    ('_RDivScalar', ('_rdiv_scalar',), 'rdivide', lambda dy, x, s, o: -dy * o / x),
    ('_PowerScalar', ('_power_scalar',), 'power',
     lambda dy, x, s, o: dy * s * x ** (s - 1)),
    ('_RPowerScalar', ('_rpower_scalar',), 'rpower',
     lambda dy, x, s, o: dy * o * float(np.log(s))),
    ('_MaximumScalar', ('_maximum_scalar',), 'maximum', lambda dy, x, s, o: dy * (x >= s)),
    ('_MinimumScalar', ('_minimum_scalar',), 'minimum', lambda dy, x, s, o: dy * (x <= s)),
    ('_ModScalar', ('_mod_scalar',), 'modulo', None),
    ('_RModScalar', ('_rmod_scalar',), 'rmodulo', None),
    ('_EqualScalar', ('_equal_scalar',), 'equal', None),
    ('_NotEqualScalar', ('_not_equal_scalar',), 'not_equal', None),
    ('_GreaterScalar', ('_greater_scalar',), 'greater', None),
    ('_GreaterEqualScalar', ('_greater_equal_scalar',), 'greater_equal', None),
    ('_LesserScalar', ('_lesser_scalar',), 'lesser', None),
    ('_LesserEqualScalar', ('_lesser_equal_scalar',), 'lesser_equal', None),
]


class _ScalarOp(OpSpec):
    params = ParamSchema(Param('scalar', 'float', 1.0))
    code = None
    grad = None

    def forward(self, p, is_train, req, ins, outs, aux):
        code = BINARY_OPS[self.code]
        assign(outs[0], lambda out: _ndarray.binary(ins[0], p.scalar, code, out=out), req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        value = self.grad(out_grads[0], ins[0], p.scalar, outs[0])
        assign(in_grads[0], lambda out: out.__setitem__(slice(None), value), req[0])


for _name, _aliases, _code, _grad in _SCALAR_ROWS:
    _base = (_ScalarOp,) if _grad else (_ZeroGrad, _ScalarOp)
    register_op(type(_name, _base, {'name': _name, 'aliases': _aliases, 'code': _code,
                                    'grad': staticmethod(_grad) if _grad else None,
                                    '__doc__': f"Elementwise {_code} of data and scalar."}))


# ---------------------------------------------------------------- unary ops
# name, aliases, kernel, gradient: a grad-kernel code with 'x'/'y' (what it reads), a
# function of (dy, x, out), or None for a zero gradient
_UNARY_ROWS = [
    ('negative', ('_negative',), 'negative', lambda dy, x, o: -dy),
    ('abs', (), 'abs', ('abs', 'x')),
    ('sign', (), 'sign', None),
    ('square', (), 'square', ('square', 'x')),
    ('sqrt', (), 'sqrt', ('sqrt', 'y')),
    ('rsqrt', (), 'rsqrt', lambda dy, x, o: dy * o * o * o * -0.5),
    ('cbrt', (), 'cbrt', lambda dy, x, o: dy / (o * o * 3)),
    ('exp', (), 'exp', ('exp', 'y')),
    ('log', (), 'log', ('log', 'x')),
    ('log2', (), 'log2', lambda dy, x, o: dy / (x * float(np.log(2)))),
    ('log10', (), 'log10', lambda dy, x, o: dy / (x * float(np.log(10)))),
    ('log1p', (), 'log1p', lambda dy, x, o: dy / (x + 1)),
    ('expm1', (), 'expm1', lambda dy, x, o: dy * (o + 1)),
    ('relu', (), 'relu', ('relu', 'x')),
    ('sigmoid', (), 'sigmoid', ('sigmoid', 'y')),
    ('tanh', (), 'tanh', ('tanh', 'y')),
    ('softsign', (), 'softsign', ('softsign', 'x')),
    ('reciprocal', (), 'reciprocal', lambda dy, x, o: -dy * o * o),
    ('sin', (), 'sin', lambda dy, x, o: dy * _ndarray.unary(x, UNARY_OPS['cos'])),
    ('cos', (), 'cos', lambda dy, x, o: -dy * _ndarray.unary(x, UNARY_OPS['sin'])),
    ('tan', (), 'tan', lambda dy, x, o: dy * (o * o + 1)),
    ('arctan', (), 'arctan', lambda dy, x, o: dy / (x * x + 1)),
    ('floor', (), 'floor', None),
    ('ceil', (), 'ceil', None),
    ('round', (), 'round', None),
    ('rint', (), 'round', None),
    ('trunc', ('fix',), 'trunc', None),
]


class _UnaryOp(OpSpec):
    code = None
    grad = None

    def forward(self, p, is_train, req, ins, outs, aux):
        code = UNARY_OPS[self.code]
        assign(outs[0], lambda out: _ndarray.unary(ins[0], code, out=out), req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        dy, x, y = out_grads[0], ins[0], outs[0]
        if isinstance(self.grad, tuple):
            code, reads = self.grad
            push_grad(GRAD_OPS[code], x if reads == 'x' else y, dy, in_grads[0], req[0])
            return
        value = self.grad(dy, x, y)
        assign(in_grads[0], lambda out: out.__setitem__(slice(None), value), req[0])


for _name, _aliases, _code, _grad in _UNARY_ROWS:
    _base = (_UnaryOp,) if _grad else (_ZeroGrad, _UnaryOp)
    register_op(type(_name, _base, {'name': _name, 'aliases': _aliases, 'code': _code,
                                    'grad': staticmethod(_grad) if callable(_grad) else _grad,
                                    '__doc__': f"Elementwise {_code}(data)."}))
