"""Operators of MXNet's NumPy extension (``mx.npx``) that ``mx.nd`` has no record for.

``_npx_reshape`` is ``npx.reshape``: a copy with a new shape whose special values differ
from ``Reshape``'s (MXNet's np_matrix_op). Reading ``newshape`` left to right against the
input's dims (both reversed when ``reverse=True``):

* ``d >= 0``: an output dim of size d; ``-1``: the one dim inferred from the size; each
  steps past one input dim (if any is left);
* ``-2``: copy the input dim; ``-3``: drop the input dim, which must be 1;
* ``-4``: copy all the remaining input dims;
* ``-5``: the product of the next two input dims;
* ``-6, a, b``: split the input dim into (a, b), one of them may be -1.
"""
from math import prod

from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op
from mxcy.operator.tensor import _CopyOp


def npx_reshape_shape(src, newshape, reverse=False):
    """The output shape of ``npx.reshape(a, newshape, reverse)`` for an input of shape
    `src`; ValueError says which code did not fit."""
    src, codes = tuple(src), tuple(int(c) for c in newshape)
    if reverse:
        src, codes = src[::-1], codes[::-1]
    out, infer, i, k = [], None, 0, 0

    def take(what):
        nonlocal i
        if i >= len(src):
            raise ValueError(f"code {what} at position {k} has no input dim left "
                             f"(the input has {len(src)} dims)")
        i += 1
        return src[i - 1]
    while k < len(codes):
        c = codes[k]
        if c >= 0:
            i += 1
            out.append(c)
        elif c == -1:
            if infer is not None:
                raise ValueError("only one -1 may be given")
            i += 1
            infer = len(out)
            out.append(-1)
        elif c == -2:
            out.append(take(c))
        elif c == -3:
            d = take(c)
            if d != 1:
                raise ValueError(f"-3 at position {k} drops an input dim of size 1, "
                                 f"the dim has size {d}")
        elif c == -4:
            out.extend(src[i:])
            i = len(src)
        elif c == -5:
            out.append(take(c) * take(c))
        elif c == -6:
            if k + 2 >= len(codes):
                raise ValueError(f"-6 at position {k} needs the two sizes after it")
            d = take(c)
            a, b = codes[k + 1], codes[k + 2]
            if a == -1 and b != 0:
                a = d // b
            elif b == -1 and a != 0:
                b = d // a
            if a < 0 or b < 0 or a * b != d:
                raise ValueError(f"-6 splits the dim {d} into ({codes[k + 1]}, "
                                 f"{codes[k + 2]}), which does not divide it")
            out.extend((a, b))
            k += 2
        else:
            raise ValueError(f"unknown code {c} (the codes are -1 to -6)")
        k += 1
    if infer is not None:
        known = prod(d for j, d in enumerate(out) if j != infer)
        if known == 0:
            raise ValueError("cannot infer the -1 dim next to a zero-size dim")
        out[infer] = prod(src) // known
    if prod(out) != prod(src):
        raise ValueError(f"the result {tuple(out[::-1] if reverse else out)} has "
                         f"{prod(out)} elements, the input {prod(src)}")
    return tuple(out[::-1] if reverse else out)


@register_op
class _npx_reshape(_CopyOp):
    """``npx.reshape``: a copy with a new shape (the codes in this module's docstring)."""
    name = '_npx_reshape'
    params = ParamSchema(
        Param('newshape', 'shape'),
        Param('reverse', 'bool', False),
        Param('order', 'str', 'C', choices=('C',)),
    )

    def arguments(self, p):
        return ['a']

    def infer_shape(self, p, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        try:
            out = npx_reshape_shape(s, p.newshape, p.reverse)
        except ValueError as e:
            raise self.shape_error('a', f'a shape that fits newshape={tuple(p.newshape)}',
                                   tuple(s), str(e)) from None
        return [tuple(s)], [out], []
