"""NDArray syntax under autograd: ``a + b``, ``-a``, ``a[i]``, ``a.reshape(...)``.

NDArray's own operators run their kernels directly (no registry call) for speed; while a
thread records and an operand belongs to a graph, they come here and become the registry
operators MXNet records for them (``broadcast_add``, ``_plus_scalar``, ``slice_axis``,
``Reshape`` ...), so the recorded node has a declared backward like any other call.
"""
import numbers

import numpy as np

from mxcy import _ops
from mxcy._ndarray import NDArray
from mxcy.base import MXNetError

_CODE = {code: name for name, code in _ops.BINARY_OPS.items()}

# kernel name -> (op on two arrays, op on (array, scalar), operands swapped)
_OPS = {
    'add': ('broadcast_add', '_plus_scalar', False),
    'subtract': ('broadcast_sub', '_minus_scalar', False),
    'rsubtract': ('broadcast_sub', '_rminus_scalar', True),
    'multiply': ('broadcast_mul', '_mul_scalar', False),
    'divide': ('broadcast_div', '_div_scalar', False),
    'rdivide': ('broadcast_div', '_rdiv_scalar', True),
    'modulo': ('broadcast_mod', '_mod_scalar', False),
    'rmodulo': ('broadcast_mod', '_rmod_scalar', True),
    'power': ('broadcast_power', '_power_scalar', False),
    'rpower': ('broadcast_power', '_rpower_scalar', True),
    'maximum': ('broadcast_maximum', '_maximum_scalar', False),
    'minimum': ('broadcast_minimum', '_minimum_scalar', False),
    'equal': ('broadcast_equal', '_equal_scalar', False),
    'not_equal': ('broadcast_not_equal', '_not_equal_scalar', False),
    'greater': ('broadcast_greater', '_greater_scalar', False),
    'greater_equal': ('broadcast_greater_equal', '_greater_equal_scalar', False),
    'lesser': ('broadcast_lesser', '_lesser_scalar', False),
    'lesser_equal': ('broadcast_lesser_equal', '_lesser_equal_scalar', False),
}


_FUNCTIONS = {}


def _fn(name):
    fn = _FUNCTIONS.get(name)
    if fn is None:
        from mxcy.ndarray._gen import function
        fn = _FUNCTIONS[name] = function(name)
    return fn


def arith_specs():
    """({kernel code: (registry spec on two arrays, on a scalar, operands swapped,
    whether each spec's backward reads its inputs)}, Params): what the recorded
    arithmetic dunders record (their C path, _ndarray_autograd.pxi)."""
    from mxcy.operator import get_op
    from mxcy.operator._params import Params
    table = {}
    for code, name in _CODE.items():
        if name in _OPS:
            on_arrays, on_scalar = get_op(_OPS[name][0]), get_op(_OPS[name][1])
            table[code] = (on_arrays, on_scalar, _OPS[name][2],
                           'inputs' in on_arrays.backward_needs,
                           'inputs' in on_scalar.backward_needs)
    return table, Params


class Hooks:
    """What _ndarray asks while some thread records (see _ndarray_autograd.pxi)."""

    def __init__(self, state, check_not_in_graph):
        self._state = state
        self.check_not_in_graph = check_not_in_graph

    def recording(self):
        return self._state.recording

    def binary(self, x, other, code, out):
        """x OP other as the registry op, or NotImplemented when nothing is recorded."""
        if not self._state.recording:
            return NotImplemented
        if out is not None and out._ag is not None:
            self.check_not_in_graph(out, _CODE[code])
        is_array = isinstance(other, NDArray)
        if x._ag is None and not (is_array and other._ag is not None):
            return NotImplemented
        array_op, scalar_op, swapped = _OPS[_CODE[code]]
        kwargs = {} if out is None else {'out': out}
        if isinstance(other, bool):
            other = int(other)
        if isinstance(other, numbers.Real):
            return _fn(scalar_op)(x, scalar=float(other), **kwargs)
        if not is_array:
            other = NDArray_from(other, x)
        lhs, rhs = (other, x) if swapped else (x, other)
        return _fn(array_op)(lhs, rhs, **kwargs)

    def negative(self, x):
        return _fn('_mul_scalar')(x, scalar=-1.0)

    def absolute(self, x):
        return _fn('abs')(x)

    def reshape(self, x, shape):
        return _fn('Reshape')(x, shape=tuple(shape))

    def getitem(self, x, key):
        """Basic indexing (ints, slices, tuples of them) as slice / slice_axis + Reshape."""
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if isinstance(key, (numbers.Integral, slice)):
            key = (key,)
        arrays = _integer_arrays(key)
        if arrays is not None:
            return _gather(x, arrays)
        if not isinstance(key, tuple) or len(key) > len(x.shape) or not all(
                isinstance(k, slice) or (isinstance(k, numbers.Integral) and
                                         not isinstance(k, bool)) for k in key):
            raise MXNetError(f"autograd: indexing with {key!r} is not recorded (integers "
                             "and slices are, or integer arrays alone: x[idx], x[i, j]); "
                             "index outside autograd.record() or use take/pick")
        begin, end, step, keep = [], [], [], []
        for axis, k in enumerate(key):
            n = x.shape[axis]
            if isinstance(k, slice):
                start, stop, stride = k.indices(n)
                begin.append(start)
                end.append(stop if stride > 0 or stop >= 0 else None)
                step.append(stride)
                keep.append(len(range(start, stop, stride)))
            else:
                i = int(k)
                if i < -n or i >= n:
                    raise IndexError(f"index {i} is out of bounds for axis {axis} with "
                                     f"size {n}")
                i %= n
                begin.append(i)
                end.append(i + 1)
                step.append(1)
        out = _fn('slice')(x, begin=tuple(begin), end=tuple(end), step=tuple(step))
        shape = tuple(keep) + x.shape[len(key):]
        if any(isinstance(k, numbers.Integral) for k in key):
            return _fn('Reshape')(out, shape=shape or (1,))
        return out


def _integer_arrays(key):
    """Advanced indexing by integer arrays alone (x[idx], x[rows, cols]): the index
    arrays as NumPy, or None for any other key."""
    parts = key if isinstance(key, tuple) else (key,)
    if not parts or not all(isinstance(k, (NDArray, list, np.ndarray)) for k in parts):
        return None
    out = []
    for k in parts:
        a = k.asnumpy() if isinstance(k, NDArray) else np.asarray(k)
        if a.ndim == 0:
            return None
        if a.dtype.kind == 'f' and a.size and not np.all(a == np.floor(a)):
            raise IndexError(f"autograd: index array {a!r} has non-integer values")
        if a.dtype.kind not in 'iuf' and a.size:
            raise IndexError(f"autograd: index arrays must hold integers, got dtype "
                             f"{a.dtype}")
        out.append(a.astype(np.int64))
    return out


def _gather(x, arrays):
    """x[i0, i1, ...] (integer arrays on the leading axes, broadcast together) as the
    recorded Reshape + take on the flattened leading axes; take's gradient adds back."""
    if len(arrays) > len(x.shape):
        raise IndexError(f"too many index arrays ({len(arrays)}) for an array of shape "
                         f"{x.shape}")
    try:
        idx = np.broadcast_arrays(*arrays)
    except ValueError:
        raise IndexError("index arrays could not be broadcast together with shapes "
                         + ' '.join(str(a.shape) for a in arrays)) from None
    lead, rest = x.shape[:len(arrays)], x.shape[len(arrays):]
    for axis, (a, n) in enumerate(zip(idx, lead)):
        if a.size and (a.min() < -n or a.max() >= n):
            bad = a.min() if a.min() < -n else a.max()
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    flat = np.ravel_multi_index(tuple(a % n for a, n in zip(idx, lead)), lead) \
        if lead else np.zeros(idx[0].shape, np.int64)
    source = x if len(arrays) == 1 else _fn('Reshape')(x, shape=(-1,) + rest)
    from mxcy.ndarray import array
    index = array(flat, ctx=x.context, dtype='int64')
    return _fn('take')(source, index, axis=0, mode='clip')


def NDArray_from(value, like):
    """An array-like operand as an NDArray of `like`'s dtype (recorded as a constant)."""
    from mxcy.ndarray import array
    return array(np.asarray(value), ctx=like.context, dtype=like.dtype)
