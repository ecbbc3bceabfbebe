"""gluon.rnn cells: MXNet's names, shapes and reprs; unrolled forward, states and
gradients against MXNet 1.9.1; gradients vs central differences (float64); unroll formats
(merge, lists, layouts, valid_length); hybridized == imperative; symbols; modifier cells.

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
MXNET_CELL = {
    'lstm': {
        'out': ((2, 3, 2), [-0.007989802, -0.186911, -0.05668504, -0.2326934, -0.05264106,
            -0.2468291, -0.01441431, -0.1245568, -0.1360669, -0.1863427, -0.09196559, -0.2114861]),
        'dx': ((2, 3, 2), [-0.02038039, -0.0286611, -0.01304008, -0.01290044, 0.009345233,
            0.07617777, -0.02411752, -0.02046409, 0.04397874, -0.04145139, 0.006468344,
            -0.01851875]),
        'state0': ((2, 2), [-0.05264106, -0.2468291, -0.09196559, -0.2114861]),
        'state1': ((2, 2), [-0.1266967, -0.5259251, -0.2217723, -0.6751047]),
        'grad_lc_i2h_weight': ((8, 2), [0.01473252, 0.01131044, 0.0392217, -0.08561419,
            -0.003204421, 0.002355733, 0.03004702, -0.02222821, -0.2142331, -0.1757345,
            -0.1017904, 0.03467449, 0.02908971, 0.001449557, 0.0172121, -0.1157661]),
    },
    'gru': {
        'out': ((3, 2, 2), [-0.2372642, 0.2067878, -0.1998171, 0.1353168, -0.3987432, 0.3595787,
            -0.03325002, 0.05753737, -0.1991169, 0.2066493, -0.2116168, 0.1868068]),
        'dx': ((3, 2, 2), [-0.2100478, 0.02895784, 0.1670268, -0.1594104, -0.0835368, 0.07486393,
            0.03176457, -0.1299645, -0.1623276, 0.2182724, 0.1016299, -0.1851635]),
        'state0': ((2, 2), [-0.1991169, 0.2066493, -0.2116168, 0.1868068]),
        'grad_gc_h2h_weight': ((6, 2), [0.006114595, -0.005430656, -0.01754746, 0.01613452,
            -0.05232005, 0.04933798, -0.02660029, 0.02858949, 0.1061119, -0.09481701, -0.0738479,
            0.06629822]),
    },
    'rnn_relu': {
        'out': ((2, 3, 2), [0.7043463, 0, 1.269674, 0, 1.361876, 0, 0.8369269, 0, 1.160459, 0,
            0.8941481, 0]),
        'dx': ((2, 3, 2), [-0.0612724, -0.05774686, -0.208663, -0.1966567, -0.08003788,
            -0.0754326, -0.1124767, -0.1060049, -0.04280829, -0.04034515, -0.1562801, -0.1472879]),
        'state0': ((2, 2), [1.361876, 0, 0.8941481, 0]),
    },
    'bidirectional_valid': {
        'out': ((3, 2, 4), [0.120965, -0.06957544, -0.05199475, 0.1834051, 0.1040566, -0.1545526,
            0.2662292, 0.2787516, 0.1224522, -0.1852123, 0.1777947, 0.3312274, 0, 0, 0, 0,
            0.1853056, -0.2249637, 0.2615487, 0.2634785, 0, 0, 0, 0]),
        'dx': ((3, 2, 2), [-0.06061037, 0.004912063, -0.276689, -0.1075822, 0.1477529,
            0.07831743, 0, 0, 0.1547818, 0.1756691, 0, 0]),
        'state0': ((2, 2), [0.1853056, -0.2249637, 0.1040566, -0.1545526]),
        'state1': ((2, 2), [0.4450536, -0.6557531, 0.2523606, -0.3801711]),
        'state2': ((2, 2), [-0.05199475, 0.1834051, 0.2662292, 0.2787516]),
        'grad_r_i2h_bias': ((6,), [0.0009553824, -0.0007473696, 0.03143735, -0.09663665,
            -0.023959, -0.02657147]),
    },
    'lstm_valid': {
        'out': ((3, 3, 2), [-0.1414584, -0.03524946, -0.2126326, 0.02077958, -0.2462775,
            -0.01091104, -0.1418316, 0.04954218, 0, 0, 0, 0, -0.1407455, 0.05356101, -0.2248835,
            -0.0124652, 0, 0]),
        'dx': ((3, 3, 2), [-0.04367217, -0.003024092, 0.03002394, -0.04683581, 0.02095916,
            -0.07440321, -0.09623747, 0.09354185, 0, 0, 0, 0, 0.01908757, 0.01337741, 0.1749761,
            -0.1356633, 0, 0]),
        'state0': ((3, 2), [-0.2462775, -0.01091104, -0.1418316, 0.04954218, -0.2248835,
            -0.0124652]),
        'state1': ((3, 2), [-0.6163283, -0.02372568, -0.3441865, 0.09704179, -0.5347852,
            -0.02750713]),
    },
    'sequential': {
        'out': ((2, 3, 2), [0.2370441, 0.6795197, 0.4246892, 0.7349462, 0.3858608, 0.7853373,
            0.2418797, 0.6827662, 0.4287048, 0.7458665, 0.3859571, 0.7757866]),
        'dx': ((2, 3, 2), [0.04388379, 0.06806318, 0.05450375, 0.05915431, 0.1677261, 0.1298495,
            -0.04668599, 0.02629761, 0.007914864, 0.0375158, -0.1580539, -0.04086093]),
        'state0': ((2, 2), [-0.0263144, 0.3445428, -0.02008408, 0.282991]),
        'state1': ((2, 2), [-0.06360393, 0.6413482, -0.05055729, 0.5853186]),
        'state2': ((2, 2), [0.2112986, 0.2361614, 0.2074465, 0.2433139]),
        'state3': ((2, 2), [0.3858608, 0.7853373, 0.3859571, 0.7757866]),
        'grad_s_b_i2h_weight': ((6, 2), [-0.0002964602, 0.0006651813, -0.0004995518, -0.01099931,
            0.0007321602, -0.001803252, 0.000313407, 0.006125826, -0.006197267, 0.01301308,
            -0.007480941, -0.145392]),
    },
}

CELLS = {'lstm': lambda h, **k: rnn.LSTMCell(h, **k), 'gru': lambda h, **k: rnn.GRUCell(h, **k),
         'rnn_tanh': lambda h, **k: rnn.RNNCell(h, **k),
         'rnn_relu': lambda h, **k: rnn.RNNCell(h, activation='relu', **k)}


def _fresh(make):
    with mx.name.NameManager():
        return make()


def _rand(shape, seed=0, dtype='float32'):
    return mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, shape), dtype=dtype)


def _close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(a.asnumpy() if hasattr(a, 'asnumpy') else a,
                               b.asnumpy() if hasattr(b, 'asnumpy') else b,
                               rtol=rtol, atol=atol)


def _ready(make, xshape=(2, 4, 3), layout='NTC', seed=0):
    cell = _fresh(make)
    cell.initialize()
    x = _rand(xshape, seed)
    cell.unroll(xshape[layout.find('T')], x, layout=layout)
    CASES.set_weights(cell, seed + 1, mx)
    return cell, x


# ---------------------------------------------------------------- API, names, repr
def test_public_names():
    # MXNet 1.9.1: dir(mxnet.gluon.rnn)
    for name in ['BidirectionalCell', 'DropoutCell', 'GRU', 'GRUCell', 'HybridRecurrentCell',
                 'HybridSequentialRNNCell', 'LSTM', 'LSTMCell', 'ModifierCell', 'RNN',
                 'RNNCell', 'RecurrentCell', 'ResidualCell', 'SequentialRNNCell',
                 'ZoneoutCell', 'rnn_cell', 'rnn_layer']:
        assert hasattr(rnn, name), name


def test_names_shapes_and_reprs():
    def make():
        seq = rnn.SequentialRNNCell()
        seq.add(rnn.LSTMCell(3))
        seq.add(rnn.DropoutCell(0.5))
        seq.add(rnn.ResidualCell(rnn.GRUCell(3)))
        seq.add(rnn.ZoneoutCell(rnn.RNNCell(3), 0.1, 0.2))
        return seq
    seq = _fresh(make)
    # MXNet 1.9.1
    assert repr(seq) == (
        'SequentialRNNCell(\n(0): LSTMCell(None -> 12)\n(1): DropoutCell(rate=0.5, axes=())\n'
        '(2): ResidualCell(GRUCell(None -> 9))\n'
        '(3): ZoneoutCell(p_out=0.1, p_state=0.2, RNNCell(None -> 3, tanh))\n)')
    assert [(k, v.shape) for k, v in seq.collect_params().items()] == [
        ('lstm0_i2h_weight', (12, 0)), ('lstm0_h2h_weight', (12, 3)),
        ('lstm0_i2h_bias', (12,)), ('lstm0_h2h_bias', (12,)),
        ('gru0_i2h_weight', (9, 0)), ('gru0_h2h_weight', (9, 3)), ('gru0_i2h_bias', (9,)),
        ('gru0_h2h_bias', (9,)), ('rnn0_i2h_weight', (3, 0)), ('rnn0_h2h_weight', (3, 3)),
        ('rnn0_i2h_bias', (3,)), ('rnn0_h2h_bias', (3,))]
    assert seq[2].prefix == 'gru0_residualcell' and seq[3].prefix == 'rnn0_zoneout'
    assert len(seq) == 4
    assert repr(_fresh(lambda: rnn.RNNCell(3, activation='relu', input_size=4))) == \
        'RNNCell(4 -> 3, relu)'
    assert repr(_fresh(lambda: rnn.GRUCell(2, input_size=3))) == 'GRUCell(3 -> 6)'
    bi = _fresh(lambda: rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.GRUCell(3)))
    assert repr(bi) == \
        'BidirectionalCell(forward=LSTMCell(None -> 12), backward=GRUCell(None -> 9))'
    stack = _fresh(lambda: rnn.HybridSequentialRNNCell(prefix='net_'))
    with stack.name_scope():
        stack.add(rnn.LSTMCell(2))
    assert list(stack.collect_params())[0] == 'net_lstm0_i2h_weight'


def test_state_info_and_begin_state():
    cell = _fresh(lambda: rnn.LSTMCell(3, prefix='c_'))
    # MXNet 1.9.1
    assert cell.state_info(4) == [{'shape': (4, 3), '__layout__': 'NC'}] * 2
    assert [s.shape for s in cell.begin_state(4)] == [(4, 3), (4, 3)]
    assert [s.name for s in cell.begin_state(batch_size=2, func=mx.sym.zeros)] == \
        ['c_begin_state_2', 'c_begin_state_3']
    bi = _fresh(lambda: rnn.BidirectionalCell(rnn.LSTMCell(2), rnn.GRUCell(2)))
    assert [s.shape for s in bi.begin_state(batch_size=5)] == [(5, 2)] * 3
    assert rnn.DropoutCell(0.5).state_info() == []


# ---------------------------------------------------------------- MXNet's values
@pytest.mark.parametrize('name', sorted(MXNET_CELL))
def test_unroll_and_gradients_match_mxnet(name):
    got = CASES.cell_cases(mx, rnn)[name]()
    assert sorted(got) == sorted(MXNET_CELL[name])
    for key, (shape, values) in MXNET_CELL[name].items():
        assert got[key].shape == shape, key
        np.testing.assert_allclose(got[key].ravel(), values, rtol=1e-5, atol=1e-6,
                                   err_msg=key)


@pytest.mark.parametrize('kind', sorted(CELLS))
def test_cell_gradients_vs_finite_differences(kind):
    cell = _fresh(lambda: CELLS[kind](2, input_size=3))
    cell.initialize(mx.init.Uniform(0.5))
    cell.cast('float64')
    x = _rand((2, 3, 3), 1, 'float64')
    x.attach_grad()
    states = [_rand(s.shape, 2 + i, 'float64') for i, s in enumerate(cell.begin_state(2))]
    arrays = {'x': (x, lambda: x.grad)}
    arrays.update({k: (p.data(), p.grad) for k, p in cell.collect_params().items()})

    def loss():
        out, new = cell.unroll(3, x, states, merge_outputs=True,
                               valid_length=mx.nd.array([3, 2], dtype='float64'))
        return (out * out).sum() + sum((s * s * s).sum() for s in new)
    CASES.check_gradients(mx, loss, arrays, per_array=3)


# ---------------------------------------------------------------- unroll
@pytest.mark.parametrize('kind', sorted(CELLS))
def test_unroll_formats_agree(kind):
    cell, x = _ready(lambda: CELLS[kind](3))
    out, states = cell.unroll(4, x, merge_outputs=True)
    assert out.shape == (2, 4, 3)
    steps, states2 = cell.unroll(4, x, merge_outputs=False)
    assert isinstance(steps, list) and len(steps) == 4
    _close(mx.nd.stack(*steps, axis=1), out)
    as_list = [x[:, t] for t in range(4)]
    out3, _ = cell.unroll(4, as_list, layout='NTC', merge_outputs=True)
    _close(out3, out)
    tnc, states4 = cell.unroll(4, mx.nd.swapaxes(x, dim1=0, dim2=1), layout='TNC',
                               merge_outputs=True)
    _close(mx.nd.swapaxes(tnc, dim1=0, dim2=1), out)
    for a, b, c in zip(states, states2, states4):
        _close(a, b)
        _close(a, c)
    h = cell.begin_state(2)             # stepping by hand: the same outputs
    for t in range(4):
        o, h = cell(x[:, t], h)
        _close(o, out[:, t])
    with pytest.raises(ValueError, match='length=3'):
        cell.unroll(3, x)


@pytest.mark.parametrize('kind', sorted(CELLS))
def test_valid_length_equals_each_sequence_alone(kind):
    cell, x = _ready(lambda: CELLS[kind](3), (3, 5, 3))
    lengths = [5, 2, 4]
    out, states = cell.unroll(5, x, merge_outputs=True, valid_length=mx.nd.array(lengths))
    for b, n in enumerate(lengths):
        alone, alone_states = cell.unroll(n, x[b:b + 1, :n], merge_outputs=True)
        _close(out[b:b + 1, :n], alone)
        assert not out[b, n:].asnumpy().any()
        for a, s in zip(alone_states, states):
            _close(a, s[b:b + 1])


def test_bidirectional_cell():
    cell, x = _ready(lambda: rnn.BidirectionalCell(rnn.LSTMCell(2), rnn.GRUCell(3)))
    out, states = cell.unroll(4, x, merge_outputs=True)
    assert out.shape == (2, 4, 5) and [s.shape for s in states] == [(2, 2), (2, 2), (2, 3)]
    fwd, fwd_states = cell._children['l_cell'].unroll(4, x, merge_outputs=True)
    rev = mx.nd.flip(x, axis=1)
    bwd, bwd_states = cell._children['r_cell'].unroll(4, rev, merge_outputs=True)
    _close(out, mx.nd.concat(fwd, mx.nd.flip(bwd, axis=1), dim=2))
    for a, b in zip(states, fwd_states + bwd_states):
        _close(a, b)
    steps, _ = cell.unroll(4, x, merge_outputs=False)
    _close(mx.nd.stack(*steps, axis=1), out)
    with pytest.raises(NotImplementedError, match='cannot be stepped'):
        cell(x[:, 0], states)


def test_sequential_cells_step_and_unroll():
    def make():
        seq = rnn.HybridSequentialRNNCell()
        with seq.name_scope():
            seq.add(rnn.LSTMCell(3))
            seq.add(rnn.ResidualCell(rnn.GRUCell(3)))
            seq.add(rnn.DropoutCell(0.5))
        return seq
    seq, x = _ready(make)
    out, states = seq.unroll(4, x, merge_outputs=True)
    assert len(states) == 3
    h = seq.begin_state(batch_size=2)
    for t in range(4):
        o, h = seq(x[:, t], h)
        _close(o, out[:, t])
    for a, b in zip(h, states):
        _close(a, b)
    lstm = seq[0]
    direct, _ = lstm.unroll(4, x, merge_outputs=True)
    res, _ = seq[1].unroll(4, direct, merge_outputs=True)
    _close(out, res)                        # predict mode: Dropout passes through


# ---------------------------------------------------------------- modifiers
def test_modifier_rules():
    base = _fresh(lambda: rnn.GRUCell(3))
    zone = rnn.ZoneoutCell(base, 0.5, 0.5)
    with pytest.raises(AssertionError, match='modifier cell'):
        base.begin_state(2)
    with pytest.raises(AssertionError, match='already modified'):
        rnn.ResidualCell(base)
    with pytest.raises(AssertionError, match='zoneout'):
        rnn.ZoneoutCell(rnn.BidirectionalCell(rnn.GRUCell(2), rnn.GRUCell(2)))
    assert zone.params is base.params
    assert [s.shape for s in zone.begin_state(batch_size=2, func=mx.nd.zeros)] == [(2, 3)]
    with pytest.raises(TypeError):
        rnn.DropoutCell('0.5')


def test_zoneout_and_dropout_in_training():
    cell, x = _ready(lambda: rnn.ZoneoutCell(rnn.LSTMCell(3), 0.5, 0.5))
    plain_out, _ = cell.unroll(4, x, merge_outputs=True)
    base_out, _ = _ready(lambda: rnn.LSTMCell(3))[0].unroll(4, x, merge_outputs=True)
    _close(plain_out, base_out)                 # predict mode: the base cell
    with autograd.record():
        out, states = cell.unroll(4, x, merge_outputs=True)
    out.backward()
    assert out.shape == (2, 4, 3)
    first = out[:, 0].asnumpy()                 # zoned-out units keep the previous (0)
    assert ((first == 0) | np.isclose(first, base_out[:, 0].asnumpy())).all()
    drop = rnn.DropoutCell(0.5, axes=(1,))
    ones = mx.nd.ones((2, 4, 6))
    with autograd.train_mode():
        merged, _ = drop.unroll(4, ones, merge_outputs=True)
        values = set(np.unique(merged.asnumpy()))
    assert values <= {0.0, 2.0}
    assert (merged.asnumpy() == merged.asnumpy()[:, :1]).all()     # shared along axis 1
    _close(drop.unroll(4, ones, merge_outputs=True)[0], ones)


# ---------------------------------------------------------------- hybridize, symbols
@pytest.mark.parametrize('make', [
    lambda: rnn.LSTMCell(3), lambda: rnn.GRUCell(3),
    lambda: rnn.RNNCell(3, activation='relu'),
    lambda: rnn.BidirectionalCell(rnn.LSTMCell(2), rnn.GRUCell(2)),
    lambda: rnn.ResidualCell(rnn.GRUCell(3))],
    ids=['lstm', 'gru', 'rnn', 'bidirectional', 'residual'])
def test_hybridized_equals_imperative_and_symbols(make):
    cell, x = _ready(make)
    lengths = mx.nd.array([4, 2])

    def run():
        x.attach_grad()
        with autograd.record():
            out, states = cell.unroll(4, x, merge_outputs=True, valid_length=lengths)
            loss = (out * out).sum() + sum((s * s * s).sum() for s in states)
        loss.backward()
        return [out] + states + [x.grad.copy()] + [
            p.grad().copy() for p in cell.collect_params().values()]
    imperative = run()
    cell.hybridize()
    for a, b in zip(imperative, run()):
        _close(a, b)
    out, states = cell.unroll(4, mx.sym.var('x'), merge_outputs=True)
    args = {'x': x}
    args.update({k: p.data() for k, p in cell.collect_params().items()})
    exe = mx.sym.Group([out] + states).bind(mx.cpu(), args)
    exe.forward()
    cell.hybridize(False)
    expected, expected_states = cell.unroll(4, x, merge_outputs=True)
    for a, b in zip(exe.outputs, [expected] + expected_states):
        _close(a, b)


def test_hybridized_cell_infers_input_size():
    cell = _fresh(lambda: rnn.LSTMCell(3))
    cell.initialize()
    cell.hybridize()
    out, states = cell.unroll(4, _rand((2, 4, 5)), merge_outputs=True)
    assert out.shape == (2, 4, 3) and cell.i2h_weight.shape == (12, 5)
    assert repr(cell) == 'LSTMCell(5 -> 12)'
