"""Custom operators (mx.operator.CustomOp / CustomOpProp / register and the op Custom)."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import engine
from mxcy.base import MXNetError


# ---------------------------------------------------------------- MXNet's tutorial softmax
class Softmax(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = np.exp(x - x.max(axis=1).reshape((x.shape[0], 1)))
        y /= y.sum(axis=1).reshape((x.shape[0], 1))
        self.assign(out_data[0], req[0], mx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label = in_data[1].asnumpy().ravel().astype(int)
        y = out_data[0].asnumpy()
        y[np.arange(label.shape[0]), label] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y))


@mx.operator.register("test_softmax")
class SoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self):
        super(SoftmaxProp, self).__init__(need_top_grad=False)  # noqa: UP008 (tutorial)

    def list_arguments(self):
        return ['data', 'label']

    def list_outputs(self):
        return ['output']

    def infer_shape(self, in_shape):
        data_shape = in_shape[0]
        label_shape = (in_shape[0][0],)
        output_shape = in_shape[0]
        return [data_shape, label_shape], [output_shape], []

    def infer_type(self, in_type):
        return in_type, [in_type[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return Softmax()


# ---------------------------------------------------------------- a scaled square with state
class ScaledSquare(mx.operator.CustomOp):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.calls = 0

    def forward(self, is_train, req, in_data, out_data, aux):
        self.calls += 1
        self.assign(out_data[0], req[0], in_data[0] * in_data[0] * self.scale)
        self.assign(aux[0], 'write', aux[0] + 1)            # counts forwards

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * in_data[0] * (2 * self.scale))


@mx.operator.register("test_scaled_square")
class ScaledSquareProp(mx.operator.CustomOpProp):
    def __init__(self, scale='1.0'):
        super().__init__(need_top_grad=True)
        assert isinstance(scale, str)       # MXNet passes every kwarg as a string
        self.scale = float(scale)

    def list_auxiliary_states(self):
        return ['count']

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [(1,)]

    def create_operator(self, ctx, shapes, dtypes):
        assert ctx == 'cpu(0)' and shapes[0] == list(shapes[0]) and dtypes[0] == np.float32
        return ScaledSquare(self.scale)


class Failing(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        if in_data[0].asnumpy().sum() < 0:
            raise ValueError("negative input rejected by the custom op")
        self.assign(out_data[0], req[0], in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise KeyError("backward is broken")


@mx.operator.register("test_failing")
class FailingProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return Failing()


# ---------------------------------------------------------------- tests
@pytest.fixture(params=['ThreadedEngine-1', 'ThreadedEngine', 'NaiveEngine'])
def engine_kind(request):
    """Run under NaiveEngine, the threaded engine, and the threaded engine with 1 worker."""
    old_type, old_workers = engine.engine_type(), engine.num_workers()
    kind, _, workers = request.param.partition('-')
    engine.set_engine_type(kind)
    if workers:
        engine.set_num_workers(int(workers))
    yield request.param
    engine.set_engine_type(old_type)
    engine.set_num_workers(old_workers)


def _drain_engine_errors():
    """Leave no error for another test's waitall (whether waitall reports an error that a
    wait already raised is the engine's business, not this file's)."""
    try:
        mx.nd.waitall()
    except (ValueError, KeyError):
        pass


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_imperative_custom_with_asnumpy_inside(engine_kind):
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    data = mx.nd.array(x) * 2          # pending producer: forward's asnumpy must wait for it
    y = mx.nd.Custom(data, mx.nd.zeros((4,)), op_type='test_softmax')
    np.testing.assert_allclose(y.asnumpy(), _softmax(2 * x), rtol=1e-5)


def test_symbol_names_and_inference():
    net = mx.sym.Custom(mx.sym.var('data'), op_type='test_softmax', name='sm')
    assert net.list_arguments() == ['data', 'sm_label']
    assert net.list_outputs() == ['sm_output']
    assert net.infer_shape(data=(5, 3)) == ([(5, 3), (5,)], [(5, 3)], [])
    assert net.infer_shape_partial()[0] == [(), ()]
    assert net.infer_type(data='float64')[1] == [np.float64]
    assert 'op_type' in net.list_attr()


def _train(net, steps, x, labels, lr=0.5):
    exe = net.simple_bind(mx.cpu(), data=x.shape)
    rng = np.random.default_rng(1)
    exe.arg_dict['fc_weight'][:] = rng.standard_normal(exe.arg_dict['fc_weight'].shape) * 0.1
    exe.arg_dict['fc_bias'][:] = 0
    label_name = next(n for n in net.list_arguments() if n.endswith('label'))
    for _ in range(steps):
        exe.forward(is_train=True, data=x, **{label_name: labels})
        exe.backward()
        for name in ('fc_weight', 'fc_bias'):
            exe.arg_dict[name][:] = exe.arg_dict[name] - lr / len(x) * exe.grad_dict[name]
    return exe


def test_custom_softmax_trains_like_softmax_output(engine_kind):
    rng = np.random.default_rng(0)
    centers = np.array([[2, 0], [-2, 0], [0, 2]], np.float32)
    labels = np.arange(30) % 3
    x = (centers[labels] + 0.3 * rng.standard_normal((30, 2))).astype(np.float32)
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
    custom = _train(mx.sym.Custom(fc, op_type='test_softmax', name='sm'), 1, x, labels)
    builtin = _train(mx.sym.SoftmaxOutput(fc, name='sm'), 1, x, labels)
    # same gradient formula: one step from the same start gives the same weights
    for name in ('fc_weight', 'fc_bias'):
        np.testing.assert_allclose(custom.grad_dict[name].asnumpy(),
                                   builtin.grad_dict[name].asnumpy(), rtol=1e-5, atol=1e-6)
    trained = _train(mx.sym.Custom(fc, op_type='test_softmax', name='sm'), 30, x, labels)
    probs = trained.forward(is_train=False, data=x)[0].asnumpy()
    assert (probs.argmax(axis=1) == labels).mean() == 1.0
    np.testing.assert_allclose(probs.sum(axis=1), 1, rtol=1e-5)


def test_kwargs_aux_state_and_operator_reuse():
    net = mx.sym.Custom(mx.sym.var('data'), op_type='test_scaled_square', scale=3, name='sq')
    assert net.list_auxiliary_states() == ['sq_count']
    assert net.attr('scale') == '3'
    exe = net.simple_bind(mx.cpu(), data=(2, 2))
    x = np.array([[1, 2], [3, -4]], np.float32)
    for _ in range(2):
        out = exe.forward(is_train=True, data=x)[0].asnumpy()
        exe.backward([mx.nd.ones((2, 2))])
    np.testing.assert_allclose(out, 3 * x * x)
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), 6 * x)
    np.testing.assert_allclose(exe.aux_dict['sq_count'].asnumpy(), [2])


def test_grad_req_add_reaches_the_custom_op():
    net = mx.sym.Custom(mx.sym.var('data'), op_type='test_scaled_square', scale='0.5')
    exe = net.simple_bind(mx.cpu(), grad_req='add', data=(3,))
    x = np.array([1, 2, 3], np.float32)
    for _ in range(2):
        exe.forward(is_train=True, data=x)
        exe.backward([mx.nd.ones((3,))])
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), 2 * x)


def test_error_in_forward_surfaces_at_next_wait(engine_kind):
    y = mx.nd.Custom(mx.nd.array([-1.0, -2.0]), op_type='test_failing')   # does not raise
    with pytest.raises(ValueError, match="negative input rejected") as info:
        y.asnumpy()
    assert any("Custom[test_failing].forward" in n for n in getattr(info.value, '__notes__',
                                                                       []))
    z = mx.nd.Custom(mx.nd.array([-1.0]), op_type='test_failing') + 1     # downstream op
    with pytest.raises(ValueError, match="negative input rejected"):
        z.wait_to_read()
    np.testing.assert_array_equal(                                      # the engine goes on
        mx.nd.Custom(mx.nd.array([1.0, 2.0]), op_type='test_failing').asnumpy(), [1, 2])
    _drain_engine_errors()


def test_error_in_backward_surfaces_at_gradient_wait():
    net = mx.sym.Custom(mx.sym.var('data'), op_type='test_failing')
    exe = net.simple_bind(mx.cpu(), data=(2,))
    exe.forward(is_train=True, data=np.array([1, 2], np.float32))
    exe.backward([mx.nd.ones((2,))])
    with pytest.raises(KeyError, match="backward is broken"):
        exe.grad_dict['data'].asnumpy()
    np.testing.assert_array_equal(exe.forward(is_train=False)[0].asnumpy(), [1, 2])
    _drain_engine_errors()


def test_error_in_user_infer_shape_raises_at_once():
    @mx.operator.register("test_bad_shape")
    class BadShapeProp(mx.operator.CustomOpProp):
        def infer_shape(self, in_shape):
            raise RuntimeError("cannot infer")
    with pytest.raises(MXNetError, match=r"Custom\[test_bad_shape\]: infer_shape failed.*"
                                         r"cannot infer"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type='test_bad_shape')


def test_unknown_op_type_and_bad_registrations():
    with pytest.raises(MXNetError, match="'nope' is not a registered custom operator"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type='nope')
    with pytest.raises(TypeError, match="required parameter 'op_type'"):
        mx.sym.Custom(mx.sym.var('data'))
    with pytest.raises(TypeError, match="expected a CustomOpProp subclass"):
        mx.operator.register("test_not_a_prop")(object)
    with pytest.raises(TypeError, match=r"Custom\[test_scaled_square\]: ScaledSquareProp"):
        mx.nd.Custom(mx.nd.ones((2,)), mx.nd.ones((1,)), op_type='test_scaled_square',
                     unknown='1')


def test_assign_modes():
    op = mx.operator.CustomOp()
    dst = mx.nd.array([1.0, 2.0])
    op.assign(dst, 'null', mx.nd.array([5.0, 5.0]))
    op.assign(dst, 'add', mx.nd.array([1.0, 1.0]))
    op.assign(dst, 'add', 1.0)
    np.testing.assert_array_equal(dst.asnumpy(), [3, 4])
    op.assign(dst, 'write', np.array([7.0, 8.0]))
    np.testing.assert_array_equal(dst.asnumpy(), [7, 8])
    with pytest.raises(ValueError, match="req must be"):
        op.assign(dst, 'overwrite', 1.0)


def test_default_prop_declarations():
    prop = mx.operator.CustomOpProp()
    assert prop.list_arguments() == ['data'] and prop.list_outputs() == ['output']
    assert prop.infer_shape([[2, 3]])[1] == ([2, 3],)
    assert prop.declare_backward_dependency([1], [2], [3]) == [1, 2, 3]
    assert mx.operator.CustomOpProp(need_top_grad=False).declare_backward_dependency(
        [1], [2], [3]) == [2, 3]


def test_each_executor_gets_its_own_operator_instance():
    created = []

    class Remember(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.x = in_data[0].asnumpy()           # state kept for backward
            self.assign(out_data[0], req[0], in_data[0])

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], mx.nd.array(self.x) * out_grad[0])

    @mx.operator.register("test_remember")
    class RememberProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            created.append(1)
            return Remember()
    net = mx.sym.Custom(mx.sym.var('data'), op_type='test_remember')
    a = net.simple_bind(mx.cpu(), data=(2,))
    b = net.simple_bind(mx.cpu(), data=(2,))
    a.forward(is_train=True, data=np.array([1, 2], np.float32))
    b.forward(is_train=True, data=np.array([5, 7], np.float32))
    a.backward([mx.nd.ones((2,))])
    b.backward([mx.nd.ones((2,))])
    np.testing.assert_array_equal(a.grad_dict['data'].asnumpy(), [1, 2])
    np.testing.assert_array_equal(b.grad_dict['data'].asnumpy(), [5, 7])
    a.forward(is_train=True)
    assert len(created) == 2


def test_json_round_trip_keeps_custom_kwargs():
    net = mx.sym.Custom(mx.sym.var('data'), op_type='test_scaled_square', scale=3)
    loaded = mx.sym.load_json(net.tojson())
    out = loaded.simple_bind(mx.cpu(), data=(2,)).forward(
        data=np.array([1, 2], np.float32))[0]
    np.testing.assert_allclose(out.asnumpy(), [3, 12])
