"""Gluon blocks (MXNet 1.x ``gluon.Block``, ``HybridBlock``).

Names are MXNet's, so parameter files move between MXNet and mxcy: a block made outside
any other block's scope takes ``<classname><n>_`` from the thread's `mx.name` manager (a
fresh ``mx.name.NameManager()`` scope restarts the counters); a child made inside its
parent's ``name_scope()`` takes ``<parent prefix><classname><n>_`` with a counter per
parent. ``save_parameters`` writes the attribute path of each parameter (``seq.0.weight``)
in MXNet's NDArray format; ``load_parameters`` reads that and the older full-name form.

A HybridBlock's ``hybrid_forward(F, x, ...)`` runs on NDArrays (``F`` = ``mx.nd``) or, to
trace a graph, on Symbols (``F`` = ``mx.sym``; ``F.np``/``F.npx`` under ``npx.set_np()``,
when outputs are mx.np arrays). After ``hybridize()`` each call runs the traced graph
through an executor (see `_cached.py`).
"""
import re
import threading
from collections import OrderedDict

from mxcy import initializer as _init
from mxcy import name as _name
from mxcy import ndarray as _nd
from mxcy import symbol as _sym
from mxcy._ndarray import NDArray
from mxcy.base import MXNetError
from mxcy.gluon.parameter import DeferredInitializationError, Parameter, _in_mode
from mxcy.gluon.parameter_dict import ParameterDict
from mxcy.gluon.utils import HookHandle
from mxcy.ndarray import io as _io
from mxcy.symbol.symbol import Symbol


class _BlockScope:
    """The block whose name_scope() is open on this thread, and its child counters."""
    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        current = getattr(_BlockScope._current, 'value', None)
        if current is None:
            if prefix is None:
                prefix = _name.current().get(None, hint) + '_'
            params = ParameterDict(prefix) if params is None else \
                ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f'{hint}{count}_'
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, 'value', None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(ptype, value, trace)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


def _shape_text(values):
    """Output shapes as MXNet's summary prints them: one shape, or a list of them."""
    if isinstance(values, (list, tuple)):
        shapes = [_shape_text(v) for v in values]
        return shapes[0] if len(shapes) == 1 else '[' + ', '.join(shapes) + ']'
    return str(tuple(values.shape))


def _is_container(block):
    return type(block).__name__ in ('Sequential', 'HybridSequential')


def _indent(text, n):
    return text.replace('\n', '\n' + ' ' * n)


class Block:
    """The base class of all layers and models: children, parameters, names, hooks."""

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ''
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith('_') else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def _alias(self):
        return type(self).__name__.lower()

    def __repr__(self):
        mods = '\n'.join(f'  ({key}): {_indent(repr(block), 2)}'
                         for key, block in self.__dict__.items() if isinstance(block, Block))
        return f'{type(self).__name__}(\n{mods}\n)'

    def __setattr__(self, name, value):
        """Registers child blocks and parameters assigned as attributes."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value,
                                                                           type(existing)):
                raise TypeError(f"Changing attribute type for {name} from "
                                f"{type(existing)} to {type(value)} is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self.__dict__.get('_reg_params', {}) and \
                    self._reg_params[name] is not value:
                raise AssertionError(f"Overriding Parameter attribute {name} is not allowed.")
            self._reg_params[name] = value
        super().__setattr__(name, value)

    # ------------------------------------------------------------ names and params
    @property
    def prefix(self):
        return self._prefix

    @property
    def name(self):
        return self._name

    def name_scope(self):
        """Scope in which children and symbols get this block's prefix."""
        return self._scope

    @property
    def params(self):
        """This block's own ParameterDict (not its children's)."""
        return self._params

    def collect_params(self, select=None):
        """This block's and its descendants' parameters; `select` is a regular expression
        over the full names (e.g. '.*weight|.*bias')."""
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({k: v for k, v in self.params.items() if pattern.match(k)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=''):
        if prefix:
            prefix += '.'
        ret = {prefix + key: value for key, value in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def register_child(self, block, name=None):
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    # ------------------------------------------------------------ files
    def save(self, prefix):
        """Save the structure and parameters: ``<prefix>-model.json`` and
        ``<prefix>-model.params`` (MXNet 1.9.1's files; see gluon/_block_files.py)."""
        from mxcy.gluon._block_files import save_block
        save_block(self, prefix)

    def load(self, prefix):
        """Load what save wrote into a model built the same way: the blocks get their saved
        names back, the parameters their values, hybridized blocks their graphs."""
        from mxcy.gluon._block_files import load_block
        load_block(self, prefix)

    def save_parameters(self, filename, deduplicate=False):
        """Save parameters by attribute path (``dense0.weight``) in MXNet's format."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            seen, unique = {}, {}
            for name, p in params.items():
                if id(p) not in seen:
                    seen[id(p)] = name
                    unique[name] = p
            params = unique
        _io.save(filename, {k: v._reduce() for k, v in params.items()})

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source='current'):
        """Load a file written by save_parameters (or the older collect_params().save)."""
        loaded = _io.load(filename)
        if not isinstance(loaded, dict):
            raise ValueError(f"load_parameters: {filename!r} holds a list of arrays, not "
                             "named parameters")
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any('.' in k for k in loaded):
            # the older format: full parameter names, as collect_params().save writes
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra,
                                       self.prefix, cast_dtype, dtype_source)
            return
        if not allow_missing:
            for name in params:
                if name not in loaded:
                    raise AssertionError(
                        f"Parameter '{name}' is missing in file '{filename}', which "
                        f"contains parameters: {sorted(loaded)[:10]}. Set "
                        "allow_missing=True to ignore missing parameters.")
        for name, value in loaded.items():
            if name not in params:
                if not ignore_extra:
                    raise ValueError(
                        f"Parameter '{name}' loaded from file '{filename}' is not present "
                        f"in ParameterDict, which contains parameters {sorted(params)[:10]}."
                        " Set ignore_extra=True to ignore. ")
                continue
            params[name]._load_init(value, ctx, cast_dtype, dtype_source)

    # MXNet 1.x's older names for the two
    def save_params(self, filename):
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    # ------------------------------------------------------------ whole-tree operations
    def initialize(self, init=_init.Uniform(), ctx=None, verbose=False, force_reinit=False):
        """Initialize every parameter of this block and its descendants."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype):
        for child in self._children.values():
            child.cast(dtype)
        for p in self.params.values():
            p.cast(dtype)

    def apply(self, fn):
        """Call fn(block) on every descendant, then on this block; returns self."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def summary(self, *inputs):
        """Print each layer's output shape and parameter count for one forward pass on
        `inputs` (MXNet's table; containers are not rows)."""
        rows = [('Input', _shape_text(inputs), 0, 0, 0)]
        seen = set()

        def hook(block, _, outputs):
            count = trainable = shared = 0
            for p in block._reg_params.values():
                size = p.data().size
                count += size
                trainable += 0 if p.grad_req == 'null' else size
                if id(p) in seen:
                    shared += size
                seen.add(id(p))
            rows.append((f'{type(block).__name__}-{len(rows)}', _shape_text(outputs), count,
                         trainable, shared))
        handles = []
        self.apply(lambda blk: None if _is_container(blk) else
                   handles.append(blk.register_forward_hook(hook)))
        try:
            self(*inputs)
        finally:
            for h in handles:
                h.detach()
        line = '{:>20}  {:>42} {:>15}'
        total = sum(r[2] for r in rows)
        trainable = sum(r[3] for r in rows)
        shared = sum(r[4] for r in rows)
        print('-' * 80)
        print(line.format('Layer (type)', 'Output Shape', 'Param #'))
        print('=' * 80)
        for name, shape, count, _, _ in rows:
            print(line.format(name, shape, count))
        print('=' * 80)
        print('Parameters in forward computation graph, duplicate included')
        print(f'   Total params: {total}')
        print(f'   Trainable params: {trainable}')
        print(f'   Non-trainable params: {total - trainable}')
        print(f'Shared params in forward computation graph: {shared}')
        print(f'Unique parameters in model: {total - shared}')
        print('-' * 80)

    def register_forward_pre_hook(self, hook):
        """hook(block, inputs) runs before each forward; returns its HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(name, op_name, array)`` for every operator output of the
        hybridized blocks below (and their inputs with `monitor_all`), as MXNet's op hook
        does; names are bytes as MXNet passes them, the array an NDArray (MXNet passes a
        C handle)."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def register_forward_hook(self, hook):
        """hook(block, inputs, outputs) runs after each forward; returns its HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def __call__(self, *args):
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        return out

    def forward(self, *args):
        """The computation (a subclass defines it)."""
        raise NotImplementedError(f"{type(self).__name__} must define forward")


class HybridBlock(Block):
    """A block written once for NDArrays and Symbols: ``hybrid_forward(F, x, ...)``."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._active = False
        self._flags = {}
        self._cached_graph = None
        self._cached = None
        self._op_hook = None            # (callback, monitor_all) of register_op_hook

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(f"Children of HybridBlock must also be HybridBlock, but "
                             f"{block} has type {type(block)}. If you are using Sequential, "
                             "please try HybridSequential instead.")
        super().register_child(block, name)
        self._cached_graph = None
        self._cached = None

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, **kwargs):
        """Trace hybrid_forward into a Symbol at the next call and run it through cached
        executors (always statically planned: static_alloc/static_shape change nothing).
        mxcy has no subgraph backends, so a `backend` raises."""
        if backend is not None:
            raise MXNetError(f"{self.name}.hybridize: backend {backend!r} is not registered "
                             "(mxcy has no subgraph backends; leave backend=None)")
        self._active = active
        self._flags = dict(kwargs, static_alloc=static_alloc, static_shape=static_shape,
                           inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                           backward_bulk_size=backward_bulk_size)
        if clear:
            self._cached_graph = None
        self._cached = None
        for child in self._children.values():
            child.hybridize(active, clear=clear, static_alloc=static_alloc,
                            static_shape=static_shape, inline_limit=inline_limit,
                            forward_bulk_size=forward_bulk_size,
                            backward_bulk_size=backward_bulk_size, **kwargs)

    def optimize_for(self, x, *args, backend=None, clear=False, static_alloc=False,
                     static_shape=False, inline_limit=2, forward_bulk_size=None,
                     backward_bulk_size=None, **kwargs):
        """hybridize, then trace, infer shapes and bind for these inputs without running
        (export or a call may follow)."""
        self.hybridize(True, backend=backend, clear=clear, static_alloc=static_alloc,
                       static_shape=static_shape, inline_limit=inline_limit,
                       forward_bulk_size=forward_bulk_size,
                       backward_bulk_size=backward_bulk_size, **kwargs)
        self._build_cached(x, *args)

    def register_op_hook(self, callback, monitor_all=False):
        self._op_hook = (callback, bool(monitor_all))
        self._cached = None             # executors bound from now on install it
        super().register_op_hook(callback, monitor_all)

    def infer_type(self, *args):
        """Set the parameters' dtypes from the inputs' (a traced forward's inference)."""
        inputs, out, _ = self._get_graph(*args)
        flat = [a for a in _flatten(args)[0] if a is not None]
        known = {i.name: a.dtype for i, a in zip(inputs, flat)}
        arg_types, _, aux_types = out.infer_type(**known)
        types = dict(zip(out.list_arguments(), arg_types or ()))
        types.update(zip(out.list_auxiliary_states(), aux_types or ()))
        for p in self.collect_params().values():
            if types.get(p.name) is not None:
                p.dtype = types[p.name]

    def cast(self, dtype):
        self._cached_graph = None
        self._cached = None
        super().cast(dtype)

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            if self._active:
                return _in_mode(self._call_cached(x, *args))
            ctx = x.context
            try:
                params = {k: v.data(ctx) for k, v in self._reg_params.items()}
            except DeferredInitializationError:
                self._deferred_infer_shape(x, *args)
                for p in self.params.values():
                    p._finish_deferred_init()
                params = {k: v.data(ctx) for k, v in self._reg_params.items()}
            return _in_mode(self.hybrid_forward(_nd, x, *args, **params))
        if not isinstance(x, Symbol):
            raise TypeError(f"{type(self).__name__}: the first input must be an NDArray or "
                            f"a Symbol, got {type(x).__name__}")
        params = {k: v.var() for k, v in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(_sym, x, *args, **params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The computation with F = mx.nd or mx.sym (a subclass defines it)."""
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward")

    # ------------------------------------------------------------ tracing
    def _get_graph(self, *args):
        """(input variables, outputs as one Symbol, the outputs' nesting) of this block
        traced with Symbols. Nested lists of inputs and outputs keep their structure, and
        an input given as None stays None in its place (as in MXNet)."""
        if self._cached_graph is None:
            outer = getattr(_TRACING, 'shapes', None)
            if outer is not None:           # inside a parent's trace: its names count
                return self._trace(args, None)
            _TRACING.shapes, _TRACING.dtypes, _TRACING.dtype_cache = {}, {}, {}
            try:
                self._trace(args, _TRACING.shapes)
            finally:
                _TRACING.shapes = _TRACING.dtypes = _TRACING.dtype_cache = None
        return self._cached_graph

    def _trace(self, args, shapes):
        """_get_graph's tracing; `shapes` (a dict, or None inside an outer trace) gets
        the input variables' shapes for traced_shape()."""
        if self._cached_graph is None:
            flat, in_format = _flatten(args)
            real = sum(a is not None for a in flat)
            if real == 0:
                raise ValueError(f"{self.name}: at least one input must be an array")
            inputs, symbols = [], []
            for a in flat:
                if a is None:
                    symbols.append(None)
                    continue
                var = _sym.var('data' if real == 1 else f'data{len(inputs)}')
                inputs.append(var)
                symbols.append(var)
                if shapes is not None and isinstance(a, NDArray):
                    shapes[var.name], _TRACING.dtypes[var.name] = a.shape, a.dtype
            grouped = _regroup(symbols, in_format)[0]
            params = {k: v.var() for k, v in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(_sym, *grouped, **params)
            outs, out_format = _flatten(out)
            if any(o is None for o in outs):
                raise ValueError(f"{self.name}: hybrid_forward returned None among its "
                                 "outputs")
            self._cached_graph = (inputs, _sym.Group(outs) if len(outs) > 1 else outs[0],
                                  out_format)
        return self._cached_graph

    def _deferred_infer_shape(self, *args):
        """Fill in unknown parameter shapes from the input shapes (first forward)."""
        inputs, out, _ = self._get_graph(*args)
        flat = [a for a in _flatten(args)[0] if a is not None]
        known = {i.name: a.shape for i, a in zip(inputs, flat)}
        try:
            arg_shapes, _, aux_shapes = out.infer_shape_partial(**known)
        except Exception as exc:
            raise ValueError(f"Deferred initialization failed in {self.name} because shape "
                             f"cannot be inferred from inputs {known}: {exc}") from exc
        shapes = dict(zip(out.list_arguments(), arg_shapes))
        shapes.update(zip(out.list_auxiliary_states(), aux_shapes))
        for p in self.collect_params().values():
            shape = shapes.get(p.name)
            if shape and all(d > 0 for d in shape):     # () or a 0: still unknown
                p.shape = shape

    def infer_shape(self, *args):
        self._deferred_infer_shape(*args)

    def _call_cached(self, *args):
        _, out_format, arrays = self._build_cached(*args)
        outs = self._cached(arrays)
        if out_format is True or out_format is False:     # a plain list / one output
            return outs if out_format else outs[0]
        return _regroup(outs, out_format)[0]

    def _build_cached(self, *args):
        from mxcy.gluon._cached import CachedGraph, flat_inputs
        inputs, out, out_format = self._get_graph(*args)
        arrays = flat_inputs(args, _flatten)
        if self._cached is None:
            params = self.collect_params()
            try:
                for p in params.values():
                    p.data(arrays[0].context)
            except DeferredInitializationError:
                self._deferred_infer_shape(*args)
                for p in params.values():
                    p._finish_deferred_init()
            self._cached = CachedGraph(self, inputs, out, params, self._flags)
        return inputs, out_format, arrays

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (MXNet's arg:/aux: names)."""
        if self._cached_graph is None:
            raise RuntimeError("Please first call block.hybridize() and then run forward "
                               "with this block at least once before calling export.")
        sym = self._cached_graph[1]
        sym_file = f'{path}-symbol.json'
        sym.save(sym_file)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arrays = {}
        for name, param in self.collect_params().items():
            if name in arg_names:
                arrays[f'arg:{name}'] = param._reduce()
            elif name in aux_names:
                arrays[f'aux:{name}'] = param._reduce()
        params_file = f'{path}-{epoch:04d}.params'
        _io.save(params_file, arrays)
        return sym_file, params_file


_TRACING = threading.local()     # .shapes: the traced block's input shapes, by variable


def traced_shape(symbol):
    """While a hybridized block traces its graph at its first call: the shape of
    `symbol` as inferred from the block's input shapes, or None. A layer whose parameter
    shapes depend on its input (an RNN layer's i2h weights) completes them with it when
    it is traced inside a parent block, where its own input is not an array."""
    known = getattr(_TRACING, 'shapes', None)
    if not known:
        return None
    try:
        _, outs, _ = symbol.infer_shape_partial(**known)
    except Exception:                   # noqa: BLE001  (not inferable: left to deferral)
        return None
    shape = outs[0] if outs else None
    return tuple(shape) if shape and all(d > 0 for d in shape) else None


def _flatten_inputs(args):
    flat = []
    for a in args:
        if isinstance(a, (list, tuple)):
            flat.extend(_flatten_inputs(a))
        elif a is not None:
            flat.append(a)
    return flat


def _flatten(obj):
    """(leaves, format) of nested lists/tuples of arrays, symbols and Nones: the format
    is 0 for a leaf, -1 for None, a list of formats for a list or tuple."""
    if obj is None:
        return [None], -1
    if isinstance(obj, (list, tuple)):
        flat, fmt = [], []
        for item in obj:
            leaves, f = _flatten(item)
            flat.extend(leaves)
            fmt.append(f)
        return flat, fmt
    return [obj], 0


def _regroup(flat, fmt):
    """The inverse of `_flatten`: (nested value, the leaves left over)."""
    if fmt == 0 or fmt == -1:
        return flat[0], flat[1:]
    out = []
    for f in fmt:
        value, flat = _regroup(flat, f)
        out.append(value)
    return out, flat
