"""The Optimizer base class: create/register, lr and wd multipliers, update counts and
schedulers, and the Updater with its states file (data, never a pickle)."""
import json

import numpy as np
import pytest

import mxcy as mx
from mxcy.optimizer import Optimizer


# ---------------------------------------------------------------- create / register
def test_create_by_name_alias_instance_dict_and_json():
    sgd = mx.optimizer.create('SGD', momentum=0.9, learning_rate=0.5)
    assert type(sgd) is mx.optimizer.SGD and (sgd.momentum, sgd.lr) == (0.9, 0.5)
    # MXNet's deprecated ccSGD: a subclass of SGD registered as 'ccsgd'
    assert type(mx.optimizer.create('ccsgd')) is mx.optimizer.ccSGD
    assert issubclass(mx.optimizer.ccSGD, mx.optimizer.SGD)
    assert mx.optimizer.create(sgd) is sgd
    from_dict = mx.optimizer.create({'name': 'adam', 'beta1': 0.5})
    assert type(from_dict) is mx.optimizer.Adam and from_dict.beta1 == 0.5
    spec = json.dumps(['rmsprop', {'centered': True, 'learning_rate': 0.1}])
    from_json = mx.optimizer.create(spec)
    assert type(from_json) is mx.optimizer.RMSProp and from_json.centered
    assert from_json.lr == 0.1
    assert type(Optimizer.create_optimizer('lamb')) is mx.optimizer.LAMB
    assert mx.opt is mx.optimizer


def test_create_errors_are_clear():
    with pytest.raises(ValueError, match=r"unknown optimizer 'sgdd'; registered: .*'sgd'"):
        mx.optimizer.create('sgdd')
    with pytest.raises(ValueError, match='an instance was given'):
        mx.optimizer.create(mx.optimizer.SGD(), momentum=0.9)
    with pytest.raises(TypeError, match='unexpected keyword'):
        mx.optimizer.create('sgd', momentun=0.9)


def test_register_a_custom_optimizer():
    @mx.optimizer.register
    class HalfStep(Optimizer):
        def update(self, index, weight, grad, state):
            lr, wd = self._begin_update(index, weight, grad)
            weight -= grad * (0.5 * lr)

    opt = mx.optimizer.create('halfstep', learning_rate=1.0)
    w = mx.nd.ones((2,))
    mx.optimizer.get_updater(opt)(0, mx.nd.ones((2,)), w)
    assert np.array_equal(w.asnumpy(), [0.5, 0.5])
    with pytest.raises(TypeError, match='can only register subclasses of Optimizer'):
        mx.optimizer.register(dict)


def test_base_defaults_and_argument_checks():
    opt = Optimizer()
    assert (opt.rescale_grad, opt.wd, opt.clip_gradient, opt.lr, opt.lr_scheduler,
            opt.begin_num_update, opt.num_update, opt.multi_precision) == \
        (1.0, 0.0, None, 0.01, None, 0, 0, False)
    assert opt.idx2name == {} and opt.lr_mult == {} and opt.wd_mult == {}
    with pytest.raises(NotImplementedError, match='Optimizer must implement update'):
        opt.update(0, mx.nd.ones(1), mx.nd.ones(1), None)
    with pytest.raises(TypeError, match='param_idx2name must be a dict'):
        Optimizer(param_idx2name=['fc_weight'])
    with pytest.raises(ValueError, match='begin_num_update must be an int >= 0'):
        Optimizer(begin_num_update=-1)
    with pytest.raises(TypeError, match='lr_scheduler must be an LRScheduler'):
        Optimizer(lr_scheduler=0.1)
    with pytest.raises(TypeError, match='rescale_grad must be a number'):
        Optimizer(rescale_grad='1')


# ---------------------------------------------------------------- multipliers
def test_wd_mult_defaults_follow_mxnet_names():
    names = {0: 'fc1_weight', 1: 'fc1_bias', 2: 'bn_gamma', 3: 'bn_beta', 4: 'embed'}
    opt = Optimizer(wd=0.5, param_idx2name=names)
    assert opt.wd_mult == {'fc1_bias': 0.0, 'bn_beta': 0.0, 'embed': 0.0}
    assert [opt._get_wd(i) for i in range(5)] == [0.5, 0.0, 0.5, 0.0, 0.0]
    opt.set_wd_mult({'fc1_bias': 2.0, 0: 3.0})
    assert [opt._get_wd(i) for i in range(5)] == [1.5, 1.0, 0.5, 0.0, 0.0]
    assert opt._get_wd(99) == 0.5                       # unknown index: multiplier 1


def test_lr_mult_by_index_then_name():
    opt = Optimizer(learning_rate=0.1, param_idx2name={0: 'a_weight', 1: 'b_weight'})
    opt.set_lr_mult({'a_weight': 2.0, 1: 0.5, 'b_weight': 10.0})
    assert opt._get_lr(0) == pytest.approx(0.2)
    assert opt._get_lr(1) == pytest.approx(0.05)        # the index wins over the name
    assert opt._get_lrs([0, 1, 7]) == pytest.approx([0.2, 0.05, 0.1])
    with pytest.raises(TypeError, match='set_lr_mult: expected a dict'):
        opt.set_lr_mult([2.0])


def test_multipliers_from_symbol_attributes():
    w = mx.sym.Variable('fc_weight', lr_mult=2.0, wd_mult=0.5)
    b = mx.sym.Variable('fc_bias', wd_mult=3.0)
    net = mx.sym.FullyConnected(mx.sym.Variable('data'), weight=w, bias=b, num_hidden=3,
                                name='fc')
    names = {0: 'fc_weight', 1: 'fc_bias'}
    opt = Optimizer(learning_rate=0.1, wd=0.01, sym=net, param_idx2name=names)
    assert opt.lr_mult == {'fc_weight': 2.0}
    assert opt.wd_mult == {'fc_weight': 0.5, 'fc_bias': 3.0}    # the attribute beats 0
    assert opt._get_lr(0) == pytest.approx(0.2) and opt._get_wd(1) == pytest.approx(0.03)
    opt.set_lr_mult({'fc_weight': 1.0})                          # explicit beats sym
    assert opt._get_lr(0) == pytest.approx(0.1)


def test_param_dict_multipliers_win():
    class Param:
        lr_mult, wd_mult = 4.0, 0.0
    opt = Optimizer(learning_rate=0.1, wd=0.1, param_dict={0: Param()})
    opt.set_lr_mult({0: 2.0})
    assert opt._get_lr(0) == pytest.approx(0.4) and opt._get_wd(0) == 0.0


# ---------------------------------------------------------------- counts and schedules
def test_update_counts_per_index_and_device():
    opt = Optimizer(begin_num_update=10)
    opt._update_count(0)
    opt._update_count([0, 1])
    assert opt._index_update_count == {0: 12, 1: 11} and opt.num_update == 12
    opt._set_current_context(1)
    opt._update_count(0)
    assert opt._index_update_count == {0: 11} and opt.num_update == 12
    opt._set_current_context(0)
    assert opt._index_update_count == {0: 12, 1: 11}


def test_scheduler_drives_the_rate_through_num_update():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5)
    opt = mx.optimizer.SGD(learning_rate=1.0, lr_scheduler=sched)
    assert sched.base_lr == 1.0                   # the optimizer's rate wins (MXNet)
    w = mx.nd.zeros((1,), dtype='float64')
    seen = []
    for _ in range(5):
        before = w.asnumpy()[0]
        opt.update(0, w, mx.nd.ones((1,), dtype='float64'), None)
        seen.append(before - w.asnumpy()[0])
    assert seen == pytest.approx([1.0, 1.0, 0.5, 0.5, 0.25])
    assert opt.learning_rate == pytest.approx(0.25)
    with pytest.raises(UserWarning, match='has an lr_scheduler'):
        opt.set_learning_rate(0.1)
    plain = mx.optimizer.SGD()
    plain.set_learning_rate(0.3)
    assert plain.learning_rate == 0.3
    plain.learning_rate = 0.2
    assert plain.lr == 0.2
    with pytest.raises(UserWarning, match='has an lr_scheduler'):
        opt.learning_rate = 0.1


def test_pickle_drops_param_dict():
    import pickle

    class Param:
        lr_mult, wd_mult = 2.0, 1.0
    opt = mx.optimizer.Adam(learning_rate=0.3, param_dict={0: Param()},
                            lr_scheduler=mx.lr_scheduler.FactorScheduler(step=2))
    opt._update_count(0)
    copy = pickle.loads(pickle.dumps(opt))
    assert copy.param_dict == {} and copy.lr == 0.3 and copy.num_update == 1
    assert copy.lr_scheduler.step == 2 and copy._index_update_count == {0: 1}


# ---------------------------------------------------------------- Updater
def test_updater_creates_state_once_and_accepts_lists_and_bytes():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.5)
    updater = mx.optimizer.get_updater(opt)
    w0, w1 = mx.nd.zeros((2,)), mx.nd.zeros((3,))
    updater([0, b'fc_bias'], [mx.nd.ones((2,)), mx.nd.ones((3,))], [w0, w1])
    first = updater.states[0]
    updater(0, mx.nd.ones((2,)), w0)
    assert updater.states[0] is first and set(updater.states) == {0, 'fc_bias'}
    np.testing.assert_allclose(w0.asnumpy(), -0.1 - 0.15)
    np.testing.assert_allclose(w1.asnumpy(), -0.1)
    with pytest.raises(ValueError, match='2 indices need lists of 2 grads and weights'):
        updater([0, 1], [mx.nd.ones((2,))], [w0])


def test_sync_state_context_keeps_structure():
    updater = mx.optimizer.get_updater(mx.optimizer.SGD())
    a, b = mx.nd.ones((2,)), mx.nd.zeros((2,))
    synced = updater.sync_state_context((a, [b, None], 3), mx.cpu())
    assert synced[0] is a and isinstance(synced[1], list) and synced[1][0] is b
    assert synced[1][1] is None and synced[2] == 3


def _train(updater, weights, steps, seed):
    rng = np.random.RandomState(seed)
    for _ in range(steps):
        for i, w in weights.items():
            updater(i, mx.nd.array(rng.randn(*w.shape), dtype=w.dtype), w)


@pytest.mark.parametrize('name, kwargs', [
    ('adam', {'wd': 0.01}),
    ('sgd', {'momentum': 0.9, 'multi_precision': True}),
    ('rmsprop', {'centered': True}),
    ('signum', {'momentum': 0.0}),
])
def test_states_round_trip_continues_training_exactly(name, kwargs):
    def fresh_weights():
        dtype = 'float16' if kwargs.get('multi_precision') else 'float32'
        return {0: mx.nd.ones((3, 2), dtype=dtype), 'fc_bias': mx.nd.zeros((2,), dtype=dtype)}
    sched = lambda: mx.lr_scheduler.FactorScheduler(step=3, factor=0.5)  # noqa: E731
    up = mx.optimizer.get_updater(mx.optimizer.create(name, lr_scheduler=sched(), **kwargs))
    weights = fresh_weights()
    _train(up, weights, 4, seed=1)
    blob = up.get_states()
    saved = {i: w.asnumpy() for i, w in weights.items()}
    _train(up, weights, 3, seed=2)
    expected = {i: w.asnumpy() for i, w in weights.items()}

    up2 = mx.optimizer.get_updater(mx.optimizer.create(name, lr_scheduler=sched(),
                                                       **kwargs))
    up2.set_states(blob)
    assert up2.optimizer.num_update == 4                    # counts come back too
    assert up2.optimizer._index_update_count == {0: 4, 'fc_bias': 4}
    weights2 = {i: mx.nd.array(w, dtype=w.dtype) for i, w in saved.items()}
    _train(up2, weights2, 3, seed=2)
    for i in expected:
        assert np.array_equal(weights2[i].asnumpy(), expected[i]), i


def test_dump_optimizer_restores_hyperparameters_and_scheduler():
    sched = mx.lr_scheduler.MultiFactorScheduler(step=[2, 5], factor=0.1)
    names = {0: 'fc_weight', 1: 'fc_bias'}
    opt = mx.optimizer.Adam(learning_rate=0.2, beta1=0.8, wd=0.1, lr_scheduler=sched,
                            param_idx2name=names, clip_gradient=2.0)
    opt.set_lr_mult({'fc_weight': 3.0})
    up = mx.optimizer.get_updater(opt)
    _train(up, {0: mx.nd.ones((2,)), 1: mx.nd.ones((2,))}, 3, seed=0)
    up2 = mx.optimizer.get_updater(mx.optimizer.SGD())
    up2.set_states(up.get_states(dump_optimizer=True))
    new = up2.optimizer
    assert type(new) is mx.optimizer.Adam and new is not opt
    for attr in ('lr', 'beta1', 'beta2', 'epsilon', 'wd', 'clip_gradient', 'idx2name',
                 'lr_mult', 'wd_mult', 'num_update', '_all_index_update_counts'):
        assert getattr(new, attr) == getattr(opt, attr), attr
    assert new._index_update_count is new._all_index_update_counts[0]
    assert type(new.lr_scheduler) is mx.lr_scheduler.MultiFactorScheduler
    assert new.lr_scheduler is not sched and vars(new.lr_scheduler) == vars(sched)
    assert new.learning_rate == pytest.approx(opt.learning_rate)
    assert new.param_dict == {}


def test_dump_optimizer_refuses_what_it_cannot_save_as_data():
    class Duck:
        def create_state(self, index, weight):
            return None

        def update(self, index, weight, grad, state):
            pass
    with pytest.raises(TypeError, match='dump_optimizer=True saves only mxcy'):
        mx.optimizer.Updater(Duck()).get_states(dump_optimizer=True)
    opt = mx.optimizer.SGD()
    opt.callback = print
    with pytest.raises(TypeError, match=r"cannot save the optimizer\['callback'\]"):
        mx.optimizer.get_updater(opt).get_states(dump_optimizer=True)
    up = mx.optimizer.get_updater(mx.optimizer.SGD())
    up.states[(1, 2)] = None
    with pytest.raises(TypeError, match='state indices must be int or str'):
        up.get_states()


def _blob_with_header(header, arrays=None):
    import io
    arrays = dict(arrays or {})
    arrays['__optimizer_states__'] = mx.nd.array(
        np.frombuffer(json.dumps(header).encode(), np.uint8), dtype='uint8')
    buf = io.BytesIO()
    mx.nd.save(buf, arrays)
    return buf.getvalue()


def test_corrupt_or_foreign_states_files_raise_clearly():
    up = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))
    up(0, mx.nd.ones((2,)), mx.nd.ones((2,)))
    good = up.get_states()
    with pytest.raises(ValueError, match='mx.nd.load'):
        up.set_states(good[:-7])
    with pytest.raises(TypeError, match='expected the bytes of get_states'):
        up.set_states('states')
    import io
    buf = io.BytesIO()
    mx.nd.save(buf, [mx.nd.ones(2)])
    with pytest.raises(ValueError, match='not an mxcy optimizer-states file'):
        up.set_states(buf.getvalue())
    base = {'format': 'mxcy-optimizer-states', 'version': 1, 'counts': None,
            'optimizer': None}
    with pytest.raises(ValueError, match='version 99 is not supported'):
        up.set_states(_blob_with_header({**base, 'version': 99}))
    with pytest.raises(ValueError, match="missing array '5'"):
        up.set_states(_blob_with_header({**base, 'states': {'dict': [[0, {'array': '5'}]]}}))
    # a class path that is not an imported Optimizer is refused: nothing is imported or run
    evil = {**base, 'states': {'dict': []},
            'optimizer': {'class': 'os.system', 'attrs': {'dict': []}}}
    with pytest.raises(ValueError, match="'os.system' is not an imported Optimizer class"):
        up.set_states(_blob_with_header(evil))
    assert set(up.states) == {0}                       # failed loads changed nothing


def test_kvstore_uses_the_optimizer_updater():
    assert mx.kv.Updater is mx.optimizer.Updater
    assert mx.kv.get_updater is mx.optimizer.get_updater
