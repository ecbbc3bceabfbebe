"""Indexing operators: joining and splitting (Concat, stack, SliceChannel), slicing
(slice, slice_axis), gathers (take, pick, one_hot, Embedding) and selection (where),
MXNet 1.x semantics.

* Concat/stack take ``num_args`` inputs named arg0, arg1, ...; SliceChannel's outputs are
  output0, output1, ...; stack infers every argument's shape from any known one;
* index arrays may have any dtype (float indices truncate toward zero) and get a zero
  gradient; take/pick clamp out-of-range indices ('clip') or wrap them ('wrap'); take's
  'raise' fails the op (the error is raised at the next wait); Embedding clamps;
* backward of a gather scatter-adds the head gradient (repeated indices accumulate).
"""
import numpy as np

from mxcy import _ndarray
from mxcy._ops import FLOAT_DTYPES, INDEX_DTYPES, push_pick, push_rows
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import OpSpec, register_op, unify_shape
from mxcy.operator.tensor import (check_axis, fmt_shape, prod, push_scatter, push_value,
                                  unify_types, zero_grads, _ZeroGrad)


# ---------------------------------------------------------------- joining and splitting
def _axis_key(ndim, axis, index):
    """The NumPy key selecting `index` (an int or a slice) on `axis`."""
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


class _VariadicOp(OpSpec):
    """``num_args`` inputs named arg0, arg1, ... (MXNet's Concat/stack naming)."""
    variadic = 'num_args'
    backward_needs = ('out_grads',)

    def arguments(self, p):
        if p.num_args < 1:
            raise ValueError(f"{self.name}: parameter 'num_args' must be >= 1, got "
                             f"{p.num_args}")
        return [f'arg{i}' for i in range(p.num_args)]

    def infer_type(self, p, in_types):
        types, known = unify_types(self, p, in_types, range(len(in_types)))
        return types, [known], []


@register_op
class Concat(_VariadicOp):
    """Join the inputs along ``dim`` (default 1); the other dims must match."""
    name = 'Concat'
    aliases = ('concat',)
    params = ParamSchema(Param('num_args', 'int'), Param('dim', 'int', 1))

    def infer_shape(self, p, in_shapes):
        shapes = [None if s is None else tuple(s) for s in in_shapes]
        self.arguments(p)
        ref_i = next((i for i, s in enumerate(shapes) if s is not None), None)
        if ref_i is None:
            return shapes, [None], []
        ref = shapes[ref_i]
        if not ref:
            raise self.shape_error(f'arg{ref_i}', 'at least 1 dimension', ref)
        ax = check_axis(self, p.dim, ref, 'dim')
        rest = None         # the dims other than `dim`, one shape for all (0 = unknown)
        for i, s in enumerate(shapes):
            if s is None:
                continue
            try:
                if len(s) != len(ref):
                    raise ValueError
                rest = unify_shape(self, f'arg{i}', rest, s[:ax] + s[ax + 1:])
            except ValueError:
                raise self.shape_error(f'arg{i}', fmt_shape(ref, ax), s,
                                       f'only dim {ax} may differ from arg{ref_i}') from None
        # as MXNet 1.x: an unknown input gets the common dims and 0 (unknown) along `dim`;
        # the output's `dim` is known once every input's is
        shapes = [rest[:ax] + (0 if s is None else s[ax],) + rest[ax:] for s in shapes]
        sizes = [s[ax] for s in shapes]
        total = sum(sizes) if all(sizes) else 0
        return shapes, [rest[:ax] + (total,) + rest[ax:]], []

    def infer_shape_backward(self, p, in_shapes, out_shapes):
        """From a known output: the common dims for every input, and the size along `dim`
        of the one input that lacks it (the output's minus the others')."""
        out = out_shapes[0]
        if out is None or not out:
            return in_shapes
        ax = check_axis(self, p.dim, out, 'dim')
        shapes = [unify_shape(self, f'arg{i}', out[:ax] + (0,) + out[ax + 1:],
                              None if s is None else s[:ax] + (0,) + s[ax + 1:])
                  for i, s in enumerate(in_shapes)]
        shapes = [s[:ax] + ((0 if old is None else old[ax]),) + s[ax + 1:]
                  for s, old in zip(shapes, in_shapes)]
        unknown = [i for i, s in enumerate(shapes) if not s[ax]]
        if len(unknown) == 1 and out[ax]:
            size = out[ax] - sum(s[ax] for s in shapes)
            if size < 1:
                raise self.shape_error(f'arg{unknown[0]}', f'a positive size along dim {ax}',
                                       shapes[unknown[0]],
                                       f'the output has {out[ax]} there, the other inputs '
                                       f'{out[ax] - size}')
            i = unknown[0]
            shapes[i] = shapes[i][:ax] + (size,) + shapes[i][ax + 1:]
        return shapes

    def _keys(self, p, shapes):
        ax = check_axis(self, p.dim, shapes[0], 'dim')
        keys, start = [], 0
        for s in shapes:
            keys.append(_axis_key(len(s), ax, slice(start, start + s[ax])))
            start += s[ax]
        return keys

    def forward(self, p, is_train, req, ins, outs, aux):
        if req[0] == 'null':
            return
        keys = self._keys(p, [x.shape for x in ins])
        add = req[0] == 'add'

        def run(*views):
            o = views[-1]
            for key, x in zip(keys, views[:-1]):
                if add:
                    o[key] += x
                else:
                    o[key] = x
        _ndarray.push_numpy(run, list(ins), [outs[0]], 'Concat')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        keys = self._keys(p, [x.shape for x in ins])
        for key, g, r in zip(keys, in_grads, req):
            push_value(lambda dy, key=key: dy[key], out_grads, g, r, 'Concat_backward')


@register_op
class stack(_VariadicOp):
    """Join same-shape inputs along a new axis ``axis`` (in [-ndim-1, ndim])."""
    name = 'stack'
    params = ParamSchema(Param('num_args', 'int'), Param('axis', 'int', 0))

    def infer_shape(self, p, in_shapes):
        self.arguments(p)
        shape = None
        for i, s in enumerate(in_shapes):
            shape = unify_shape(self, f'arg{i}', shape, None if s is None else tuple(s))
        if shape is None:
            return list(in_shapes), [None], []
        ax = check_axis(self, p.axis, shape, extra=1)
        return [shape] * len(in_shapes), [shape[:ax] + (len(in_shapes),) + shape[ax:]], []

    def forward(self, p, is_train, req, ins, outs, aux):
        ax = check_axis(self, p.axis, ins[0].shape, extra=1)
        push_value(lambda *xs: np.stack(xs, axis=ax), ins, outs[0], req[0], 'stack')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        ax = check_axis(self, p.axis, ins[0].shape, extra=1)
        nd = len(ins[0].shape) + 1
        for i, (g, r) in enumerate(zip(in_grads, req)):
            push_value(lambda dy, i=i: dy[_axis_key(nd, ax, i)], out_grads, g, r,
                       'stack_backward')


@register_op
class SliceChannel(OpSpec):
    """Split ``axis`` into ``num_outputs`` equal parts, outputs output0, output1, ...;
    with ``squeeze_axis`` the axis must have size num_outputs and is removed."""
    name = 'SliceChannel'
    aliases = ('split',)
    params = ParamSchema(Param('num_outputs', 'int'), Param('axis', 'int', 1),
                         Param('squeeze_axis', 'bool', False))
    backward_needs = ('out_grads',)

    def outputs(self, p):
        if p.num_outputs < 1:
            raise ValueError(f"{self.name}: parameter 'num_outputs' must be >= 1, got "
                             f"{p.num_outputs}")
        return [f'output{i}' for i in range(p.num_outputs)]

    def _split(self, p, s):
        """(axis, part size, part shape) of input shape `s`."""
        ax = check_axis(self, p.axis, s)
        n = p.num_outputs
        if s[ax] % n:
            raise self.shape_error('data', f'axis {ax} size divisible by num_outputs={n}',
                                   s)
        if p.squeeze_axis and s[ax] != n:
            raise self.shape_error('data', f'axis {ax} of size num_outputs={n}', s,
                                   'squeeze_axis=True')
        step = s[ax] // n
        part = s[:ax] + (() if p.squeeze_axis else (step,)) + s[ax + 1:]
        return ax, step, part or (1,)

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        n = len(self.outputs(p))
        if s is None:
            return [None], [None] * n, []
        s = tuple(s)
        return [s], [self._split(p, s)[2]] * n, []

    def forward(self, p, is_train, req, ins, outs, aux):
        ax, step, _ = self._split(p, ins[0].shape)
        nd = len(ins[0].shape)
        live = [(i, o, r) for i, (o, r) in enumerate(zip(outs, req)) if r != 'null']
        if not live:
            return

        def run(x, *views):
            for (i, _, r), o in zip(live, views):
                part = x[_axis_key(nd, ax, slice(i * step, (i + 1) * step))].reshape(o.shape)
                if r == 'add':
                    o += part
                else:
                    o[...] = part
        _ndarray.push_numpy(run, [ins[0]], [o for _, o, _ in live], 'SliceChannel')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        ax, step, _ = self._split(p, ins[0].shape)
        s = ins[0].shape
        part = s[:ax] + (step,) + s[ax + 1:]
        push_value(lambda *dys: np.concatenate([d.reshape(part) for d in dys], axis=ax),
                   out_grads, in_grads[0], req[0], 'SliceChannel_backward')


# ---------------------------------------------------------------- slicing
class _SliceOp(OpSpec):
    """Output = data[self._key(p, shape)]; backward scatters into a zero gradient."""
    backward_needs = ('out_grads',)

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        s = tuple(s)
        key = self._key(p, s)
        return [s], [np.broadcast_to(np.int8(0), s)[key].shape], []

    def forward(self, p, is_train, req, ins, outs, aux):
        key = self._key(p, ins[0].shape)
        push_value(lambda x: x[key], ins, outs[0], req[0], self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        key = self._key(p, ins[0].shape)

        def scatter(dy, acc):
            acc[key] += dy
        push_scatter(scatter, out_grads, in_grads[0], req[0], self.name + '_backward')


@register_op
class SliceOp(_SliceOp):
    """data[begin[0]:end[0]:step[0], ...] with Python's slice rules (None = default);
    axes past len(begin) are kept whole."""
    name = 'slice'
    aliases = ('crop',)
    params = ParamSchema(Param('begin', 'shape'), Param('end', 'shape'),
                         Param('step', 'shape', (), optional=True))

    def _key(self, p, s):
        begin, end = tuple(p.begin), tuple(p.end)
        step = tuple(p.step) if p.step else (None,) * len(begin)
        if len(end) != len(begin) or len(step) != len(begin):
            raise ValueError(f"{self.name}: parameters begin={begin}, end={end} and "
                             f"step={tuple(p.step)} must have the same length")
        if len(begin) > len(s):
            raise self.shape_error('data', f'at least {len(begin)} dimensions for '
                                   f'begin={begin}', s)
        if any(st == 0 for st in step):
            raise ValueError(f"{self.name}: parameter 'step' must not contain 0, got {step}")
        return tuple(slice(b, e, st) for b, e, st in zip(begin, end, step))


@register_op
class SliceAxis(_SliceOp):
    """data[..., begin:end, ...] on ``axis``; negative values count from the end, end=None
    is the axis size; the range must be non-empty and inside the axis."""
    name = 'slice_axis'
    params = ParamSchema(Param('axis', 'int'), Param('begin', 'int'),
                         Param('end', 'int', None, optional=True))

    def _key(self, p, s):
        ax = check_axis(self, p.axis, s)
        n = s[ax]
        b = p.begin + n if p.begin < 0 else p.begin
        e = n if p.end is None else (p.end + n if p.end < 0 else p.end)
        if not 0 <= b < e <= n:
            raise self.shape_error('data', f'axis {ax} holding begin={p.begin}, end={p.end} '
                                   'as a non-empty range', s)
        return _axis_key(len(s), ax, slice(b, e))


# ---------------------------------------------------------------- gathers
def as_indices(idx):
    """Indices as int64, truncating floats toward zero (MXNet's cast)."""
    return np.trunc(idx).astype(np.int64) if idx.dtype.kind == 'f' else idx.astype(np.int64)


def fix_indices(idx, n, mode, op='take', axis=0):
    idx = as_indices(idx)
    if mode == 'wrap':
        return np.mod(idx, n) if n else idx
    if mode == 'raise':
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            raise IndexError(f"{op}: index {int(idx[bad].flat[0])} is out of bounds for "
                             f"axis {axis} with size {n} (mode='raise')")
        return idx
    return np.clip(idx, 0, max(n - 1, 0))


class _GatherTypes:
    """Output dtype = first argument's; the index argument may have any dtype."""

    def infer_type(self, p, in_types):
        return list(in_types), [in_types[0]], []


@register_op
class take(_GatherTypes, OpSpec):
    """Slices of `a` along ``axis`` at `indices`: shape a.shape[:axis] + indices.shape +
    a.shape[axis+1:]; backward scatter-adds into `a`'s gradient."""
    name = 'take'
    params = ParamSchema(Param('axis', 'int', 0),
                         Param('mode', 'str', 'clip', choices=('clip', 'wrap', 'raise')))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['a', 'indices']

    def infer_shape(self, p, in_shapes):
        a, idx = (None if s is None else tuple(s) for s in in_shapes)
        if a is None or idx is None:
            return [a, idx], [None], []
        ax = check_axis(self, p.axis, a)
        if a[ax] == 0 and prod(idx):
            raise self.shape_error('a', f'a non-empty axis {ax}', a)
        return [a, idx], [a[:ax] + idx + a[ax + 1:]], []

    def forward(self, p, is_train, req, ins, outs, aux):
        ax = check_axis(self, p.axis, ins[0].shape)
        n, mode = ins[0].shape[ax], p.mode
        width = prod(ins[0].shape[1:])
        if (ax == 0 and mode == 'clip' and req[0] in ('write', 'inplace') and n and width
                and ins[1].size and np.dtype(ins[1].dtype) in INDEX_DTYPES):
            # rows of a 2-D view: Embedding's C gather (same clip of the indices), written
            # straight into the output
            push_rows('gather', ins[1], ins[0].reshape((n, width)),
                      outs[0].reshape((ins[1].size, width)))
            return
        push_value(lambda x, i: np.take(x, fix_indices(i, n, mode, 'take', ax), axis=ax)
                   .reshape(outs[0].shape), ins, outs[0], req[0], 'take')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        a = ins[0].shape
        ax = check_axis(self, p.axis, a)
        n, mode = a[ax], p.mode
        width = prod(a[1:])
        if (ax == 0 and mode == 'clip' and req[0] in ('write', 'add') and n and width
                and ins[1].size and np.dtype(in_grads[0].dtype) in FLOAT_DTYPES
                and np.dtype(ins[1].dtype) in INDEX_DTYPES):
            # rows of a 2-D view: Embedding's C scatter-add (same clip of the indices)
            push_rows('scatter', ins[1], in_grads[0].reshape((n, width)),
                      out_grads[0].reshape((ins[1].size, width)), req[0] == 'write')
            zero_grads(req, in_grads, which=(1,))
            return

        def scatter(idx, dy, acc):
            flat = fix_indices(idx, n, mode, 'take', ax).reshape(-1)
            dy = np.moveaxis(dy.reshape(a[:ax] + (flat.size,) + a[ax + 1:]), ax, 0)
            np.add.at(np.moveaxis(acc, ax, 0), flat, dy)
        push_scatter(scatter, [ins[1], out_grads[0]], in_grads[0], req[0], 'take_backward')
        zero_grads(req, in_grads, which=(1,))


@register_op
class pick(_GatherTypes, OpSpec):
    """out[i, j] = data[i, index[i, j], j] along ``axis``: `index` has data's shape without
    the axis (or with it as size 1); backward adds the head gradient at the picked spots."""
    name = 'pick'
    params = ParamSchema(Param('axis', 'int', -1, optional=True),
                         Param('keepdims', 'bool', False),
                         Param('mode', 'str', 'clip', choices=('clip', 'wrap')))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'index']

    def infer_shape(self, p, in_shapes):
        if p.axis is None:
            raise ValueError(f"{self.name}: parameter 'axis'=None (picking from the "
                             "flattened input) is not supported; give an axis")
        d, idx = (None if s is None else tuple(s) for s in in_shapes)
        if d is None:
            return [d, idx], [None], []
        ax = check_axis(self, p.axis, d)
        reduced, kept = d[:ax] + d[ax + 1:], d[:ax] + (1,) + d[ax + 1:]
        out = kept if p.keepdims else (reduced or (1,))
        if idx is None:
            idx = out
        elif idx not in (reduced, kept, out):
            raise self.shape_error('index', reduced, idx, f'data {d} without axis {ax}')
        return [d, idx], [out], []

    def _kept(self, p, shape):
        ax = check_axis(self, p.axis, shape)
        return ax, shape[:ax] + (1,) + shape[ax + 1:]

    @staticmethod
    def _kernel_fits(x, idx):
        """The C kernel takes float32/float64 data with a non-empty axis and any
        float/int index dtype; anything else goes through NumPy."""
        return np.dtype(x.dtype) in FLOAT_DTYPES and np.dtype(idx.dtype) in INDEX_DTYPES \
            and x.size > 0

    def forward(self, p, is_train, req, ins, outs, aux):
        ax, kept = self._kept(p, ins[0].shape)
        n, mode = ins[0].shape[ax], p.mode
        if req[0] in ('write', 'inplace') and self._kernel_fits(ins[0], ins[1]):
            push_pick(ins[0], ins[1], outs[0], ax, mode == 'wrap')
            return
        push_value(lambda x, i: np.take_along_axis(
            x, fix_indices(i, n, mode).reshape(kept), axis=ax).reshape(outs[0].shape),
            ins, outs[0], req[0], 'pick')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        ax, kept = self._kept(p, ins[0].shape)
        n, mode = ins[0].shape[ax], p.mode
        if req[0] in ('write', 'inplace', 'add') and self._kernel_fits(ins[0], ins[1]):
            push_pick(in_grads[0], ins[1], out_grads[0], ax, mode == 'wrap', backward=True,
                      add=req[0] == 'add')
            zero_grads(req, in_grads, which=(1,))
            return

        def scatter(idx, dy, acc):
            # NOTE: one index per position along the axis, so no index repeats
            i = fix_indices(idx, n, mode).reshape(kept)
            vals = np.take_along_axis(acc, i, axis=ax) + dy.reshape(kept)
            np.put_along_axis(acc, i, vals, axis=ax)
        push_scatter(scatter, [ins[1], out_grads[0]], in_grads[0], req[0], 'pick_backward')
        zero_grads(req, in_grads, which=(1,))


@register_op
class one_hot(_ZeroGrad, OpSpec):
    """indices.shape + (depth,): ``on_value`` at each index, ``off_value`` elsewhere
    (out-of-range indices give a row of off_value); output dtype ``dtype``."""
    name = 'one_hot'
    params = ParamSchema(Param('depth', 'int'), Param('on_value', 'float', 1.0),
                         Param('off_value', 'float', 0.0), Param('dtype', 'dtype', 'float32'))

    def arguments(self, p):
        return ['indices']

    def infer_shape(self, p, in_shapes):
        if p.depth < 0:
            raise ValueError(f"{self.name}: parameter 'depth' must be >= 0, got {p.depth}")
        s = in_shapes[0]
        return [s], [None if s is None else tuple(s) + (p.depth,)], []

    def infer_type(self, p, in_types):
        return list(in_types), [p.dtype], []

    def forward(self, p, is_train, req, ins, outs, aux):
        on, off, depth = p.on_value, p.off_value, p.depth
        if req[0] in ('write', 'inplace'):
            _ndarray.push_numpy(lambda i, o: _one_hot_into(i, o, depth, on, off),
                                [ins[0]], [outs[0]], 'one_hot')
            return
        push_value(lambda i: np.where(as_indices(i)[..., None] == np.arange(depth), on, off),
                   ins, outs[0], req[0], 'one_hot')


def _one_hot_into(idx, out, depth, on, off):
    """out := off everywhere, then on at (row, idx[row]) for the in-range indices: two
    passes over out, no (n, depth) comparison array."""
    idx = as_indices(idx)
    if not out.flags.c_contiguous:
        np.copyto(out, np.where(idx[..., None] == np.arange(depth), on, off),
                  casting='unsafe')
        return
    out.fill(off)
    if not out.size:
        return
    idx = idx.reshape(-1)
    rows = np.flatnonzero((idx >= 0) & (idx < depth))
    out.reshape(-1, depth)[rows, idx[rows]] = on


@register_op
class Embedding(OpSpec):
    """Rows of `weight` (input_dim, output_dim) at the indices in `data` (clamped to
    [0, input_dim-1]): shape data.shape + (output_dim,). Backward scatter-adds the head
    gradient into the weight gradient; `data` gets a zero gradient."""
    name = 'Embedding'
    params = ParamSchema(Param('input_dim', 'int'), Param('output_dim', 'int'),
                         Param('dtype', 'dtype', 'float32'),
                         Param('sparse_grad', 'bool', False))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'weight']

    def infer_shape(self, p, in_shapes):
        if p.input_dim < 1 or p.output_dim < 1:
            raise ValueError(f"{self.name}: parameters input_dim={p.input_dim} and "
                             f"output_dim={p.output_dim} must be >= 1")
        d = None if in_shapes[0] is None else tuple(in_shapes[0])
        w = None if in_shapes[1] is None else tuple(in_shapes[1])
        if d is not None or w is not None:     # as MXNet: not from the parameters alone
            w = unify_shape(self, 'weight', (p.input_dim, p.output_dim), w)
        return [d, w], [None if d is None else d + (p.output_dim,)], []

    def infer_type(self, p, in_types):
        # NOTE: MXNet 1.9.1 lets a given weight's dtype win over the dtype parameter
        # (float64 weights give float64 rows even with the default dtype='float32'); the
        # parameter types the weight only while it is unknown
        wtype = in_types[1] if in_types[1] is not None else p.dtype
        return [in_types[0], wtype], [wtype], []

    def forward(self, p, is_train, req, ins, outs, aux):
        n = p.input_dim
        if req[0] in ('write', 'inplace') and _rows_in_c(ins[0], ins[1]):
            push_rows('gather', ins[0], ins[1], outs[0].reshape((-1, p.output_dim)))
        else:
            push_value(lambda i, w: np.take(w, fix_indices(i, n, 'clip'), axis=0),
                       ins, outs[0], req[0], 'Embedding')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        n, k = p.input_dim, p.output_dim
        if req[1] != 'null' and _rows_in_c(ins[0], in_grads[1], scatter=True):
            push_rows('scatter', ins[0], in_grads[1], out_grads[0].reshape((-1, k)),
                      zero_first=req[1] != 'add')
        else:
            def scatter(idx, dy, acc):
                np.add.at(acc, fix_indices(idx, n, 'clip').reshape(-1), dy.reshape(-1, k))
            push_scatter(scatter, [ins[0], out_grads[0]], in_grads[1], req[1],
                         'Embedding_backward')
        zero_grads(req, in_grads, which=(0,))


def _rows_in_c(idx, table, scatter=False):
    """Whether the C row kernels take these: float/int indices; a gather copies rows of
    any dtype, a scatter adds into float tables."""
    return np.dtype(idx.dtype) in INDEX_DTYPES and (
        not scatter or np.dtype(table.dtype) in FLOAT_DTYPES)


# ---------------------------------------------------------------- selection
@register_op
class where(OpSpec):
    """x where condition is non-zero, else y. condition has x's shape, or is 1-D of length
    x.shape[0] (selecting whole rows); x and y share shape and dtype; condition may have
    any dtype and gets a zero gradient."""
    name = 'where'
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['condition', 'x', 'y']

    def infer_shape(self, p, in_shapes):
        c, x, y = (None if s is None else tuple(s) for s in in_shapes)
        if c is None:           # as MXNet: nothing is inferred before the condition's shape
            return [c, x, y], [None], []
        shape = unify_shape(self, 'y', x, y)
        if shape is not None and c is not None and c != shape and not (
                len(c) == 1 and shape and c[0] == shape[0]):
            raise self.shape_error('condition', f'{shape} or ({shape[0] if shape else 1},)',
                                   c)
        return [c, shape, shape], [shape], []

    def infer_type(self, p, in_types):
        types, known = unify_types(self, p, in_types, (1, 2))
        return types, [known], []

    def _cond(self, c, shape):
        c = c != 0
        return c if c.shape == shape else c.reshape(c.shape + (1,) * (len(shape) - 1))

    def forward(self, p, is_train, req, ins, outs, aux):
        push_value(lambda c, x, y: np.where(self._cond(c, x.shape), x, y), ins, outs[0],
                   req[0], 'where')

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        c, dy = ins[0], out_grads[0]
        push_value(lambda c, g: np.where(self._cond(c, g.shape), g, 0), [c, dy],
                   in_grads[1], req[1], 'where_backward')
        push_value(lambda c, g: np.where(self._cond(c, g.shape), 0, g), [c, dy],
                   in_grads[2], req[2], 'where_backward')
        zero_grads(req, in_grads, which=(0,))
