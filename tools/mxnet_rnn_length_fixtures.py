#!/usr/bin/env python3
"""Golden values for the RNN operator's ``use_sequence_length`` (tests/operator/
test_rnn_lengths.py), from MXNet 1.9.1 run one sequence at a time.

MXNet 1.9.1's CPU RNN accepts ``sequence_length`` but ignores it (its outputs and states
equal a run without lengths), which silently gives padded sequences' users wrong states;
its GPU (cuDNN) path honours it. mxcy does what the lengths mean, so the reference is
MXNet's RNN on each sequence's valid steps alone: outputs past a sequence's length are
zero, its states are those after its last valid step, the gradients those of the
per-sequence runs (summed over the batch for the parameters).

    /work/mxnet_venv/bin/python tools/mxnet_rnn_length_fixtures.py
"""
import json
import os

import numpy as np
import mxnet as mx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'operator',
                   'mxnet_files', 'rnn_lengths.json')
GATES = {'lstm': 4, 'gru': 3, 'rnn_tanh': 1, 'rnn_relu': 1}


def case(rng, mode, bidirectional, layers):
    t, n, i, h = 4, 3, 2, 3
    d = 2 if bidirectional else 1
    size = sum(d * GATES[mode] * h * ((i if layer == 0 else d * h) + h + 2)
               for layer in range(layers))
    x = rng.uniform(-1, 1, (t, n, i))
    w = rng.uniform(-.5, .5, (size,))
    hx = rng.uniform(-1, 1, (layers * d, n, h))
    cx = rng.uniform(-1, 1, (layers * d, n, h))
    lengths = [4, 2, 1]
    n_out = 3 if mode == 'lstm' else 2
    heads = [rng.uniform(-1, 1, s) for s in [(t, n, d * h)] + [(layers * d, n, h)] *
             (n_out - 1)]
    outs = [np.zeros(hd.shape) for hd in heads]
    grads = {'data': np.zeros_like(x), 'parameters': np.zeros_like(w),
             'state': np.zeros_like(hx), 'state_cell': np.zeros_like(cx)}
    for b, m in enumerate(lengths):
        args = {'data': mx.nd.array(x[:m, b:b + 1]), 'parameters': mx.nd.array(w),
                'state': mx.nd.array(hx[:, b:b + 1])}
        if mode == 'lstm':
            args['state_cell'] = mx.nd.array(cx[:, b:b + 1])
        for a in args.values():
            a.attach_grad()
        with mx.autograd.record():
            res = mx.nd.RNN(state_size=h, num_layers=layers, bidirectional=bidirectional,
                            mode=mode, state_outputs=True, **args)
        mx.autograd.backward(list(res), [mx.nd.array(heads[0][:m, b:b + 1])] +
                             [mx.nd.array(hd[:, b:b + 1]) for hd in heads[1:]])
        outs[0][:m, b] = res[0].asnumpy()[:, 0]
        for k in range(1, n_out):
            outs[k][:, b] = res[k].asnumpy()[:, 0]
        grads['data'][:m, b] = args['data'].grad.asnumpy()[:, 0]
        grads['parameters'] += args['parameters'].grad.asnumpy()
        grads['state'][:, b] = args['state'].grad.asnumpy()[:, 0]
        if mode == 'lstm':
            grads['state_cell'][:, b] = args['state_cell'].grad.asnumpy()[:, 0]
    if mode != 'lstm':
        del grads['state_cell']
    inputs = {'data': x, 'parameters': w, 'state': hx, 'sequence_length': lengths}
    if mode == 'lstm':
        inputs['state_cell'] = cx
    as_list = lambda v: np.round(np.asarray(v, dtype=np.float64), 8).tolist()
    return {'mode': mode, 'bidirectional': bidirectional, 'num_layers': layers,
            'state_size': h, 'inputs': {k: as_list(v) for k, v in inputs.items()},
            'heads': [as_list(v) for v in heads], 'outputs': [as_list(v) for v in outs],
            'grads': {k: as_list(v) for k, v in grads.items()}}


def main():
    rng = np.random.RandomState(0)
    cases = [case(rng, 'lstm', False, 2), case(rng, 'gru', True, 2),
             case(rng, 'rnn_tanh', False, 1), case(rng, 'rnn_relu', True, 1)]
    with open(OUT, 'w') as f:
        json.dump(cases, f)


if __name__ == '__main__':
    main()
