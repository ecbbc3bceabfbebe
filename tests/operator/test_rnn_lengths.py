"""The RNN operator with use_sequence_length (operator/rnn_lengths.py) against MXNet 1.9.1
run one sequence at a time (tools/mxnet_rnn_length_fixtures.py: MXNet's own CPU path
ignores the lengths, so the reference is each sequence's valid steps alone)."""
import json
import os

import numpy as np
import pytest

import mxcy as mx

with open(os.path.join(os.path.dirname(__file__), 'mxnet_files', 'rnn_lengths.json')) as f:
    CASES = json.load(f)


@pytest.mark.parametrize('case', CASES, ids=lambda c: f"{c['mode']}-bi{c['bidirectional']}")
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_outputs_states_and_gradients_per_sequence(case, dtype):
    args = {k: mx.nd.array(np.array(v), dtype=dtype) for k, v in case['inputs'].items()}
    for a in args.values():
        a.attach_grad()
    with mx.autograd.record():
        res = mx.nd.RNN(state_size=case['state_size'], num_layers=case['num_layers'],
                        bidirectional=case['bidirectional'], mode=case['mode'],
                        state_outputs=True, use_sequence_length=True, **args)
    mx.autograd.backward(list(res), [mx.nd.array(np.array(h), dtype=dtype)
                                     for h in case['heads']])
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == 'float32' else dict(rtol=1e-6, atol=1e-7)
    for got, want in zip(res, case['outputs']):
        np.testing.assert_allclose(got.asnumpy(), np.array(want), **tol)
    for name, want in case['grads'].items():
        np.testing.assert_allclose(args[name].grad.asnumpy(), np.array(want), err_msg=name,
                                   **tol)
    np.testing.assert_array_equal(args['sequence_length'].grad.asnumpy(), 0)


def test_symbol_signature_and_bad_lengths():
    data = mx.sym.var('data')
    sym = mx.sym.RNN(data, mx.sym.var('w'), mx.sym.var('h'),
                     sequence_length=mx.sym.var('lens'), state_size=3, num_layers=1,
                     mode='rnn_tanh', use_sequence_length=True)
    assert sym.list_arguments() == ['data', 'w', 'h', 'lens']
    _, out_shapes, _ = sym.infer_shape(data=(4, 2, 5))
    assert out_shapes == [(4, 2, 3)]
    x, w = mx.nd.ones((4, 2, 5)), mx.nd.ones((3 * (5 + 3 + 2),))
    h = mx.nd.zeros((1, 2, 3))
    with pytest.raises(mx.MXNetError, match=r'sequence_length must hold whole numbers in '
                                            r'\[1, 4\]'):
        mx.nd.RNN(x, w, h, mx.nd.array([5, 1]), state_size=3, num_layers=1,
                  mode='rnn_tanh', use_sequence_length=True).asnumpy()
