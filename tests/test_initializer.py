"""mx.init: values and statistics of each initializer, name dispatch, __init__ override,
Mixed, Load, the registry, engine ordering and reproducibility under mx.random.seed."""
import json
import time

import numpy as np
import pytest

import mxcy as mx
from mxcy.initializer import InitDesc


@pytest.fixture(autouse=True)
def restore_engine():
    saved = (mx.engine.engine_type(), mx.engine.num_workers())
    mx.random.seed(2024)      # statistical checks see the same samples whatever the order
    yield
    try:
        mx.nd.waitall()
    except Exception:
        pass
    if mx.engine.engine_type() != saved[0]:
        mx.engine.set_engine_type(saved[0])
    if mx.engine.num_workers() != saved[1]:
        mx.engine.set_num_workers(saved[1])


def run_init(init, name, shape, dtype='float32', attrs=None):
    arr = mx.nd.zeros(shape, dtype=dtype)
    init(InitDesc(name, attrs=attrs), arr)
    return arr.asnumpy()


def xavier_scale(shape, factor_type, magnitude):
    """The Xavier bound/std, transcribed from MXNet's docstring formula."""
    receptive = np.prod(shape[2:]) if len(shape) > 2 else 1
    fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
    factor = {'avg': (fan_in + fan_out) / 2, 'in': fan_in, 'out': fan_out}[factor_type]
    return np.sqrt(magnitude / factor)


# ---------------------------------------------------------------- random initializers
@pytest.mark.parametrize('shape', [(200, 60), (24, 12, 3, 3)])
@pytest.mark.parametrize('factor_type', ['avg', 'in', 'out'])
@pytest.mark.parametrize('rnd_type', ['uniform', 'gaussian'])
def test_xavier_statistics(rnd_type, factor_type, shape):
    magnitude = 2.34
    w = run_init(mx.init.Xavier(rnd_type, factor_type, magnitude), 'fc_weight', shape)
    scale = xavier_scale(shape, factor_type, magnitude)
    assert abs(w.mean()) < 0.1 * scale
    if rnd_type == 'uniform':
        assert np.abs(w).max() <= scale * (1 + 1e-6)
        assert np.abs(w).max() > 0.95 * scale           # the bound is actually reached
        np.testing.assert_allclose(w.std(), scale / np.sqrt(3), rtol=0.06)
    else:
        np.testing.assert_allclose(w.std(), scale, rtol=0.06)
        assert np.abs(w).max() > 2.5 * scale            # tails, not a bounded uniform


def test_xavier_defaults_and_errors():
    w = run_init(mx.init.Xavier(), 'w_weight', (300, 100))
    scale = xavier_scale((300, 100), 'avg', 3)
    assert np.abs(w).max() <= scale * (1 + 1e-6) and np.abs(w).max() > 0.95 * scale
    with pytest.raises(ValueError, match=r"'bias_vec_weight'.*\(5,\)"):
        mx.init.Xavier()(InitDesc('bias_vec_weight'), mx.nd.zeros((5,)))
    with pytest.raises(ValueError, match='rnd_type'):
        mx.init.Xavier(rnd_type='normal')
    with pytest.raises(ValueError, match='factor_type'):
        mx.init.Xavier(factor_type='fan')


@pytest.mark.parametrize('factor_type', ['avg', 'in', 'out'])
def test_msraprelu_std(factor_type):
    slope = 0.5
    shape = (64, 16, 3, 3)
    w = run_init(mx.init.MSRAPrelu(factor_type, slope), 'conv_weight', shape)
    expected = xavier_scale(shape, factor_type, 2.0 / (1 + slope ** 2))
    np.testing.assert_allclose(w.std(), expected, rtol=0.05)
    assert json.loads(mx.init.MSRAPrelu(factor_type, slope).dumps()) == \
        ['msraprelu', {'factor_type': factor_type, 'slope': slope}]


def test_uniform_and_normal():
    w = run_init(mx.init.Uniform(0.3), 'a_weight', (100, 100))
    assert w.min() >= -0.3 and w.max() <= 0.3 and w.max() > 0.29 and w.min() < -0.29
    np.testing.assert_allclose(w.std(), 0.3 / np.sqrt(3), rtol=0.03)
    w = run_init(mx.init.Uniform(), 'a_weight', (100, 100))
    assert np.abs(w).max() <= 0.07
    w = run_init(mx.init.Normal(0.5), 'a_weight', (100, 100))
    np.testing.assert_allclose(w.std(), 0.5, rtol=0.03)
    assert abs(w.mean()) < 0.02
    w = run_init(mx.init.Normal(), 'a_weight', (100, 100), dtype='float64')
    np.testing.assert_allclose(w.std(), 0.01, rtol=0.03)


@pytest.mark.parametrize('rand_type', ['uniform', 'normal'])
@pytest.mark.parametrize('shape', [(4, 10), (10, 4), (6, 2, 3), (5, 5)])
def test_orthogonal(shape, rand_type):
    scale = 1.5
    w = run_init(mx.init.Orthogonal(scale, rand_type), 'w_weight', shape)
    m = w.reshape(shape[0], -1).astype(np.float64)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, scale ** 2 * np.eye(min(m.shape)), atol=1e-5)
    with pytest.raises(ValueError, match='rand_type'):
        mx.init.Orthogonal(rand_type='gaussian')


# ---------------------------------------------------------------- constants
def test_constant_zero_one():
    assert (run_init(mx.init.Zero(), 'w_weight', (3, 4)) == 0).all()
    assert (run_init(mx.init.One(), 'w_weight', (3, 4)) == 1).all()
    assert (run_init(mx.init.Constant(2.5), 'w_weight', (3, 4)) == 2.5).all()
    row = mx.nd.array([1, 2, 3, 4])
    np.testing.assert_array_equal(run_init(mx.init.Constant(row), 'w_weight', (3, 4)),
                                  np.tile([1, 2, 3, 4], (3, 1)))
    assert json.loads(mx.init.Constant(row).dumps()) == ['constant', {'value': [1, 2, 3, 4]}]
    assert mx.init.Constant(7).dumps() == '["constant", {"value": 7}]'


# ---------------------------------------------------------------- structured
def test_bilinear_matches_mxnet_loop():
    shape = (2, 3, 4, 5)
    w = run_init(mx.init.Bilinear(), 'up_weight', shape)
    expected = np.zeros(np.prod(shape), np.float32)      # MXNet's element-by-element loop
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    for i in range(expected.size):
        x, y = i % shape[3], (i // shape[3]) % shape[2]
        expected[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
    np.testing.assert_allclose(w, expected.reshape(shape), rtol=1e-6)
    with pytest.raises(ValueError, match='4-d'):
        mx.init.Bilinear()(InitDesc('up_weight'), mx.nd.zeros((3, 3)))


def test_lstm_bias():
    b = run_init(mx.init.LSTMBias(forget_bias=2.0), 'lstm_i2h_weight', (12,))
    np.testing.assert_array_equal(b, [0, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match='4 \\* num_hidden'):
        mx.init.LSTMBias()(InitDesc('x_weight'), mx.nd.zeros((6,)))


def fused_layout(mode, h, num_input, layers, bidirectional):
    """[(name, size)] of FusedRNNCell's packed vector, written out independently."""
    gates = {'lstm': 'ifco', 'gru': 'rzo', 'rnn_tanh': ['']}[mode]
    dirs = 'lr' if bidirectional else 'l'
    out = []
    for layer in range(layers):
        width = num_input if layer == 0 else len(dirs) * h
        for d in dirs:
            out += [(f'{d}{layer}_i2h_{g}_weight', h * width) for g in gates]
            out += [(f'{d}{layer}_h2h_{g}_weight', h * h) for g in gates]
    for layer in range(layers):
        for d in dirs:
            out += [(f'{d}{layer}_{k}_{g}_bias', h) for k in ('i2h', 'h2h') for g in gates]
    return out


@pytest.mark.parametrize('mode,layers,bidirectional', [('lstm', 2, True), ('gru', 1, False)])
def test_fused_rnn_layout(mode, layers, bidirectional):
    h, num_input = 3, 5
    layout = fused_layout(mode, h, num_input, layers, bidirectional)
    arr = mx.nd.zeros((sum(size for _, size in layout),)) - 9
    fused = mx.init.FusedRNN(mx.init.Constant(0.5), h, layers, mode, bidirectional,
                             forget_bias=4.0)
    mx.init.Uniform()(InitDesc('rnn_parameters', attrs={'__init__': fused.dumps()}), arr)
    values, p = arr.asnumpy(), 0
    for name, size in layout:
        piece = values[p:p + size]
        if mode == 'lstm' and name.endswith('_f_bias'):
            assert (piece == 4.0).all(), name
        elif name.endswith('bias'):
            assert (piece == 0.0).all(), name
        else:
            assert (piece == 0.5).all(), name
        p += size
    with pytest.raises(ValueError, match='parameters do not fit'):
        fused._init_weight(InitDesc('rnn_parameters'), mx.nd.zeros((p + 1,)))


def test_fused_rnn_falls_back_to_global_init():
    layout = fused_layout('rnn_tanh', 2, 3, 1, False)
    arr = mx.nd.zeros((sum(s for _, s in layout),))
    desc = InitDesc('rnn_parameters',
                    attrs={'__init__': mx.init.FusedRNN(None, 2, 1, 'rnn_tanh').dumps()})
    mx.init.One()(desc, arr)
    np.testing.assert_array_equal(arr.asnumpy(), [1] * 10 + [0] * 4)


# ---------------------------------------------------------------- dispatch by name
@pytest.mark.parametrize('name,expected', [
    ('fc1_bias', 0.0), ('bn_gamma', 1.0), ('bn_beta', 0.0), ('bn_moving_mean', 0.0),
    ('bn_moving_var', 1.0), ('bn_moving_inv_var', 0.0), ('bn_moving_avg', 0.0),
    ('q_min', 0.0), ('q_max', 1.0), ('fc_bias_quantize', 0.0)])
def test_name_based_defaults(name, expected):
    arr = mx.nd.zeros((3, 2)) + 5
    mx.init.Uniform(0.5)(InitDesc(name), arr)
    assert (arr.asnumpy() == expected).all()


def test_weight_goes_to_init_weight_and_unknown_names_raise():
    w = run_init(mx.init.Uniform(0.5), 'fc1_weight', (30, 30))
    assert len(np.unique(w)) > 100 and np.abs(w).max() <= 0.5
    with pytest.raises(ValueError, match="'data_stuff'"):
        mx.init.Uniform()(InitDesc('data_stuff'), mx.nd.zeros((2,)))
    with pytest.raises(TypeError, match='NDArray'):
        mx.init.Uniform()(InitDesc('a_weight'), np.zeros(3))


def test_quantized_weight_is_int8_range():
    q = run_init(mx.init.Xavier(), 'conv_weight_quantize', (20, 20), dtype='int8')
    assert q.dtype == np.int8 and q.min() >= -127 and q.max() < 127
    assert len(np.unique(q)) > 50


def test_init_attr_overrides_name_rules():
    attrs = {'__init__': '["zero", {}]'}
    assert (run_init(mx.init.Uniform(), 'fc_weight', (3, 3), attrs=attrs) == 0).all()
    attrs = {'__init__': mx.init.Constant(2.5).dumps()}
    assert (run_init(mx.init.Uniform(), 'fc_bias', (3,), attrs=attrs) == 2.5).all()
    attrs = {'__init__': 'one'}
    assert (run_init(mx.init.Zero(), 'bn_moving_mean', (3,), attrs=attrs) == 1).all()
    desc = InitDesc('x_weight')
    glob = mx.init.Normal()
    glob(desc, mx.nd.zeros((2, 2)))
    assert desc.global_init is glob


def test_legacy_string_name_warns_and_uses_legacy_rules():
    arr = mx.nd.zeros((1, 1, 4, 4))
    with pytest.warns(DeprecationWarning):
        mx.init.Uniform()('upsampling0_weight', arr)
    np.testing.assert_allclose(arr.asnumpy(),
                               run_init(mx.init.Bilinear(), 'w_weight', (1, 1, 4, 4)))
    loc = mx.nd.zeros((6,))
    with pytest.warns(DeprecationWarning):
        mx.init.Uniform()('stn_loc_bias', loc)
    np.testing.assert_array_equal(loc.asnumpy(), [1, 0, 0, 0, 1, 0])


# ---------------------------------------------------------------- composites
def test_mixed_dispatches_by_first_matching_regex():
    init = mx.init.Mixed(['conv.*', 'fc2.*', '.*'],
                         [mx.init.One(), mx.init.Constant(3), mx.init.Constant(5)])
    out = {}
    for name in ('conv1_weight', 'fc2_weight', 'fc_weight', 'conv1_gamma', 'fc_bias'):
        arr = mx.nd.zeros((2,)) - 1
        init(InitDesc(name), arr)
        out[name] = arr.asnumpy()[0]
    # the chosen initializer still applies its name rules: bias -> 0, gamma -> 1
    assert out == {'conv1_weight': 1, 'fc2_weight': 3, 'fc_weight': 5, 'conv1_gamma': 1,
                   'fc_bias': 0}
    with pytest.raises(ValueError, match="'fc_weight'"):
        mx.init.Mixed(['conv.*'], [mx.init.One()])(InitDesc('fc_weight'), mx.nd.zeros((2,)))
    with pytest.raises(ValueError, match='2 patterns but 1'):
        mx.init.Mixed(['a', 'b'], [mx.init.One()])


def test_load_strips_prefixes_and_falls_back(tmp_path):
    saved = {'arg:fc_weight': mx.nd.array([[1, 2], [3, 4]]),
             'aux:bn_moving_var': mx.nd.array([5, 6, 7]),
             'plain_bias': mx.nd.array([8, 9])}
    path = str(tmp_path / 'params.nd')
    mx.nd.save(path, saved)
    for source in (saved, path):
        init = mx.init.Load(source, default_init=mx.init.Constant(-1))
        assert sorted(init.param) == ['bn_moving_var', 'fc_weight', 'plain_bias']
        w, v, b, other = (mx.nd.zeros((2, 2)), mx.nd.zeros((3,)), mx.nd.zeros((2,)),
                          mx.nd.zeros((2, 3)))
        init(InitDesc('fc_weight'), w)
        init(InitDesc('bn_moving_var'), v)
        init(InitDesc('plain_bias'), b)
        init(InitDesc('other_weight'), other)
        np.testing.assert_array_equal(w.asnumpy(), [[1, 2], [3, 4]])
        np.testing.assert_array_equal(v.asnumpy(), [5, 6, 7])
        np.testing.assert_array_equal(b.asnumpy(), [8, 9])
        assert (other.asnumpy() == -1).all()
    with pytest.raises(ValueError, match=r'\(3, 2\).*\(2, 2\)'):
        mx.init.Load(saved)(InitDesc('fc_weight'), mx.nd.zeros((3, 2)))
    with pytest.raises(ValueError, match="'missing_weight'.*no default_init"):
        mx.init.Load(saved)(InitDesc('missing_weight'), mx.nd.zeros((2,)))
    with pytest.raises(TypeError, match='dict'):
        mx.init.Load([mx.nd.zeros((2,))])


# ---------------------------------------------------------------- registry
def test_registry_create_and_dumps_round_trip():
    inits = [mx.init.Xavier('gaussian', 'in', 2), mx.init.Uniform(0.2), mx.init.Normal(0.3),
             mx.init.Orthogonal(1.0, 'normal'), mx.init.MSRAPrelu('out', 0.1),
             mx.init.Zero(), mx.init.One(), mx.init.Constant(4), mx.init.LSTMBias(0.5),
             mx.init.Bilinear()]
    for init in inits:
        again = mx.init.create(init.dumps())
        assert type(again) is type(init) and again == init and again.dumps() == init.dumps()
        assert mx.init.create(init) is init
    assert isinstance(mx.init.create('zeros'), mx.init.Zero)
    assert isinstance(mx.init.create('ones'), mx.init.One)
    assert mx.init.create('xavier', magnitude=2).magnitude == 2.0
    assert mx.init.create('Normal', sigma=0.2) == mx.init.Normal(0.2)
    with pytest.raises(ValueError, match="unknown initializer 'nope'"):
        mx.init.create('nope')
    assert mx.initializer is mx.init


def test_register_custom_initializer():
    @mx.init.register
    @mx.init.alias('mytestinit')
    class CustomTestInit(mx.init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 0.25
    for name in ('customtestinit', 'mytestinit'):
        w = run_init(mx.init.create(name), 'a_weight', (2, 2))
        assert (w == 0.25).all()


# ---------------------------------------------------------------- engine behaviour
def test_init_is_ordered_after_pending_writes():
    """Initializing pushes ordered writes: a slow earlier write cannot clobber it."""
    arr = mx.nd.zeros((50, 40))

    def slow_write():
        time.sleep(0.05)
        arr._np_view()[...] = 123.0
    mx.engine.push(slow_write, (), [arr], name='slow_write')
    mx.init.Xavier()(InitDesc('fc_weight'), arr)
    w = arr.asnumpy()
    assert np.abs(w).max() <= xavier_scale((50, 40), 'avg', 3) * (1 + 1e-6)


def initialize_all(seed):
    mx.random.seed(seed)
    specs = [(mx.init.Xavier(), (20, 10)), (mx.init.Normal(0.1), (7, 3)),
             (mx.init.Orthogonal(), (6, 4)), (mx.init.MSRAPrelu(), (5, 2, 3, 3)),
             (mx.init.Uniform(), (9,))]
    arrays = []
    for init, shape in specs:
        arr = mx.nd.zeros(shape)
        init(InitDesc('p_weight'), arr)
        arrays.append(arr)
    return [a.asnumpy() for a in arrays]


def test_reproducible_under_seed_on_every_engine():
    reference = initialize_all(11)
    for engine_type, workers in (('NaiveEngine', 1), ('ThreadedEngine', 2)):
        mx.engine.set_engine_type(engine_type)
        mx.engine.set_num_workers(workers)
        for a, b in zip(reference, initialize_all(11)):
            np.testing.assert_array_equal(a, b)
    other = initialize_all(12)
    assert not any(np.array_equal(a, b) for a, b in zip(reference, other))
