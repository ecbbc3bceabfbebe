"""F.np in hybridized blocks (mx.sym.np): a traced block gives the same values, dtypes,
shapes and gradients as the same block run imperatively under npx.set_np()."""
import numpy as onp
import pytest

import mxcy as mx
from mxcy import autograd, gluon, npx
from mxcy.base import MXNetError
from tests.numpy._blocks import FnBlock as _Fn, np_mode  # noqa: F401  (autouse fixture)


class _MLP(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.w1 = self.params.get('w1', shape=(3, 5))
            self.b1 = self.params.get('b1', shape=(5,))
            self.w2 = self.params.get('w2', shape=(5, 2))

    def hybrid_forward(self, F, x, w1, b1, w2):
        h = F.npx.relu(F.np.dot(x, w1) + b1)
        return F.np.tanh(F.np.dot(h, w2)) * 2 - 1


class _Residual(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = gluon.nn.Dense(3, flatten=False)

    def hybrid_forward(self, F, x):
        return F.np.add(x, F.npx.sigmoid(self.dense(x)))


def _run(make, xs, hybridize, grad=True):
    mx.random.seed(3)
    block = make()
    block.initialize(mx.init.Uniform(0.7))
    if hybridize:
        block.hybridize()
    arrays = [mx.np.array(x, dtype=x.dtype) for x in xs]
    if grad:
        for a in arrays:
            a.attach_grad()
    with autograd.record():
        out = block(*arrays)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if grad:
        autograd.backward(outs, [mx.np.array(onp.linspace(-1, 1, o.size).reshape(o.shape),
                                             dtype=o.dtype) for o in outs])
    res = {'out': [(o.asnumpy(), o.dtype, o.shape, type(o)) for o in outs]}
    if grad:
        res['grads'] = [a.grad.asnumpy() for a in arrays]
        res['params'] = {k[len(block.prefix):]: p.grad().asnumpy()
                         for k, p in block.collect_params().items()}
    return res


def _same(make, *xs, grad=True):
    """Hybridized == imperative: outputs (values, dtypes, shapes, mx.np type) and the
    gradients of the inputs and parameters."""
    ref = _run(make, xs, False, grad)
    got = _run(make, xs, True, grad)
    assert len(got['out']) == len(ref['out'])
    for (gv, gd, gs, gt), (rv, rd, rs, rt) in zip(got['out'], ref['out']):
        assert (gd, gs) == (rd, rs)
        assert gt is rt is mx.np.ndarray
        onp.testing.assert_allclose(gv, rv, rtol=1e-5, atol=1e-6)
    if grad:
        for g, r in zip(got['grads'], ref['grads']):
            onp.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
        assert got['params'].keys() == ref['params'].keys()
        for k in ref['params']:
            onp.testing.assert_allclose(got['params'][k], ref['params'][k], rtol=1e-5,
                                        atol=1e-6, err_msg=k)
    return got


def _x(*shape, seed=0, dtype='float32'):
    return onp.random.RandomState(seed).uniform(-2, 2, shape).astype(dtype)


def test_mlp_with_dot_and_bias():
    got = _same(_MLP, _x(4, 3))
    assert got['out'][0][2] == (4, 2)
    assert onp.abs(got['params']['w1']).sum() > 0      # gradients reach the parameters


def test_residual_block_with_add():
    _same(_Residual, _x(2, 4, 3))


@pytest.mark.parametrize('fn', [
    lambda F, x: F.np.sum(x, axis=1, keepdims=True) * x,
    lambda F, x: F.np.mean(x, axis=(0, 2)),
    lambda F, x: F.np.max(x, axis=-1) + F.np.min(x, axis=0).sum(),
    lambda F, x: F.np.sum(x) + F.np.prod(x, axis=1).mean(),
    lambda F, x: F.np.var(x, axis=1) + F.np.std(x, axis=1, ddof=1),
    lambda F, x: F.np.linalg.norm(x, axis=1),
], ids=['sum_keepdims', 'mean_axes', 'max_min', 'full_sum_prod', 'var_std', 'norm'])
def test_reductions(fn):
    _same(lambda: _Fn(fn), _x(2, 3, 4))


def test_full_reduction_is_zero_dim():
    got = _same(lambda: _Fn(lambda F, x: F.np.sum(x) * F.np.mean(x)), _x(3, 2))
    assert got['out'][0][2] == ()
    got = _same(lambda: _Fn(lambda F, x: F.np.max(x, axis=(0, 1)) + F.np.sum(x, axis=1)),
                _x(3, 2))
    assert got['out'][0][2] == (3,)
    got = _same(lambda: _Fn(lambda F, x: F.np.max(x, axis=(1, 0))), _x(3, 2))
    assert got['out'][0][2] == ()


def _concat_split(F, x, y):
    both = F.np.concatenate([x, y], axis=1)
    a, b, c = F.np.split(both, 3, axis=1)
    head, tail = F.np.split(both, [1], axis=0)
    stacked = F.np.stack([a, c * 2], axis=0)
    return stacked * F.np.expand_dims(F.np.sum(b, axis=1), 0).reshape(1, 2, 1) + \
        F.np.transpose(F.np.swapaxes(head, 0, 1)).sum() - tail.mean()


def test_concatenate_split_stack():
    got = _same(lambda: _Fn(_concat_split), _x(2, 2), _x(2, 4, seed=1))
    assert got['out'][0][2] == (2, 2, 2)


def _masked(F, x):
    mask = x >= 0                                               # a bool mask
    keep = F.np.where(mask, x, F.np.zeros_like(x))
    return keep * mask + F.np.ones_like(x) * F.np.greater(x, 1), mask, x == 0.5


def test_comparisons_give_bool_masks():
    got = _same(lambda: _Fn(_masked), _x(3, 4), grad=False)
    assert [o[1] for o in got['out']] == [onp.float32, onp.bool_, onp.bool_]
    _same(lambda: _Fn(lambda F, x: _masked(F, x)[0]), _x(3, 4))


def test_creation_and_shape_functions():
    def fn(F, x):
        z = F.np.zeros((2, 3)) + F.np.ones((2, 3), dtype='float32') + F.np.full((1, 3), 2.)
        r = F.np.arange(3) + F.np.full_like(x, 0.5)
        t = F.np.tile(F.np.flip(x, axis=1), (1, 2)) + F.np.repeat(x, 2, axis=1)
        b = F.np.broadcast_to(F.np.reshape(F.np.sum(x, axis=0), (1, 3)), (2, 3))
        return z * x + r + F.np.split(t, 2, axis=1)[1] + F.np.clip(b, -1, 1) + F.np.squeeze(
            F.np.expand_dims(x, 0), axis=0) + F.np.maximum(x, 0.5) - F.np.minimum(x, x * 2)
    _same(lambda: _Fn(fn), _x(2, 3))


def test_take_and_power():
    def fn(F, x, idx):
        return F.np.take(x, idx, axis=0) ** 2 + F.np.power(x, 3)[1:] + 2 ** x[:2]
    _same(lambda: _Fn(fn), _x(3, 2), onp.array([2, 0], dtype='int32'), grad=False)
    _same(lambda: _Fn(lambda F, x: F.np.power(x, 2) + x ** 3), _x(3, 2))


def test_matmul_by_traced_rank():
    _same(lambda: _Fn(lambda F, x, y: F.np.matmul(x, y)), _x(3, 4), _x(4, 2, seed=1))
    got = _same(lambda: _Fn(lambda F, x, y: F.np.matmul(x, y)), _x(2, 3, 4),
                _x(2, 4, 5, seed=1))
    assert got['out'][0][2] == (2, 3, 5)        # stacks of matrices, not dot's (2,3,2,5)
    with pytest.raises(ValueError, match=r"mx.sym.np.matmul: operands of 4 and 4 dim"):
        _run(lambda: _Fn(lambda F, x, y: F.np.matmul(x, y)), (_x(1, 2, 3, 4),
                                                             _x(1, 2, 4, 5)), True)
    with pytest.raises(ValueError, match=r"matmul: operands of None and None"):
        mx.sym.np.matmul(mx.sym.var('a'), mx.sym.var('b'))


def test_where_refuses_shapes_it_would_read_as_rows():
    # a 1-D condition: NumPy broadcasts it along the last axis; the where operator would
    # pick rows, so the symbol refuses it instead of answering differently
    x, cond = _x(3, 3), onp.array([True, False, True])
    fn = lambda F, c, v: F.np.where(c, v, F.np.zeros_like(v))   # noqa: E731
    ref = _run(lambda: _Fn(fn), (cond, x), False, grad=False)['out'][0][0]
    onp.testing.assert_array_equal(ref, onp.where(cond, x, 0))
    with pytest.raises(ValueError, match=r"mx.sym.np.where: condition, x and y need one "
                                         r"shape"):
        _run(lambda: _Fn(fn), (cond, x), True, grad=False)


@pytest.mark.parametrize('name', ['exp', 'log1p', 'sqrt', 'tanh', 'abs', 'negative',
                                  'square', 'sin', 'arctan', 'reciprocal', 'absolute',
                                  'floor'])
def test_unary_table(name):
    x = onp.abs(_x(2, 3)) + 0.5
    _same(lambda: _Fn(lambda F, a: getattr(F.np, name)(a)), x)


@pytest.mark.parametrize('name', ['add', 'subtract', 'multiply', 'divide', 'true_divide',
                                  'mod', 'power', 'maximum', 'minimum', 'hypot'])
def test_binary_table_with_broadcasting(name):
    x, y = onp.abs(_x(2, 3)) + 0.5, onp.abs(_x(3, seed=1)) + 0.5
    _same(lambda: _Fn(lambda F, a, b: getattr(F.np, name)(a, b)), x, y)
    _same(lambda: _Fn(lambda F, a: getattr(F.np, name)(a, 1.5) +
                      getattr(F.np, name)(2.5, a)), x)


@pytest.mark.parametrize('x_dtype,y_dtype', [('int32', 'float32'), ('int32', 'int64'),
                                             ('bool', 'float32'), ('int32', 'int32')])
def test_promotion_after_type_inference(x_dtype, y_dtype):
    """Mixed dtypes promote as mx.np does (int32 + float32 is float32, int / int is
    float32), comparisons are bool, sum of bool is int64."""
    x = (onp.arange(6).reshape(2, 3) % 3).astype(x_dtype)
    y = (onp.arange(3) + 1).astype(y_dtype)

    def fn(F, a, b):
        return (a + b, a * b, a / b, F.np.true_divide(a, b), a < b, F.np.sum(a == b),
                F.np.sum(a > 0), F.np.concatenate([a, F.np.expand_dims(b, 0)]),
                F.np.maximum(a, b), F.np.mean(a, axis=0), a * 1.5 + 1, a / 2, 3 - a,
                a > 1, F.np.exp(a))
    got = _same(lambda: _Fn(fn), x, y, grad=False)
    dtypes = [o[1] for o in got['out']]
    assert dtypes[4] == onp.bool_ and dtypes[5] == onp.int64
    assert dtypes[2] == dtypes[3] == onp.float32
    assert dtypes[9] == onp.float32


def test_np_symbol_dunders_follow_numpy_rules():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    out = mx.sym.Group([a < b, a + 1, a == 2, a / b])
    _, types, _ = out.infer_type(a='float32', b='float32')
    assert [onp.dtype(t) for t in types] == [onp.bool_, onp.float32, onp.bool_, onp.float32]
    npx.reset_np()                      # legacy mode: comparisons keep the input dtype
    _, types, _ = (a < b).infer_type(a='float32', b='float32')
    assert onp.dtype(types[0]) == onp.float32


def test_mx_sym_np_is_registry_nodes():
    a = mx.sym.var('a')
    out = mx.sym.np.sum(mx.sym.np.exp(a), axis=0) + mx.sym.np.dot(a, a)
    ops = [n['op'] for n in __import__('json').loads(out.tojson())['nodes']]
    assert {'exp', 'sum', 'dot', 'broadcast_add'} <= set(ops)
    exe = out.bind(mx.cpu(), {'a': mx.nd.array([[1., 2.], [3., 4.]])})
    ref = onp.exp([[1., 2.], [3., 4.]]).sum(0) + onp.array([[7., 10.], [15., 22.]])
    onp.testing.assert_allclose(exe.forward()[0].asnumpy(), ref, rtol=1e-5)


@pytest.mark.parametrize('name', ['sort', 'unique', 'argsort', 'histogram', 'nonzero'])
def test_numpy_computed_functions_have_no_symbol(name):
    block = _Fn(lambda F, x: getattr(F.np, name)(x))
    x = mx.np.array([3., 1., 2.])
    block(x)                                    # imperatively: NumPy computes it
    block.hybridize()
    with pytest.raises(MXNetError, match=f"mx.np.{name} .*no symbolic form.*hybridized"):
        block(x)
    with pytest.raises(MXNetError, match=f"mx.np.{name} .*no symbolic form"):
        getattr(mx.np, name)(mx.sym.var('x'))


def test_bad_operand_names_the_function():
    with pytest.raises(TypeError, match=r"mx.sym.np.sum: a must be a Symbol, got list"):
        mx.sym.np.sum([1, 2])
    with pytest.raises(TypeError, match=r"mx.sym.np.add: the other operand must be a "
                                        r"Symbol or a scalar, got str"):
        mx.sym.np.add(mx.sym.var('a'), 'x')


class _ExportNet(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.w = self.params.get('w', shape=(4, 6))
            self.b = self.params.get('b', shape=(6,))

    def hybrid_forward(self, F, x, w, b):
        h = F.npx.relu(F.np.dot(x, w) + b)
        a, c = F.np.split(h, 2, axis=1)
        mask = a > 0.5
        y = F.np.concatenate([F.np.where(mask, a, F.np.zeros_like(a)), c * mask], axis=1)
        return F.np.sum(y, axis=1, keepdims=True) + F.np.mean(F.np.exp(-y), axis=0) - \
            F.np.max(h) + h[:, 1:2] * 2


def export_block():
    """The block tools/mxnet_np_hybrid_fixtures.py exports (fixed weights, hybridized)."""
    net = _ExportNet(prefix='fnp_')
    net.initialize()
    net.w.set_data(mx.np.array(onp.linspace(-1, 1, 24).reshape(4, 6)))
    net.b.set_data(mx.np.array(onp.linspace(-.2, .3, 6)))
    net.hybridize()
    return net


def test_export_of_an_F_np_block_loads_in_mxnet(tmp_path):
    """tools/mxnet_np_hybrid_fixtures.py: MXNet 1.9.1 loaded this export under set_np()
    (registry operator names it knows: broadcast_add, Cast, where, _npx_reshape ...) and
    recorded its output; the export is still byte-identical and both outputs agree."""
    import pathlib
    files = pathlib.Path(__file__).resolve().parent / 'mxnet_files'
    io = onp.load(files / 'fnp_io.npz')
    net = export_block()
    out = net(mx.np.array(io['x']))
    onp.testing.assert_allclose(out.asnumpy(), io['y'], rtol=1e-5, atol=1e-5)
    sym_file, params_file = net.export(str(tmp_path / 'fnp'))
    assert pathlib.Path(sym_file).read_text() == (files / 'fnp-symbol.json').read_text()
    assert pathlib.Path(params_file).read_bytes() == (files / 'fnp-0000.params').read_bytes()
    again = gluon.SymbolBlock.imports(sym_file, ['data'], params_file)(mx.np.array(io['x']))
    assert isinstance(again, mx.np.ndarray)
    onp.testing.assert_allclose(again.asnumpy(), io['y'], rtol=1e-5, atol=1e-5)
    npx.reset_np()
    assert mx.sym.load(sym_file).list_arguments() == ['data', 'fnp_w', 'fnp_b']
