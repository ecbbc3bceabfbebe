#!/usr/bin/env python3
"""Compare mxcy's public API with MXNet 1.9.1's (tests/compat/mxnet191_api.json).

Runs in mxcy's venv, no MXNet needed:

    python tools/api_gap.py [--names] [module ...]

prints, per namespace, how many of MXNet's names mxcy lacks and how many take other
parameter names, and with ``--names`` which ones. tests/compat/test_api_surface.py uses
the same `gaps` function, so the tool and the test agree on what counts.

A name matches when mxcy has it and (when MXNet's signature names parameters) MXNet's
named parameters are, in order, the first named parameters of mxcy's signature (mxcy
may take more after them; a call written for MXNet still binds the same way), and mxcy
takes ``*args`` where MXNet does, or names more parameters after MXNet's to take them.
A function of MXNet's that names nothing (``(*args, **kwargs)``: NDArray's fluent
methods) matches any callable. Class entries
compare their constructor's parameters; properties only need to exist.
"""
import importlib
import inspect
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MANIFEST = os.path.join(ROOT, 'tests', 'compat', 'mxnet191_api.json')


def load_manifest(path=MANIFEST):
    with open(path) as f:
        return json.load(f)['modules']


def mxcy_target(mx, module):
    """The mxcy object whose attributes stand for `module` (None if it does not exist)."""
    if module == 'NDArray':
        return mx.nd.ones((1,))
    if module == 'Symbol':
        return mx.sym.Variable('x')
    classes = {'Module': 'mod.Module', 'Executor': 'executor.Executor', 'Block': 'gluon.Block',
               'HybridBlock': 'gluon.HybridBlock', 'Parameter': 'gluon.Parameter',
               'ParameterDict': 'gluon.ParameterDict', 'Trainer': 'gluon.Trainer'}
    module = classes.get(module, module)
    obj = mx
    for part in module.split('.'):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def signature_of(obj):
    """(named parameters, takes *args) of a callable, or None when it has no signature.

    NDArray methods are ``_bound(fn, array)`` objects (mxcy/_ndarray.pyx) that call
    ``fn(array, ...)`` and carry no signature of their own: their parameters are fn's
    after the first (what a call binds to)."""
    bound = type(obj).__name__ == '_bound' and hasattr(obj, 'fn')
    try:
        sig = inspect.signature(obj.fn if bound else obj)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())[1:] if bound else list(sig.parameters.values())
    if params and params[0].name == 'self':     # a method looked up on its class
        params = params[1:]
    names, varargs = [], False
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            varargs = True
        elif p.kind is not p.VAR_KEYWORD:
            names.append(p.name)
    return names, varargs


def compare(entry, obj):
    """None when `obj` matches MXNet's `entry`, else a short reason."""
    if entry['kind'] == 'property' or entry['params'] is None:
        return None
    want, want_var = entry['params'], entry['varargs']
    if not want and want_var:
        return None if callable(obj) else 'not callable'
    got = signature_of(obj)
    if got is None:
        return f"no signature (MXNet: {want})"
    names, varargs = got
    # MXNet's *args that a forwarding function passes on (imdecode(buf, *args)) may be
    # taken by named parameters after MXNet's: MXNet's positional calls bind the same
    absorbed = varargs or len(names) > len(want)
    if names[:len(want)] != want or (want_var and not absorbed):
        star = ' + *args' if want_var else ''
        return f"params {names}{' + *args' if varargs else ''}, MXNet {want}{star}"
    return None


def gaps(mx, manifest, module):
    """(missing names, {name: mismatch reason}) of one namespace."""
    target = mxcy_target(mx, module)
    entries = manifest[module]
    if target is None:
        return sorted(entries), {}
    missing, mismatched = [], {}
    for name, entry in sorted(entries.items()):
        try:
            obj = getattr(target, name)
        except Exception:       # noqa: BLE001  (a property that needs state counts as absent)
            obj = None
            if hasattr(type(target), name):
                continue
        if obj is None and not hasattr(target, name):
            missing.append(name)
            continue
        reason = compare(entry, obj)
        if reason:
            mismatched[name] = reason
    return missing, mismatched


def main(argv):
    sys.path.insert(0, ROOT)
    mx = importlib.import_module('mxcy')
    show = '--names' in argv
    wanted = [a for a in argv if not a.startswith('--')]
    manifest = load_manifest()
    total = [0, 0, 0]
    print(f"{'module':12s} {'names':>6s} {'missing':>8s} {'params':>7s} {'ok':>6s}")
    for module in manifest:
        if wanted and module not in wanted:
            continue
        missing, mismatched = gaps(mx, manifest, module)
        n = len(manifest[module])
        ok = n - len(missing) - len(mismatched)
        total[0] += n
        total[1] += len(missing)
        total[2] += len(mismatched)
        print(f"{module:12s} {n:6d} {len(missing):8d} {len(mismatched):7d} {ok:6d}")
        if show:
            if missing:
                print('  missing:', ' '.join(missing))
            for name, reason in mismatched.items():
                print(f'  {name}: {reason}')
    n, m, p = total
    print(f"{'total':12s} {n:6d} {m:8d} {p:7d} {n - m - p:6d}")


if __name__ == '__main__':
    main(sys.argv[1:])
