"""Elementwise operators as table rows (autograd ``defvjp`` style): one row per op.

Binary rows give the kernel code and the gradient of each operand as a function of
(dy, x, y, out) built from NDArray arithmetic (pushed, never waited on). Broadcast ops
sum each gradient back to its operand's shape; elemwise_* (the _Plus ... rows) need equal
shapes. Scalar rows take ``scalar``. Unary rows give the kernel code, or a NumPy function
run inside one op where there is no kernel (arcsin ..., MXNet's rint), and the derivative;
integer inputs of NumPy rows compute in float64 and truncate back, as MXNet casts.
"""
import numpy as np

from mxcy import _ndarray
from mxcy._ops import BINARY_OPS, UNARY_OPS, GRAD_OPS, push_grad
from mxcy.operator._compute import assign, nd
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op, unify_shape
from mxcy.operator.tensor import push_value


def _zeros_like(x):
    return _ndarray.full(x.shape, 0, x.context, x.dtype)


_OVERWRITE = ('write', 'inplace')


def _floor(x):
    return _ndarray.unary(x, UNARY_OPS['floor'])


def _float_only(grad):
    """A gradient that MXNet gives for floating types only (zero for integers: mod)."""
    def g(dy, x, *rest):
        if np.issubdtype(np.dtype(x.dtype), np.floating):
            return grad(dy, x, *rest)
        return _zeros_like(dy)
    return g


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
      lambda dy, x, y, o: dy * o * nd('log')(x))),
    ('_Maximum', ('_maximum',), 'maximum',
     (lambda dy, x, y, o: dy * (x >= y), lambda dy, x, y, o: dy * (x < y))),
    ('_Minimum', ('_minimum',), 'minimum',
     (lambda dy, x, y, o: dy * (x <= y), lambda dy, x, y, o: dy * (x > y))),
    ('_Hypot', ('_hypot',), 'hypot',
     (lambda dy, x, y, o: dy * x / o, lambda dy, x, y, o: dy * y / o)),
    ('_Mod', ('_mod',), 'modulo',    # MXNet: d/dy = -floor(x / y), in the operands' dtype
     (_float_only(lambda dy, x, y, o: dy),
      _float_only(lambda dy, x, y, o: -dy * _floor(x / y)))),
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
    from mxcy.ndarray._gen import function
    lead = len(g.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and g.shape[lead + i] != 1)
    return function('sum')(g, axis=axes, keepdims=False).reshape(tuple(shape))


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
        try:
            shape = unify_shape(self, 'rhs', lhs, rhs)
        except ValueError:
            raise self.shape_error('rhs', tuple(lhs), tuple(rhs),
                                   'lhs and rhs must have the same shape; the broadcast_* '
                                   'operators broadcast') from None
        return [shape, shape], [shape], []

    def infer_shape_backward(self, p, in_shapes, out_shapes):
        """Same-shape ops (MXNet's ElemwiseShape) take unknown operands from the output."""
        if self.broadcast or out_shapes[0] is None:
            return in_shapes
        return [unify_shape(self, 'output', out_shapes[0], s) for s in in_shapes]

    def forward(self, p, is_train, req, ins, outs, aux):
        code = BINARY_OPS[self.code]
        if req[0] in _OVERWRITE:
            _ndarray.binary(ins[0], ins[1], code, out=outs[0])
        else:
            assign(outs[0], lambda out: _ndarray.binary(ins[0], ins[1], code, out=out), req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        dy, x, y = out_grads[0], ins[0], ins[1]
        for i, (g, r) in enumerate(zip(self.grads, req)):
            if r == 'null':
                continue
            value = g(dy, x, y, outs[0] if outs else None)
            if self.broadcast:
                value = sum_to_shape(value, ins[i].shape)
            assign(in_grads[i], lambda out, v=value: out.__setitem__(slice(None), v), r)

    def grad_graph(self, p, out_grads, ins, outs):
        o = outs[0] if outs else None     # None where backward_needs has no outputs
        values = [g(out_grads[0], ins[0], ins[1], o) for g in self.grads]
        if self.broadcast:
            values = [sum_to_shape(v, x.shape) for v, x in zip(values, ins)]
        return values


class _ZeroGrad:
    has_backward = True

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        for g, r in zip(in_grads, req):
            if r in ('write', 'inplace'):
                _ndarray.full(g.shape, 0, out=g)

    def grad_graph(self, p, out_grads, ins, outs):
        return [None] * len(ins)


# The name MXNet 1.9.1 writes into symbol JSON for the rows named in CamelCase above
# (their CamelCase names stay aliases: MXNet reads both)
_JSON_NAMES = {'_Plus': 'elemwise_add', '_Minus': 'elemwise_sub', '_Mul': 'elemwise_mul',
               '_Div': 'elemwise_div', '_Mod': '_mod', '_Power': '_power',
               '_Maximum': '_maximum', '_Minimum': '_minimum', '_Hypot': '_hypot',
               '_PlusScalar': '_plus_scalar', '_MinusScalar': '_minus_scalar',
               '_RMinusScalar': '_rminus_scalar', '_MulScalar': '_mul_scalar',
               '_DivScalar': '_div_scalar', '_RDivScalar': '_rdiv_scalar',
               '_PowerScalar': '_power_scalar', '_RPowerScalar': '_rpower_scalar',
               '_MaximumScalar': '_maximum_scalar', '_MinimumScalar': '_minimum_scalar',
               '_ModScalar': '_mod_scalar', '_RModScalar': '_rmod_scalar',
               '_EqualScalar': '_equal_scalar', '_NotEqualScalar': '_not_equal_scalar',
               '_GreaterScalar': '_greater_scalar',
               '_GreaterEqualScalar': '_greater_equal_scalar',
               '_LesserScalar': '_lesser_scalar', '_LesserEqualScalar': '_lesser_equal_scalar'}


def _json_named(name, aliases):
    """(MXNet's JSON name, the other names as aliases) of a table row."""
    canonical = _JSON_NAMES.get(name, name)
    if canonical == name:
        return name, aliases
    return canonical, (name,) + tuple(a for a in aliases if a != canonical)


# What each gradient reads (less kept alive by autograd and the executor's memory plan);
# the shapes of the inputs are always at hand
_ALL_NEEDS = ('out_grads', 'inputs', 'outputs')
_BINARY_NEEDS = {'add': ('out_grads',), 'subtract': ('out_grads',),
                 'multiply': ('out_grads', 'inputs'), None: ()}


def _register_binary(name, aliases, code, grads, broadcast):
    name, aliases = _json_named(name, aliases)
    base = (_BinaryOp,) if grads else (_ZeroGrad, _BinaryOp)
    doc = (f"{'Broadcast' if broadcast else 'Elementwise'} {code} of lhs and rhs"
           f"{' (NumPy broadcasting; gradients summed back to each shape)' if broadcast else ''}.")
    cls = type(name, base, {'name': name, 'aliases': aliases, 'code': code, 'grads': grads,
                            'broadcast': broadcast, '__doc__': doc,
                            'backward_needs': _BINARY_NEEDS.get(code if grads else None,
                                                                _ALL_NEEDS)})
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
    ('_ModScalar', ('_mod_scalar',), 'modulo', _float_only(lambda dy, x, s, o: dy)),
    ('_RModScalar', ('_rmod_scalar',), 'rmodulo',
     _float_only(lambda dy, x, s, o: -dy * _floor(s / x))),
    ('_EqualScalar', ('_equal_scalar',), 'equal', None),
    ('_NotEqualScalar', ('_not_equal_scalar',), 'not_equal', None),
    ('_GreaterScalar', ('_greater_scalar',), 'greater', None),
    ('_GreaterEqualScalar', ('_greater_equal_scalar',), 'greater_equal', None),
    ('_LesserScalar', ('_lesser_scalar',), 'lesser', None),
    ('_LesserEqualScalar', ('_lesser_equal_scalar',), 'lesser_equal', None),
]


# the rows above whose gradient is dy OP c(scalar), one kernel: kernel code -> (OP, c)
_LINEAR = {'add': ('multiply', lambda s: 1.0), 'subtract': ('multiply', lambda s: 1.0),
           'rsubtract': ('multiply', lambda s: -1.0), 'multiply': ('multiply', lambda s: s),
           'divide': ('divide', lambda s: s)}


class _ScalarOp(OpSpec):
    params = ParamSchema(Param('scalar', 'float', 1.0))
    code = None
    grad = None

    def forward(self, p, is_train, req, ins, outs, aux):
        code = BINARY_OPS[self.code]
        if req[0] in _OVERWRITE:
            _ndarray.binary(ins[0], p.scalar, code, out=outs[0])
        else:
            assign(outs[0], lambda out: _ndarray.binary(ins[0], p.scalar, code, out=out),
                   req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        linear = _LINEAR.get(self.code)
        if linear is not None and req[0] in _OVERWRITE:    # dx = dy·c or dy/c: one kernel
            _ndarray.binary(out_grads[0], linear[1](p.scalar), BINARY_OPS[linear[0]],
                            out=in_grads[0])
            return
        value = self.grad(out_grads[0], ins[0], p.scalar, outs[0] if outs else None)
        assign(in_grads[0], lambda out: out.__setitem__(slice(None), value), req[0])

    def grad_graph(self, p, out_grads, ins, outs):
        return [self.grad(out_grads[0], ins[0], p.scalar, outs[0] if outs else None)]


for _name, _aliases, _code, _grad in _SCALAR_ROWS:
    _name, _aliases = _json_named(_name, _aliases)
    _base = (_ScalarOp,) if _grad else (_ZeroGrad, _ScalarOp)
    register_op(type(_name, _base, {'name': _name, 'aliases': _aliases, 'code': _code,
                                    'grad': staticmethod(_grad) if _grad else None,
                                    '__doc__': f"Elementwise {_code} of data and scalar.",
                                    'backward_needs': ('out_grads',) if _code in _LINEAR or
                                    not _grad else _ALL_NEEDS}))


# ---------------------------------------------------------------- unary ops
# NOTE: rint follows MXNet, not NumPy: halves go down (rint(2.5) = 2, rint(-2.5) = -3);
# round (the kernel) takes halves away from zero.
def _rint_half_down(x):
    f = np.floor(x)
    return np.where(x - f <= 0.5, f, f + 1)


class _Np:
    """A row's NumPy function (forward f(x), or gradient f(x, y, dy)), run inside one op."""

    def __init__(self, fn):
        self.fn = fn


class _Scale(_Np):
    """y = x·c (degrees, radians): float32/float64 by the multiply kernel with NumPy's
    constant for that dtype (float32: float32(180) / float32(π), as np.degrees), other
    dtypes by the NumPy function; the gradient is dy·c."""

    def __init__(self, fn, c):
        super().__init__(fn)
        self.c = c
        self.by_dtype = {np.dtype(t): float(fn(t(1))) for t in (np.float32, np.float64)}

    def push(self, x, out, req):
        c = self.by_dtype.get(np.dtype(x.dtype))
        if c is None:
            return False
        code = BINARY_OPS['multiply']
        if req in _OVERWRITE:
            _ndarray.binary(x, c, code, out=out)
        elif req != 'null':
            assign(out, lambda o: _ndarray.binary(x, c, code, out=o), req)
        return True


# name, aliases, kernel (a UNARY_OPS code, or _Np(f) for NumPy), gradient: a grad-kernel
# code with 'x'/'y' (what it reads), a function of (dy, x, out) on NDArrays, _Np(f(x, y,
# dy)), or None for a zero gradient
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
    ('sin', (), 'sin', lambda dy, x, o: dy * nd('cos')(x)),
    ('cos', (), 'cos', lambda dy, x, o: -dy * nd('sin')(x)),
    ('tan', (), 'tan', lambda dy, x, o: dy * (o * o + 1)),
    ('arctan', (), 'arctan', lambda dy, x, o: dy / (x * x + 1)),
    ('arcsin', (), _Np(np.arcsin), _Np(lambda x, y, dy: dy / np.sqrt(1 - x * x))),
    ('arccos', (), _Np(np.arccos), _Np(lambda x, y, dy: -dy / np.sqrt(1 - x * x))),
    ('sinh', (), _Np(np.sinh), _Np(lambda x, y, dy: dy * np.cosh(x))),
    ('cosh', (), _Np(np.cosh), _Np(lambda x, y, dy: dy * np.sinh(x))),
    ('arcsinh', (), _Np(np.arcsinh), _Np(lambda x, y, dy: dy / np.sqrt(x * x + 1))),
    ('arccosh', (), _Np(np.arccosh), _Np(lambda x, y, dy: dy / np.sqrt(x * x - 1))),
    ('arctanh', (), _Np(np.arctanh), _Np(lambda x, y, dy: dy / (1 - x * x))),
    ('degrees', (), _Scale(np.degrees, 180 / np.pi), _Scale(np.degrees, 180 / np.pi)),
    ('radians', (), _Scale(np.radians, np.pi / 180), _Scale(np.radians, np.pi / 180)),
    ('floor', (), 'floor', None),
    ('ceil', (), 'ceil', None),
    ('round', (), 'round', None),
    ('rint', (), _Np(_rint_half_down), None),
    ('trunc', ('fix',), 'trunc', None),
]


# The differentiable form (recorded mx.nd calls) of the gradients above that are a kernel
# or NumPy, as functions of (dy, x, out); rows with a function gradient use it as it is.
_GRAPH_GRADS = {
    'abs': lambda dy, x, o: dy * nd('sign')(x),
    'square': lambda dy, x, o: dy * x * 2,
    'sqrt': lambda dy, x, o: dy / (o * 2),
    'exp': lambda dy, x, o: dy * o,
    'log': lambda dy, x, o: dy / x,
    'relu': lambda dy, x, o: dy * (x > 0),
    'sigmoid': lambda dy, x, o: dy * o * (1 - o),
    'tanh': lambda dy, x, o: dy * (1 - o * o),
    'softsign': lambda dy, x, o: dy / nd('square')(nd('abs')(x) + 1),
    'arcsin': lambda dy, x, o: dy / nd('sqrt')(1 - x * x),
    'arccos': lambda dy, x, o: -dy / nd('sqrt')(1 - x * x),
    'sinh': lambda dy, x, o: dy * nd('cosh')(x),
    'cosh': lambda dy, x, o: dy * nd('sinh')(x),
    'arcsinh': lambda dy, x, o: dy / nd('sqrt')(x * x + 1),
    'arccosh': lambda dy, x, o: dy / nd('sqrt')(x * x - 1),
    'arctanh': lambda dy, x, o: dy / (1 - x * x),
    'degrees': lambda dy, x, o: dy * (180 / np.pi),
    'radians': lambda dy, x, o: dy * (np.pi / 180),
}


def _numpy_unary(f, name):
    """out := f(x); integer inputs compute in float64 and truncate back (MXNet's cast)."""
    def run(x):
        with np.errstate(all='ignore'):     # NaN/inf as the math gives, cast quietly
            y = f(x.astype(np.float64) if x.dtype.kind in 'iu' else x)
            return np.asarray(y).astype(x.dtype, copy=False)
    run.__name__ = name
    return run


class _UnaryOp(OpSpec):
    code = None
    grad = None

    def forward(self, p, is_train, req, ins, outs, aux):
        if isinstance(self.code, _Scale) and self.code.push(ins[0], outs[0], req[0]):
            return
        if isinstance(self.code, _Np):
            push_value(_numpy_unary(self.code.fn, self.name), ins, outs[0], req[0], self.name)
            return
        code = UNARY_OPS[self.code]
        if req[0] in _OVERWRITE:
            _ndarray.unary(ins[0], code, out=outs[0])
        else:
            assign(outs[0], lambda out: _ndarray.unary(ins[0], code, out=out), req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        dy, x, y = out_grads[0], ins[0], outs[0]
        if isinstance(self.grad, tuple) and dy.dtype == np.float16:
            # NOTE: the Cython grad kernel has float32/float64 loops only; float16 takes the
            # op's NDArray-expression gradient (the one grad_graph records), in float16
            value = _GRAPH_GRADS[self.name](dy, x, y)
            assign(in_grads[0], lambda out: out.__setitem__(slice(None), value), req[0])
            return
        if isinstance(self.grad, tuple):
            code, reads = self.grad
            push_grad(GRAD_OPS[code], x if reads == 'x' else y, dy, in_grads[0], req[0])
            return
        if isinstance(self.grad, _Scale) and self.grad.push(dy, in_grads[0], req[0]):
            return
        if isinstance(self.grad, _Scale):       # float16 dy: dy·c in NumPy
            c = self.grad.c
            push_value(lambda dy: dy * c, [dy], in_grads[0], req[0], self.name + '_backward')
            return
        if isinstance(self.grad, _Np):
            push_value(self.grad.fn, [x, y, dy], in_grads[0], req[0], self.name + '_backward')
            return
        value = self.grad(dy, x, y)
        assign(in_grads[0], lambda out: out.__setitem__(slice(None), value), req[0])

    def grad_graph(self, p, out_grads, ins, outs):
        fn = self.grad if callable(self.grad) else _GRAPH_GRADS[self.name]
        return [fn(out_grads[0], ins[0], outs[0])]


for _name, _aliases, _code, _grad in _UNARY_ROWS:
    _base = (_UnaryOp,) if _grad else (_ZeroGrad, _UnaryOp)
    register_op(type(_name, _base, {'name': _name, 'aliases': _aliases, 'code': _code,
                                    'grad': staticmethod(_grad) if callable(_grad) else _grad,
                                    '__doc__': f"Elementwise {_name}(data)."}))
