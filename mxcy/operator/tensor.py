"""Tensor operators: copies with a new shape (Flatten, Reshape, expand_dims, squeeze,
identity, BlockGrad), Cast, permutations (transpose, SwapAxis, reverse), broadcasting
(broadcast_to/axis/like), repetition (tile, repeat), clip and zeros_like/ones_like, with
MXNet 1.x names, parameters and semantics. The helpers at the top are shared by the sibling
families, which this module registers too (see the import at the end):
`mxcy.operator.indexing` (Concat, stack, SliceChannel, slice, take, pick, one_hot,
Embedding, where), `mxcy.operator.reduce` (sum..., norm, argmax..., topk, sort, softmax),
`mxcy.operator.linalg` (dot, batch_dot), `mxcy.operator.sequence` (Sequence*).

Contract of every operator (see `mxcy.operator._spec`):
* shape inference is forward, and input-to-input where MXNet ties inputs together;
* order-keeping copies run the C copy kernel (in place allowed); the rest run NumPy in
  one engine op per output (``push_numpy``), writing into it; nothing waits;
* ``req`` 'add' accumulates onto the output or gradient, 'null' leaves it untouched;
* backward reads only what ``backward_needs`` declares (shapes are always available);
  index-like arguments get a zero gradient.
"""
import numpy as np

from mxcy import _ndarray
from mxcy._ndarray import infer_reshape
from mxcy._ops import BINARY_OPS, push_permute
from mxcy.operator._compute import push_cast
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import DTypeError, OpSpec, ShapeError, register_op

_ADD = BINARY_OPS['add']


# ---------------------------------------------------------------- shared helpers
def prod(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def check_axis(op, axis, shape, arg='axis', extra=0):
    """`axis` normalised to [0, ndim + extra); an error names the op, parameter and shape."""
    n = len(shape) + extra
    if not -n <= axis < n:
        raise ShapeError(f"{op.name}: parameter '{arg}'={axis} is out of range for input "
                         f"shape {tuple(shape)} (valid: {-n} to {n - 1})")
    return axis + n if axis < 0 else axis


def check_axes(op, axes, shape, arg='axis'):
    out = [check_axis(op, a, shape, arg) for a in axes]
    if len(set(out)) != len(out):
        raise ShapeError(f"{op.name}: parameter '{arg}'={tuple(axes)} repeats an axis")
    return tuple(sorted(out))


def write_copy(dst, src, req):
    """dst (req) src for arrays of one dtype and size: the C copy / add kernels."""
    if req == 'null' or dst is None or dst.size == 0:
        return
    if src.shape != dst.shape:
        src = src.reshape(dst.shape)    # no 0 in dst.shape here: positive dims are literal
    if req == 'add':
        _ndarray.binary(dst, src, _ADD, out=dst)
    else:
        dst[:] = src


def push_value(fn, inputs, out, req, name):
    """out (req) fn(*input views), fn returning a NumPy value broadcastable to out."""
    if req == 'null' or out is None:
        return
    add = req == 'add'

    def run(*views):
        o = views[-1]
        v = fn(*views[:-1])
        if add:
            np.add(o, v, out=o, casting='unsafe')
        else:
            np.copyto(o, v, casting='unsafe')
    _ndarray.push_numpy(run, list(inputs), [out], name)


def push_scatter(fn, inputs, out, req, name):
    """out (req) a scatter: fn(*input views, acc) adds into acc (zeroed first unless 'add')."""
    if req == 'null' or out is None:
        return
    add = req == 'add'

    def run(*views):
        o = views[-1]
        if not add:
            o[...] = 0
        fn(*views[:-1], o)
    _ndarray.push_numpy(run, list(inputs), [out], name)


def zero_grads(req, in_grads, which=None):
    """Write zeros into the gradients (all, or those indexed by `which`); 'add' adds 0."""
    for i, (g, r) in enumerate(zip(in_grads, req)):
        if (which is None or i in which) and g is not None and r in ('write', 'inplace'):
            _ndarray.full(g.shape, 0, out=g)


def unify_types(op, p, in_types, idxs):
    """The one dtype of the arguments at `idxs` (None if none known); filled in."""
    names = op.arguments(p)
    known = next((in_types[i] for i in idxs if in_types[i] is not None), None)
    types = list(in_types)
    for i in idxs:
        if types[i] is not None and types[i] != known:
            raise DTypeError(f"{op.name}: argument '{names[i]}' has dtype {types[i]}, "
                             f"expected {known} (the same dtype as '{names[idxs[0]]}')")
        types[i] = known
    return types, known


def fmt_shape(shape, axis, mark='*'):
    """A shape with one axis shown as `mark`, for 'only this axis may differ' errors."""
    return '(' + ', '.join(mark if i == axis else str(d) for i, d in enumerate(shape)) + ')'


class _ZeroGrad:
    """Mixin: the gradient of every argument is zero (MXNet's MakeZeroGradNodes)."""
    backward_needs = ()

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        zero_grads(req, in_grads)

    def grad_graph(self, p, out_grads, ins, outs):
        return [None] * len(ins)


# ---------------------------------------------------------------- copies with a new shape
class _CopyOp(OpSpec):
    """Forward copies data (same element order) into the output; backward copies back."""
    backward_needs = ('out_grads',)
    inplace_ok = True

    def forward(self, p, is_train, req, ins, outs, aux):
        write_copy(outs[0], ins[0], req[0])

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        write_copy(in_grads[0], out_grads[0], req[0])

    def grad_graph(self, p, out_grads, ins, outs):
        return [out_grads[0].reshape(ins[0].shape)]


@register_op
class Flatten(_CopyOp):
    """(N, d1, d2, ...) -> (N, d1·d2·...); a 1-D (N,) becomes (N, 1)."""
    name = 'Flatten'
    aliases = ('flatten',)

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        if len(s) == 0:
            raise self.shape_error('data', 'at least 1 dimension', tuple(s))
        return [tuple(s)], [(s[0], prod(s[1:]))], []


@register_op
class Reshape(_CopyOp):
    """A copy with a new shape. ``shape`` takes MXNet's special values: 0 copies the input
    dim, -1 infers one dim, -2 copies the remaining dims, -3 merges two dims, -4 splits one
    into the next two values; ``reverse`` matches them from the right. The deprecated
    ``target_shape`` (0 = infer, ``keep_highest`` keeps dim 0) works when shape is ()."""
    name = 'Reshape'
    aliases = ('reshape',)
    params = ParamSchema(
        Param('shape', 'shape', ()),
        Param('reverse', 'bool', False),
        Param('target_shape', 'shape', ()),
        Param('keep_highest', 'bool', False),
    )

    def _target(self, p, src):
        if p.shape:
            try:
                return infer_reshape(src, tuple(p.shape), p.reverse)
            except (ValueError, TypeError) as e:
                raise self.shape_error('data', f'a shape that fits shape={tuple(p.shape)}',
                                       src, str(e)) from None
        if not p.target_shape and prod(src) == 1 and p.shape == ():
            return ()       # a zero-dim result (mx.np: a reduction to a scalar, x.reshape(()))
        if not p.target_shape:
            raise ValueError(f"{self.name}: parameter 'shape' is required (got shape=() "
                             "and no target_shape)")
        out = list(p.target_shape)
        start = 1 if p.keep_highest else 0
        if p.keep_highest:
            out[0] = src[0]
        zeros = [i for i in range(start, len(out)) if out[i] == 0]
        if len(zeros) == 1:
            out[zeros[0]] = 1
            known = prod(out)
            out[zeros[0]] = prod(src) // known if known else 0
        if prod(out) != prod(src):
            raise self.shape_error('data', f'{prod(out)} elements for target_shape='
                                   f'{tuple(p.target_shape)}', src)
        return tuple(out)

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        return [tuple(s)], [self._target(p, tuple(s))], []


@register_op
class expand_dims(_CopyOp):
    """Insert a size-1 axis at ``axis`` (in [-ndim-1, ndim])."""
    name = 'expand_dims'
    params = ParamSchema(Param('axis', 'int'))

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        s = tuple(s)
        ax = check_axis(self, p.axis, s, extra=1)
        return [s], [s[:ax] + (1,) + s[ax:]], []


@register_op
class squeeze(_CopyOp):
    """Remove size-1 axes (all of them, or those in ``axis``); never returns 0-d: an
    all-ones shape gives (1,)."""
    name = 'squeeze'
    params = ParamSchema(Param('axis', 'shape', None, optional=True))

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        s = tuple(s)
        if p.axis is None:
            axes = tuple(i for i, d in enumerate(s) if d == 1)
        else:
            axes = check_axes(self, p.axis, s)
            for a in axes:
                if s[a] != 1:
                    raise self.shape_error('data', f'size 1 on axis {a}', s,
                                           f'squeeze axis={tuple(p.axis)}')
        return [s], [tuple(d for i, d in enumerate(s) if i not in axes) or (1,)], []


@register_op
class identity(_CopyOp):
    """y = x (a copy); the gradient passes through."""
    name = 'identity'
    aliases = ('_copy',)


@register_op
class BlockGrad(_ZeroGrad, _CopyOp):
    """y = x in forward; the gradient is zero (it stops here)."""
    name = 'BlockGrad'
    aliases = ('stop_gradient',)


@register_op
class Cast(OpSpec):
    """Convert to ``dtype`` (float to int truncates toward zero); the gradient casts back."""
    name = 'Cast'
    aliases = ('cast',)
    params = ParamSchema(Param('dtype', 'dtype'))
    backward_needs = ('out_grads',)

    def infer_type(self, p, in_types):
        return [in_types[0]], [p.dtype], []

    def forward(self, p, is_train, req, ins, outs, aux):
        if ins[0].dtype == outs[0].dtype:
            write_copy(outs[0], ins[0], req[0])
        else:
            push_cast(ins[0], outs[0], req[0], 'Cast')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        if in_grads[0] is not None and in_grads[0].dtype == out_grads[0].dtype:
            write_copy(in_grads[0], out_grads[0], req[0])
        else:
            push_cast(out_grads[0], in_grads[0], req[0], 'Cast_backward')


# ---------------------------------------------------------------- permutations
class _PermuteOp(OpSpec):
    """Output = input with axes permuted by self._perm(p, shape); backward inverts it."""
    backward_needs = ('out_grads',)

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        s = tuple(s)
        return [s], [tuple(s[a] for a in self._perm(p, s))], []

    def infer_shape_backward(self, p, in_shapes, out_shapes):
        """The input is the output with the inverse permutation (MXNet infers it too)."""
        out = out_shapes[0]
        if in_shapes[0] is not None or out is None:
            return in_shapes
        return [tuple(out[int(a)] for a in np.argsort(self._perm(p, out)))]

    def forward(self, p, is_train, req, ins, outs, aux):
        perm = self._perm(p, ins[0].shape)
        if req[0] in ('write', 'inplace'):
            push_permute(ins[0], outs[0], perm, self.name)
        else:
            push_value(lambda x: x.transpose(perm), ins, outs[0], req[0], self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        inv = tuple(int(a) for a in np.argsort(self._perm(p, ins[0].shape)))
        if req[0] in ('write', 'inplace'):
            push_permute(out_grads[0], in_grads[0], inv, self.name + '_backward')
        else:
            push_value(lambda dy: dy.transpose(inv), out_grads, in_grads[0], req[0],
                       self.name + '_backward')

    def grad_graph(self, p, out_grads, ins, outs):
        inv = tuple(int(a) for a in np.argsort(self._perm(p, ins[0].shape)))
        return [out_grads[0].transpose(inv)]


@register_op
class transpose(_PermuteOp):
    """Permute the axes by ``axes`` (reverse them when axes is ())."""
    name = 'transpose'
    params = ParamSchema(Param('axes', 'shape', (), optional=True))

    def _perm(self, p, shape):
        if not p.axes:
            return tuple(range(len(shape)))[::-1]
        if len(p.axes) != len(shape):
            raise self.shape_error('data', f'{len(p.axes)} dimensions for axes={p.axes}',
                                   shape)
        perm = tuple(check_axis(self, a, shape, 'axes') for a in p.axes)
        if sorted(perm) != list(range(len(shape))):
            raise ValueError(f"{self.name}: parameter 'axes'={tuple(p.axes)} is not a "
                             f"permutation of 0..{len(shape) - 1}")
        return perm


@register_op
class SwapAxis(_PermuteOp):
    """Interchange axes ``dim1`` and ``dim2``."""
    name = 'SwapAxis'
    aliases = ('swapaxes',)
    params = ParamSchema(Param('dim1', 'int', 0), Param('dim2', 'int', 0))

    def _perm(self, p, shape):
        d1 = check_axis(self, p.dim1, shape, 'dim1')
        d2 = check_axis(self, p.dim2, shape, 'dim2')
        perm = list(range(len(shape)))
        perm[d1], perm[d2] = perm[d2], perm[d1]
        return tuple(perm)


@register_op
class reverse(OpSpec):
    """Reverse the order of elements along ``axis`` (an int or a tuple)."""
    name = 'reverse'
    aliases = ('flip',)
    params = ParamSchema(Param('axis', 'shape'))
    backward_needs = ('out_grads',)

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is not None:
            check_axes(self, p.axis, s)
        return [s], [s], []

    def forward(self, p, is_train, req, ins, outs, aux):
        axes = check_axes(self, p.axis, ins[0].shape)
        push_value(lambda x: np.flip(x, axes), ins, outs[0], req[0], 'reverse')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        axes = check_axes(self, p.axis, ins[0].shape)
        push_value(lambda dy: np.flip(dy, axes), out_grads, in_grads[0], req[0],
                   'reverse_backward')


# ---------------------------------------------------------------- broadcasting, repetition
def sum_to(dy, shape):
    """Sum a broadcast gradient (same ndim) back to `shape` (NumPy, inside an op)."""
    axes = tuple(i for i, (g, s) in enumerate(zip(dy.shape, shape)) if s == 1 and g != 1)
    return dy.sum(axis=axes, keepdims=True) if axes else dy


class _BroadcastOp(OpSpec):
    """Output = data broadcast to self._target(p, shapes); backward sums back."""
    backward_needs = ('out_grads',)

    def infer_shape(self, p, in_shapes):
        shapes = [None if s is None else tuple(s) for s in in_shapes]
        if any(s is None for s in shapes):
            return shapes, [None], []
        target = self._target(p, shapes)
        src = shapes[0]
        if len(src) != len(target) or any(s != t and s != 1 for s, t in zip(src, target)):
            raise self.shape_error(self.arguments(p)[0],
                                   f'a shape broadcastable to {target} (same number of '
                                   'dimensions, each equal or 1)', src)
        return shapes, [target], []

    def forward(self, p, is_train, req, ins, outs, aux):
        shape = outs[0].shape
        push_value(lambda x: np.broadcast_to(x, shape), ins[:1], outs[0], req[0], self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        shape = ins[0].shape
        push_value(lambda dy: sum_to(dy, shape), out_grads, in_grads[0], req[0],
                   self.name + '_backward')
        zero_grads(req, in_grads, which=(1,))

    def grad_graph(self, p, out_grads, ins, outs):
        from mxcy.operator.elemwise import sum_to_shape
        return [sum_to_shape(out_grads[0], ins[0].shape)] + [None] * (len(ins) - 1)


@register_op
class broadcast_to(_BroadcastOp):
    """Broadcast size-1 dims to ``shape`` (a 0 in shape keeps that input dim)."""
    name = 'broadcast_to'
    params = ParamSchema(Param('shape', 'shape', ()))

    def _target(self, p, shapes):
        src = shapes[0]
        if len(p.shape) != len(src):
            raise self.shape_error('data', f'{len(p.shape)} dimensions (shape={p.shape})',
                                   src)
        return tuple(t if t else s for t, s in zip(p.shape, src))


@register_op
class broadcast_axis(_BroadcastOp):
    """Broadcast the size-1 axes ``axis`` to the sizes ``size``."""
    name = 'broadcast_axis'
    aliases = ('broadcast_axes',)
    params = ParamSchema(Param('axis', 'shape', ()), Param('size', 'shape', ()))

    def _target(self, p, shapes):
        if len(p.axis) != len(p.size):
            raise ValueError(f"{self.name}: parameters axis={p.axis} and size={p.size} "
                             "must have the same length")
        target = list(shapes[0])
        for a, n in zip(p.axis, p.size):
            a = check_axis(self, a, shapes[0])
            if shapes[0][a] != 1:
                raise self.shape_error('data', f'size 1 on axis {a}', shapes[0])
            target[a] = n
        return tuple(target)


@register_op
class broadcast_like(_BroadcastOp):
    """Broadcast lhs to rhs's shape, or only ``lhs_axes`` of lhs to the sizes of rhs's
    ``rhs_axes``; rhs gets a zero gradient."""
    name = 'broadcast_like'
    params = ParamSchema(Param('lhs_axes', 'shape', None, optional=True),
                         Param('rhs_axes', 'shape', None, optional=True))

    def arguments(self, p):
        return ['lhs', 'rhs']

    def _target(self, p, shapes):
        lhs, rhs = shapes
        if p.lhs_axes is None and p.rhs_axes is None:
            return rhs
        if p.lhs_axes is None or p.rhs_axes is None or len(p.lhs_axes) != len(p.rhs_axes):
            raise ValueError(f"{self.name}: give lhs_axes and rhs_axes of the same length, "
                             f"got {p.lhs_axes} and {p.rhs_axes}")
        target = list(lhs)
        for la, ra in zip(p.lhs_axes, p.rhs_axes):
            target[check_axis(self, la, lhs, 'lhs_axes')] = \
                rhs[check_axis(self, ra, rhs, 'rhs_axes')]
        return tuple(target)


@register_op
class tile(OpSpec):
    """Repeat the whole array ``reps`` times per axis (NumPy's tile rules: the shorter of
    reps and the shape is padded with leading 1s)."""
    name = 'tile'
    params = ParamSchema(Param('reps', 'shape'))
    backward_needs = ('out_grads',)

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        if any(r < 0 for r in p.reps):
            raise ValueError(f"{self.name}: parameter 'reps' must be non-negative, got "
                             f"{p.reps}")
        src, reps = self._padded(p, tuple(s))
        return [tuple(s)], [tuple(a * r for a, r in zip(src, reps)) or (1,)], []

    def _padded(self, p, s):
        nd = max(len(s), len(p.reps))
        return (1,) * (nd - len(s)) + s, (1,) * (nd - len(p.reps)) + tuple(p.reps)

    def forward(self, p, is_train, req, ins, outs, aux):
        reps = tuple(p.reps)
        push_value(lambda x: np.tile(x, reps).reshape(outs[0].shape), ins, outs[0], req[0],
                   'tile')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        src, reps = self._padded(p, ins[0].shape)
        split = tuple(d for pair in zip(reps, src) for d in pair)   # (r0, s0, r1, s1, ...)
        axes = tuple(range(0, 2 * len(src), 2))
        push_value(lambda dy: dy.reshape(split).sum(axis=axes).reshape(ins[0].shape),
                   out_grads, in_grads[0], req[0], 'tile_backward')


@register_op
class repeat(OpSpec):
    """Repeat each element ``repeats`` times along ``axis`` (the flattened array when
    axis is None)."""
    name = 'repeat'
    params = ParamSchema(Param('repeats', 'int'), Param('axis', 'int', None, optional=True))
    backward_needs = ('out_grads',)

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        s = tuple(s)
        if p.repeats < 0:
            raise ValueError(f"{self.name}: parameter 'repeats' must be >= 0, got "
                             f"{p.repeats}")
        if p.axis is None:
            return [s], [(prod(s) * p.repeats,)], []
        ax = check_axis(self, p.axis, s)
        return [s], [s[:ax] + (s[ax] * p.repeats,) + s[ax + 1:]], []

    def forward(self, p, is_train, req, ins, outs, aux):
        ax = None if p.axis is None else check_axis(self, p.axis, ins[0].shape)
        r = p.repeats
        push_value(lambda x: np.repeat(x, r, axis=ax), ins, outs[0], req[0], 'repeat')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        s, r = ins[0].shape, p.repeats
        if p.axis is None:
            split, ax = (prod(s), r), 1
        else:
            a = check_axis(self, p.axis, s)
            split, ax = s[:a] + (s[a], r) + s[a + 1:], a + 1
        push_value(lambda dy: dy.reshape(split).sum(axis=ax).reshape(s), out_grads,
                   in_grads[0], req[0], 'repeat_backward')


# ---------------------------------------------------------------- clip, fills
@register_op
class clip(OpSpec):
    """Clip to [a_min, a_max]; the gradient passes where a_min <= x <= a_max."""
    name = 'clip'
    params = ParamSchema(Param('a_min', 'float'), Param('a_max', 'float'))
    backward_needs = ('out_grads', 'inputs')
    inplace_ok = True

    def forward(self, p, is_train, req, ins, outs, aux):
        lo, hi = p.a_min, p.a_max
        push_value(lambda x: np.clip(x, np.array(lo).astype(x.dtype),
                                     np.array(hi).astype(x.dtype)),
                   ins, outs[0], req[0], 'clip')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        lo, hi = p.a_min, p.a_max
        push_value(lambda x, dy: np.where((x >= lo) & (x <= hi), dy, 0),
                   [ins[0], out_grads[0]], in_grads[0], req[0], 'clip_backward')


class _FillLike(_ZeroGrad, OpSpec):
    """An array of data's shape and dtype filled with self.value; zero gradient."""
    value = 0

    def forward(self, p, is_train, req, ins, outs, aux):
        if req[0] in ('write', 'inplace'):
            _ndarray.full(outs[0].shape, self.value, out=outs[0])
        elif req[0] == 'add' and self.value:
            _ndarray.binary(outs[0], self.value, _ADD, out=outs[0])


@register_op
class zeros_like(_FillLike):
    name = 'zeros_like'
    __doc__ = 'Zeros of the shape and dtype of data.'


@register_op
class ones_like(_FillLike):
    name = 'ones_like'
    value = 1
    __doc__ = 'Ones of the shape and dtype of data.'


# The sibling families register on import, so `import mxcy.operator.tensor` declares them
# all (kept last: they import the helpers above).
from mxcy.operator import indexing, linalg, reduce, sequence  # noqa: E402,F401
