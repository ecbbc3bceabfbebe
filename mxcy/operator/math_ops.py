"""The rest of MXNet's elementwise math table: special functions, logical operators,
hard_sigmoid and smooth_l1.

All compute in NumPy/SciPy inside one engine op each (no C kernel exists for them);
integer inputs of the unary rows compute in float64 and cast back, as elemwise.py's
NumPy rows do. Logical operators return 0/1 in the input dtype and have zero gradients.

Derivatives (y the output):
  erf' = 2/sqrt(pi) exp(-x^2)        erfinv' = sqrt(pi)/2 exp(y^2)
  gamma' = y digamma(x)              gammaln' = digamma(x)
  rcbrt' = -y / (3x)                 hard_sigmoid' = alpha where 0 < alpha x + beta < 1
  smooth_l1' = sigma^2 x where |x| < 1/sigma^2, else sign(x)
"""
import numpy as np
from scipy import special

from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op
from mxcy.operator.elemwise import _BinaryOp, _Np, _UnaryOp, _ZeroGrad
from mxcy.operator.tensor import push_value

_SQRT_PI = float(np.sqrt(np.pi))


def _rcbrt(x):
    return 1.0 / np.cbrt(x)


# name, forward f(x), gradient f(x, y, dy) or None (zero gradient)
_ROWS = [
    ('erf', special.erf, lambda x, y, dy: dy * (2 / _SQRT_PI) * np.exp(-x * x)),
    ('erfinv', special.erfinv, lambda x, y, dy: dy * (_SQRT_PI / 2) * np.exp(y * y)),
    ('gamma', special.gamma, lambda x, y, dy: dy * y * special.digamma(x)),
    ('gammaln', special.gammaln, lambda x, y, dy: dy * special.digamma(x)),
    ('rcbrt', _rcbrt, lambda x, y, dy: -dy * y / (3 * x)),
    ('logical_not', lambda x: (x == 0), None),
]

for _name, _f, _g in _ROWS:
    _base = (_UnaryOp,) if _g else (_ZeroGrad, _UnaryOp)
    register_op(type(_name, _base, {'name': _name, 'aliases': (), 'code': _Np(_f),
                                    'grad': _Np(_g) if _g else None,
                                    '__doc__': f"Elementwise {_name}(data)."}))


class _ParamUnary(OpSpec):
    """A unary op with parameters: forward f(p, x) and gradient g(p, x, dy) in NumPy."""
    backward_needs = ('out_grads', 'inputs')

    def forward(self, p, is_train, req, ins, outs, aux):
        f = self.f
        push_value(lambda x: _in_float(f, p, x), ins, outs[0], req[0], self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        g = self.g
        push_value(lambda x, dy: g(p, x.astype(np.float64, copy=False), dy), [ins[0],
                   out_grads[0]], in_grads[0], req[0], self.name + '_backward')


def _in_float(f, p, x):
    with np.errstate(all='ignore'):
        return f(p, x.astype(np.float64) if x.dtype.kind in 'iub' else x)


@register_op
class hard_sigmoid(_ParamUnary):
    """y = clip(alpha * x + beta, 0, 1)."""
    name = 'hard_sigmoid'
    params = ParamSchema(Param('alpha', 'float', 0.2), Param('beta', 'float', 0.5))

    @staticmethod
    def f(p, x):
        return np.clip(p.alpha * x + p.beta, 0, 1)

    @staticmethod
    def g(p, x, dy):
        z = p.alpha * x + p.beta
        return dy * np.where((z > 0) & (z < 1), p.alpha, 0.0)


@register_op
class smooth_l1(_ParamUnary):
    """Smooth L1 with sigma = scalar: 0.5 (sigma x)^2 where |x| < 1/sigma^2, else
    |x| - 0.5/sigma^2."""
    name = 'smooth_l1'
    params = ParamSchema(Param('scalar', 'float', 1.0))

    @staticmethod
    def f(p, x):
        s2 = p.scalar * p.scalar
        return np.where(np.abs(x) < 1 / s2, 0.5 * s2 * x * x, np.abs(x) - 0.5 / s2)

    @staticmethod
    def g(p, x, dy):
        s2 = p.scalar * p.scalar
        return dy * np.where(np.abs(x) < 1 / s2, s2 * x, np.sign(x))


# ---------------------------------------------------------------- logical binary ops
_LOGICAL = {'and': np.logical_and, 'or': np.logical_or, 'xor': np.logical_xor}


class _LogicalBinary(_ZeroGrad, _BinaryOp):
    def forward(self, p, is_train, req, ins, outs, aux):
        f = self.fn
        push_value(lambda a, b: f(a != 0, b != 0), ins, outs[0], req[0], self.name)


class _LogicalScalar(_ZeroGrad, OpSpec):
    params = ParamSchema(Param('scalar', 'float', 1.0))

    def forward(self, p, is_train, req, ins, outs, aux):
        f, s = self.fn, p.scalar != 0
        push_value(lambda a: f(a != 0, s), ins, outs[0], req[0], self.name)


for _kind, _fn in _LOGICAL.items():
    for _name, _bcast in ((f'_logical_{_kind}', False), (f'broadcast_logical_{_kind}', True)):
        register_op(type(_name, (_LogicalBinary,), {
            'name': _name, 'aliases': (), 'fn': staticmethod(_fn), 'broadcast': _bcast,
            '__doc__': f"{'Broadcast' if _bcast else 'Elementwise'} logical {_kind} "
                       "(1 where true, else 0, in the inputs' dtype)."}))
    _sname = f'_logical_{_kind}_scalar'
    register_op(type(_sname, (_LogicalScalar,), {
        'name': _sname, 'aliases': (), 'fn': staticmethod(_fn),
        '__doc__': f"Logical {_kind} of data and scalar (1 where true, else 0)."}))


@register_op
class _hypot_scalar(_ParamUnary):
    """hypot(data, scalar)."""
    name = '_hypot_scalar'
    params = ParamSchema(Param('scalar', 'float', 1.0))

    @staticmethod
    def f(p, x):
        return np.hypot(x, p.scalar)

    @staticmethod
    def g(p, x, dy):
        return dy * x / np.hypot(x, p.scalar)
