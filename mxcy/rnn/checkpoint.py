"""``mx.rnn`` checkpoint helpers: checkpoints of networks built from RNN cells store
each cell's weights unpacked (one array per gate, ``<prefix>i2h_f_weight`` ...), so a
fused and an unfused cell read the same file; and ``rnn_unroll``, MXNet's deprecated
spelling of ``cell.unroll``.
"""
import warnings

from mxcy import symbol
from mxcy.model import load_checkpoint, save_checkpoint
from mxcy.rnn.rnn_cell import BaseRNNCell

__all__ = ['save_rnn_checkpoint', 'load_rnn_checkpoint', 'do_rnn_checkpoint', 'rnn_unroll']


def _as_cells(cells):
    if isinstance(cells, BaseRNNCell):
        return [cells]
    cells = list(cells)
    for cell in cells:
        if not isinstance(cell, BaseRNNCell):
            raise TypeError(f"rnn checkpoint: cells must be RNN cells (a cell or a list), "
                            f"got {type(cell).__name__}")
    return cells


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """``save_checkpoint`` with the weights of `cells` unpacked per gate first."""
    for cell in _as_cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """``(symbol, arg_params, aux_params)`` of a checkpoint, the weights of `cells`
    packed back into the layout the cells use."""
    sym, arg_params, aux_params = load_checkpoint(prefix, epoch)
    for cell in _as_cells(cells):
        arg_params = cell.pack_weights(arg_params)
    return sym, arg_params, aux_params


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback calling ``save_rnn_checkpoint`` every `period` epochs (the
    files are numbered from 1, as ``mx.callback.do_checkpoint``'s)."""
    period = int(max(1, period))
    cells = _as_cells(cells)

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix='', layout='NTC'):
    """Deprecated: ``cell.unroll(length, inputs, begin_state, layout)``. Without `inputs`,
    one variable per step is made, named ``<input_prefix>t<i>_data``."""
    warnings.warn('rnn_unroll is deprecated. Please call cell.unroll directly.',
                  DeprecationWarning, stacklevel=2)
    if inputs is None:
        inputs = [symbol.Variable(f'{input_prefix}t{i}_data') for i in range(length)]
    return cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout)
