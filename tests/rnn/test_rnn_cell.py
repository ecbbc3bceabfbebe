"""mx.rnn cells: unrolled outputs vs a NumPy transcription of the RNN/LSTM/GRU equations,
MXNet's parameter names and shapes, begin_state, composition (Sequential, Bidirectional,
Dropout, Zoneout, Residual), layouts, and FusedRNNCell vs its unfused stack."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError
from mxcy.operator import list_ops

N, T, C, H = 3, 4, 5, 6
HAS_RNN_OP = 'RNN' in list_ops()
needs_rnn_op = pytest.mark.skipif(not HAS_RNN_OP, reason="mx.sym.RNN (mxcy/operator/rnn.py) "
                                  "is not registered yet")


# ---------------------------------------------------------------- NumPy reference
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def step_reference(kind, x, states, w):
    """One step of MXNet's cells; w = {i2h_weight, i2h_bias, h2h_weight, h2h_bias}."""
    h = states[0]
    i2h = x @ w['i2h_weight'].T + w['i2h_bias']
    h2h = h @ w['h2h_weight'].T + w['h2h_bias']
    n = h.shape[1]
    if kind == 'lstm':
        a = i2h + h2h
        i, f = _sigmoid(a[:, :n]), _sigmoid(a[:, n:2 * n])
        g, o = np.tanh(a[:, 2 * n:3 * n]), _sigmoid(a[:, 3 * n:])
        c = f * states[1] + i * g
        out = o * np.tanh(c)
        return out, [out, c]
    if kind == 'gru':
        r = _sigmoid(i2h[:, :n] + h2h[:, :n])
        z = _sigmoid(i2h[:, n:2 * n] + h2h[:, n:2 * n])
        cand = np.tanh(i2h[:, 2 * n:] + r * h2h[:, 2 * n:])
        out = (1 - z) * cand + z * h
        return out, [out]
    out = np.tanh(i2h + h2h) if kind == 'rnn_tanh' else np.maximum(i2h + h2h, 0)
    return out, [out]


def unroll_reference(kind, x_ntc, states, w):
    outs = []
    for t in range(x_ntc.shape[1]):
        out, states = step_reference(kind, x_ntc[:, t], states, w)
        outs.append(out)
    return np.stack(outs, axis=1), states


GATES = {'rnn_tanh': 1, 'rnn_relu': 1, 'lstm': 4, 'gru': 3}


def make_cell(kind, prefix, num_hidden=H):
    if kind == 'lstm':
        return mx.rnn.LSTMCell(num_hidden, prefix=prefix)
    if kind == 'gru':
        return mx.rnn.GRUCell(num_hidden, prefix=prefix)
    return mx.rnn.RNNCell(num_hidden, activation=kind[4:], prefix=prefix)


def random_weights(kind, prefix, rng, input_size=C, num_hidden=H):
    g = GATES[kind] * num_hidden
    return {prefix + 'i2h_weight': rng.uniform(-0.5, 0.5, (g, input_size)),
            prefix + 'i2h_bias': rng.uniform(-0.5, 0.5, (g,)),
            prefix + 'h2h_weight': rng.uniform(-0.5, 0.5, (g, num_hidden)),
            prefix + 'h2h_bias': rng.uniform(-0.5, 0.5, (g,))}


def run(sym, inputs, is_train=False):
    """Bind `sym` on the given NumPy arrays (by name) and return its outputs as NumPy."""
    args = {k: mx.nd.array(v, dtype='float32') for k, v in inputs.items()}
    exe = sym.bind(mx.cpu(), args)
    return [o.asnumpy() for o in exe.forward(is_train=is_train)]


def strip(prefix, weights):
    return {k[len(prefix):]: v for k, v in weights.items()}


# ---------------------------------------------------------------- equations
@pytest.mark.parametrize('kind', ['rnn_tanh', 'rnn_relu', 'lstm', 'gru'])
def test_unroll_matches_numpy_equations(kind):
    rng = np.random.default_rng(0)
    cell = make_cell(kind, 'c_')
    data = mx.sym.Variable('data')
    outputs, states = cell.unroll(T, data, merge_outputs=True)
    weights = random_weights(kind, 'c_', rng)
    x = rng.uniform(-1, 1, (N, T, C))
    got = run(mx.sym.Group([outputs] + states), dict(weights, data=x))
    zeros = [np.zeros((N, H))] * len(cell.state_info)
    want, want_states = unroll_reference(kind, x, zeros, strip('c_', weights))
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)
    for g, w in zip(got[1:], want_states):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('kind', ['lstm', 'gru'])
def test_given_begin_state_variables_are_used(kind):
    rng = np.random.default_rng(1)
    cell = make_cell(kind, 'c_')
    begin = cell.begin_state(func=mx.sym.Variable)
    assert [s.name for s in begin] == [f'c_begin_state_{i}' for i in range(len(begin))]
    assert [s.attr('__layout__') for s in begin] == ['NC'] * len(begin)
    outputs, states = cell.unroll(T, mx.sym.Variable('data'), begin_state=begin,
                                  merge_outputs=True)
    weights = random_weights(kind, 'c_', rng)
    x = rng.uniform(-1, 1, (N, T, C))
    init = [rng.uniform(-1, 1, (N, H)) for _ in begin]
    feeds = dict(weights, data=x, **{s.name: v for s, v in zip(begin, init)})
    got = run(mx.sym.Group([outputs] + states), feeds)
    want, want_states = unroll_reference(kind, x, init, strip('c_', weights))
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[-1], want_states[-1], rtol=1e-5, atol=1e-5)


def test_begin_state_ones_is_resolved_to_the_batch_size():
    rng = np.random.default_rng(2)
    cell = mx.rnn.RNNCell(H, prefix='r_')
    begin = cell.begin_state(func=mx.sym.ones)
    assert begin[0].attr('__layout__') == 'NC'
    outputs, _ = cell.unroll(T, mx.sym.Variable('data'), begin_state=begin,
                             merge_outputs=True)
    weights = random_weights('rnn_tanh', 'r_', rng)
    x = rng.uniform(-1, 1, (N, T, C))
    got = run(outputs, dict(weights, data=x))[0]
    want, _ = unroll_reference('rnn_tanh', x, [np.ones((N, H))], strip('r_', weights))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_unresolved_zero_state_fails_with_a_clear_error():
    state = mx.rnn.LSTMCell(H).begin_state()[0]
    with pytest.raises(MXNetError, match=r"_zeros.*\(0, 6\).*cannot be inferred"):
        (state + mx.sym.Variable('x')).infer_shape(x=(2, H))


def test_tnc_layout_and_list_outputs_agree_with_ntc():
    rng = np.random.default_rng(3)
    weights = random_weights('lstm', 'c_', rng)
    x = rng.uniform(-1, 1, (N, T, C))
    ntc, _ = make_cell('lstm', 'c_').unroll(T, mx.sym.Variable('data'), merge_outputs=True)
    tnc, _ = make_cell('lstm', 'c_').unroll(T, mx.sym.Variable('data'), layout='TNC',
                                            merge_outputs=True)
    steps, _ = make_cell('lstm', 'c_').unroll(T, mx.sym.Variable('data'),
                                              merge_outputs=False)
    assert isinstance(steps, list) and len(steps) == T
    a = run(ntc, dict(weights, data=x))[0]
    b = run(tnc, dict(weights, data=x.transpose(1, 0, 2)))[0]
    c = run(mx.sym.Group(steps), dict(weights, data=x))
    np.testing.assert_allclose(b.transpose(1, 0, 2), a, rtol=1e-6)
    np.testing.assert_allclose(np.stack(c, axis=1), a, rtol=1e-6)


def test_gradient_flows_through_every_step():
    cell = make_cell('lstm', 'c_')
    outputs, _ = cell.unroll(T, mx.sym.Variable('data'), merge_outputs=True)
    loss = mx.sym.MakeLoss(mx.sym.sum(outputs))
    exe = loss.simple_bind(mx.cpu(), data=(N, T, C))
    rng = np.random.default_rng(4)
    for name, arr in exe.arg_dict.items():
        arr[:] = rng.uniform(-0.5, 0.5, arr.shape)
    exe.forward(is_train=True)
    exe.backward()
    for name in ('data', 'c_i2h_weight', 'c_h2h_weight', 'c_h2h_bias'):
        assert np.abs(exe.grad_dict[name].asnumpy()).sum() > 0, name
    # the first step's input also reaches the loss through every later step
    assert np.all(np.abs(exe.grad_dict['data'].asnumpy()[:, 0]).sum(axis=1) > 0)


# ---------------------------------------------------------------- names and shapes
def test_lstm_names_and_shapes_match_mxnet():
    cell = mx.rnn.LSTMCell(100, prefix='rnn_', forget_bias=1.0)
    inputs = [mx.sym.Variable(f'rnn_t{i}_data') for i in range(3)]
    outputs, _ = cell.unroll(3, inputs)
    outputs = mx.sym.Group(outputs)
    assert sorted(cell.params._params) == ['rnn_h2h_bias', 'rnn_h2h_weight', 'rnn_i2h_bias',
                                           'rnn_i2h_weight']
    assert outputs.list_outputs() == ['rnn_t0_out_output', 'rnn_t1_out_output',
                                      'rnn_t2_out_output']
    shapes = {f'rnn_t{i}_data': (10, 50) for i in range(3)}
    args, outs, _ = outputs.infer_shape(**shapes)
    assert outs == [(10, 100)] * 3
    arg_shapes = dict(zip(outputs.list_arguments(), args))
    assert arg_shapes['rnn_i2h_weight'] == (400, 50)
    assert arg_shapes['rnn_h2h_weight'] == (400, 100)
    assert arg_shapes['rnn_i2h_bias'] == arg_shapes['rnn_h2h_bias'] == (400,)


@pytest.mark.parametrize('kind,gates', [('rnn_tanh', 1), ('gru', 3)])
def test_rnn_and_gru_names_and_shapes(kind, gates):
    cell = make_cell(kind, 'rnn_', 100)
    outputs, _ = cell.unroll(3, [mx.sym.Variable(f'rnn_t{i}_data') for i in range(3)])
    outputs = mx.sym.Group(outputs)
    assert outputs.list_outputs() == [f'rnn_t{i}_out_output' for i in range(3)]
    args, outs, _ = outputs.infer_shape(**{f'rnn_t{i}_data': (10, 50) for i in range(3)})
    assert outs == [(10, 100)] * 3
    arg_shapes = dict(zip(outputs.list_arguments(), args))
    assert arg_shapes['rnn_i2h_weight'] == (gates * 100, 50)
    assert arg_shapes['rnn_h2h_bias'] == (gates * 100,)


def test_lstm_forget_bias_initialises_the_forget_gate():
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(10, forget_bias=2.0, prefix='l0_'))
    stack.add(mx.rnn.LSTMCell(10, forget_bias=2.0, prefix='l1_'))
    sym, _ = stack.unroll(1, mx.sym.Variable('data'), merge_outputs=True)
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind(data_shapes=[('data', (4, 1, 20))], label_shapes=None)
    mod.init_params()
    want = np.hstack([np.zeros(10), 2.0 * np.ones(10), np.zeros(20)])
    for name in ('l0_i2h_bias', 'l1_i2h_bias'):
        np.testing.assert_allclose(mod.get_params()[0][name].asnumpy(), want)


def test_begin_state_names_shapes_and_reset():
    cell = mx.rnn.LSTMCell(H, prefix='lstm_')
    assert cell.state_info == [{'shape': (0, H), '__layout__': 'NC'}] * 2
    assert cell.state_shape == [(0, H), (0, H)]
    states = cell.begin_state()
    assert [s.name for s in states] == ['lstm_begin_state_0', 'lstm_begin_state_1']
    assert [s.name for s in cell.begin_state()] == ['lstm_begin_state_2',
                                                    'lstm_begin_state_3']
    cell.reset()
    assert cell.begin_state()[0].name == 'lstm_begin_state_0'


def test_unpack_and_pack_weights_round_trip():
    rng = np.random.default_rng(5)
    cell = mx.rnn.LSTMCell(H, prefix='lstm_')
    args = {k: mx.nd.array(v) for k, v in random_weights('lstm', 'lstm_', rng).items()}
    unpacked = cell.unpack_weights(args)
    assert sorted(unpacked) == sorted(f'lstm_{g}{gate}_{kind}' for g in ('i2h', 'h2h')
                                      for gate in ('_i', '_f', '_c', '_o')
                                      for kind in ('weight', 'bias'))
    np.testing.assert_array_equal(unpacked['lstm_i2h_f_weight'].asnumpy(),
                                  args['lstm_i2h_weight'].asnumpy()[H:2 * H])
    packed = cell.pack_weights(unpacked)
    for k, v in args.items():
        np.testing.assert_array_equal(packed[k].asnumpy(), v.asnumpy())


# ---------------------------------------------------------------- composition
def test_sequential_stack_names_and_numbers():
    rng = np.random.default_rng(6)
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(H, prefix='l0_'))
    stack.add(mx.rnn.GRUCell(H, prefix='l1_'))
    outputs, states = stack.unroll(T, mx.sym.Variable('data'), merge_outputs=True)
    assert sorted(stack.params._params) == sorted(
        f'l{i}_{g}_{k}' for i in (0, 1) for g in ('i2h', 'h2h') for k in ('weight', 'bias'))
    assert len(states) == 3 and len(stack.state_info) == 3
    w0, w1 = random_weights('lstm', 'l0_', rng), random_weights('gru', 'l1_', rng, H)
    x = rng.uniform(-1, 1, (N, T, C))
    got = run(outputs, dict(w0, **w1, data=x))[0]
    mid, _ = unroll_reference('lstm', x, [np.zeros((N, H))] * 2, strip('l0_', w0))
    want, _ = unroll_reference('gru', mid, [np.zeros((N, H))], strip('l1_', w1))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # stepping the stack by hand gives the same last output
    stack.reset()
    step_states = stack.begin_state()
    for t, x_t in enumerate(mx.sym.split(mx.sym.Variable('data'), axis=1, num_outputs=T,
                                         squeeze_axis=1)):
        out, step_states = stack(x_t, step_states)
    last = run(out, dict(w0, **w1, data=x))[0]
    np.testing.assert_allclose(last, want[:, -1], rtol=1e-5, atol=1e-5)


def test_stack_output_names_follow_the_last_cell():
    cell = mx.rnn.SequentialRNNCell()
    for i in range(3):
        inner = mx.rnn.LSTMCell(8, prefix=f'rnn_stack{i}_')
        cell.add(mx.rnn.ResidualCell(inner) if i == 1 else inner)
    outputs, _ = cell.unroll(3, [mx.sym.Variable(f'rnn_t{i}_data') for i in range(3)])
    outputs = mx.sym.Group(outputs)
    assert outputs.list_outputs() == [f'rnn_stack2_t{i}_out_output' for i in range(3)]
    keys = sorted(cell.params._params)
    assert all(f'rnn_stack{i}_h2h_weight' in keys for i in range(3))
    _, outs, _ = outputs.infer_shape(**{f'rnn_t{i}_data': (2, 8) for i in range(3)})
    assert outs == [(2, 8)] * 3


def test_bidirectional_concatenates_forward_and_reversed_passes():
    rng = np.random.default_rng(7)
    cell = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(H, prefix='l_'),
                                    mx.rnn.LSTMCell(H, prefix='r_'), output_prefix='bi_')
    steps, _ = cell.unroll(T, [mx.sym.Variable(f't{i}') for i in range(T)])
    assert mx.sym.Group(steps).list_outputs() == [f'bi_t{i}_output' for i in range(T)]
    merged, states = cell.unroll(T, mx.sym.Variable('data'), merge_outputs=True)
    assert len(states) == 4
    wl, wr = random_weights('lstm', 'l_', rng), random_weights('lstm', 'r_', rng)
    x = rng.uniform(-1, 1, (N, T, C))
    got = run(merged, dict(wl, **wr, data=x))[0]
    zeros = [np.zeros((N, H))] * 2
    left, _ = unroll_reference('lstm', x, zeros, strip('l_', wl))
    right, _ = unroll_reference('lstm', x[:, ::-1], zeros, strip('r_', wr))
    want = np.concatenate([left, right[:, ::-1]], axis=2)
    assert got.shape == (N, T, 2 * H)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    listed = run(mx.sym.Group(steps), dict(wl, **wr, **{f't{i}': x[:, i] for i in range(T)}))
    np.testing.assert_allclose(np.stack(listed, axis=1), want, rtol=1e-5, atol=1e-5)


def test_dropout_cell_is_identity_in_inference_and_drops_in_training():
    rng = np.random.default_rng(8)
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(H, prefix='l0_'))
    stack.add(mx.rnn.DropoutCell(0.5))
    outputs, _ = stack.unroll(T, mx.sym.Variable('data'), merge_outputs=True)
    weights = random_weights('lstm', 'l0_', rng)
    x = rng.uniform(-1, 1, (N, T, C))
    want, _ = unroll_reference('lstm', x, [np.zeros((N, H))] * 2, strip('l0_', weights))
    np.testing.assert_allclose(run(outputs, dict(weights, data=x))[0], want, rtol=1e-5,
                               atol=1e-5)
    trained = run(outputs, dict(weights, data=x), is_train=True)[0]
    kept = trained != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(trained[kept], 2 * want[kept], rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match='DropoutCell: dropout must be'):
        mx.rnn.DropoutCell(1.5)


def test_residual_cell_adds_the_input():
    cell = mx.rnn.ResidualCell(mx.rnn.GRUCell(50, prefix='rnn_'))
    outputs, _ = cell.unroll(2, [mx.sym.Variable(f'rnn_t{i}_data') for i in range(2)])
    outputs = mx.sym.Group(outputs)
    assert sorted(cell.params._params) == ['rnn_h2h_bias', 'rnn_h2h_weight', 'rnn_i2h_bias',
                                           'rnn_i2h_weight']
    got = run(outputs, {'rnn_t0_data': np.ones((10, 50)), 'rnn_t1_data': np.ones((10, 50)),
                        'rnn_i2h_weight': np.zeros((150, 50)), 'rnn_i2h_bias': np.zeros(150),
                        'rnn_h2h_weight': np.zeros((150, 50)), 'rnn_h2h_bias': np.zeros(150)})
    # zero weights: z = 0.5, candidate 0, so h stays 0 and the output is the input
    np.testing.assert_array_equal(got[0], np.ones((10, 50)))
    np.testing.assert_array_equal(got[1], np.ones((10, 50)))
    merged, _ = mx.rnn.ResidualCell(mx.rnn.GRUCell(4, prefix='m_')).unroll(
        2, mx.sym.Variable('data'), merge_outputs=True)
    assert merged.infer_shape(data=(3, 2, 4))[1] == [(3, 2, 4)]


def test_zoneout_cell_keeps_previous_values_only_in_training():
    rng = np.random.default_rng(9)
    base = mx.rnn.RNNCell(H, prefix='z_')
    cell = mx.rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    with pytest.raises(MXNetError, match='modifier cell'):
        base.begin_state()
    outputs, _ = cell.unroll(T, mx.sym.Variable('data'), merge_outputs=True)
    weights = random_weights('rnn_tanh', 'z_', rng)
    x = rng.uniform(-1, 1, (N, T, C))
    want, _ = unroll_reference('rnn_tanh', x, [np.zeros((N, H))], strip('z_', weights))
    np.testing.assert_allclose(run(outputs, dict(weights, data=x))[0], want, rtol=1e-5,
                               atol=1e-5)
    trained = run(outputs, dict(weights, data=x), is_train=True)[0]
    assert trained.shape == (N, T, H) and np.all(np.isfinite(trained))
    assert not np.allclose(trained, want)      # some units kept their previous value
    # at t=0 the previous output is 0: every unit is either the new value or 0
    first, new = trained[:, 0], want[:, 0]
    assert np.all(np.isclose(first, new, rtol=1e-5, atol=1e-6) | (first == 0))


def test_param_sharing_between_cells():
    params = mx.rnn.RNNParams('shared_')
    a = mx.rnn.LSTMCell(H, prefix='shared_', params=params)
    b = mx.rnn.LSTMCell(H, prefix='shared_', params=params)
    out_a, _ = a.unroll(2, mx.sym.Variable('x'), merge_outputs=True)
    out_b, _ = b.unroll(2, out_a, merge_outputs=True)
    assert out_b.list_arguments() == ['x', 'shared_i2h_weight', 'shared_i2h_bias',
                                      'shared_h2h_weight', 'shared_h2h_bias']
    stack = mx.rnn.SequentialRNNCell(params=mx.rnn.RNNParams())
    with pytest.raises(MXNetError, match='not both'):
        stack.add(mx.rnn.LSTMCell(H, params=params))


def test_unroll_argument_errors():
    cell = mx.rnn.LSTMCell(H)
    with pytest.raises(ValueError, match='length=3 but 2 per-step inputs'):
        cell.unroll(3, [mx.sym.Variable('a'), mx.sym.Variable('b')])
    with pytest.raises(ValueError, match="layout must be 'NTC' or 'TNC'"):
        cell.unroll(2, mx.sym.Variable('a'), layout='NCT')
    with pytest.raises(ValueError, match='positive int'):
        cell.unroll(0, mx.sym.Variable('a'))
    with pytest.raises(NotImplementedError, match='cannot be stepped'):
        mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(H, prefix='a_'),
                                 mx.rnn.LSTMCell(H, prefix='b_'))(mx.sym.Variable('x'), [])


# ---------------------------------------------------------------- fused cell
def test_fused_cell_names_and_state_info():
    fused = mx.rnn.FusedRNNCell(H, num_layers=2, mode='lstm', bidirectional=True)
    assert fused.state_info == [{'shape': (4, 0, H), '__layout__': 'LNC'}] * 2
    assert fused._parameter.name == 'lstm_parameters'
    with pytest.raises(NotImplementedError, match='cannot be stepped'):
        fused(mx.sym.Variable('x'), [])
    with pytest.raises(ValueError, match='mode must be one of'):
        mx.rnn.FusedRNNCell(H, mode='lstmx')


def _consistency(cell1, cell2, mode, bidirectional, layers):
    """Bind both unrolled cells on the same data and weights (moved through
    unpack_weights/pack_weights); outputs and data gradients must agree."""
    rng = np.random.default_rng(10)
    shape = (N, T, C)
    mods = []
    for cell in (cell1, cell2):
        sym, _ = cell.unroll(T, mx.sym.Variable('data'), merge_outputs=True)
        net = mx.sym.Group([mx.sym.MakeLoss(mx.sym.sum(sym * sym)), mx.sym.BlockGrad(sym)])
        mod = mx.mod.Module(net, label_names=None)
        mod.bind(data_shapes=[('data', shape)], label_shapes=None, inputs_need_grad=True)
        mods.append((mod, sym))
    mods[0][0].init_params(mx.init.Uniform(0.5))
    args, aux = mods[0][0].get_params()
    args = cell2.pack_weights(cell1.unpack_weights(args))
    mods[1][0].set_params(args, aux)
    batch = mx.io.DataBatch(data=[mx.nd.array(rng.uniform(-1, 1, shape))], label=[])
    outs, grads = [], []
    for mod, sym in mods:
        mod.forward(batch, is_train=True)
        mod.backward()
        assert mod.get_outputs()[1].shape == (N, T, 2 * H if bidirectional else H)
        outs.append(mod.get_outputs()[1].asnumpy())
        grads.append(mod.get_input_grads()[0].asnumpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-5)


@needs_rnn_op
@pytest.mark.parametrize('mode', ['rnn_tanh', 'rnn_relu', 'lstm', 'gru'])
def test_fused_and_unfused_agree(mode):
    fused = mx.rnn.FusedRNNCell(H, num_layers=2, mode=mode, prefix=f'test_{mode}',
                                bidirectional=True)
    stack = fused.unfuse()
    _consistency(fused, stack, mode, True, 2)
    _consistency(stack, fused, mode, True, 2)


@needs_rnn_op
def test_fused_lstm_matches_numpy_and_returns_states():
    rng = np.random.default_rng(11)
    fused = mx.rnn.FusedRNNCell(H, num_layers=1, mode='lstm', prefix='f_',
                                get_next_state=True)
    outputs, states = fused.unroll(T, mx.sym.Variable('data'), merge_outputs=True)
    assert outputs.infer_shape(data=(N, T, C))[1] == [(N, T, H)]
    assert [s.attr('__layout__') for s in states] == ['LNC', 'LNC']
    weights = random_weights('lstm', 'l0_', rng)
    gates = ['_i', '_f', '_c', '_o']
    per_gate = {}
    for group in ('i2h', 'h2h'):
        for j, gate in enumerate(gates):
            for kind in ('weight', 'bias'):
                per_gate[f'f_l0_{group}{gate}_{kind}'] = mx.nd.array(
                    weights[f'l0_{group}_{kind}'][j * H:(j + 1) * H])
    flat = fused.pack_weights(per_gate)['f_parameters'].asnumpy()
    x = rng.uniform(-1, 1, (N, T, C))
    got = run(mx.sym.Group([outputs] + states), {'data': x, 'f_parameters': flat})
    want, want_states = unroll_reference('lstm', x, [np.zeros((N, H))] * 2,
                                         strip('l0_', weights))
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1][0], want_states[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[2][0], want_states[1], rtol=1e-5, atol=1e-5)
    round_trip = fused.unpack_weights({'f_parameters': mx.nd.array(flat)})
    for name, value in per_gate.items():
        np.testing.assert_array_equal(round_trip[name].asnumpy(), value.asnumpy())


def test_fused_unfuse_structure():
    stack = mx.rnn.FusedRNNCell(H, num_layers=3, mode='gru', bidirectional=True,
                                dropout=0.5, prefix='g_').unfuse()
    kinds = [type(c).__name__ for c in stack._cells]
    assert kinds == ['BidirectionalCell', 'DropoutCell', 'BidirectionalCell', 'DropoutCell',
                     'BidirectionalCell']
    assert 'g_r2_h2h_weight' in stack.params._params


@pytest.mark.parametrize('kind', ['lstm', 'gru'])
def test_unrolled_gradient_matches_finite_differences_float64(kind):
    rng = np.random.default_rng(12)
    cell = make_cell(kind, 'c_', num_hidden=3)
    outputs, _ = cell.unroll(2, mx.sym.Variable('data'), merge_outputs=True)
    location = dict(random_weights(kind, 'c_', rng, input_size=4, num_hidden=3),
                    data=rng.uniform(-1, 1, (2, 2, 4)))
    mx.test_utils.check_numeric_gradient(outputs, location, numeric_eps=1e-6, rtol=1e-5,
                                         atol=1e-7, dtype=np.float64)
