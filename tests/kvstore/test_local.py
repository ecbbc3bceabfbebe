"""mx.kv.create('local'): init / push / pull / pushpull / updaters, MXNet 1.x semantics."""
import threading

import numpy as np
import pytest

import mxcy as mx

SHAPE = (2, 3)


@pytest.fixture(params=['ThreadedEngine', 'NaiveEngine'])
def engine_type(request):
    old = mx.engine.engine_type()
    mx.engine.set_engine_type(request.param)
    yield request.param
    mx.nd.waitall()
    mx.engine.set_engine_type(old)


def value(x, shape=SHAPE, dtype='float32'):
    return mx.nd.full(shape, x, dtype=dtype)


def pulled(kv, key, shape=SHAPE):
    out = mx.nd.zeros(shape)
    kv.pull(key, out=out)
    return out.asnumpy()


class MomentumSGD:
    """An object with MXNet's Optimizer interface (create_state / update)."""

    def __init__(self, lr=0.1, momentum=0.9):
        self.lr, self.momentum = lr, momentum
        self.created = []

    def create_state(self, index, weight):
        self.created.append(index)
        return mx.nd.zeros(weight.shape, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        state *= self.momentum
        state -= grad * self.lr
        weight += state


class TupleStateOptimizer(MomentumSGD):
    """States that are tuples with a None inside, as MXNet's Adam/multi-precision use."""

    def create_state(self, index, weight):
        return (mx.nd.zeros(weight.shape), (mx.nd.ones(weight.shape), None))

    def update(self, index, weight, grad, state):
        mom, (count, _) = state
        mom[:] = mom * self.momentum + grad
        count += 1
        weight -= mom * self.lr


# ---------------------------------------------------------------- MXNet docs examples
def test_mxnet_docs_examples(engine_type):
    kv = mx.kv.create('local')
    assert (kv.type, kv.rank, kv.num_workers) == ('local', 0, 1)
    kv.init(3, mx.nd.ones(SHAPE) * 2)
    a = mx.nd.zeros(SHAPE)
    kv.pull(3, out=a)
    assert a.asnumpy().tolist() == [[2, 2, 2], [2, 2, 2]]
    kv.push(3, mx.nd.ones(SHAPE) * 8)                 # no updater: the value is replaced
    assert np.all(pulled(kv, 3) == 8)
    kv.push(3, [mx.nd.ones(SHAPE)] * 4)               # values for one key are summed
    assert np.all(pulled(kv, 3) == 4)
    calls = []

    def update(key, input, stored):
        calls.append(key)
        stored += input * 2
    kv._set_updater(update)
    assert np.all(pulled(kv, 3) == 4)
    kv.push(3, mx.nd.ones(SHAPE))
    assert np.all(pulled(kv, 3) == 6) and calls == [3]
    b = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)]
    kv.pull(3, out=b)                                 # every output gets the value
    assert np.all(b[0].asnumpy() == 6) and np.all(b[1].asnumpy() == 6)


def test_lists_of_keys_and_str_keys(engine_type):
    kv = mx.kv.create('device')
    assert kv.type == 'device'
    kv.init(['w1', 'w2', 'w3'], [value(1), value(0), value(5)])
    outs = [mx.nd.zeros(SHAPE) for _ in range(3)]
    kv.pull(['w1', 'w2', 'w3'], out=outs)
    assert [o.asnumpy()[0, 0] for o in outs] == [1, 0, 5]
    kv.push(['w1', 'w2'], [[value(1), value(1)], [value(3)] * 3])
    nested = [[mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)], mx.nd.zeros(SHAPE)]
    kv.pull(['w1', 'w2'], out=nested)
    assert nested[0][0].asnumpy()[0, 0] == 2 and nested[0][1].asnumpy()[0, 0] == 2
    assert np.all(nested[1].asnumpy() == 9)
    assert np.all(pulled(kv, 'w3') == 5)              # untouched


def test_repeated_keys_in_one_push_are_summed():
    kv = mx.kv.create()
    kv.init([1, 2], [value(0), value(0)])
    kv.push([1, 2, 1], [value(1), value(5), value(10)])
    assert np.all(pulled(kv, 1) == 11) and np.all(pulled(kv, 2) == 5)
    outs = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)]
    kv.pull([1, 1], out=outs)
    assert all(np.all(o.asnumpy() == 11) for o in outs)


def test_init_and_push_copy_their_values():
    kv = mx.kv.create('local')
    x = mx.nd.ones(SHAPE)
    kv.init(1, x)
    x[:] = 5
    assert np.all(pulled(kv, 1) == 1)
    kv.push(1, x)
    x[:] = 7                                          # MXNet may alias here; mxcy copies
    assert np.all(pulled(kv, 1) == 5)


def test_numpy_integer_keys_and_tuple_values():
    kv = mx.kv.create('local')
    kv.init((np.int64(4), 5), (value(1), value(2)))
    kv.push(np.int32(4), (value(3), value(4)))
    assert np.all(pulled(kv, 4) == 7) and np.all(pulled(kv, 5) == 2)


def test_pull_casts_to_the_output_dtype():
    kv = mx.kv.create('local')
    kv.init('steps', mx.nd.array([1, 2, 2 ** 40], dtype='int64'))
    out = mx.nd.zeros((3,), dtype='float64')
    kv.pull('steps', out=out)
    assert out.dtype == np.float64 and out.asnumpy().tolist() == [1.0, 2.0, 2.0 ** 40]


def test_pushpull():
    kv = mx.kv.create('local')
    kv.init(0, mx.nd.zeros(SHAPE))
    a = mx.nd.zeros(SHAPE)
    kv.pushpull(0, mx.nd.ones(SHAPE), out=a)
    assert np.all(a.asnumpy() == 1)
    kv.pushpull(0, [mx.nd.ones(SHAPE)] * 3)           # no out: a push
    assert np.all(pulled(kv, 0) == 3)
    outs = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)]
    kv.pushpull(0, [value(2), value(2)], out=outs)
    assert all(np.all(o.asnumpy() == 4) for o in outs)
    with pytest.raises(ValueError, match=r'pushpull: out 0 for key 0 has shape \(3,\)'):
        kv.pushpull(0, value(9), out=mx.nd.zeros(3))
    assert np.all(pulled(kv, 0) == 4)                 # the failed call pushed nothing


def test_broadcast():
    kv = mx.kv.create('local')
    out = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)]
    kv.broadcast('w', value(3), out=out)
    assert all(np.all(o.asnumpy() == 3) for o in out)
    assert np.all(pulled(kv, 'w') == 3)


# ---------------------------------------------------------------- asynchrony
def test_push_and_pull_do_not_wait():
    """kv calls only push engine ops: they return while their input is still being written."""
    old_engine = mx.engine.engine_type()
    mx.engine.set_engine_type('ThreadedEngine')     # NaiveEngine would run the gate inline
    try:
        _check_push_and_pull_do_not_wait()
    finally:
        mx.engine.set_engine_type(old_engine)


def _check_push_and_pull_do_not_wait():
    kv = mx.kv.create('local')
    kv.init(1, mx.nd.zeros(SHAPE))
    grad = mx.nd.zeros(SHAPE)
    release, timed_out = threading.Event(), []

    def slow_writer():
        if not release.wait(10):
            timed_out.append(True)
        grad._np_view()[...] = 4.0
    mx.engine.push(slow_writer, (), [grad], name='slow_writer')
    out = mx.nd.zeros(SHAPE)
    kv.push(1, [grad, grad])
    kv.pull(1, out=out)
    kv.pushpull(1, grad, out=out)
    returned_before_release = not release.is_set()
    release.set()
    assert returned_before_release and not timed_out
    assert np.all(out.asnumpy() == 4.0)


def test_updater_ops_ordered_with_user_ops(engine_type):
    kv = mx.kv.create('local')
    kv.set_optimizer(MomentumSGD(lr=0.5, momentum=0.0))
    kv.init(0, value(10))
    weight = mx.nd.zeros(SHAPE)
    for step in range(20):
        grad = weight * 0 + step                      # depends on the previous pull
        kv.push(0, grad)
        kv.pull(0, out=weight)
    assert np.allclose(weight.asnumpy(), 10 - 0.5 * sum(range(20)))


# ---------------------------------------------------------------- optimizers
def test_set_optimizer_matches_numpy_momentum_sgd(engine_type):
    kv = mx.kv.create('local')
    opt = MomentumSGD(lr=0.1, momentum=0.9)
    rng = np.random.RandomState(0)
    w0 = {'fc_weight': rng.randn(*SHAPE), 'fc_bias': rng.randn(3)}
    kv.init(list(w0), [mx.nd.array(w) for w in w0.values()])
    kv.set_optimizer(opt)
    ref_w = {k: v.astype(np.float32) for k, v in w0.items()}
    ref_m = {k: np.zeros_like(v) for k, v in ref_w.items()}
    for _ in range(5):
        grads = {k: [rng.randn(*v.shape).astype(np.float32) for _ in range(2)]
                 for k, v in w0.items()}
        kv.push(list(grads), [[mx.nd.array(g) for g in gs] for gs in grads.values()])
        for k, gs in grads.items():
            ref_m[k] = ref_m[k] * np.float32(0.9) - (gs[0] + gs[1]) * np.float32(0.1)
            ref_w[k] = ref_w[k] + ref_m[k]
    outs = [mx.nd.zeros(v.shape) for v in w0.values()]
    kv.pull(list(w0), out=outs)
    for k, o in zip(w0, outs):
        assert np.allclose(o.asnumpy(), ref_w[k], rtol=1e-5, atol=1e-6)
    assert sorted(opt.created) == ['fc_bias', 'fc_weight']    # one state per key


def test_updater_prefers_multi_precision_methods():
    class MP(MomentumSGD):
        def create_state_multi_precision(self, index, weight):
            return ('mp', self.create_state(index, weight))

        def update_multi_precision(self, index, weight, grad, state):
            assert state[0] == 'mp'
            self.update(index, weight, grad, state[1])
    kv = mx.kv.create('local')
    kv.init(0, value(1))
    kv.set_optimizer(MP(lr=1.0, momentum=0.0))
    kv.push(0, value(0.25))
    assert np.allclose(pulled(kv, 0), 0.75)


def test_save_and_load_optimizer_states(tmp_path):
    path = str(tmp_path / 'kv.states')
    kv = mx.kv.create('local')
    kv.init([0, 1], [value(1), value(2)])
    kv.set_optimizer(TupleStateOptimizer(lr=0.1, momentum=0.5))
    for _ in range(3):
        kv.push([0, 1], [value(1), value(2)])
    kv.save_optimizer_states(path)
    saved_weights = [pulled(kv, 0), pulled(kv, 1)]
    for step in range(2):
        kv.push([0, 1], [value(step), value(2)])
    expected = [pulled(kv, 0), pulled(kv, 1)]

    # a fresh store with the saved weights and states continues exactly the same way
    kv2 = mx.kv.create('local')
    kv2.init([0, 1], [mx.nd.array(w) for w in saved_weights])
    kv2.set_optimizer(TupleStateOptimizer(lr=0.1, momentum=0.5))
    kv2.load_optimizer_states(path)
    mom, (count, nothing) = kv2._updater.states[0]
    assert nothing is None and np.all(count.asnumpy() == 4)
    assert np.allclose(mom.asnumpy(), 1 + 0.5 + 0.25)
    for step in range(2):
        kv2.push([0, 1], [value(step), value(2)])
    assert np.array_equal(pulled(kv2, 0), expected[0])
    assert np.array_equal(pulled(kv2, 1), expected[1])
    assert not np.array_equal(expected[0], saved_weights[0])

    kv3 = mx.kv.create('local')
    with pytest.raises(mx.MXNetError, match='no optimizer is set'):
        kv3.save_optimizer_states(path)
    with pytest.raises(TypeError, match='dump_optimizer=True'):
        kv2.save_optimizer_states(path, dump_optimizer=True)
    not_states = tmp_path / 'plain.nd'
    mx.nd.save(str(not_states), [mx.nd.ones(2)])
    with pytest.raises(ValueError, match="not an mxcy optimizer-states file"):
        kv2.load_optimizer_states(str(not_states))


def test_optimizer_states_with_str_keys_round_trip():
    from mxcy.kvstore import Updater
    up = Updater(MomentumSGD())
    w = value(1)
    up('fc_weight', value(1), w)
    up(7, value(2), w)
    other = Updater(MomentumSGD())
    other.set_states(up.get_states())
    assert sorted(map(str, other.states)) == ['7', 'fc_weight']
    assert np.allclose(other.states['fc_weight'].asnumpy(), -0.1)
    assert np.allclose(other.states[7].asnumpy(), -0.2)


# ---------------------------------------------------------------- errors
def test_mixed_key_types_are_rejected():
    kv = mx.kv.create('local')
    kv.init(3, value(1))
    with pytest.raises(mx.MXNetError, match='mixing int and str keys.*uses int keys'):
        kv.init('x', value(1))
    with pytest.raises(mx.MXNetError, match='mixing int and str keys'):
        kv.pull('3', out=mx.nd.zeros(SHAPE))
    kv2 = mx.kv.create('local')
    with pytest.raises(mx.MXNetError, match='mixing int and str keys'):
        kv2.init([1, 'b'], [value(1), value(2)])
    kv2.init(['a'], [value(1)])                       # the failed init left no key type
    with pytest.raises(mx.MXNetError, match='uses str keys'):
        kv2.push(4, value(1))


def test_uninitialised_and_reinitialised_keys():
    kv = mx.kv.create('local')
    kv.init(3, value(1))
    with pytest.raises(mx.MXNetError, match='pull: key 99 has not been initialised'):
        kv.pull(99, out=mx.nd.zeros(SHAPE))
    with pytest.raises(mx.MXNetError, match='push: key 99 has not been initialised'):
        kv.push(99, value(1))
    with pytest.raises(mx.MXNetError, match='init: key 3 is already initialised'):
        kv.init(3, value(1))
    with pytest.raises(mx.MXNetError, match='init: key 10 is already initialised'):
        kv.init([10, 10], [value(1), value(2)])
    with pytest.raises(ValueError, match='init: key 11 needs exactly one value, got 2'):
        kv.init(11, [value(1), value(2)])
    kv.init(10, value(5))                             # failed inits stored nothing
    assert np.all(pulled(kv, 10) == 5)


def test_shape_and_dtype_mismatches_name_both():
    kv = mx.kv.create('local')
    kv.init([1, 2], [value(1), value(2)])
    with pytest.raises(ValueError, match=r'push: value 1 for key 1 has shape \(3, 3\), but '
                                         r'the stored value has shape \(2, 3\)'):
        kv.push(1, [value(1), value(1, shape=(3, 3))])
    with pytest.raises(ValueError, match=r'pull: out 0 for key 2 has shape \(3,\), but the '
                                         r'stored value has shape \(2, 3\)'):
        kv.pull(2, out=mx.nd.zeros(3))
    with pytest.raises(TypeError, match='push: value 0 for key 1 has dtype float64, but the '
                                        'stored value has dtype float32'):
        kv.push(1, value(1, dtype='float64'))
    # a failing multi-key push changes no key
    with pytest.raises(ValueError, match='key 2'):
        kv.push([1, 2], [value(100), value(1, shape=(1,))])
    assert np.all(pulled(kv, 1) == 1) and np.all(pulled(kv, 2) == 2)


@pytest.mark.parametrize('call,exc,pattern', [
    (lambda kv: kv.init(1.5, value(1)), TypeError, 'init: keys must be int or str, got float'),
    (lambda kv: kv.init(True, value(1)), TypeError, 'keys must be int or str, got bool'),
    (lambda kv: kv.init([1, 2], [value(1)]), ValueError, '2 keys need a list of 2 values'),
    (lambda kv: kv.init(1, np.ones(SHAPE)), TypeError, 'value for key 1 must be an NDArray'),
    (lambda kv: kv.init(1, []), TypeError, 'non-empty list'),
    (lambda kv: kv.push(0, [value(1), 3]), TypeError, 'push: value 1 for key 0 must be an'),
    (lambda kv: kv.pull(0), ValueError, 'pull: out is required'),
    (lambda kv: kv.push(0, value(1), priority='high'), TypeError, 'priority must be an int'),
    (lambda kv: kv._set_updater(5), TypeError, 'updater must be callable'),
    (lambda kv: kv.set_optimizer(object()), TypeError, 'expected an Optimizer'),
    (lambda kv: kv.is_capable('teleport'), ValueError, 'unknown capability'),
])
def test_argument_errors(call, exc, pattern):
    kv = mx.kv.create('local')
    kv.init(0, value(0))
    with pytest.raises(exc, match=pattern):
        call(kv)


def test_create():
    for name in ('local', 'device', 'local_allreduce_cpu'):
        kv = mx.kv.create(name)
        assert kv.type == name and isinstance(kv, mx.kv.KVStore)
    assert mx.kv.create().type == 'local'
    assert mx.kvstore.create is mx.kv.create
    assert mx.kv.create().is_capable(mx.kv.KVStore.OPTIMIZER)
    with pytest.raises(ValueError, match="unknown or unavailable KVStore type 'foo'"):
        mx.kv.create('foo')
    with pytest.raises(TypeError, match='name must be a str'):
        mx.kv.create(3)


def test_pushpull_without_out_writes_into_value():
    """MXNet 1.9.1: the summed value comes back into `value` (and each array of a list)."""
    kv = mx.kv.create('local')
    kv.init(3, mx.nd.ones((2,)))
    v = mx.nd.ones((2,)) * 5
    kv.pushpull(3, v)
    np.testing.assert_array_equal(v.asnumpy(), [5, 5])
    vs = [mx.nd.ones((2,)), mx.nd.ones((2,)) * 2]
    kv.pushpull(3, vs)
    for arr in vs:
        np.testing.assert_array_equal(arr.asnumpy(), [3, 3])
