"""mx.rnn checkpoint helpers: files hold per-gate (unpacked) weights, as MXNet 1.9.1's
do (its own file is read back), and rnn_unroll."""
import json
import os

import numpy as np
import pytest

import mxcy as mx

FILES = os.path.join(os.path.dirname(__file__), '..', 'mxnet_files', 'rnn')


def lstm():
    cell = mx.rnn.LSTMCell(3, prefix='lstm_')
    outputs, _ = cell.unroll(2, mx.sym.Variable('data'), merge_outputs=True)
    with open(os.path.join(FILES, 'lstm_packed.json')) as f:
        packed = {k: mx.nd.array(np.array(v, np.float32)) for k, v in json.load(f).items()}
    return cell, outputs, packed


def test_load_mxnet_rnn_checkpoint_packs_the_gates():
    cell, _, packed = lstm()
    sym, args, aux = mx.rnn.load_rnn_checkpoint(cell, os.path.join(FILES, 'lstm'), 1)
    assert sorted(args) == sorted(packed) and aux == {}
    for name, value in packed.items():
        np.testing.assert_array_equal(args[name].asnumpy(), value.asnumpy())
    assert 'data' in sym.list_arguments()
    raw = mx.nd.load(os.path.join(FILES, 'lstm-0001.params'))     # MXNet's file: per gate
    assert 'arg:lstm_i2h_f_weight' in raw and 'arg:lstm_i2h_weight' not in raw


def test_save_then_do_checkpoint_round_trip(tmp_path):
    cell, outputs, packed = lstm()
    prefix = str(tmp_path / 'm')
    mx.rnn.save_rnn_checkpoint([cell], prefix, 3, outputs, packed, {})
    mine = mx.nd.load(f'{prefix}-0003.params')
    theirs = mx.nd.load(os.path.join(FILES, 'lstm-0001.params'))
    assert sorted(mine) == sorted(theirs)
    for key in theirs:
        np.testing.assert_array_equal(mine[key].asnumpy(), theirs[key].asnumpy())
    callback = mx.rnn.do_rnn_checkpoint(cell, prefix, period=2)
    for epoch in range(4):
        callback(epoch, outputs, packed, {})
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == '.params') == [
        'm-0002.params', 'm-0003.params', 'm-0004.params']
    _, args, _ = mx.rnn.load_rnn_checkpoint(cell, prefix, 4)
    np.testing.assert_array_equal(args['lstm_h2h_weight'].asnumpy(),
                                  packed['lstm_h2h_weight'].asnumpy())
    with pytest.raises(TypeError, match='cells must be RNN cells'):
        mx.rnn.save_rnn_checkpoint(['x'], prefix, 1, outputs, packed, {})


def test_rnn_unroll_is_cell_unroll_and_warns():
    cell = mx.rnn.RNNCell(4, prefix='r_')
    with pytest.warns(DeprecationWarning, match='rnn_unroll is deprecated'):
        outputs, states = mx.rnn.rnn_unroll(cell, 2, input_prefix='in_')
    assert outputs[0].list_arguments()[0] == 'in_t0_data' and len(states) == 1
    assert mx.rnn.save_checkpoint is mx.model.save_checkpoint
