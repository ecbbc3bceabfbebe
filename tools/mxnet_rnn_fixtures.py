#!/usr/bin/env python3
"""Write what MXNet 1.9.1's ``mx.rnn`` convolutional cells compute, and an RNN
checkpoint it saved, for mxcy's tests.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_rnn_fixtures.py

tests/mxnet_files/rnn/ gets ``conv_cells.json``: per case (cell class and arguments) the
input, the weights (fixed seeds), the state_info, the argument names and the outputs of
a 3-step ``unroll`` (merged outputs, then the final states); and ``lstm-symbol.json`` /
``lstm-0001.params``, written by ``save_rnn_checkpoint`` for an LSTMCell whose packed
weights are in ``lstm_packed.json``.
"""
import json
import os

os.environ['MXNET_SUBGRAPH_BACKEND'] = 'NONE'
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'mxnet_files',
                   'rnn')
CASES = [('ConvRNNCell', {}), ('ConvLSTMCell', {}), ('ConvGRUCell', {}),
         ('ConvLSTMCell', {'activation': 'tanh', 'i2h_stride': [2, 1], 'h2h_kernel': [3, 1]}),
         ('ConvGRUCell', {'h2h_dilate': [2, 2], 'i2h_dilate': [1, 2], 'i2h_pad': [1, 2]})]


def conv_cells():
    x = np.random.RandomState(0).randn(1, 3, 2, 4, 3).astype('float32')     # N T C H W
    cases = []
    for cls, kwargs in CASES:
        cell = getattr(mx.rnn, cls)(input_shape=(1, 2, 4, 3), num_hidden=2, prefix='c_',
                                    **{k: tuple(v) if isinstance(v, list) else v
                                       for k, v in kwargs.items()})
        outputs, states = cell.unroll(3, mx.sym.Variable('data'), merge_outputs=True)
        net = mx.sym.Group([outputs] + list(states))
        arg_shapes = net.infer_shape(data=x.shape)[0]
        rng = np.random.RandomState(1)
        weights = {name: (rng.randn(*shape) * 0.3).astype('float32')
                   for name, shape in zip(net.list_arguments(), arg_shapes) if name != 'data'}
        args = {k: mx.nd.array(v) for k, v in weights.items()}
        args['data'] = mx.nd.array(x)
        results = net.bind(mx.cpu(), args).forward()
        cases.append({'cell': cls, 'kwargs': kwargs, 'arguments': net.list_arguments(),
                      'state_info': [[list(i['shape']), i['__layout__']]
                                     for i in cell.state_info],
                      'weights': {k: v.tolist() for k, v in weights.items()},
                      'outputs': [r.asnumpy().tolist() for r in results]})
    return {'x': x.tolist(), 'cases': cases}


def lstm_checkpoint():
    cell = mx.rnn.LSTMCell(3, prefix='lstm_')
    outputs, _ = cell.unroll(2, mx.sym.Variable('data'), merge_outputs=True)
    rng = np.random.RandomState(2)
    packed = {'lstm_i2h_weight': rng.randn(12, 4), 'lstm_i2h_bias': rng.randn(12),
              'lstm_h2h_weight': rng.randn(12, 3), 'lstm_h2h_bias': rng.randn(12)}
    args = {k: mx.nd.array(v.astype('float32')) for k, v in packed.items()}
    mx.rnn.save_rnn_checkpoint(cell, os.path.join(OUT, 'lstm'), 1, outputs, args, {})
    return {k: v.astype('float32').tolist() for k, v in packed.items()}


def main():
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, 'conv_cells.json'), 'w') as f:
        json.dump(conv_cells(), f)
        f.write('\n')
    with open(os.path.join(OUT, 'lstm_packed.json'), 'w') as f:
        json.dump(lstm_checkpoint(), f)
        f.write('\n')
    print('wrote', sorted(os.listdir(OUT)))


if __name__ == '__main__':
    main()
