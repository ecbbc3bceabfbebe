#!/usr/bin/env python3
"""Record MXNet 1.9.1's public Python API surface: names and parameter names.

Run in the MXNet peer venv (never in CI; the file it writes is committed):

    /work/mxnet_venv/bin/python tools/mxnet_api.py

It writes ``tests/compat/mxnet191_api.json``:

    {"modules": {"nd": {"<name>": {"kind": ..., "params": [...], "varargs": bool}, ...},
                 ...,
                 "NDArray": {...}, "Symbol": {...}}}

A module's names are those it defines itself: objects whose ``__module__`` is the
namespace's own module, one of its private submodules (``mxnet.ndarray.ndarray``,
``mxnet.ndarray.utils``) or MXNet's generated-operator module (``ndarray``/``symbol``);
re-exported helpers (``ctypes.c_int`` in ``mx.operator``, ``mx.context.current_context``
in ``mx.nd.random``) and submodules are left out. For a class, its public methods and
properties (names without a leading underscore, inherited ones included).

``params`` lists the named parameters in order (positional-or-keyword, then
keyword-only, ``self`` dropped), as ``inspect.signature`` reports them: MXNet 1.9.1's
generated operator functions carry real signatures (``FullyConnected(data=None,
weight=None, bias=None, num_hidden=_Null, ..., out=None, name=None, **kwargs)``).
``varargs`` says whether the function takes ``*args``. Output is sorted, so a rerun
gives the same bytes.
"""
import inspect
import json
import os

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'tests', 'compat', 'mxnet191_api.json')

# namespace -> the modules whose definitions it owns
NAMESPACES = {
    'nd': (mx.nd, ('ndarray', 'mxnet.ndarray', 'mxnet.ndarray.ndarray',
                   'mxnet.ndarray.utils')),
    'sym': (mx.sym, ('symbol', 'mxnet.symbol', 'mxnet.symbol.symbol')),
    'nd.random': (mx.nd.random, ('mxnet.ndarray.random',)),
    'sym.random': (mx.sym.random, ('mxnet.symbol.random',)),
    'nd.linalg': (mx.nd.linalg, ('mxnet.ndarray.linalg',)),
    'sym.linalg': (mx.sym.linalg, ('mxnet.symbol.linalg',)),
    'nd.contrib': (mx.nd.contrib, ('mxnet.ndarray.contrib',)),
    'test_utils': (mx.test_utils, ('mxnet.test_utils',)),
    'operator': (mx.operator, ('mxnet.operator',)),
    'npx': (mx.npx, ('mxnet.numpy_extension', 'mxnet.numpy_extension.utils', 'mxnet.util',
                     'mxnet.context', 'mxnet.base', 'mxnet.ndarray.ndarray')),
    'npx.random': (mx.npx.random, ('mxnet.numpy_extension.random',)),
    # mx.np: its own definitions and NumPy's functions it re-exports as fallbacks
    'np': (mx.np, ('mxnet.numpy', 'mxnet.numpy.multiarray', 'mxnet.numpy.stride_tricks',
                   'mxnet.numpy.io', 'mxnet.numpy.function_base', 'mxnet.ndarray.numpy',
                   'numpy')),
    'np.random': (mx.np.random, ('mxnet.numpy.random',)),
    'np.linalg': (mx.np.linalg, ('mxnet.numpy.linalg', 'numpy.linalg')),
}
# the training-loop namespaces (Module, optimizers, io, ...) and Gluon: a namespace owns
# what its package and the package's private submodules define
PACKAGES = {
    'optimizer': mx.optimizer, 'init': mx.init, 'metric': mx.metric, 'io': mx.io,
    'lr_scheduler': mx.lr_scheduler, 'callback': mx.callback, 'mod': mx.mod, 'kv': mx.kv,
    'model': mx.model, 'rnn': mx.rnn, 'profiler': mx.profiler, 'monitor': mx.monitor,
    'recordio': mx.recordio, 'engine': mx.engine, 'context': mx.context,
    'autograd': mx.autograd, 'gluon': mx.gluon, 'gluon.nn': mx.gluon.nn,
    'gluon.rnn': mx.gluon.rnn, 'gluon.loss': mx.gluon.loss, 'gluon.data': mx.gluon.data,
    'gluon.utils': mx.gluon.utils, 'gluon.data.vision': mx.gluon.data.vision,
    'gluon.data.vision.transforms': mx.gluon.data.vision.transforms,
    'gluon.model_zoo.vision': mx.gluon.model_zoo.vision, 'image': mx.image,
}
for _ns, _mod in PACKAGES.items():
    _pkg = _mod.__name__
    NAMESPACES[_ns] = (_mod, tuple(sorted(
        {_pkg} | {m for m in __import__('sys').modules if m.startswith(_pkg + '.')
                  and all(part.startswith('_') or part == part.lower() for part in
                          m[len(_pkg) + 1:].split('.'))})))
CLASSES = {'NDArray': mx.nd.NDArray, 'Symbol': mx.sym.Symbol, 'Module': mx.mod.Module,
           'Executor': mx.executor.Executor, 'Block': mx.gluon.Block,
           'HybridBlock': mx.gluon.HybridBlock, 'Parameter': mx.gluon.Parameter,
           'ParameterDict': mx.gluon.ParameterDict, 'Trainer': mx.gluon.Trainer,
           'np.ndarray': mx.np.ndarray}


def signature_entry(obj, kind):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return {'kind': kind, 'params': None, 'varargs': False}
    params, varargs = [], False
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            varargs = True
        elif p.kind is not p.VAR_KEYWORD:
            params.append(p.name)
    if params and params[0] in ('self', 'cls') and kind == 'method':
        params = params[1:]
    return {'kind': kind, 'params': params, 'varargs': varargs}


def module_entries(module, owners):
    out = {}
    for name in dir(module):
        if name.startswith('_'):
            continue
        obj = getattr(module, name)
        if inspect.ismodule(obj) or getattr(obj, '__module__', None) not in owners:
            continue
        if inspect.isclass(obj):
            out[name] = signature_entry(obj, 'class')     # the constructor's parameters
        elif callable(obj):
            out[name] = signature_entry(obj, 'function')
    return out


def class_entries(cls):
    out = {}
    for name in dir(cls):
        if name.startswith('_') or name == 'handle':
            continue
        static = inspect.getattr_static(cls, name)
        if isinstance(static, (property, type(mx.nd.NDArray.writable))) or \
                not callable(getattr(cls, name)):
            out[name] = {'kind': 'property', 'params': [], 'varargs': False}
        elif isinstance(static, (staticmethod, classmethod)):
            out[name] = signature_entry(getattr(cls, name), 'function')
        else:
            out[name] = signature_entry(getattr(cls, name), 'method')
    return out


def main():
    modules = {ns: module_entries(mod, owners) for ns, (mod, owners) in NAMESPACES.items()}
    for ns, cls in CLASSES.items():
        modules[ns] = class_entries(cls)
    # mx.np.ndarray inherits NDArray methods (``relu(*args, **kwargs)``) that only raise
    # "mxnet.numpy.ndarray object has no attribute relu" when called: not part of its API
    probe = mx.np.ones((2, 2))
    for name, entry in list(modules['np.ndarray'].items()):
        if entry['kind'] != 'method' or entry['params'] or not entry['varargs']:
            continue
        try:
            getattr(probe, name)()
        except AttributeError as e:
            if 'has no attribute' in str(e):
                del modules['np.ndarray'][name]
        except Exception:       # noqa: BLE001  (it exists; it wanted arguments)
            pass
    doc = {'mxnet_version': mx.__version__, 'modules': modules}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w') as f:
        json.dump(doc, f, indent=0, sort_keys=True)
        f.write('\n')
    for ns, entries in modules.items():
        print(f'{ns:12s} {len(entries)}')


if __name__ == '__main__':
    main()
