"""mx.sym.np: each function a registry-operator Symbol that computes what mx.np computes
(bound and run against the imperative function on the same values), and every
registry-computed mx.np name has one."""
import json

import numpy as onp
import pytest

import mxcy as mx
from mxcy.base import MXNetError
from tests.numpy._blocks import FnBlock as _Fn, np_mode  # noqa: F401  (autouse fixture)


def _both(fn, *xs):
    """fn(F, *xs) run imperatively and hybridized: same values, dtypes and shapes."""
    arrays = [mx.np.array(x, dtype=x.dtype) for x in xs]
    ref = _Fn(fn)(*arrays)
    block = _Fn(fn)
    block.hybridize()
    got = block(*arrays)
    ref = ref if isinstance(ref, (list, tuple)) else [ref]
    got = got if isinstance(got, (list, tuple)) else [got]
    for g, r in zip(got, ref):
        assert (g.dtype, g.shape) == (r.dtype, r.shape)
        onp.testing.assert_allclose(g.asnumpy(), r.asnumpy(), rtol=1e-5, atol=1e-6)
    return [g.asnumpy() for g in got]


_M = onp.arange(12, dtype='float32').reshape(3, 4) / 4 - 1
_V = onp.array([1., -2., 3.], dtype='float32')


@pytest.mark.parametrize('fn,args', [
    (lambda F, a: F.np.cumsum(a, axis=1) + F.np.cumsum(a).reshape(3, 4), (_M,)),
    (lambda F, a: F.np.cumsum(a > 0), (_M,)),
    (lambda F, a: F.np.diag(a, k=1) * F.np.trace(a), (_M,)),
    (lambda F, a, v: F.np.outer(v, a[0]) + F.np.vdot(v, v), (_M, _V)),
    (lambda F, a, v: F.np.inner(v, F.np.transpose(a)[:, :3]), (_M, _V)),
    (lambda F, a: F.np.append(a, a) * 2, (_M,)),
    (lambda F, a: F.np.append(a, a, axis=0), (_M,)),
    (lambda F, a: F.np.fliplr(a) - F.np.flipud(a), (_M,)),
    (lambda F, a: F.np.moveaxis(F.np.expand_dims(a, 0), 0, -1), (_M,)),
    (lambda F, a, v: (F.np.vstack([v, v]), F.np.hstack([v, v]), F.np.hstack([a, a]),
                      F.np.dstack([a, a]), F.np.column_stack([v, v])), (_M, _V)),
    (lambda F, a: F.np.eye(3, 4, k=1) + F.np.identity(4)[:3] + a, (_M,)),
    (lambda F, a: F.np.linspace(0, 1, 4) * a + F.np.empty_like(a) * 0, (_M,)),
    (lambda F, a: (a.sum(axis=0), a.mean(), a.reshape(2, -1), a.T, a[1:, -1], a[None, 1],
                   a.max(axis=1, keepdims=True), a.argmax(axis=1)), (_M,)),
    (lambda F, a: F.np.argmin(a) + F.np.argmax(a, axis=0), (_M,)),
    (lambda F, a, v: F.np.vsplit(a, [1]) + F.np.hsplit(a, 2) + F.np.hsplit(v, 3) +
     F.np.dsplit(F.np.expand_dims(a, 2), 1), (_M, _V)),
    (lambda F, a, v: F.np.array_split(a, 3, axis=1) + F.np.array_split(v, [1]), (_M, _V)),
    (lambda F, a, v: (F.np.tensordot(a, F.np.transpose(a), 1),
                      F.np.tensordot(F.np.expand_dims(a, 0), a, axes=([1, 2], [0, 1])),
                      F.np.tensordot(v, a[:, :3], axes=([0], [1]))), (_M, _V)),
    (lambda F, a: F.np.ravel(a)[2:5] + F.np.amax(a) - F.np.amin(a, axis=0)[:3], (_M,)),
], ids=['cumsum', 'cumsum_bool', 'diag_trace', 'outer_vdot', 'inner', 'append',
        'append_axis', 'fliplr_flipud', 'moveaxis', 'stacks', 'eye', 'linspace',
        'methods_and_indexing', 'argmin_argmax', 'vsplit_hsplit_dsplit',
        'array_split', 'tensordot', 'ravel_amax'])
def test_hybridized_equals_imperative(fn, args):
    _both(fn, *args)


def test_every_registry_computed_np_function_has_a_symbol():
    """Names mx.np computes through the registry map to a Symbol function; the rest
    (NumPy-computed, or needing values/shapes) raise MXNetError naming themselves."""
    known_without = {'array', 'asarray',
                     'broadcast_arrays', 'einsum', 'tril', 'meshgrid', 'indices',
                     'logspace', 'hanning', 'hamming', 'blackman', 'bitwise_and',
                     'bitwise_or', 'bitwise_xor'}
    missing = []
    for name in mx.np.__all__:
        fn = getattr(mx.np, name, None)
        if not callable(fn) or isinstance(fn, type):
            continue
        sym_fn = getattr(mx.sym.np, name)
        raises = 'no symbolic form' in (sym_fn.__doc__ or '')
        if 'fallback' in fn.__module__ or name in known_without:
            if fn.__module__ != 'numpy':
                assert raises, name
        elif raises:
            missing.append(name)
    assert missing == []
    assert len([n for n in mx.sym.np.__all__ if 'no symbolic form' not in
                (getattr(mx.sym.np, n).__doc__ or '')]) > 130


def test_functions_are_nodes_of_the_imperative_operators():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    sym = mx.sym.Group([mx.sym.np.concatenate([a, b], axis=1), mx.sym.np.sum(a, axis=0),
                        mx.sym.np.tanh(a), mx.sym.np.reshape(a, (-1,)),
                        mx.sym.np.take(a, b, axis=1), mx.sym.np.stack([a, b])])
    ops = {n['op'] for n in json.loads(sym.tojson())['nodes']}
    assert {'Concat', 'sum', 'tanh', '_npx_reshape', 'take', 'stack'} <= ops


def test_dtypes_and_constants_pass_through():
    assert mx.sym.np.float32 is mx.np.float32 is onp.float32
    assert mx.sym.np.pi == onp.pi
    assert mx.sym.np.promote_types('int32', 'int64') == onp.int64


def test_shape_dependent_function_without_shapes_says_so():
    with pytest.raises(ValueError, match="mx.sym.np.vstack: the result depends on the "
                                         "operand's number of dimensions"):
        mx.sym.np.vstack([mx.sym.var('a'), mx.sym.var('b')])
    with pytest.raises(MXNetError, match="mx.np.einsum needs its operands' values or "
                                         "shapes.*no symbolic form"):
        mx.sym.np.einsum('ij->i', mx.sym.var('a'))


def test_indexing_keeps_output_selection_for_groups():
    a = mx.sym.var('a')
    parts = mx.sym.np.split(a, 2, axis=0)
    group = mx.sym.Group(parts)
    assert group[1].name == parts[1].name           # an output of a Group
    with pytest.raises(TypeError, match="only ints, slices and None index a Symbol"):
        a[[0, 1]]
