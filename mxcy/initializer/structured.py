"""Structured initializers: Bilinear (upsampling kernels), LSTMBias, FusedRNN."""
import numpy as np

from mxcy.initializer.base import InitDesc, Initializer, bilinear_kernel, create, register


@register
class Bilinear(Initializer):
    """Initializes a 4-d weight with a bilinear upsampling kernel (for Deconvolution)."""
    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = bilinear_kernel(arr.shape)


@register
class LSTMBias(Initializer):
    """Initializes an LSTM bias (4 gates of num_hidden: i, f, c, o) to 0, except the
    forget gate, set to `forget_bias` (Jozefowicz et al. 2015 recommend 1.0)."""
    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        if not arr.shape or arr.shape[0] % 4:
            raise ValueError(f"LSTMBias: {str(name)!r} must have a first dimension of "
                             f"4 * num_hidden, got shape {arr.shape}")
        num_hidden = arr.shape[0] // 4
        arr[:] = 0.0
        arr[num_hidden:2 * num_hidden] = self.forget_bias


_RNN_GATES = {'rnn_relu': [''], 'rnn_tanh': [''], 'lstm': ['_i', '_f', '_c', '_o'],
              'gru': ['_r', '_z', '_o']}


@register
class FusedRNN(Initializer):
    """Initializes the packed parameter vector of a fused RNN layer (FusedRNNCell).

    The vector is cut into its per-gate weights and biases (MXNet's layout: every
    layer's and direction's i2h then h2h weights, then all biases) and each piece is
    initialized in place by `init` (or the global initializer when `init` is None),
    with LSTM forget-gate biases set to `forget_bias`.
    """
    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if isinstance(init, str):
            init = create(init)
        if mode not in _RNN_GATES:
            raise ValueError(f"FusedRNN: mode must be one of {sorted(_RNN_GATES)}, got "
                             f"{mode!r}")
        super().__init__(init=init.dumps() if init is not None else None,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _pieces(self, arr):
        """{name: view of arr} in MXNet's FusedRNNCell packing order."""
        gates = _RNN_GATES[self._mode]
        directions = ['l', 'r'] if self._bidirectional else ['l']
        b, m, h, layers = len(directions), len(gates), self._num_hidden, self._num_layers
        if arr.ndim != 1:
            raise ValueError(f"FusedRNN: the parameters must be a 1-d vector, got shape "
                             f"{arr.shape}")
        num_input = arr.size // b // h // m - (layers - 1) * (h + b * h + 2) - h - 2
        expected = b * m * h * (num_input + h + 2) + (layers - 1) * b * m * h * (b * h + h + 2)
        if num_input <= 0 or expected != arr.size:
            raise ValueError(f"FusedRNN: {arr.size} parameters do not fit mode={self._mode!r}, "
                             f"num_hidden={h}, num_layers={layers}, "
                             f"bidirectional={self._bidirectional}")
        pieces, p = {}, 0

        def take(name, shape):
            nonlocal p
            size = int(np.prod(shape))
            pieces[name] = arr[p:p + size].reshape(shape)
            p += size
        for layer in range(layers):
            width = num_input if layer == 0 else b * h
            for d in directions:
                for g in gates:
                    take(f'{d}{layer}_i2h{g}_weight', (h, width))
                for g in gates:
                    take(f'{d}{layer}_h2h{g}_weight', (h, h))
        for layer in range(layers):
            for d in directions:
                for kind in ('i2h', 'h2h'):
                    for g in gates:
                        take(f'{d}{layer}_{kind}{g}_bias', (h,))
        return pieces

    def _init_weight(self, desc, arr):
        global_init = getattr(desc, 'global_init', None)
        for name, view in self._pieces(arr).items():
            arg_desc = InitDesc(name, global_init=global_init)
            if self._mode == 'lstm' and name.endswith('_f_bias'):
                view[:] = self._forget_bias
            elif self._init is not None:
                self._init(arg_desc, view)
            elif global_init is not None and global_init is not self:
                global_init(arg_desc, view)
            else:
                raise ValueError("FusedRNN: init is None and the descriptor has no other "
                                 "global_init to fall back to")
