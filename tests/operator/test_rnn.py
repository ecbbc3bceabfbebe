"""The fused RNN operator: forward vs a plain NumPy transcription of the cells, backward
vs finite differences (float64), MXNet's parameter packing, shapes, dropout, errors."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError
from mxcy.operator import get_op
from mxcy.operator.rnn import param_size
from mxcy.test_utils import check_op_backward, finite_difference as numeric_grad

GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}
MODES = list(GATES)


# ---------------------------------------------------------------- NumPy reference
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _unpack(flat, mode, layers, dirs, input_size, hidden):
    """MXNet packing: all (W_x, W_h) per layer and direction, then all (b_x, b_h)."""
    g, weights, off = GATES[mode], {}, 0
    for layer in range(layers):
        ni = input_size if layer == 0 else dirs * hidden
        for d in range(dirs):
            wx = flat[off:off + g * hidden * ni].reshape(g * hidden, ni)
            off += g * hidden * ni
            wh = flat[off:off + g * hidden * hidden].reshape(g * hidden, hidden)
            off += g * hidden * hidden
            weights[layer, d] = [wx, wh]
    for layer in range(layers):
        for d in range(dirs):
            weights[layer, d] += [flat[off:off + g * hidden],
                                  flat[off + g * hidden:off + 2 * g * hidden]]
            off += 2 * g * hidden
    assert off == flat.size
    return weights


def _cell(mode, x, h, c, wx, wh, bx, bh):
    n = h.shape[1]
    if mode == 'lstm':
        a = x @ wx.T + bx + h @ wh.T + bh
        i, f = _sigmoid(a[:, :n]), _sigmoid(a[:, n:2 * n])
        g, o = np.tanh(a[:, 2 * n:3 * n]), _sigmoid(a[:, 3 * n:])
        c = f * c + i * g
        return o * np.tanh(c), c
    if mode == 'gru':
        ax, ah = x @ wx.T + bx, h @ wh.T + bh
        r = _sigmoid(ax[:, :n] + ah[:, :n])
        z = _sigmoid(ax[:, n:2 * n] + ah[:, n:2 * n])
        cand = np.tanh(ax[:, 2 * n:] + r * ah[:, 2 * n:])
        return (1 - z) * cand + z * h, c
    a = x @ wx.T + bx + h @ wh.T + bh
    return (np.tanh(a) if mode == 'rnn_tanh' else np.maximum(a, 0)), c


def rnn_reference(x, flat, h0, c0, mode, layers, bidirectional):
    dirs = 2 if bidirectional else 1
    seq_len, _, input_size = x.shape
    hidden = h0.shape[2]
    weights = _unpack(flat, mode, layers, dirs, input_size, hidden)
    hy, cy = np.zeros_like(h0), np.zeros_like(h0)
    layer_in = x
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            h, c = h0[k], (c0[k] if c0 is not None else None)
            seq = [None] * seq_len
            for t in (range(seq_len) if d == 0 else reversed(range(seq_len))):
                h, c = _cell(mode, layer_in[t], h, c, *weights[layer, d])
                seq[t] = h
            hy[k] = h
            if c is not None:
                cy[k] = c
            outs.append(np.stack(seq))
        layer_in = np.concatenate(outs, axis=2)
    return layer_in, hy, cy


def _inputs(mode, layers, bidirectional, t=4, n=3, i=5, h=6, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    spec = get_op('RNN')
    p = spec.params.parse('RNN', {'state_size': h, 'num_layers': layers, 'mode': mode,
                                  'bidirectional': bidirectional})
    k = layers * (2 if bidirectional else 1)
    ins = [rng.standard_normal((t, n, i)), rng.standard_normal(param_size(p, i)) * 0.5,
           rng.standard_normal((k, n, h))]
    if mode == 'lstm':
        ins.append(rng.standard_normal((k, n, h)))
    return [a.astype(dtype) for a in ins]


# ---------------------------------------------------------------- tests
def test_param_size_matches_mxnet():
    # values printed by MXNet 1.9.1's sym.RNN(...).infer_shape(data=(4, 3, 5)), state_size=6
    expected = {('lstm', 1, False): 312, ('lstm', 2, True): 1584, ('lstm', 2, False): 648,
                ('gru', 1, False): 234, ('gru', 2, True): 1188, ('gru', 2, False): 486,
                ('rnn_tanh', 1, False): 78, ('rnn_relu', 2, True): 396,
                ('rnn_tanh', 2, False): 162}
    spec = get_op('RNN')
    for (mode, layers, bi), size in expected.items():
        p = spec.params.parse('RNN', {'state_size': 6, 'num_layers': layers, 'mode': mode,
                                      'bidirectional': bi})
        assert param_size(p, 5) == size
        sym = mx.sym.RNN(mx.sym.var('data'), state_size=6, num_layers=layers, mode=mode,
                         bidirectional=bi)
        assert sym.infer_shape(data=(4, 3, 5))[0][1] == (size,)


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('layers,bidirectional', [(1, False), (2, True), (2, False)])
def test_forward_matches_reference(mode, layers, bidirectional):
    ins = _inputs(mode, layers, bidirectional)
    args = [mx.nd.array(a, dtype=np.float64) for a in ins]
    out, hy, *cy = mx.nd.RNN(*args, state_size=6, num_layers=layers, mode=mode,
                             bidirectional=bidirectional, state_outputs=True)
    ref = rnn_reference(ins[0], ins[1], ins[2], ins[3] if mode == 'lstm' else None, mode,
                        layers, bidirectional)
    np.testing.assert_allclose(out.asnumpy(), ref[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hy.asnumpy(), ref[1], rtol=1e-10, atol=1e-12)
    if mode == 'lstm':
        np.testing.assert_allclose(cy[0].asnumpy(), ref[2], rtol=1e-10, atol=1e-12)
    else:
        assert cy == []


def test_forward_float32():
    ins = _inputs('lstm', 1, False, dtype=np.float32)
    out = mx.nd.RNN(*[mx.nd.array(a) for a in ins], state_size=6, num_layers=1, mode='lstm')
    assert out.dtype == np.float32 and out.shape == (4, 3, 6)
    ref = rnn_reference(*[a.astype(np.float64) for a in ins], 'lstm', 1, False)
    np.testing.assert_allclose(out.asnumpy(), ref[0], rtol=1e-4, atol=1e-5)


def _run_op(ins, dtype, mode, layers, bidirectional, heads):
    args = [mx.nd.array(a, dtype=dtype) for a in ins]
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        res = mx.nd.RNN(*args, state_size=ins[2].shape[2], num_layers=layers, mode=mode,
                        bidirectional=bidirectional, state_outputs=True)
    mx.autograd.backward(list(res), [mx.nd.array(h, dtype=dtype) for h in heads])
    return [r.asnumpy() for r in res] + [a.grad.asnumpy() for a in args]


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('layers,bidirectional', [(2, False), (1, True)])
def test_float32_matches_float64_at_the_char_lstm_size(mode, layers, bidirectional):
    # batch 32, hidden 256 through the engine: the float32 kernels (the SIMD step product,
    # products shared with the workers) against float64 (BLAS; finite differences below)
    ins = _inputs(mode, layers, bidirectional, t=3, n=32, i=48, h=256, seed=3)
    ins[1] *= 0.1
    rng = np.random.default_rng(4)
    d = 2 if bidirectional else 1
    heads = [rng.standard_normal((3, 32, d * 256))] + \
        [rng.standard_normal(ins[2].shape) for _ in range(2 if mode == 'lstm' else 1)]
    want = _run_op(ins, np.float64, mode, layers, bidirectional, heads)
    got = _run_op(ins, np.float32, mode, layers, bidirectional, heads)
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-4 * max(1.0, np.abs(w).max()))


@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('layers,bidirectional,state_outputs',
                         [(1, False, False), (2, True, True)])
def test_backward_finite_differences(mode, layers, bidirectional, state_outputs):
    ins = _inputs(mode, layers, bidirectional, t=3, n=2, i=3, h=2, seed=1)
    check_op_backward('RNN', {'state_size': 2, 'num_layers': layers, 'mode': mode,
                              'bidirectional': bidirectional, 'state_outputs': state_outputs},
                      ins, rtol=1e-5, atol=1e-7)


def test_names_and_shape_inference():
    lstm = mx.sym.RNN(mx.sym.var('data'), state_size=5, num_layers=2, mode='lstm',
                      bidirectional=True, state_outputs=True, name='rnn')
    assert lstm.list_arguments() == ['data', 'rnn_parameters', 'rnn_state', 'rnn_state_cell']
    assert lstm.list_outputs() == ['rnn_output', 'rnn_state_output', 'rnn_statecell_output']
    args, outs, aux = lstm.infer_shape(data=(7, 3, 4))
    assert args == [(7, 3, 4), (1120,), (4, 3, 5), (4, 3, 5)]
    assert outs == [(7, 3, 10), (4, 3, 5), (4, 3, 5)] and aux == []
    gru = mx.sym.RNN(mx.sym.var('data'), state_size=5, num_layers=2, mode='gru', name='g')
    assert gru.list_arguments() == ['data', 'g_parameters', 'g_state']
    assert gru.list_outputs() == ['g_output']
    args, outs, _ = gru.infer_shape(data=(7, 3, 4))
    # 3 gates · 5 · (4 + 5 + 2) for layer 0, 3 · 5 · (5 + 5 + 2) for layer 1
    assert args[1:] == [(345,), (2, 3, 5)] and outs == [(7, 3, 5)]


def test_executor_forward_backward_and_add():
    ins = _inputs('gru', 2, True, t=3, n=2, i=3, h=4)
    net = mx.sym.RNN(mx.sym.var('data'), state_size=4, num_layers=2, mode='gru',
                     bidirectional=True, name='rnn')
    exe = net.simple_bind(mx.cpu(), grad_req='add', type_dict={'data': np.float64},
                          data=(3, 2, 3))
    for name, value in zip(['data', 'rnn_parameters', 'rnn_state'], ins):
        exe.arg_dict[name][:] = value
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, rnn_reference(ins[0], ins[1], ins[2], None, 'gru', 2,
                                                  True)[0], rtol=1e-10)
    head = mx.nd.array(np.random.default_rng(5).standard_normal(out.shape), dtype=np.float64)
    exe.backward([head])
    once = {k: v.asnumpy() for k, v in exe.grad_dict.items()}
    exe.backward([head])
    for k, v in exe.grad_dict.items():
        np.testing.assert_allclose(v.asnumpy(), 2 * once[k], rtol=1e-12, atol=1e-14)
    assert np.abs(once['rnn_parameters']).sum() > 0


def _seeded_forward(spec, p, arrays, is_train, seed=11):
    mx.random.seed(seed)
    _, out_shapes, _ = spec.infer_shape(p, [a.shape for a in arrays])
    outs = [mx.nd.zeros(s, dtype=np.float64) for s in out_shapes]
    spec.forward(p, is_train, ['write'] * len(outs), arrays, outs, [])
    return outs


def test_dropout_between_layers():
    ins = _inputs('lstm', 2, False, t=2, n=2, i=2, h=2, seed=3)
    spec = get_op('RNN')
    p = spec.params.parse('RNN', {'state_size': 2, 'num_layers': 2, 'mode': 'lstm',
                                  'p': 0.5})
    p0 = spec.params.parse('RNN', {'state_size': 2, 'num_layers': 2, 'mode': 'lstm'})
    arrays = [mx.nd.array(a, dtype=np.float64) for a in ins]
    plain = _seeded_forward(spec, p0, arrays, True)[0].asnumpy()
    # inference: no dropout; training: reproducible under a seed and different
    np.testing.assert_allclose(_seeded_forward(spec, p, arrays, False)[0].asnumpy(), plain)
    first = _seeded_forward(spec, p, arrays, True)[0].asnumpy()
    again = _seeded_forward(spec, p, arrays, True)[0].asnumpy()
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, plain)
    # backward through the drawn masks: finite differences with the seed fixed
    head = np.random.default_rng(0).standard_normal(first.shape)
    outs = _seeded_forward(spec, p, arrays, True)
    grads = [mx.nd.zeros(a.shape, dtype=np.float64) for a in ins]
    spec.backward(p, ['write'] * 4, [mx.nd.array(head, dtype=np.float64), None], arrays,
                  outs, grads, [])
    values = [a.copy() for a in ins]

    def loss():
        nd = [mx.nd.array(v, dtype=np.float64) for v in values]
        return float((head * _seeded_forward(spec, p, nd, True)[0].asnumpy()).sum())
    for i in (0, 1):
        np.testing.assert_allclose(grads[i].asnumpy(), numeric_grad(loss, values[i]),
                                   rtol=1e-5, atol=1e-7)


def test_errors():
    x = mx.nd.ones((4, 3, 5))
    with pytest.raises(ValueError, match=r"RNN.*'data'.*\(seq_len, batch, input_size\).*"
                                         r"\(4, 3\)"):
        mx.nd.RNN(mx.nd.ones((4, 3)), mx.nd.ones((78,)), mx.nd.ones((1, 3, 6)), state_size=6,
                  num_layers=1, mode='rnn_tanh')
    with pytest.raises(ValueError, match=r"RNN.*'parameters'.*expected \(78,\), given "
                                         r"\(77,\)"):
        mx.nd.RNN(x, mx.nd.ones((77,)), mx.nd.ones((1, 3, 6)), state_size=6, num_layers=1,
                  mode='rnn_tanh')
    with pytest.raises(ValueError, match=r"RNN.*'state_cell'.*expected \(1, 3, 6\), given "
                                         r"\(1, 2, 6\)"):
        mx.nd.RNN(x, mx.nd.ones((312,)), mx.nd.ones((1, 3, 6)), mx.nd.ones((1, 2, 6)),
                  state_size=6, num_layers=1, mode='lstm')
    with pytest.raises(MXNetError, match="projection_size.*not supported"):
        mx.nd.RNN(x, mx.nd.ones((312,)), mx.nd.ones((1, 3, 6)), mx.nd.ones((1, 3, 6)),
                  state_size=6, num_layers=1, mode='lstm', projection_size=3)
    with pytest.raises(ValueError, match="mode.*must be one of"):
        mx.nd.RNN(x, mx.nd.ones((78,)), mx.nd.ones((1, 3, 6)), state_size=6, num_layers=1,
                  mode='lstmx')
    with pytest.raises(ValueError, match=r"dropout p must be in \[0, 1\)"):
        mx.nd.RNN(x, mx.nd.ones((78,)), mx.nd.ones((1, 3, 6)), state_size=6, num_layers=1,
                  mode='rnn_tanh', p=1.0)
    with pytest.raises(TypeError, match="RNN: data must be float32 or float64"):
        mx.nd.RNN(*[mx.nd.ones(s, dtype=np.float16) for s in ((4, 3, 5), (78,), (1, 3, 6))],
                  state_size=6, num_layers=1, mode='rnn_tanh')


def test_mixed_grad_req_lstm():
    # null / write / add per argument in one backward kernel, with state outputs
    ins = _inputs('lstm', 2, True, t=3, n=2, i=3, h=4, seed=7)
    net = mx.sym.RNN(mx.sym.var('data'), state_size=4, num_layers=2, mode='lstm',
                     bidirectional=True, state_outputs=True, name='rnn')
    names = ['data', 'rnn_parameters', 'rnn_state', 'rnn_state_cell']
    req = {'data': 'null', 'rnn_parameters': 'write', 'rnn_state': 'add',
           'rnn_state_cell': 'write'}
    exe = net.simple_bind(mx.cpu(), grad_req=req, type_dict={'data': np.float64},
                          data=(3, 2, 3))
    full = net.simple_bind(mx.cpu(), grad_req='write', type_dict={'data': np.float64},
                           data=(3, 2, 3))
    for e in (exe, full):
        for name, value in zip(names, ins):
            e.arg_dict[name][:] = value
    exe.grad_dict['rnn_state'][:] = 1.0
    rng = np.random.default_rng(8)
    heads = [mx.nd.array(rng.standard_normal(o.shape), dtype=np.float64)
             for o in full.forward(is_train=True)]
    exe.forward(is_train=True)
    exe.backward(heads)
    full.backward(heads)
    assert 'data' not in exe.grad_dict or exe.grad_dict['data'] is None
    for name in names[1:]:
        want = full.grad_dict[name].asnumpy() + (1.0 if name == 'rnn_state' else 0.0)
        np.testing.assert_allclose(exe.grad_dict[name].asnumpy(), want, rtol=1e-12)
