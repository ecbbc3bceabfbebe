"""The methods of ``mx.np.ndarray`` that are ``mx.np`` functions (``a.sum()`` is
``mx.np.sum(a)``), with MXNet's method signatures."""


def install(cls, np):
    """Set the function-backed methods on `cls` (``np``: the mx.np namespace)."""

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001
        return np['sum'](self, axis, dtype, keepdims, None, out)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return np['mean'](self, axis, dtype, out, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return np['prod'](self, axis, dtype, out, keepdims)

    def max(self, axis=None, out=None, keepdims=False):  # noqa: A001
        return np['max'](self, axis, keepdims, out)

    def min(self, axis=None, out=None, keepdims=False):  # noqa: A001
        return np['min'](self, axis, keepdims, out)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return np['std'](self, axis, dtype, out, ddof, keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return np['var'](self, axis, dtype, out, ddof, keepdims)

    def argmax(self, axis=None, out=None):
        return np['argmax'](self, axis, out)

    def argmin(self, axis=None, out=None):
        return np['argmin'](self, axis, out)

    def cumsum(self, axis=None, dtype=None, out=None):
        return np['cumsum'](self, axis, dtype, out)

    def all(self, axis=None, out=None, keepdims=False):  # noqa: A001
        return np['all'](self, axis, keepdims, out)

    def any(self, axis=None, out=None, keepdims=False):  # noqa: A001
        return np['any'](self, axis, keepdims, out)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return np['transpose'](self, axes or None)

    def swapaxes(self, axis1, axis2):
        return np['swapaxes'](self, axis1, axis2)

    def flatten(self, order='C'):
        return self.reshape(-1, order=order).copy()

    def squeeze(self, axis=None):
        return np['squeeze'](self, axis)

    def clip(self, min=None, max=None, out=None):  # noqa: A002
        return np['clip'](self, min, max, out)

    def repeat(self, repeats, axis=None):
        return np['repeat'](self, repeats, axis)

    def dot(self, b, out=None):
        return np['dot'](self, b, out)

    def round(self, decimals=0, out=None, **kwargs):
        return np['round'](self, decimals, out)

    def take(self, indices, axis=None, mode='raise'):
        return np['take'](self, indices, axis, mode)

    def sort(self, axis=-1, kind=None, order=None):
        return np['sort'](self, axis, kind, order)

    def argsort(self, axis=-1, kind=None, order=None):
        return np['argsort'](self, axis, kind, order)

    def nonzero(self):
        return np['nonzero'](self)

    def broadcast_to(self, shape):
        return np['broadcast_to'](self, shape)

    def broadcast_like(self, other):
        return np['broadcast_to'](self, other.shape)

    def diag(self, k=0, **kwargs):
        return np['diag'](self, k)

    def slice_assign(self, rhs, begin, end, step):
        self[_slices(begin, end, step)] = rhs
        return self

    def slice_assign_scalar(self, value, begin, end, step):
        self[_slices(begin, end, step)] = value
        return self

    def to_dlpack_for_read(self):
        from mxcy.ndarray import to_dlpack_for_read
        return to_dlpack_for_read(self)

    def to_dlpack_for_write(self):
        from mxcy.ndarray import to_dlpack_for_write
        return to_dlpack_for_write(self)

    def tostype(self, stype):
        if stype != 'default':
            raise ValueError(f"tostype: stype={stype!r} is not supported by mx.np arrays "
                             f"(only 'default')")
        return self.copy()

    for fn in (sum, mean, prod, max, min, std, var, argmax, argmin, cumsum, all, any,
               transpose, swapaxes, flatten, squeeze, clip, repeat, dot, round, take, sort,
               argsort, nonzero, broadcast_to, broadcast_like, diag, slice_assign,
               slice_assign_scalar, tostype, to_dlpack_for_read, to_dlpack_for_write):
        fn.__qualname__ = f'ndarray.{fn.__name__}'
        setattr(cls, fn.__name__, fn)


def _slices(begin, end, step):
    step = step or (None,) * len(begin)
    return tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))
