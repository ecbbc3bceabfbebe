"""Loss layers: their backward ignores the head gradient (MXNet's output layers) unless
stated, and the label gets no gradient."""
import math

import numpy as np

from mxcy import _ndarray
from mxcy.operator._compute import assign
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op, unify_shape


def _prod(shape):
    return math.prod(shape)


def _zero_label_grad(req, in_grads):
    if len(in_grads) > 1 and req[1] in ('write', 'inplace'):
        _ndarray.full(in_grads[1].shape, 0, out=in_grads[1])


@register_op
class SoftmaxOutput(OpSpec):
    """Forward: softmax over the class axis. Backward (head gradient ignored):
    d data = grad_scale · (softmax − one_hot(label)) / norm, where norm is 1 ('null'), the
    rows ('batch': the batch size; every position but the last axis with preserve_shape) or
    the number of labels not equal to ignore_label ('valid', counted as MXNet does even
    without use_ignore); with multi_output, 'null' and 'batch' also divide by the spatial
    size (the trailing dims' product). Positions whose label is ignore_label (with
    use_ignore) get zero gradient.

    Class axis: 1 of data flattened to (batch, rest) by default; axis 1 of (n, c, d...)
    with ``multi_output`` (label (n, d...)); the last axis with ``preserve_shape``.
    """
    name = 'SoftmaxOutput'
    aliases = ('Softmax',)
    params = ParamSchema(
        Param('grad_scale', 'float', 1.0),
        Param('ignore_label', 'float', -1.0),
        Param('multi_output', 'bool', False),
        Param('use_ignore', 'bool', False),
        Param('preserve_shape', 'bool', False),
        Param('normalization', 'str', 'null', choices=('null', 'batch', 'valid')),
        Param('out_grad', 'bool', False),
        Param('smooth_alpha', 'float', 0.0),
    )
    backward_needs = ('inputs', 'outputs')

    def arguments(self, p):
        return ['data', 'label']

    def infer_type(self, p, in_types):
        """The data types the output and an unknown label; a label's dtype does not type
        the data (labels are often integers), as in MXNet."""
        return [in_types[0], in_types[1] or in_types[0]], [in_types[0]], []

    def _label_shape(self, p, dshape):
        if p.multi_output:
            return (dshape[0],) + tuple(dshape[2:])
        if p.preserve_shape:
            return tuple(dshape[:-1])
        return (dshape[0],)

    def infer_shape(self, p, in_shapes):
        shapes = list(in_shapes)
        dshape = shapes[0]
        if dshape is None:
            return shapes, [None], []
        if len(dshape) < 2 and not p.preserve_shape:
            raise self.shape_error('data', '(batch, classes, ...)', dshape)
        want = self._label_shape(p, dshape)
        given = shapes[1]
        if given is not None and tuple(given) != want and _prod(given) == _prod(want):
            want = tuple(given)     # e.g. label (n, 1) for (n,): same values, accepted
        shapes[1] = unify_shape(self, 'label', want, given)
        return shapes, [tuple(dshape)], []

    def _axis_view(self, p, x):
        """The array as (outer, classes, inner) and the class axis in that view."""
        if p.multi_output:
            return x, 1
        if p.preserve_shape:
            return x, x.ndim - 1
        return x.reshape((x.shape[0], _prod(x.shape[1:]))), 1

    def forward(self, p, is_train, req, ins, outs, aux):
        from mxcy._ops import push_softmax
        x, axis = self._axis_view(p, ins[0])
        y, _ = self._axis_view(p, outs[0])
        if np.dtype(x.dtype) == np.float16:
            # NOTE: the Cython softmax has float32/float64 loops; float16 runs in NumPy
            # (in float32, rounded once), as the backward's fallback below does
            from mxcy.operator.reduce import _softmax_np

            def run(xv, out):
                out[...] = _softmax_np(xv, axis, 1.0, False, out.dtype)
            assign(y, lambda out: _ndarray.push_numpy(run, [x], [out], 'SoftmaxOutput'),
                   req[0])
            return
        push_softmax(x, y, axis, 1.0, False, None, req[0])

    def _divisor(self, p, shape):
        """MXNet's fixed divisor of the gradient, or None for 'valid' (counted from labels)."""
        if p.normalization == 'valid':
            return None
        if p.multi_output:
            rows, spatial = shape[0], _prod(shape[2:])
        elif p.preserve_shape:
            rows, spatial = _prod(shape[:-1]), 1
        else:
            rows, spatial = shape[0], 1
        return max(spatial * (rows if p.normalization == 'batch' else 1), 1)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        y, axis = self._axis_view(p, outs[0])
        label = ins[1]
        divisor = self._divisor(p, outs[0].shape)
        # the kernel counts 'valid' labels only with use_ignore; MXNet counts them always
        if (not p.out_grad and y.dtype == label.dtype
                and (divisor is not None or p.use_ignore)
                and np.dtype(y.dtype) in (np.float32, np.float64) and req[0] != 'null'):
            # the common case as one C kernel (no Python op, no GIL on the worker)
            from mxcy._ops import push_softmax_output_grad
            scale, norm = ((p.grad_scale / divisor, 'null') if divisor is not None
                           else (p.grad_scale, 'valid'))
            push_softmax_output_grad(y, label, in_grads[0].reshape(y.shape), axis,
                                     scale, p.use_ignore, p.ignore_label,
                                     norm, p.smooth_alpha, req[0])
            _zero_label_grad(req, in_grads)
            return
        params = (axis, p.grad_scale, p.use_ignore, p.ignore_label, divisor, p.smooth_alpha)

        def grad(out):
            def run(yv, lv, *rest):
                o = rest[-1]
                o[...] = _softmax_grad(yv, lv, *params).reshape(o.shape)
                if p.out_grad:
                    o *= rest[0]
            inputs = [y, label] + ([out_grads[0]] if p.out_grad else [])
            _ndarray.push_numpy(run, inputs, [out.reshape(y.shape)], 'SoftmaxOutput_backward')
        assign(in_grads[0], grad, req[0])
        _zero_label_grad(req, in_grads)


def _softmax_grad(y, label, axis, scale, use_ignore, ignore_label, divisor, smooth):
    """scale · (y − one_hot(label)) / divisor along `axis` (NumPy, inside an engine op); a
    divisor of None is the count of labels not equal to ignore_label (at least 1)."""
    classes = y.shape[axis]
    lab = label.reshape(y.shape[:axis] + y.shape[axis + 1:]).astype(np.int64)
    onehot = np.moveaxis(np.eye(classes, dtype=y.dtype)[np.clip(lab, 0, classes - 1)], -1, axis)
    if smooth:
        onehot = onehot * (1 - smooth) + (1 - onehot) * smooth / (classes - 1)
    g = y - onehot
    valid = lab != int(ignore_label)
    if use_ignore:
        g *= np.expand_dims(valid, axis)
    if divisor is None:
        divisor = max(int(valid.sum()), 1)
    return g * (scale / divisor)


class _RegressionOutput(OpSpec):
    """Forward: y = f(data). Backward: d data = grad_scale / m · g(y, label), m being the
    label's elements per sample (MXNet's num_output)."""
    params = ParamSchema(Param('grad_scale', 'float', 1.0))
    backward_needs = ('inputs', 'outputs')

    def arguments(self, p):
        return ['data', 'label']

    def infer_shape(self, p, in_shapes):
        shapes = list(in_shapes)
        dshape = shapes[0]
        if dshape is None:
            return shapes, [None], []
        given = shapes[1]
        if given is not None and tuple(given) != tuple(dshape) and _prod(given) == _prod(dshape):
            pass    # (n,) labels for (n, 1) outputs: MXNet accepts equal sizes
        else:
            shapes[1] = unify_shape(self, 'label', tuple(dshape), given)
        return shapes, [tuple(dshape)], []

    def forward(self, p, is_train, req, ins, outs, aux):
        self.transform(ins[0], outs[0], req[0])

    def transform(self, x, y, req):
        assign(y, lambda out: out.__setitem__(slice(None), x), req)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        label, y = ins[1], outs[0]
        num_output = _prod(label.shape[1:]) if label.ndim > 1 else 1
        scale = p.grad_scale / num_output
        link = self.link

        def grad(out):
            def run(yv, lv, o):
                o[...] = scale * link(yv, lv.reshape(yv.shape))
            _ndarray.push_numpy(run, [y, label], [out], self.name + '_backward')
        assign(in_grads[0], grad, req[0])
        _zero_label_grad(req, in_grads)


@register_op
class LinearRegressionOutput(_RegressionOutput):
    """y = data; d data = grad_scale / m · (y − label)."""
    name = 'LinearRegressionOutput'

    @staticmethod
    def link(y, label):
        return y - label


@register_op
class LogisticRegressionOutput(_RegressionOutput):
    """y = sigmoid(data); d data = grad_scale / m · (y − label)."""
    name = 'LogisticRegressionOutput'

    def transform(self, x, y, req):
        from mxcy._ops import UNARY_OPS
        assign(y, lambda out: _ndarray.unary(x, UNARY_OPS['sigmoid'], out=out), req)

    @staticmethod
    def link(y, label):
        return y - label


@register_op
class MAERegressionOutput(_RegressionOutput):
    """y = data; d data = grad_scale / m · sign(y − label)."""
    name = 'MAERegressionOutput'

    @staticmethod
    def link(y, label):
        return np.sign(y - label)


@register_op
class MakeLoss(OpSpec):
    """y = data; d data = grad_scale (/ batch or / count of elements > valid_thresh)."""
    name = 'MakeLoss'
    params = ParamSchema(
        Param('grad_scale', 'float', 1.0),
        Param('valid_thresh', 'float', 0.0),
        Param('normalization', 'str', 'null', choices=('null', 'batch', 'valid')),
    )
    backward_needs = ('inputs',)

    def forward(self, p, is_train, req, ins, outs, aux):
        assign(outs[0], lambda out: out.__setitem__(slice(None), ins[0]), req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        x = ins[0]

        def grad(out):
            def run(xv, o):
                scale = p.grad_scale
                if p.normalization == 'batch':
                    scale /= xv.shape[0]
                elif p.normalization == 'valid':
                    scale /= max(int((xv > p.valid_thresh).sum()), 1)
                o[...] = scale
            _ndarray.push_numpy(run, [x], [out], 'MakeLoss_backward')
        assign(in_grads[0], grad, req[0])


@register_op
class make_loss(MakeLoss):
    """y = data; d data = 1 (MXNet's parameterless make_loss; MakeLoss scales)."""
    name = 'make_loss'
    params = ParamSchema()
    backward_needs = ()

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        assign(in_grads[0], lambda out: _ndarray.full(out.shape, 1, out=out), req[0])


@register_op
class softmax_cross_entropy(OpSpec):
    """y = Σ_i −log softmax(data_i)[label_i], shape (1,); d data = dy · (softmax − one_hot)."""
    name = 'softmax_cross_entropy'
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'label']

    def infer_shape(self, p, in_shapes):
        shapes = list(in_shapes)
        dshape = shapes[0]
        if dshape is not None:
            if len(dshape) != 2:
                raise self.shape_error('data', '(batch, classes)', dshape)
            shapes[1] = unify_shape(self, 'label', (dshape[0],), shapes[1])
        return shapes, [(1,)], []

    def forward(self, p, is_train, req, ins, outs, aux):
        def value(out):
            def run(x, lab, o):
                z = x - x.max(axis=1, keepdims=True)
                logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
                idx = lab.astype(np.int64)
                o[...] = -logp[np.arange(x.shape[0]), idx].sum()
            _ndarray.push_numpy(run, [ins[0], ins[1]], [out], 'softmax_cross_entropy')
        assign(outs[0], value, req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        def grad(out):
            def run(x, lab, dy, o):
                z = np.exp(x - x.max(axis=1, keepdims=True))
                sm = z / z.sum(axis=1, keepdims=True)
                sm[np.arange(x.shape[0]), lab.astype(np.int64)] -= 1
                o[...] = sm * dy.reshape(())
            _ndarray.push_numpy(run, [ins[0], ins[1], out_grads[0]], [out],
                                'softmax_cross_entropy_backward')
        assign(in_grads[0], grad, req[0])
        _zero_label_grad(req, in_grads)
