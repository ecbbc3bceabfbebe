"""Neural-network layers: FullyConnected (more layers join this family file)."""
import math

import numpy as np

from mxcy._ops import BINARY_OPS
from mxcy import _gemv, _ndarray
from mxcy.operator._compute import gemm, ones_vector, assign, nd
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op, unify_shape

_ADD = BINARY_OPS['add']
_GEMV_DTYPES = (np.float32, np.float64)


def _prod(shape):
    return math.prod(shape)


def _as_matrix(arr, rows, cols):
    """arr viewed as (rows, cols); itself when it already has that shape (no new view)."""
    return arr if arr.shape == (rows, cols) else arr.reshape((rows, cols))


@register_op
class FullyConnected(OpSpec):
    """y = x · Wᵀ + b, with x flattened to (batch, features) when ``flatten`` is true.

    Shapes: data (N, K...) -> (N, prod(K...)); weight (num_hidden, K); bias (num_hidden,).
    With ``flatten=False`` the last axis is the feature axis and the others are kept.
    Backward: dx = dy · W, dW = dyᵀ · x, db = Σ_rows dy.
    """
    name = 'FullyConnected'
    params = ParamSchema(
        Param('num_hidden', 'int'),
        Param('no_bias', 'bool', False),
        Param('flatten', 'bool', True),
    )
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'weight'] if p.no_bias else ['data', 'weight', 'bias']

    def _rows_features(self, p, dshape):
        if p.flatten:
            return dshape[0], _prod(dshape[1:])
        return _prod(dshape[:-1]), dshape[-1]

    def infer_shape(self, p, in_shapes):
        if p.num_hidden < 1:
            raise ValueError(f"FullyConnected: num_hidden must be positive, got "
                             f"{p.num_hidden}")
        shapes = list(in_shapes)
        dshape = shapes[0]
        out = None
        if dshape is not None:
            if len(dshape) < 1 or (p.flatten and len(dshape) < 1):
                raise self.shape_error('data', '(batch, ...)', dshape)
            _, k = self._rows_features(p, dshape)
            shapes[1] = unify_shape(self, 'weight', (p.num_hidden, k), shapes[1])
            if p.flatten:
                out = (dshape[0], p.num_hidden)
            else:
                out = tuple(dshape[:-1]) + (p.num_hidden,)
        elif shapes[1] is not None and shapes[1][0] != p.num_hidden:
            raise self.shape_error('weight', (p.num_hidden, shapes[1][1]), shapes[1],
                                   f'num_hidden={p.num_hidden}')
        if not p.no_bias and (dshape is not None or shapes[2] is not None):
            # as MXNet: the bias is inferred with the data, not from num_hidden alone
            shapes[2] = unify_shape(self, 'bias', (p.num_hidden,), shapes[2])
        return shapes, [out], []

    def forward(self, p, is_train, req, ins, outs, aux):
        x, w = ins[0], ins[1]
        y = outs[0]
        n, k = self._rows_features(p, x.shape)
        x2 = _as_matrix(x, n, k)
        y2 = _as_matrix(y, n, p.num_hidden)
        b = None if p.no_bias else ins[2]
        if n <= _gemv.MAX_ROWS and x.dtype in _GEMV_DTYPES and \
                w.dtype == x.dtype == y.dtype and (b is None or b.dtype == x.dtype):
            # up to 16 rows: dot products with each weight row, both workers (issue 16)
            _gemv.fc_forward(x2, w, b, y2, n, p.num_hidden, k, req[0])
            return
        gemm(x2, w, y2, n, p.num_hidden, k, trans_b=True, req=req[0])
        if not p.no_bias and req[0] != 'null':
            _ndarray.binary(y2, ins[2], _ADD, out=y2)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        x, w = ins[0], ins[1]
        n, k = self._rows_features(p, x.shape)
        h = p.num_hidden
        dy = _as_matrix(out_grads[0], n, h)
        if req[0] != 'null':
            gemm(dy, w, _as_matrix(in_grads[0], n, k), n, k, h, req=req[0])
        if req[1] != 'null':
            gemm(dy, _as_matrix(x, n, k), in_grads[1], h, k, n, trans_a=True, req=req[1])
        if not p.no_bias and req[2] != 'null':
            ones = ones_vector(n, x.dtype, x.context)
            gemm(ones, dy, in_grads[2].reshape((1, h)), 1, h, n, req=req[2])

    def grad_graph(self, p, out_grads, ins, outs):
        x, w = ins[0], ins[1]
        n, k = self._rows_features(p, x.shape)
        dy = out_grads[0].reshape((n, p.num_hidden))
        grads = [nd('dot')(dy, w).reshape(x.shape),
                 nd('dot')(dy, x.reshape((n, k)), transpose_a=True)]
        return grads if p.no_bias else grads + [nd('sum')(dy, axis=0)]


_ACT_FORWARD = {'relu': 'relu', 'sigmoid': 'sigmoid', 'tanh': 'tanh', 'softrelu': 'softrelu',
                'softsign': 'softsign'}
# gradient codes written in terms of the output y, so the input need not be kept and the
# output may overwrite it (relu: y > 0 exactly where x > 0)
_ACT_GRAD = {'relu': 'relu', 'sigmoid': 'sigmoid', 'tanh': 'tanh', 'softrelu': 'softrelu_y',
             'softsign': 'softsign_y'}
# the same derivatives as recorded calls on (dy, y), for autograd.grad(create_graph=True):
# softrelu' = sigmoid(x) = 1 - exp(-y); softsign' = 1 / (1 + |x|)² = (1 - |y|)²
_ACT_GRAPH_GRAD = {
    'relu': lambda dy, y: dy * (y > 0),
    'sigmoid': lambda dy, y: dy * y * (1 - y),
    'tanh': lambda dy, y: dy * (1 - y * y),
    'softrelu': lambda dy, y: dy * (1 - nd('exp')(-y)),
    'softsign': lambda dy, y: dy * nd('square')(1 - nd('abs')(y)),
}


@register_op
class Activation(OpSpec):
    """y = f(x) elementwise, f one of relu, sigmoid, tanh, softrelu (log(1 + eˣ)), softsign
    (x / (1 + |x|)); dx = dy · f′(x), computed from the output y alone."""
    name = 'Activation'
    params = ParamSchema(Param('act_type', 'str', choices=tuple(_ACT_FORWARD)))
    backward_needs = ('out_grads', 'outputs')
    inplace_ok = True

    def forward(self, p, is_train, req, ins, outs, aux):
        from mxcy._ops import UNARY_OPS
        code = UNARY_OPS[_ACT_FORWARD[p.act_type]]
        assign(outs[0], lambda out: _ndarray.unary(ins[0], code, out=out), req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        from mxcy._ops import GRAD_OPS, push_grad
        push_grad(GRAD_OPS[_ACT_GRAD[p.act_type]], outs[0], out_grads[0], in_grads[0], req[0])

    def grad_graph(self, p, out_grads, ins, outs):
        return [_ACT_GRAPH_GRAD[p.act_type](out_grads[0], outs[0])]
