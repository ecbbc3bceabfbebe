"""``gluon.SymbolBlock``: any Symbol as a block, e.g. a model exported by MXNet.

Every free variable of the symbol that is not an input becomes a Parameter named as the
variable (no prefix), auxiliary states with grad_req 'null'; shapes are inferred at the
first call. ``imports`` loads ``-symbol.json`` + ``.params`` files as ``export`` (ours or
MXNet 1.x's) writes them.
"""
import numpy as np

from mxcy import symbol as _sym
from mxcy._ndarray import NDArray
from mxcy.gluon.block import HybridBlock, _flatten
from mxcy.gluon.parameter import _in_mode
from mxcy.gluon.parameter_dict import ParameterDict
from mxcy.symbol.symbol import Symbol


class SymbolBlock(HybridBlock):
    """A block that runs `outputs` (a Symbol or list of them) on `inputs` (variables)."""

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ''
        self._params = ParameterDict('', params)
        inputs = [inputs] if isinstance(inputs, Symbol) else list(inputs)
        multi = isinstance(outputs, (list, tuple)) and len(outputs) > 1
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        out = _sym.Group(outputs) if len(outputs) > 1 else outputs[0]
        input_names = set()
        for i in inputs:
            if not isinstance(i, Symbol) or len(i.list_outputs()) != 1 or \
                    i.list_arguments() != [i.name]:
                raise ValueError(f"SymbolBlock: inputs must be free variables "
                                 f"(mx.sym.var), got {i}")
            input_names.add(i.name)
        for name in out.list_arguments():
            if name not in input_names:
                self.params.get(name, allow_deferred_init=True)
        for name in out.list_auxiliary_states():
            if name not in input_names:
                self.params.get(name, grad_req='null', allow_deferred_init=True)
        self._graph = (inputs, out, multi)
        self._cached_graph = self._graph

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from files written by ``export`` (here or in MXNet 1.x)."""
        sym = _sym.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        inputs = [_sym.var(name) if param_file is not None else
                  _sym.var(name, dtype=np.float32) for name in input_names]
        block = SymbolBlock(sym, inputs)
        if param_file is not None:
            block.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                        cast_dtype=True, dtype_source='saved')
        return block

    def hybridize(self, active=True, **kwargs):
        super().hybridize(active, **kwargs)
        self._cached_graph = self._graph      # the graph is given, never traced again

    def cast(self, dtype):
        super().cast(dtype)
        self._cached_graph = self._graph

    def _get_graph(self, *args):
        return self._graph

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            return _in_mode(self._call_cached(x, *args))       # mx.np under set_np()
        if not isinstance(x, Symbol):
            raise TypeError(f"SymbolBlock: inputs must be NDArrays or Symbols, got "
                            f"{type(x).__name__}")
        inputs, out, _ = self._graph
        given = [a for a in _flatten((x,) + args)[0] if a is not None]
        if len(given) != len(inputs):
            raise ValueError(f"SymbolBlock: {len(given)} inputs for {len(inputs)} variables")
        return out(**{i.name: s for i, s in zip(inputs, given)})

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise RuntimeError("SymbolBlock runs its symbol; hybrid_forward is not used")
