"""gluon.Trainer: SGD/Adam steps against MXNet 1.9.1 literals, lr_mult/wd_mult,
rescale_grad = 1/batch_size, two contexts == one context with the whole batch (through the
KVStore, updating on it or not), stale gradients, save/load_states, learning rates,
deferred initialization, errors, and a two-rank dist_sync job."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd, gluon
from mxcy.base import MXNetError
from mxcy.gluon import loss as gloss
from mxcy.gluon.trainer import Trainer

ONE = [mx.cpu(0)]
TWO = [mx.cpu(0), mx.cpu(1)]
SGD = {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}
ADAM = {'learning_rate': 0.05, 'wd': 0.001}


def R(seed, shape):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


class Net(gluon.HybridBlock):
    def __init__(self, in_units=4, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get('weight', shape=(3, in_units),
                                          allow_deferred_init=True)
            self.bias = self.params.get('bias', shape=(3,))

    def hybrid_forward(self, F, x, weight, bias):
        return F.FullyConnected(x, weight, bias, num_hidden=3)


def make_net(ctx, in_units=4):
    net = Net(in_units=in_units, prefix='net_')
    net.initialize(ctx=ctx)
    if in_units:
        net.weight.set_data(mx.nd.array(R(0, (3, 4))))
    net.bias.set_data(mx.nd.array(R(1, (3,))))
    net.bias.lr_mult = 2.0
    net.weight.wd_mult = 0.5
    return net


def train_step(net, trainer, ctx, s, batch=6, step=True):
    """Forward/backward of batch `s` split over `ctx`, then trainer.step(batch)."""
    x, y = R(10 + s, (batch, 4)), R(20 + s, (batch, 3))
    loss = gloss.L2Loss()
    with autograd.record():
        losses = [loss(net(mx.nd.array(a, ctx=c)), mx.nd.array(b, ctx=c))
                  for a, b, c in zip(np.split(x, len(ctx)), np.split(y, len(ctx)), ctx)]
    for lo in losses:
        lo.backward()
    if step:
        trainer.step(batch)


def weights(net, ctx=mx.cpu(0)):
    return np.concatenate([net.weight.data(ctx).asnumpy().ravel(),
                           net.bias.data(ctx).asnumpy().ravel()])


def run(optimizer, params, ctx=ONE, steps=3, hybridize=False, set_lr=None, **kwargs):
    net = make_net(ctx)
    if hybridize:
        net.hybridize()
    trainer = Trainer(net.collect_params(), optimizer, params, **kwargs)
    for s in range(steps):
        train_step(net, trainer, ctx, s)
        if set_lr is not None and s == 0:
            trainer.set_learning_rate(set_lr)
    return net, trainer


# weight (3x4) then bias (3,) after 3 steps of the same script with mxnet.gluon.Trainer,
# from MXNet 1.9.1 (bias lr_mult 2, weight wd_mult 0.5, L2Loss, batch 6)
SGD_MOM = [0.1140015, 0.4178428, 0.208029, 0.1028619, -0.1145887, 0.3128737, -0.08403803,
           0.7330012, 0.8730131, -0.297686, 0.5568134, 0.09735048, -0.1225773, 0.2219563,
           -0.5551448]
SGD_PLAIN = [0.1048884, 0.4297718, 0.2089964, 0.09203993, -0.1362428, 0.2899905, -0.1021219,
             0.7612206, 0.9019759, -0.2541032, 0.5628783, 0.06376977, -0.1450906, 0.3427507,
             -0.7810814]
ADAM_3 = [0.2009587, 0.363829, 0.2163734, 0.1826903, -0.02567296, 0.3725923, 0.01022571,
          0.6431266, 0.7852747, -0.3434546, 0.5784161, 0.1381849, -0.04442418, 0.1633896,
          -0.703699]
SGD_SET_LR = [0.1123525, 0.4115987, 0.2046193, 0.105086, -0.1215208, 0.321648, -0.1096866,
              0.7466242, 0.8899955, -0.2948765, 0.5912857, 0.1105969, -0.1179403, 0.2865116,
              -0.7172225]


@pytest.mark.parametrize('case', ['sgd_mom', 'sgd_plain', 'adam', 'adam_object',
                                  'sgd_set_lr', 'sgd_hybridized'])
def test_steps_match_mxnet(case):
    net, _ = {
        'sgd_mom': lambda: run('sgd', SGD),
        'sgd_plain': lambda: run('sgd', {'learning_rate': 0.1}),
        'adam': lambda: run('adam', ADAM),
        'adam_object': lambda: run(mx.optimizer.Adam(**ADAM), None),
        'sgd_set_lr': lambda: run('sgd', SGD, set_lr=0.02),
        'sgd_hybridized': lambda: run('sgd', SGD, hybridize=True),
    }[case]()
    want = {'sgd_mom': SGD_MOM, 'sgd_plain': SGD_PLAIN, 'adam': ADAM_3, 'adam_object': ADAM_3,
            'sgd_set_lr': SGD_SET_LR, 'sgd_hybridized': SGD_MOM}[case]
    np.testing.assert_allclose(weights(net), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('optimizer, params, want, update_on_kvstore', [
    ('sgd', SGD, SGD_MOM, None), ('sgd', SGD, SGD_MOM, False), ('adam', ADAM, ADAM_3, None),
    ('adam', ADAM, ADAM_3, False)])
def test_two_contexts_equal_one_with_the_whole_batch(optimizer, params, want,
                                                     update_on_kvstore):
    # MXNet 1.9.1 gives the same literals with ctx [cpu(0), cpu(1)], half a batch each
    net, trainer = run(optimizer, params, ctx=TWO, update_on_kvstore=update_on_kvstore)
    one, _ = run(optimizer, params, ctx=ONE)
    for c in TWO:
        np.testing.assert_allclose(weights(net, c), weights(one), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(weights(net), want, rtol=1e-5, atol=1e-6)
    assert trainer._kvstore is not None and \
        trainer._update_on_kvstore == (update_on_kvstore is None)


def test_lr_mult_wd_mult_and_rescale_grad_one_step():
    net = make_net(ONE)
    net.bias.lr_mult, net.weight.wd_mult, net.weight.lr_mult = 3.0, 2.0, 0.5
    w0, b0 = net.weight.data().asnumpy(), net.bias.data().asnumpy()
    trainer = Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1, 'wd': 0.01,
                                                     'rescale_grad': 2.0})
    train_step(net, trainer, ONE, 0, step=False)
    gw, gb = net.weight.grad().asnumpy(), net.bias.grad().asnumpy()
    trainer.step(6)
    assert trainer.optimizer.rescale_grad == pytest.approx(2.0 / 6)
    np.testing.assert_allclose(net.weight.data().asnumpy(),
                               w0 - 0.1 * 0.5 * (gw * 2 / 6 + 0.01 * 2.0 * w0), rtol=1e-5)
    np.testing.assert_allclose(net.bias.data().asnumpy(),
                               b0 - 0.1 * 3.0 * (gb * 2 / 6 + 0.01 * b0), rtol=1e-5)
    assert trainer.learning_rate == 0.1


def test_allreduce_grads_then_update_equals_step():
    net = make_net(TWO)
    trainer = Trainer(net.collect_params(), 'sgd', SGD, update_on_kvstore=False)
    for s in range(3):
        train_step(net, trainer, TWO, s, step=False)
        trainer.allreduce_grads()
        summed = net.weight.grad(mx.cpu(1)).asnumpy()
        np.testing.assert_array_equal(net.weight.grad(mx.cpu(0)).asnumpy(), summed)
        trainer.update(6)
    np.testing.assert_allclose(weights(net), SGD_MOM, rtol=1e-5, atol=1e-6)
    kv_net, kv_trainer = run('sgd', SGD, ctx=TWO)
    with pytest.raises(AssertionError, match="allreduce_grads\\(\\) when parameters are"):
        kv_trainer.allreduce_grads()
    with pytest.raises(AssertionError, match="update\\(\\) when parameters are updated"):
        kv_trainer.update(6)


class TwoBranches(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.a = self.params.get('a', shape=(2,), init=mx.init.One())
            self.b = self.params.get('b', shape=(2,), init=mx.init.One())
        self.use_b = True

    def hybrid_forward(self, F, x, a, b):
        return x * a + x * b if self.use_b else x * a


@pytest.mark.parametrize('ctx, kvstore', [(ONE, 'device'), (TWO, 'device'), (TWO, None)])
def test_stale_gradient(ctx, kvstore):
    net = TwoBranches(prefix='tb_')
    net.initialize(ctx=ctx)
    trainer = Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0}, kvstore=kvstore)

    def backward():
        with autograd.record():
            ys = [net(mx.nd.ones((2,), ctx=c)) for c in ctx]
        for y in ys:
            y.backward()
    with pytest.raises(UserWarning, match=r"Gradient of Parameter `tb_a` on context cpu\(0\) "
                                          "has not been updated by backward"):
        trainer.step(1)                 # nothing ran backward yet
    backward()
    trainer.step(1)
    a1 = net.a.data().asnumpy()
    np.testing.assert_allclose(a1, 1 - len(ctx) if kvstore else 0)
    with pytest.raises(UserWarning, match="`tb_a` on context"):
        trainer.step(1)                 # the same gradients again
    net.use_b = False
    backward()
    with pytest.raises(UserWarning, match="Parameter `tb_b`"):
        trainer.step(1)
    for c in ctx:                        # the failed step changed nothing
        np.testing.assert_array_equal(net.a.data(c).asnumpy(), a1)
    trainer.step(1, ignore_stale_grad=True)
    np.testing.assert_array_equal(net.b.data().asnumpy(), a1)       # skipped
    assert not np.array_equal(net.a.data().asnumpy(), a1)          # updated


def test_grad_req_null_parameters_are_skipped():
    net = TwoBranches(prefix='tn_')
    net.initialize()
    net.b.grad_req = 'null'
    trainer = Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    with autograd.record():
        y = net(mx.nd.ones((2,)))
    y.backward()
    trainer.step(1)
    np.testing.assert_array_equal(net.b.data().asnumpy(), [1, 1])
    np.testing.assert_array_equal(net.a.data().asnumpy(), [0, 0])


@pytest.mark.parametrize('optimizer, params, ctx', [
    ('sgd', SGD, ONE), ('adam', ADAM, ONE), ('adam', ADAM, TWO),
    ('sgd', SGD, TWO)])
def test_save_load_states_round_trip(tmp_path, optimizer, params, ctx):
    fname = str(tmp_path / 'trainer.states')
    net, trainer = run(optimizer, params, ctx=ctx, steps=2)
    trainer.save_states(fname)
    saved = {c: (net.weight.data(c).copy(), net.bias.data(c).copy()) for c in ctx}
    train_step(net, trainer, ctx, 2)
    want = weights(net)

    net2 = make_net(ctx)
    for c in ctx:
        net2.weight.data(c)[:] = saved[c][0]
        net2.bias.data(c)[:] = saved[c][1]
    fresh_opt = {'learning_rate': 0.5} if optimizer == 'sgd' else {'beta1': 0.5}
    trainer2 = Trainer(net2.collect_params(), optimizer, fresh_opt)
    trainer2.load_states(fname)
    assert trainer2.learning_rate == params['learning_rate']       # the saved optimizer
    assert trainer2.optimizer.param_dict[0] is net2.bias           # this trainer's params
    train_step(net2, trainer2, ctx, 2)
    np.testing.assert_allclose(weights(net2), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(weights(net2), SGD_MOM if optimizer == 'sgd' else ADAM_3,
                               rtol=1e-5, atol=1e-6)


def test_learning_rate_and_scheduler():
    net = make_net(ONE)
    trainer = Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.3})
    assert trainer.learning_rate == 0.3
    trainer.set_learning_rate(0.05)
    assert trainer.learning_rate == 0.05 and trainer.optimizer.lr == 0.05
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5)
    trainer = Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.4,
                                                     'lr_scheduler': sched})
    with pytest.raises(UserWarning):
        trainer.set_learning_rate(0.1)
    train_step(net, trainer, ONE, 0)
    train_step(net, trainer, ONE, 1)
    assert trainer.learning_rate == pytest.approx(0.4 * 0.5)


def test_deferred_initialization_two_contexts():
    net = make_net(TWO, in_units=0)        # weight shape (3, 0): known at the first forward
    trainer = Trainer(net.collect_params(), 'sgd', SGD)
    train_step(net, trainer, TWO, 0)
    assert net.weight.shape == (3, 4)
    for c in TWO:
        np.testing.assert_array_equal(net.weight.data(c).asnumpy(),
                                      net.weight.data(mx.cpu(0)).asnumpy())


def test_constructor_and_kvstore_errors():
    net = make_net(ONE)
    with pytest.raises(ValueError, match="list or dict of Parameters"):
        Trainer(net.weight, 'sgd')
    with pytest.raises(ValueError, match="holding str"):
        Trainer(['w'], 'sgd')
    with pytest.raises(ValueError, match="optimizer_params must be None"):
        Trainer(net.collect_params(), mx.optimizer.SGD(), {'learning_rate': 1})
    with pytest.raises(TypeError, match="optimizer must be an Optimizer or the name"):
        Trainer(net.collect_params(), 3)
    other = gluon.Parameter('other', shape=(2,))
    other.initialize(ctx=TWO)
    with pytest.raises(ValueError, match="Parameter 'other' is on"):
        Trainer([net.weight, other], 'sgd')
    trainer = Trainer(net.collect_params(), 'sgd', kvstore='local',
                      compression_params={'type': '2bit'})
    train_step(net, trainer, ONE, 0, step=False)
    trainer.step(6)                     # one context: no KVStore, nothing to compress
    net2 = make_net(TWO)
    trainer = Trainer(net2.collect_params(), 'sgd', compression_params={'type': '2bit'})
    train_step(net2, trainer, TWO, 0, step=False)
    with pytest.raises(MXNetError, match="no gradient compression"):
        trainer.step(6)
    # a KVStore object is used as it is
    kv = mx.kv.create('local')
    net3, trainer3 = run('sgd', SGD, ctx=TWO, kvstore=kv)
    assert trainer3._kvstore is kv
    np.testing.assert_allclose(weights(net3), SGD_MOM, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- dist_sync on two ranks
DIST_SCRIPT = r'''
import json, sys
import numpy as np
import mxcy as mx
from mxcy import autograd, gluon
from mxcy.gluon import loss as gloss
from mxcy.gluon.trainer import Trainer
kv = mx.kv.create('dist_sync')
rank, n = kv.rank, kv.num_workers
def R(seed, shape):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)
w = gluon.Parameter('w', shape=(3, 4))
w.initialize(ctx=mx.cpu())
w.set_data(mx.nd.array(R(100 + rank, (3, 4))))      # rank 0's value must win
trainer = Trainer([w], 'sgd', {'learning_rate': 0.1, 'momentum': 0.9}, kvstore=kv)
for s in range(3):
    x = R(10 + s, (4 * n, 4))[rank * 4:(rank + 1) * 4]
    with autograd.record():
        loss = gloss.L2Loss()(mx.nd.dot(mx.nd.array(x), w.data().T), mx.nd.zeros((4, 3)))
    loss.backward()
    trainer.step(4 * n)              # the global batch
with open(sys.argv[1] + '.%d' % rank, 'w') as f:
    json.dump(w.data().asnumpy().tolist(), f)
'''


def _mpirun():
    local = os.path.join(os.path.dirname(sys.executable), 'mpirun')
    return local if os.path.exists(local) else shutil.which('mpirun')


def test_dist_sync_two_ranks_equal_one_process_on_the_global_batch(tmp_path):
    pytest.importorskip('mpi4py')
    mpirun = _mpirun()
    if mpirun is None:
        pytest.skip('no mpirun')
    script = tmp_path / 'dist_trainer.py'
    script.write_text(DIST_SCRIPT)
    out = str(tmp_path / 'w')
    version = subprocess.run([mpirun, '--version'], capture_output=True, text=True,
                             timeout=30, check=False).stdout
    flags = ['--oversubscribe'] if 'Open MPI' in version or 'OpenRTE' in version else []
    if flags and hasattr(os, 'geteuid') and os.geteuid() == 0:
        flags.insert(0, '--allow-run-as-root')
    env = {k: v for k, v in os.environ.items()
           if '_MCA_' in k or not k.startswith(('OMPI_', 'PMIX_', 'PMI_', 'PRTE_', 'HYDRA_'))}
    env['MXCY_KV_TIMEOUT'] = '30'
    job = subprocess.run([mpirun, *flags, '-np', '2', sys.executable, str(script), out],
                         capture_output=True, text=True, timeout=120, env=env, check=False)
    assert job.returncode == 0, job.stdout[-2000:] + job.stderr[-2000:]
    ranks = [np.array(json.load(open(f'{out}.{r}'))) for r in range(2)]
    np.testing.assert_array_equal(ranks[0], ranks[1])
    # one process, rank 0's initial weights, the whole batch of 8 rows
    w = gluon.Parameter('w', shape=(3, 4))
    w.initialize(ctx=mx.cpu())
    w.set_data(mx.nd.array(R(100, (3, 4))))
    trainer = Trainer([w], 'sgd', {'learning_rate': 0.1, 'momentum': 0.9})
    for s in range(3):
        with autograd.record():
            loss = gloss.L2Loss()(mx.nd.dot(mx.nd.array(R(10 + s, (8, 4))), w.data().T),
                                  mx.nd.zeros((8, 3)))
        loss.backward()
        trainer.step(8)
    np.testing.assert_allclose(ranks[0], w.data().asnumpy(), rtol=1e-5, atol=1e-7)


def test_zero_grad_does_not_make_a_gradient_fresh():
    """Freshness is the variable's _fresh_grad flag (set by backward, cleared by an
    update), as in MXNet: writing the gradient buffer otherwise does not count."""
    net = TwoBranches(prefix='tz_')
    net.initialize()
    trainer = Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0}, kvstore=None)
    with autograd.record():
        y = net(mx.nd.ones((2,)))
    y.backward()
    assert net.a.data()._fresh_grad
    trainer.step(1)
    assert not net.a.data()._fresh_grad
    net.collect_params().zero_grad()
    with pytest.raises(UserWarning, match='has not been updated by backward'):
        trainer.step(1)
