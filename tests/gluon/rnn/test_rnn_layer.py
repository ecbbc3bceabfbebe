"""gluon.rnn.RNN / LSTM / GRU: MXNet's parameter names, shapes, repr and file keys; forward,
states and gradients against MXNet 1.9.1; gradients vs central differences (float64); a
layer equals its cells unrolled; hybridized == imperative; TNC vs NTC; bidirectional;
use_sequence_length; symbols and export.

Values marked "MXNet 1.9.1" were recorded from MXNet 1.9.1 running the same code
(oracle_cases.py prints them).
"""
import importlib.util
import os

import numpy as np
import pytest

import mxcy as mx
from mxcy import autograd
from mxcy.gluon import rnn


def _load_cases():
    path = os.path.join(os.path.dirname(__file__), 'oracle_cases.py')
    spec = importlib.util.spec_from_file_location('gluon_rnn_oracle_cases', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = _load_cases()

# MXNet 1.9.1 (oracle_cases.py)
MXNET_LAYER = {
    'lstm_bi2': {
        'out': ((3, 2, 4), [-0.3385023, -0.07175271, 0.1776668, 0.1762391, -0.2987223,
            0.07772747, 0.17867, 0.175917, -0.3560555, -0.04721811, 0.2051972, 0.0966304,
            -0.2959465, 0.001422885, 0.161531, 0.1619686, -0.3487712, -0.0337102, 0.3003617,
            -0.0321703, -0.2857144, -0.02234492, 0.1605538, 0.1357813]),
        'state0': ((4, 2, 2), [0.1471726, 0.1451417, 0.1353601, 0.1805973, -0.175868, -0.0181142,
            0.02259341, -0.007253683, -0.3487712, -0.0337102, -0.2857144, -0.02234492, 0.1776668,
            0.1762391, 0.17867, 0.175917]),
        'state1': ((4, 2, 2), [0.2616822, 0.231382, 0.247435, 0.3054918, -0.2735536, -0.02778759,
            0.04896709, -0.01142187, -0.588164, -0.1242338, -0.4841267, -0.07851297, 0.3314361,
            0.3904974, 0.3160786, 0.4158301]),
        'dx': ((3, 2, 2), [-0.1441864, 0.1192094, -0.09802958, 0.07326321, -0.1371707,
            0.09456094, -0.1135157, 0.04068896, -0.09141082, 0.06577546, -0.2444981, -0.1296323]),
        'grad_l0_i2h_weight': ((8, 2), [-0.01347046, 0.02747675, 0.00874626, -0.01673682,
            -0.03362066, 0.03059907, 0.00258902, 0.005833859, -0.07934568, 0.1048492, 0.1431691,
            0.02766778, -0.007794714, 0.03000223, 0.005548956, -0.002187715]),
        'grad_r1_h2h_bias': ((8,), [0.1515649, 0.01425128, 0.1647711, 0.0597738, 0.5468737,
            0.0794759, -0.0759287, 0.01739629]),
    },
    'gru_ntc': {
        'out': ((2, 3, 2), [-0.3617826, 0.201391, -0.1004048, 0.2840135, 0.02808209, 0.3129254,
            -0.0556294, -0.136946, 0.05818151, 0.1618797, 0.1292157, 0.2749726]),
        'state0': ((1, 2, 2), [0.02808209, 0.3129254, 0.1292157, 0.2749726]),
        'dx': ((2, 3, 2), [-0.04680029, 0.0393646, -0.2707333, 0.2308819, -0.2929283, 0.2668117,
            -0.01210071, -0.0732564, 0.2708529, -0.2559626, 0.1712503, -0.1584955]),
        'grad_l0_h2h_weight': ((6, 2), [-0.0111123, 0.003629218, 0.0170525, -0.02621606,
            -0.1487229, 0.07850526, -0.04356648, 0.1814674, 0.2234167, -0.1877319, 0.08990397,
            -0.08183511]),
    },
    'rnn_relu2': {
        'out': ((3, 2, 2), [0.2143091, 0.4891289, 0.2534563, 0.4507643, 0, 0.4074247, 0.108158,
            0.3220655, 0.1067731, 0.3623144, 0.1129321, 0.394224]),
        'dx': ((3, 2, 2), [-0.04019998, -0.004985075, -0.004178195, 0.0006577037, -0.002161356,
            0.01000385, -0.0366125, -0.05677634, -0.001924631, -0.02277043, 0.03792402,
            -0.02409994]),
        'grad_l1_i2h_bias': ((2,), [0.5255606, -1.176464]),
    },
    'rnn_tanh_bi': {
        'out': ((3, 2, 4), [-0.4206898, 0.2093962, -0.7496003, 0.8077831, -0.4685922, 0.2543416,
            -0.7311401, 0.8388893, -0.6105406, 0.6192449, -0.6880787, 0.6531672, -0.6668341,
            0.764563, -0.8164365, 0.725314, -0.648042, 0.534977, -0.3124579, 0.4303279,
            -0.7188393, 0.7557307, -0.6370713, 0.5822715]),
        'state0': ((2, 2, 2), [-0.648042, 0.534977, -0.7188393, 0.7557307, -0.7496003, 0.8077831,
            -0.7311401, 0.8388893]),
        'dx': ((3, 2, 2), [0.04809776, 0.1537743, 0.07746753, -0.5802297, -0.04205626, 0.2756602,
            0.07545641, -0.06271195, -0.0142462, 0.2656772, 0.05296154, 0.01723315]),
    },
    'lstm_proj': {
        'out': ((3, 2, 4), [-0.0337902, -0.05272341, -0.06451188, 0.001770575, 0.07357623,
            0.0415426, -0.03041241, 0.0200958, -0.01137178, -0.01826383, -0.07874729,
            -0.01067766, 0.03920419, 0.0282911, -0.005081907, 0.02192618, 0.004007803,
            0.003732485, -0.1209826, -0.02957641, 0.02949042, 0.02401301, 0.04236255, 0.02454992]),
        'state0': ((4, 2, 2), [0.04158801, -0.1492217, 0.04488701, -0.1262151, 0.0229031,
            0.05599565, -0.03359095, 0.03001263, 0.004007803, 0.003732485, 0.02949042,
            0.02401301, -0.06451188, 0.001770575, -0.03041241, 0.0200958]),
        'state1': ((4, 2, 3), [0.37278, 0.6323413, 0.05121432, 0.3037958, 0.561671, 0.06794564,
            0.2617819, 0.1333148, 0.2127015, 0.2039996, 0.271747, 0.04286093, -0.01854596,
            0.02990936, -0.03288519, -0.04817009, 0.2143915, -0.064542, 0.1799006, 0.1992301,
            -0.03368729, 0.01194714, 0.08140696, -0.1631417]),
    },
}

MODES = {'lstm': rnn.LSTM, 'gru': rnn.GRU, 'rnn_relu': rnn.RNN,
         'rnn_tanh': lambda *a, **k: rnn.RNN(*a, activation='tanh', **k)}


def _fresh(make):
    with mx.name.NameManager():
        return make()


def _rand(shape, seed=0, dtype='float32'):
    return mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, shape), dtype=dtype)


def _close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(a.asnumpy() if hasattr(a, 'asnumpy') else a,
                               b.asnumpy() if hasattr(b, 'asnumpy') else b,
                               rtol=rtol, atol=atol)


# ---------------------------------------------------------------- names, shapes, repr
def test_parameter_names_shapes_and_repr():
    layer = _fresh(lambda: rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=2))
    # MXNet 1.9.1
    assert [(k, v.shape) for k, v in layer.collect_params().items()] == [
        ('lstm0_l0_i2h_weight', (12, 2)), ('lstm0_l0_h2h_weight', (12, 3)),
        ('lstm0_l0_i2h_bias', (12,)), ('lstm0_l0_h2h_bias', (12,)),
        ('lstm0_r0_i2h_weight', (12, 2)), ('lstm0_r0_h2h_weight', (12, 3)),
        ('lstm0_r0_i2h_bias', (12,)), ('lstm0_r0_h2h_bias', (12,)),
        ('lstm0_l1_i2h_weight', (12, 6)), ('lstm0_l1_h2h_weight', (12, 3)),
        ('lstm0_l1_i2h_bias', (12,)), ('lstm0_l1_h2h_bias', (12,)),
        ('lstm0_r1_i2h_weight', (12, 6)), ('lstm0_r1_h2h_weight', (12, 3)),
        ('lstm0_r1_i2h_bias', (12,)), ('lstm0_r1_h2h_bias', (12,))]
    assert repr(layer) == 'LSTM(2 -> 3, TNC, num_layers=2, bidirectional)'
    proj = _fresh(lambda: rnn.LSTM(3, projection_size=2, input_size=2))
    assert [(k, v.shape) for k, v in proj.collect_params().items()] == [
        ('lstm0_l0_i2h_weight', (12, 2)), ('lstm0_l0_h2h_weight', (12, 2)),
        ('lstm0_l0_i2h_bias', (12,)), ('lstm0_l0_h2h_bias', (12,)),
        ('lstm0_l0_h2r_weight', (2, 3))]
    assert repr(_fresh(lambda: rnn.GRU(4, layout='NTC', dropout=0.5))) == \
        'GRU(None -> 4, NTC, dropout=0.5)'
    assert repr(_fresh(lambda: rnn.RNN(4, activation='tanh', num_layers=3))) == \
        'RNN(None -> 4, TNC, num_layers=3)'
    with pytest.raises(AssertionError, match='Invalid layout'):
        rnn.GRU(2, layout='NCT')


def test_deferred_input_size():
    gru = _fresh(lambda: rnn.GRU(4))
    assert gru.l0_i2h_weight.shape == (12, 0)
    gru.initialize()
    with pytest.raises(mx.gluon.DeferredInitializationError):
        gru.l0_i2h_weight.data()
    assert gru(mx.nd.ones((3, 2, 5))).shape == (3, 2, 4)
    assert gru.l0_i2h_weight.shape == (12, 5)
    assert repr(gru) == 'GRU(5 -> 4, TNC)'     # MXNet 1.9.1
    bi = _fresh(lambda: rnn.LSTM(2, bidirectional=True, layout='NTC'))
    bi.initialize()
    bi.hybridize()
    assert bi(mx.nd.ones((2, 3, 7))).shape == (2, 3, 4)
    assert bi.r0_i2h_weight.shape == (8, 7)


@pytest.mark.parametrize('mode', ['lstm', 'gru_bidirectional'])
def test_deferred_input_size_inside_a_hybridized_parent(mode):
    """The layer learns its input size while the parent traces (MXNet 1.9.1 does too);
    the hybridized parent equals the same network run imperatively."""
    def make():
        net = mx.gluon.nn.HybridSequential()
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(6, flatten=False),
                    rnn.LSTM(4, layout='NTC') if mode == 'lstm' else
                    rnn.GRU(3, num_layers=2, bidirectional=True, layout='NTC'),
                    mx.gluon.nn.Dense(2, flatten=False))
        net.initialize(mx.init.Xavier())
        return net
    x = mx.nd.array(np.random.default_rng(2).standard_normal((2, 5, 7)))
    hybrid, plain = make(), make()
    hybrid.hybridize()
    outs = []
    for net in (hybrid, plain):
        with autograd.record():
            y = net(x)
        y.backward()
        outs.append(y)
    first = 'lstm0_l0_i2h_weight' if mode == 'lstm' else 'gru0_l0_i2h_weight'
    assert hybrid.collect_params()[hybrid.prefix + first].shape[1] == 6
    # same weights, then the same outputs and gradients
    for (_, ph), (_, pp) in zip(hybrid.collect_params().items(),
                                plain.collect_params().items()):
        pp.set_data(ph.data())
    for net in (hybrid, plain):
        with autograd.record():
            y = net(x)
        y.backward()
    np.testing.assert_allclose(hybrid(x).asnumpy(), plain(x).asnumpy(), rtol=1e-5, atol=1e-6)
    for (_, ph), (_, pp) in zip(hybrid.collect_params().items(),
                                plain.collect_params().items()):
        np.testing.assert_allclose(ph.grad().asnumpy(), pp.grad().asnumpy(), rtol=1e-4,
                                   atol=1e-5)


def test_state_info_and_begin_state():
    # MXNet 1.9.1
    assert _fresh(lambda: rnn.LSTM(3, num_layers=2, projection_size=2)).state_info(5) == [
        {'shape': (2, 5, 2), '__layout__': 'LNC', 'dtype': 'float32'},
        {'shape': (2, 5, 3), '__layout__': 'LNC', 'dtype': 'float32'}]
    assert _fresh(lambda: rnn.GRU(3, dtype='float64')).state_info() == [
        {'shape': (1, 0, 3), '__layout__': 'LNC', 'dtype': 'float64'}]
    layer = _fresh(lambda: rnn.LSTM(3, num_layers=2, bidirectional=True))
    states = layer.begin_state(4)
    assert [s.shape for s in states] == [(4, 4, 3), (4, 4, 3)]
    assert not any(s.asnumpy().any() for s in states)
    assert [s.name for s in layer.begin_state(0, func=mx.sym.zeros)] == \
        ['lstm0_h0_0', 'lstm0_h0_1']                            # MXNet 1.9.1
    with pytest.raises(ValueError, match=r'Expecting \(1, 2, 3\), got \(1, 3, 3\)'):
        gru = _fresh(lambda: rnn.GRU(3, input_size=2))
        gru.initialize()
        gru(mx.nd.ones((4, 2, 2)), mx.nd.zeros((1, 3, 3)))


# ---------------------------------------------------------------- MXNet's values
@pytest.mark.parametrize('name', sorted(MXNET_LAYER))
def test_forward_states_and_gradients_match_mxnet(name):
    got = CASES.layer_cases(mx, rnn)[name]()
    assert sorted(got) == sorted(MXNET_LAYER[name])
    for key, (shape, values) in MXNET_LAYER[name].items():
        assert got[key].shape == shape, key
        np.testing.assert_allclose(got[key].ravel(), values, rtol=1e-5, atol=1e-6,
                                   err_msg=key)


def test_calling_with_and_without_states():
    layer = _fresh(lambda: rnn.LSTM(3, input_size=2))
    layer.initialize()
    x = _rand((4, 2, 2))
    out = layer(x)
    assert isinstance(out, mx.nd.NDArray) and out.shape == (4, 2, 3)
    out2, states = layer(x, layer.begin_state(2))
    assert isinstance(states, list) and [s.shape for s in states] == [(1, 2, 3)] * 2
    _close(out, out2)
    gru = _fresh(lambda: rnn.GRU(3, input_size=2))
    gru.initialize()
    out, states = gru(x, mx.nd.zeros((1, 2, 3)))     # one state, not in a list
    assert len(states) == 1 and states[0].shape == (1, 2, 3)


# ---------------------------------------------------------------- gradients
def _float64_layer(make, xshape, seed, *lengths):
    layer = _fresh(make)
    mx.random.seed(seed)        # the weights too: finite differences near relu's kink
    layer.initialize(mx.init.Uniform(0.5))  # depend on them, not on earlier tests
    x = _rand(xshape, seed, 'float64')
    layer(x, None, *lengths)
    return layer, x


def _check_layer_gradients(layer, x, states, lengths=None, per_array=3):
    x.attach_grad()
    arrays = {'x': (x, lambda: x.grad)}
    for i, s in enumerate(states):
        s.attach_grad()
        arrays[f'state{i}'] = (s, lambda s=s: s.grad)
    for name, p in layer.collect_params().items():
        arrays[name] = (p.data(), p.grad)

    def loss():
        out, new = layer(x, states, lengths)
        return (out * out).sum() + sum((s * s * s).sum() for s in new)
    CASES.check_gradients(mx, loss, arrays, per_array=per_array)


@pytest.mark.parametrize('mode', sorted(MODES))
def test_fused_gradients_vs_finite_differences(mode):
    layer, x = _float64_layer(lambda: MODES[mode](2, num_layers=2, bidirectional=True,
                                                  dtype='float64'), (3, 2, 2), 1)
    states = [_rand(s.shape, 5 + i, 'float64') for i, s in enumerate(layer.begin_state(2))]
    _check_layer_gradients(layer, x, states)


def test_step_path_gradients_vs_finite_differences():
    """Projection, state clipping and sequence lengths run the unrolled step math."""
    layer, x = _float64_layer(lambda: rnn.LSTM(3, projection_size=2, bidirectional=True,
                                               state_clip_min=-0.3, state_clip_max=0.3,
                                               layout='NTC', dtype='float64'), (2, 3, 2), 2)
    states = [_rand(s.shape, 7 + i, 'float64') * 0.1
              for i, s in enumerate(layer.begin_state(2))]
    _check_layer_gradients(layer, x, states)
    lengths = mx.nd.array([4, 1, 2], dtype='float64')
    gru, x = _float64_layer(lambda: rnn.GRU(2, num_layers=2, bidirectional=True,
                                            use_sequence_length=True, dtype='float64'),
                            (4, 3, 2), 3, lengths)
    states = [_rand(gru.begin_state(3)[0].shape, 8, 'float64')]
    _check_layer_gradients(gru, x, states, lengths)


# ---------------------------------------------------------------- the same layer, other ways
def _with_weights(make, xshape, seed=0):
    layer = _fresh(make)
    layer.initialize()
    x = _rand(xshape, seed)
    full = mx.nd.full((xshape[layer._layout.find('N')],), xshape[layer._layout.find('T')])
    layer(x, None, *([full] if layer._use_sequence_length else []))
    CASES.set_weights(layer, seed + 1, mx)
    return layer, x


def _unfused_states(layer, states):
    """The stack of cells lists per layer l then r, [h, c] each; the layer stacks all h,
    then all c."""
    per = 2 if layer._mode == 'lstm' else 1
    return [mx.nd.stack(*states[k::per], axis=0) for k in range(per)]


@pytest.mark.parametrize('mode', sorted(MODES))
@pytest.mark.parametrize('layout', ['TNC', 'NTC'])
def test_layer_equals_its_cells_unrolled(mode, layout):
    layer, x = _with_weights(lambda: MODES[mode](3, num_layers=2, bidirectional=True,
                                                 layout=layout),
                             (4, 2, 3) if layout == 'TNC' else (2, 4, 3))
    states = [_rand(s.shape, 3 + i) for i, s in enumerate(layer.begin_state(
        x.shape[layout.find('N')]))]
    out, new = layer(x, states)
    stack = layer._unfuse()
    assert set(stack.collect_params()) == set(layer.collect_params())
    per = 2 if mode == 'lstm' else 1
    cell_states = [states[k][i] for i in range(states[0].shape[0]) for k in range(per)]
    out2, new2 = stack.unroll(4, x, cell_states, layout=layout, merge_outputs=True)
    _close(out, out2)
    for a, b in zip(new, _unfused_states(layer, new2)):
        _close(a, b)


@pytest.mark.parametrize('make', [
    lambda: rnn.LSTM(3, num_layers=2, bidirectional=True, layout='NTC'),
    lambda: rnn.GRU(3),
    lambda: rnn.RNN(3, num_layers=2, activation='tanh'),
    lambda: rnn.LSTM(3, projection_size=2, num_layers=2, state_clip_min=-1,
                     state_clip_max=1),
    lambda: rnn.GRU(3, bidirectional=True, use_sequence_length=True)],
    ids=['lstm', 'gru', 'rnn', 'lstm_proj_clip', 'gru_lengths'])
def test_hybridized_equals_imperative(make):
    layer, x = _with_weights(make, (4, 2, 3))
    batch = x.shape[layer._layout.find('N')]
    seq = [mx.nd.array([4, 2])] if layer._use_sequence_length else []
    states = [_rand(s.shape, 5 + i) for i, s in enumerate(layer.begin_state(batch))]

    def run():
        x.attach_grad()
        with autograd.record():
            out, new = layer(x, states, *seq)
            loss = (out * out).sum() + sum((s * s * s).sum() for s in new)
        loss.backward()
        return [out] + new + [x.grad.copy()] + [
            p.grad().copy() for p in layer.collect_params().values()]
    imperative = run()
    layer.hybridize()
    for a, b in zip(imperative, run()):
        _close(a, b)
    assert isinstance(layer(x, None, *seq), mx.nd.NDArray)      # states made inside
    # another sequence length: a new graph (the step path unrolls T)
    x5 = _rand((5, 2, 3) if layer._layout == 'TNC' else (batch, 5, 3), 8)
    seq5 = [mx.nd.array([5, 3])] if seq else []
    hybrid = layer(x5, states, *seq5)
    layer.hybridize(False)
    _close(hybrid[0], layer(x5, states, *seq5)[0])


@pytest.mark.parametrize('mode', sorted(MODES))
def test_tnc_equals_ntc(mode):
    tnc, x = _with_weights(lambda: MODES[mode](3, num_layers=2, bidirectional=True),
                           (4, 2, 3))
    ntc, _ = _with_weights(lambda: MODES[mode](3, num_layers=2, bidirectional=True,
                                               layout='NTC'), (2, 4, 3))
    CASES.set_weights(ntc, 1, mx)
    states = [_rand(s.shape, 2 + i) for i, s in enumerate(tnc.begin_state(2))]
    out, new = tnc(x, states)
    out2, new2 = ntc(mx.nd.swapaxes(x, dim1=0, dim2=1), states)
    _close(out, mx.nd.swapaxes(out2, dim1=0, dim2=1))
    for a, b in zip(new, new2):
        _close(a, b)


@pytest.mark.parametrize('mode', sorted(MODES))
def test_use_sequence_length_equals_each_sequence_alone(mode):
    """MXNet's cuDNN semantics: each sequence stops at its length (the reverse direction
    starts there), outputs past it are 0, the states are its last step's."""
    make = lambda **k: MODES[mode](2, num_layers=2, bidirectional=True, layout='NTC', **k)
    layer, x = _with_weights(lambda: make(use_sequence_length=True), (3, 5, 2))
    plain, _ = _with_weights(make, (3, 5, 2))
    lengths = [5, 2, 3]
    states = [_rand(s.shape, 4 + i) for i, s in enumerate(layer.begin_state(3))]
    out, new = layer(x, states, mx.nd.array(lengths))
    for b, n in enumerate(lengths):
        alone, alone_states = plain(x[b:b + 1, :n], [s[:, b:b + 1] for s in states])
        _close(out[b:b + 1, :n], alone)
        assert not out[b, n:].asnumpy().any()
        for a, s in zip(alone_states, new):
            _close(a, s[:, b:b + 1])
    with pytest.raises(ValueError, match='sequence_length'):
        layer(x, states)


# ---------------------------------------------------------------- dropout, dtype, files
def test_dropout_between_layers():
    layer, x = _with_weights(lambda: rnn.LSTM(3, num_layers=2, dropout=0.5), (4, 2, 3))
    plain, _ = _with_weights(lambda: rnn.LSTM(3, num_layers=2), (4, 2, 3))
    _close(layer(x), plain(x))                      # predict mode: no dropout
    with autograd.record():
        dropped = layer(x)
    dropped.backward()
    assert np.abs(dropped.asnumpy() - plain(x).asnumpy()).max() > 1e-4


def test_cast_to_float64():
    layer, x = _with_weights(lambda: rnn.GRU(3, num_layers=2), (4, 2, 3))
    expected = layer(x)
    layer.cast('float64')
    out = layer(x.astype('float64'))
    assert out.dtype == np.float64 and layer.begin_state(2)[0].dtype == np.float64
    _close(out, expected)


def test_save_and_load_use_mxnet_keys(tmp_path):
    layer, x = _with_weights(lambda: rnn.LSTM(3, num_layers=2, bidirectional=True), (4, 2, 3))
    path = str(tmp_path / 'lstm.params')
    layer.save_parameters(path)
    # MXNet 1.9.1
    assert sorted(mx.nd.load(path)) == sorted(
        f'_unfused.{i}.{d}_cell.{g}_{t}' for i in range(2) for d in 'lr'
        for g in ('i2h', 'h2h') for t in ('weight', 'bias'))
    other = _fresh(lambda: rnn.LSTM(3, num_layers=2, bidirectional=True))
    other.load_parameters(path)
    _close(other(x), layer(x))
    gru = _fresh(lambda: rnn.GRU(2, input_size=3))
    gru.initialize()
    gru.save_parameters(path)
    assert sorted(mx.nd.load(path)) == ['_unfused.0.h2h_bias', '_unfused.0.h2h_weight',
                                        '_unfused.0.i2h_bias', '_unfused.0.i2h_weight']


def test_symbols_and_export(tmp_path):
    layer, x = _with_weights(lambda: rnn.LSTM(3, num_layers=2, layout='NTC'), (2, 4, 3))
    out = layer(mx.sym.var('data'))
    args = {'data': x}
    args.update({k: p.data() for k, p in layer.collect_params().items()})
    exe = out.bind(mx.cpu(), args)
    exe.forward()
    _close(exe.outputs[0], layer(x))
    out, states = layer(mx.sym.var('data'), layer.begin_state(0, func=mx.sym.var))
    assert len(states) == 2
    assert {'lstm0_h0_0', 'lstm0_h0_1'} <= set(mx.sym.Group([out] + states).list_arguments())
    layer.hybridize()
    layer(x)
    sym_file, params_file = layer.export(str(tmp_path / 'lstm'))
    loaded = mx.nd.load(params_file)
    assert sorted(loaded) == sorted('arg:' + k for k in layer.collect_params())
    proj = _fresh(lambda: rnn.LSTM(3, projection_size=2, input_size=3))
    proj.initialize()
    assert proj(mx.sym.var('data', shape=(4, 2, 3))).infer_shape()[1] == [(4, 2, 2)]
    with pytest.raises(ValueError, match='sequence length must be known'):
        proj(mx.sym.var('data'))
