"""Parameters: initialization rules, save/load round trips in the checkpoint format."""
import numpy as np
import pytest

import mxcy as mx
from mxcy import nn


def bn_net():
    return nn.Chain(nn.Dense(4, in_units=3), nn.BatchNorm(in_channels=4), nn.Dense(2))


def test_initialize_uses_own_initializer_first_and_defers_unknown_shapes():
    net = bn_net()
    net.initialize(mx.init.Constant(0.5))
    params = net.collect_params()
    np.testing.assert_array_equal(params['dense0_weight'].data().asnumpy(), 0.5)
    np.testing.assert_array_equal(params['dense0_bias'].data().asnumpy(), 0)     # 'zeros'
    np.testing.assert_array_equal(params['batchnorm0_gamma'].data().asnumpy(), 1)
    np.testing.assert_array_equal(params['batchnorm0_running_var'].data().asnumpy(), 1)
    with pytest.raises(mx.MXNetError, match="dense1_weight.*deferred"):   # (2, 0)
        params['dense1_weight'].data()
    nn.compile(net, (5, 3))
    np.testing.assert_array_equal(params['dense1_weight'].data().asnumpy(), 0.5)
    before = params['dense0_weight'].data()
    net.initialize(mx.init.Constant(2.0))                           # no-op without force
    np.testing.assert_array_equal(before.asnumpy(), 0.5)
    net.initialize(mx.init.Constant(2.0), force_reinit=True)        # new arrays (gluon)
    np.testing.assert_array_equal(params['dense0_weight'].data().asnumpy(), 2.0)


def test_compile_initializes_untouched_parameters_with_uniform():
    mx.random.seed(0)
    net = nn.Chain(nn.Dense(50, weight_initializer=None))
    cm = nn.compile(net, (2, 40))
    w = cm.params['dense0_weight'].data().asnumpy()
    assert np.abs(w).max() <= 0.07 and w.std() > 0.02            # Uniform(0.07)
    np.testing.assert_array_equal(cm.params['dense0_bias'].data().asnumpy(), 0)


def test_save_load_round_trip_in_checkpoint_format(tmp_path):
    net = bn_net()
    cm = nn.compile(net, (5, 3))
    x = np.random.RandomState(0).randn(5, 3).astype(np.float32)
    cm(x)                                                   # updates the running stats
    expected = cm.predict(x).asnumpy()
    fname = str(tmp_path / 'net-0007.params')
    nn.save_parameters(net, fname)              # arg:/aux: keys (net.save_parameters: gluon's)
    arg_params, aux_params = mx.model.load_params(str(tmp_path / 'net'), 7)
    assert sorted(arg_params) == ['batchnorm0_beta', 'batchnorm0_gamma', 'dense0_bias',
                                  'dense0_weight', 'dense1_bias', 'dense1_weight']
    assert sorted(aux_params) == ['batchnorm0_running_mean', 'batchnorm0_running_var']
    np.testing.assert_array_equal(aux_params['batchnorm0_running_mean'].asnumpy(),
                                  net[1].running_mean.data().asnumpy())
    with mx.name.NameManager():                             # the same names again
        fresh = bn_net()
    nn.load_parameters(fresh, fname)                        # fills deferred shapes too
    assert fresh[2].weight.shape == (2, 4)
    np.testing.assert_array_equal(nn.compile(fresh, (5, 3)).predict(x).asnumpy(), expected)
    # into an existing compiled model: in place, the executor sees it
    with mx.name.NameManager():
        other = bn_net()
    cm2 = nn.compile(other, (5, 3))
    cm2.load_parameters(fname)
    np.testing.assert_array_equal(cm2.predict(x).asnumpy(), expected)


def test_load_reads_save_checkpoint_and_gluon_style_files(tmp_path):
    net = nn.Chain(nn.Dense(2, in_units=3))
    values = {'dense0_weight': mx.nd.array(np.arange(6.).reshape(2, 3)),
              'dense0_bias': mx.nd.array([1.0, 2.0])}
    mx.model.save_checkpoint(str(tmp_path / 'ck'), 1, None, values, {})
    nn.load_parameters(net, str(tmp_path / 'ck-0001.params'))
    np.testing.assert_array_equal(net[0].weight.data().asnumpy(),
                                  np.arange(6.).reshape(2, 3))
    mx.nd.save(str(tmp_path / 'gluon.params'), {'dense0_weight': mx.nd.ones((2, 3)),
                                                'dense0_bias': mx.nd.zeros((2,))})
    nn.load_parameters(net, str(tmp_path / 'gluon.params'))
    np.testing.assert_array_equal(net[0].weight.data().asnumpy(), 1)


def test_load_errors_are_gluons(tmp_path):
    net = nn.Chain(nn.Dense(2, in_units=3))
    fname = str(tmp_path / 'p.params')
    mx.nd.save(fname, {'arg:dense0_weight': mx.nd.ones((2, 3))})
    with pytest.raises(AssertionError, match=r"'dense0_bias' is missing"):
        nn.load_parameters(net, fname)
    nn.load_parameters(net, fname, allow_missing=True)
    mx.nd.save(fname, {'arg:dense0_weight': mx.nd.ones((2, 3)),
                       'arg:dense0_bias': mx.nd.ones((2,)), 'arg:fc9_weight': mx.nd.ones((1,))})
    with pytest.raises(AssertionError, match=r"'fc9_weight'.*ignore_extra"):
        nn.load_parameters(net, fname)
    nn.load_parameters(net, fname, ignore_extra=True)
    mx.nd.save(fname, {'arg:dense0_weight': mx.nd.ones((3, 3)),
                       'arg:dense0_bias': mx.nd.ones((2,))})
    with pytest.raises(AssertionError, match=r"dense0_weight.*\(2, 3\).*\(3, 3\)"):
        nn.load_parameters(net, fname)
    mx.nd.save(fname, [mx.nd.ones((2,))])
    with pytest.raises(ValueError, match='list of arrays'):
        nn.load_parameters(net, fname)


def test_save_needs_values(tmp_path):
    with pytest.raises(mx.MXNetError, match=r"\['dense0_weight', 'dense0_bias'\] have no "
                                            "value"):
        nn.save_parameters(nn.Chain(nn.Dense(2)), str(tmp_path / 'x.params'))
