"""mx.rnn ConvRNNCell / ConvLSTMCell / ConvGRUCell: argument names, state shapes and the
outputs of a 3-step unroll equal MXNet 1.9.1's (tools/mxnet_rnn_fixtures.py)."""
import json
import os

import numpy as np
import pytest

import mxcy as mx

with open(os.path.join(os.path.dirname(__file__), '..', 'mxnet_files', 'rnn',
                       'conv_cells.json')) as _f:
    FIXTURE = json.load(_f)


@pytest.mark.parametrize('case', FIXTURE['cases'],
                         ids=[f"{c['cell']}-{i}" for i, c in enumerate(FIXTURE['cases'])])
def test_unroll_matches_mxnet(case):
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case['kwargs'].items()}
    cell = getattr(mx.rnn, case['cell'])(input_shape=(1, 2, 4, 3), num_hidden=2, prefix='c_',
                                         **kwargs)
    assert [[list(i['shape']), i['__layout__']] for i in cell.state_info] == case['state_info']
    outputs, states = cell.unroll(3, mx.sym.Variable('data'), merge_outputs=True)
    net = mx.sym.Group([outputs] + list(states))
    assert net.list_arguments() == case['arguments']
    args = {k: mx.nd.array(np.array(v, np.float32)) for k, v in case['weights'].items()}
    args['data'] = mx.nd.array(np.array(FIXTURE['x'], np.float32))
    results = net.bind(mx.cpu(), args).forward()
    assert len(results) == len(case['outputs'])
    for got, expected in zip(results, case['outputs']):
        np.testing.assert_allclose(got.asnumpy(), np.array(expected), rtol=1e-5, atol=1e-5)
    packed = {k: v for k, v in args.items() if k != 'data'}
    back = cell.pack_weights(cell.unpack_weights(packed))
    for name, value in packed.items():
        np.testing.assert_array_equal(back[name].asnumpy(), value.asnumpy())


def test_bad_arguments_raise_naming_them():
    with pytest.raises(ValueError, match='ConvLSTMCell: h2h_kernel must be odd'):
        mx.rnn.ConvLSTMCell(input_shape=(1, 2, 4, 3), num_hidden=2, h2h_kernel=(2, 3))
    cell = mx.rnn.ConvGRUCell(input_shape=(1, 2, 4, 3), num_hidden=5,
                              i2h_weight_initializer=mx.init.Uniform(0.1))
    assert cell.state_shape == [(0, 5, 4, 3)]
    assert cell.params._params['ConvGRU_i2h_weight'].attr('__init__') is not None


@pytest.mark.parametrize('cell,prefix', [('ConvRNNCell', 'ConvRNN_'),
                                         ('ConvLSTMCell', 'ConvLSTM_'),
                                         ('ConvGRUCell', 'ConvGRU_')])
def test_default_prefix_names_the_parameters(cell, prefix):
    # MXNet 1.9.1: each cell's own default prefix; a given prefix (even '') wins
    made = getattr(mx.rnn, cell)(input_shape=(1, 2, 4, 3), num_hidden=2)
    outputs, _ = made.unroll(1, mx.sym.Variable('data'), merge_outputs=True)
    assert sorted(outputs.list_arguments()) == sorted(
        ['data'] + [prefix + n for n in ('i2h_weight', 'i2h_bias', 'h2h_weight', 'h2h_bias')])
    bare = getattr(mx.rnn, cell)(input_shape=(1, 2, 4, 3), num_hidden=2, prefix='')
    assert 'i2h_weight' in bare.unroll(1, mx.sym.Variable('data'), merge_outputs=True)[0].list_arguments()
