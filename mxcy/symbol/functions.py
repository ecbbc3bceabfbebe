"""Hand-written ``mx.sym`` functions of MXNet 1.9.1 (not one operator each): the
two-operand math dispatchers (``maximum(left, right)``, ``power(base, exp)`` ...: two
symbols run the elementwise op, a symbol and a number the scalar op, two numbers Python),
constructors (``zeros``, ``ones``, ``full``, ``arange``, ``linspace``, ``eye``),
``histogram`` and ``split_v2``.
"""
import numbers

from mxcy.symbol.symbol import Symbol


def _op(op, args=(), name=None, attr=None, **kwargs):
    from mxcy.symbol._gen import make_op_symbol
    return make_op_symbol(op, tuple(args), kwargs, name=name, attr=attr)


def _dispatcher(fname, pair_op, scalar_op, rscalar_op, py_op, names=('left', 'right')):
    def run(a, b):
        if isinstance(a, Symbol) and isinstance(b, Symbol):
            return _op(pair_op, (a, b))
        if isinstance(a, Symbol) and isinstance(b, numbers.Real):
            return _op(scalar_op, (a,), scalar=float(b))
        if isinstance(b, Symbol) and isinstance(a, numbers.Real):
            return _op(rscalar_op, (b,), scalar=float(a))
        if isinstance(a, numbers.Real) and isinstance(b, numbers.Real):
            return py_op(a, b)
        raise TypeError(f"{fname}: {names[0]} and {names[1]} must be Symbols or numbers, got "
                        f"{type(a).__name__} and {type(b).__name__}")
    if names == ('left', 'right'):
        def fn(left, right):
            return run(left, right)
    else:
        def fn(base, exp):
            return run(base, exp)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"Elementwise {fname} of two symbols, or of a symbol and a number."
    return fn


maximum = _dispatcher('maximum', '_maximum', '_maximum_scalar', '_maximum_scalar', max)
minimum = _dispatcher('minimum', '_minimum', '_minimum_scalar', '_minimum_scalar', min)
hypot = _dispatcher('hypot', '_hypot', '_hypot_scalar', '_hypot_scalar',
                    lambda a, b: (a * a + b * b) ** 0.5)
power = _dispatcher('power', '_power', '_power_scalar', '_rpower_scalar',
                    lambda a, b: a ** b, names=('base', 'exp'))
pow = power


def _dtype(dtype):
    """{'dtype': dtype} when given: a node without one keeps the op's default and stays
    'untyped' for the passes that look (RNN begin states take their data's dtype)."""
    return {} if dtype is None else {'dtype': dtype}


def zeros(shape, dtype=None, **kwargs):
    """A constant symbol of zeros (``_zeros``)."""
    return _op('_zeros', shape=shape, **_dtype(dtype), **kwargs)


def ones(shape, dtype=None, **kwargs):
    """A constant symbol of ones (``_ones``)."""
    return _op('_ones', shape=shape, **_dtype(dtype), **kwargs)


def full(shape, val, dtype=None, **kwargs):
    """A constant symbol filled with `val` (``_full``)."""
    return _op('_full', shape=shape, value=val, **_dtype(dtype), **kwargs)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    """Evenly spaced values in [start, stop), each repeated `repeat` times (``_arange``)."""
    return _op('_arange', start=start, stop=stop, step=step, repeat=repeat,
               infer_range=infer_range, name=name, dtype=dtype or 'float32')


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    """`num` evenly spaced values from start to stop (``_linspace``)."""
    return _op('_linspace', start=start, stop=stop, num=num, endpoint=endpoint, name=name,
               dtype=dtype or 'float32')


def eye(N, M=0, k=0, dtype=None, **kwargs):
    """Ones on the k-th diagonal of an N x (M or N) matrix (``_eye``)."""
    return _op('_eye', N=N, M=M, k=k, dtype=dtype or 'float32', **kwargs)


def histogram(a, bins=10, range=None, **kwargs):
    """(counts, edges) of `a`: `bins` equal bins over `range` (required for symbols), or
    the edges given as a Symbol."""
    if isinstance(bins, Symbol):
        return _op('_histogram', (a, bins), **kwargs)
    if range is None:
        raise ValueError("histogram: a symbol's range cannot be read from its values; give "
                         "range=(min, max)")
    return _op('_histogram', (a,), bin_cnt=bins, range=tuple(range), **kwargs)


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """`ary` split along `axis` into equal sections (an int) or at the indices (a tuple)."""
    from mxcy.ndarray.extra import split_v2_params
    return _op('_split_v2', (ary,), axis=axis, squeeze_axis=squeeze_axis,
               **split_v2_params(indices_or_sections, 'split_v2'))
