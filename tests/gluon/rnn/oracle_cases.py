"""The gluon.rnn cases whose values the tests compare with MXNet 1.9.1's.

Each case builds a layer or a cell with the library passed in (``mx``: mxnet or mxcy;
both have the same API), sets every parameter from a fixed NumPy seed (sorted by name),
runs a seeded input forward (and, under ``autograd.record``, backward of
``sum(out * A) + sum(state_i * B_i)``) and returns {key: array}.

``python oracle_cases.py`` under MXNet 1.9.1 prints the literals pasted into
test_rnn_layer.py and test_rnn_cell.py (``MXNET_LAYER`` / ``MXNET_CELL``).

`check_gradients` (used by both test files) compares autograd with central differences.
"""
import numpy as np


def _data(seed, shape):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype('float32')


def set_weights(block, seed, mx):
    rs = np.random.RandomState(seed)
    params = block.collect_params()
    for name in sorted(params.keys()):
        p = params[name]
        p.set_data(mx.nd.array(rs.uniform(-0.5, 0.5, p.shape)))


def _loss(mx, out, states, seed):
    loss = (out * mx.nd.array(_data(seed + 50, out.shape))).sum()
    for i, s in enumerate(states):
        loss = loss + (s * mx.nd.array(_data(seed + 60 + i, s.shape))).sum()
    return loss


def _layer(mx, make, xshape, seed, with_states=True, grads=(), train=True):
    with mx.name.NameManager():
        layer = make()
    layer.initialize()
    x = mx.nd.array(_data(seed, xshape))
    layer(x)                            # deferred initialization
    set_weights(layer, seed + 100, mx)
    states = None
    if with_states:
        batch = xshape[layer._layout.find('N')]
        states = [mx.nd.array(_data(seed + 7 + i, s.shape))
                  for i, s in enumerate(layer.begin_state(batch))]
    res = {}
    if not train:                       # MXNet's CPU LSTM has no projection backward
        out, new_states = layer(x, states)
        res['out'] = out.asnumpy()
        res.update({f'state{i}': s.asnumpy() for i, s in enumerate(new_states)})
        return res
    x.attach_grad()
    with mx.autograd.record():
        out = layer(x, states) if with_states else layer(x)
        new_states = []
        if with_states:
            out, new_states = out
        loss = _loss(mx, out, new_states, seed)
    loss.backward()
    res['out'] = out.asnumpy()
    res.update({f'state{i}': s.asnumpy() for i, s in enumerate(new_states)})
    res['dx'] = x.grad.asnumpy()
    params = layer.collect_params()
    for name in grads:
        res['grad_' + name] = params[layer.prefix + name].grad().asnumpy()
    return res


def _cell(mx, make, xshape, layout, merge, seed, valid=None, train=True, grads=()):
    with mx.name.NameManager():
        cell = make()
    cell.initialize()
    x = mx.nd.array(_data(seed, xshape))
    steps = xshape[layout.find('T')]
    cell.unroll(steps, x, layout=layout, merge_outputs=True)     # deferred initialization
    set_weights(cell, seed + 100, mx)
    x.attach_grad()
    valid_length = None if valid is None else mx.nd.array(valid)
    with mx.autograd.record(train_mode=train):
        out, states = cell.unroll(steps, x, layout=layout, merge_outputs=merge,
                                  valid_length=valid_length)
        if not merge:
            out = mx.nd.stack(*out, axis=layout.find('T'))
        loss = _loss(mx, out, states, seed)
    loss.backward()
    res = {'out': out.asnumpy(), 'dx': x.grad.asnumpy()}
    res.update({f'state{i}': s.asnumpy() for i, s in enumerate(states)})
    params = cell.collect_params()
    for name in grads:
        res['grad_' + name] = params[name].grad().asnumpy()
    return res


def check_gradients(mx, loss_fn, arrays, seed=0, per_array=4, eps=1e-6, rtol=1e-5,
                    atol=1e-7):
    """`loss_fn()` -> scalar NDArray; `arrays`: {name: (array, gradient getter)}. Backward
    once under record, then central differences at `per_array` random entries of each."""
    with mx.autograd.record():
        loss = loss_fn()
    loss.backward()
    grads = {name: get().asnumpy().copy() for name, (_, get) in arrays.items()}
    rs = np.random.RandomState(seed)
    for name, (array, _) in arrays.items():
        base = array.asnumpy()
        for flat in rs.choice(base.size, min(per_array, base.size), replace=False):
            idx = np.unravel_index(flat, base.shape)
            values = []
            for delta in (eps, -eps):
                bumped = base.copy()
                bumped[idx] += delta
                array[:] = bumped
                values.append(loss_fn().asscalar())
            array[:] = base
            numeric = (values[0] - values[1]) / (2 * eps)
            np.testing.assert_allclose(grads[name][idx], numeric, rtol=rtol, atol=atol,
                                       err_msg=f'{name}{idx}')


def layer_cases(mx, rnn):
    """name -> function() returning that case's arrays."""
    return {
        'lstm_bi2': lambda: _layer(
            mx, lambda: rnn.LSTM(2, num_layers=2, bidirectional=True, prefix='lstm_'),
            (3, 2, 2), 1, grads=('l0_i2h_weight', 'r1_h2h_bias')),
        'gru_ntc': lambda: _layer(
            mx, lambda: rnn.GRU(2, layout='NTC', prefix='gru_'), (2, 3, 2), 2,
            grads=('l0_h2h_weight',)),
        'rnn_relu2': lambda: _layer(
            mx, lambda: rnn.RNN(2, num_layers=2, prefix='rnn_'), (3, 2, 2), 3,
            with_states=False, grads=('l1_i2h_bias',)),
        'rnn_tanh_bi': lambda: _layer(
            mx, lambda: rnn.RNN(2, activation='tanh', bidirectional=True, prefix='rnt_'),
            (3, 2, 2), 4),
        'lstm_proj': lambda: _layer(
            mx, lambda: rnn.LSTM(3, num_layers=2, bidirectional=True, projection_size=2,
                                 prefix='lstmp_'), (3, 2, 2), 6, train=False),
    }


def _bidirectional(rnn):
    return rnn.BidirectionalCell(rnn.LSTMCell(2, prefix='l_'), rnn.GRUCell(2, prefix='r_'))


def _sequential(rnn):
    stack = rnn.SequentialRNNCell(prefix='s_')
    with stack.name_scope():
        stack.add(rnn.LSTMCell(2, prefix='a_'))
        stack.add(rnn.DropoutCell(0.3))
        stack.add(rnn.ResidualCell(rnn.GRUCell(2, prefix='b_')))
        stack.add(rnn.ZoneoutCell(rnn.RNNCell(2, prefix='c_'), 0.2, 0.3))
    return stack


def cell_cases(mx, rnn):
    return {
        'lstm': lambda: _cell(mx, lambda: rnn.LSTMCell(2, prefix='lc_'), (2, 3, 2), 'NTC',
                              True, 11, grads=('lc_i2h_weight',)),
        'gru': lambda: _cell(mx, lambda: rnn.GRUCell(2, prefix='gc_'), (3, 2, 2), 'TNC',
                             False, 12, grads=('gc_h2h_weight',)),
        'rnn_relu': lambda: _cell(mx, lambda: rnn.RNNCell(2, activation='relu', prefix='rc_'),
                                  (2, 3, 2), 'NTC', False, 13),
        'bidirectional_valid': lambda: _cell(mx, lambda: _bidirectional(rnn), (3, 2, 2), 'TNC',
                                             True, 15, valid=[3, 1], grads=('r_i2h_bias',)),
        'lstm_valid': lambda: _cell(mx, lambda: rnn.LSTMCell(2, prefix='lv_'), (3, 3, 2),
                                    'NTC', True, 16, valid=[3, 1, 2]),
        # predict mode: Dropout and Zoneout pass values through
        'sequential': lambda: _cell(mx, lambda: _sequential(rnn), (2, 3, 2), 'NTC', True, 17,
                                    train=False, grads=('s_b_i2h_weight',)),
    }


def _literal(cases):
    lines = []
    for name, run in cases.items():
        lines.append(f'    {name!r}: {{')
        for key, value in run().items():
            flat = ', '.join(f'{v:.7g}' for v in np.asarray(value, np.float64).ravel())
            head = f'        {key!r}: ({tuple(value.shape)}, ['
            text, width = head, len(head)
            for token in flat.split(', '):
                if width + len(token) + 2 > 98:
                    lines.append(text.rstrip())
                    text = ' ' * 12
                    width = 12
                text += token + ', '
                width += len(token) + 2
            lines.append(text.rstrip(', ') + ']),')
        lines.append('    },')
    return '\n'.join(lines)


if __name__ == '__main__':
    import mxnet
    from mxnet.gluon import rnn as mxnet_rnn
    print('# MXNet 1.9.1 (oracle_cases.py)\nMXNET_LAYER = {')
    print(_literal(layer_cases(mxnet, mxnet_rnn)) + '\n}\n')
    print('# MXNet 1.9.1 (oracle_cases.py)\nMXNET_CELL = {')
    print(_literal(cell_cases(mxnet, mxnet_rnn)) + '\n}')
