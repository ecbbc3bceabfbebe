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

``python tools/api_gap.py --markdown`` prints the coverage table of the README (one row per
namespace family, then the exclusions' reasons summarised, from
tests/compat/exclusions.py); ``--write README.md`` replaces the README's table (between
its ``api-coverage`` markers) with it. tests/tools/test_api_gap.py checks that the README
holds exactly this output, so the table cannot go stale: regenerate it when names land.
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


# the classes of the manifest, counted with the namespace that holds them
CLASS_HOME = {'NDArray': 'nd', 'Symbol': 'sym', 'Executor': 'sym', 'Module': 'mod',
              'Block': 'gluon', 'HybridBlock': 'gluon', 'Parameter': 'gluon',
              'ParameterDict': 'gluon', 'Trainer': 'gluon'}
# an exclusion's reason, summarised by the first keyword it contains (else shown as is)
REASONS = (('backward node', "operators' internal backward nodes, exposed by accident"),
           ('sparse', 'sparse storage (row_sparse/csr): mxcy arrays are dense'),
           ('quantiz', 'INT8 quantization internals (MKLDNN calibration, quantized kernels)'),
           ('GPU', 'GPU-only (GPU kernels, multi-GPU BatchNorm, GPU memory queries)'),
           ('_v1', 'deprecated _v1 operators and iterators (pre-1.0 graphs)'),
           ('handle', "constructors that take MXNet's C handles (mxcy builds these objects "
                      "through mx.nd.array, mx.sym.Variable, mx.kv.create ...)"),
           ('server', "the parameter server's server role (mxcy's dist_sync runs on MPI)"),
           ('private', "MXNet's private helpers, public by accident"))
BEGIN, END = '<!-- api-coverage:begin -->', '<!-- api-coverage:end -->'


def family(module):
    """The namespace family a manifest module counts under: ``nd.contrib`` under ``nd``,
    the ``NDArray`` class under ``nd``; a namespace the manifest gains (``np``,
    ``np.random``, ``npx``) becomes its own family with no edit here."""
    return CLASS_HOME.get(module, module.split('.')[0])


def reason_summary(reason):
    return next((text for key, text in REASONS if key in reason), reason)


def coverage(mx, manifest, exclusions):
    """{family: {'modules': [...], 'names', 'ok', 'excluded', 'todo'}} and the
    {reason summary: count} of the excluded names mxcy lacks."""
    rows, reasons = {}, {}
    for module in sorted(manifest):
        missing, mismatched = gaps(mx, manifest, module)
        row = rows.setdefault(family(module), {'modules': [], 'names': 0, 'ok': 0,
                                               'excluded': 0, 'todo': 0})
        row['modules'].append(module)
        row['names'] += len(manifest[module])
        row['ok'] += len(manifest[module]) - len(missing) - len(mismatched)
        for name in list(missing) + list(mismatched):
            reason = exclusions.get(f'{module}:{name}')
            if reason is None:
                row['todo'] += 1
            else:
                row['excluded'] += 1
                summary = reason_summary(reason)
                reasons[summary] = reasons.get(summary, 0) + 1
    return rows, reasons


def _pct(part, whole):
    return f"{100.0 * part / whole:.1f}%" if whole else '-'


def markdown(mx, manifest, exclusions):
    """The README's coverage table (deterministic: rows by size, then name)."""
    rows, reasons = coverage(mx, manifest, exclusions)
    lines = ["| namespace | MXNet 1.9.1 names | in mxcy | excluded | not yet | coverage |",
             "|---|---:|---:|---:|---:|---:|"]
    total = {'names': 0, 'ok': 0, 'excluded': 0, 'todo': 0}
    for fam, row in sorted(rows.items(), key=lambda kv: (-kv[1]['names'], kv[0])):
        others = [m for m in row['modules'] if m != fam]
        label = f"`mx.{fam}`" + (f" (with {', '.join(f'`{m}`' for m in others)})"
                                 if others else '')
        lines.append(f"| {label} | {row['names']} | {row['ok']} | {row['excluded']} | "
                     f"{row['todo']} | {_pct(row['ok'], row['names'])} |")
        for key in total:
            total[key] += row[key]
    lines.append(f"| **all** | {total['names']} | {total['ok']} | {total['excluded']} | "
                 f"{total['todo']} | {_pct(total['ok'], total['names'])} |")
    lines += ['', f"{total['ok']} of MXNet 1.9.1's {total['names']} public names "
              f"({_pct(total['ok'], total['names'])}) are in mxcy with MXNet's parameter "
              f"names; {total['excluded']} "
              f"({_pct(total['excluded'], total['names'])}) are excluded on purpose, for "
              f"these reasons; {total['todo']} are not there yet.", '',
              '| why excluded | names |', '|---|---:|']
    lines += [f"| {text} | {n} |"
              for text, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))]
    return '\n'.join(lines) + '\n'


def replace_section(text, table):
    """`text` (the README) with the part between the api-coverage markers replaced."""
    if BEGIN not in text or END not in text:
        raise ValueError(f"the README has no {BEGIN} ... {END} section")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table}{END}{tail}"


def load_exclusions():
    import importlib.util
    path = os.path.join(ROOT, 'tests', 'compat', 'exclusions.py')
    spec = importlib.util.spec_from_file_location('_exclusions', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EXCLUSIONS


def main(argv):
    sys.path.insert(0, ROOT)
    mx = importlib.import_module('mxcy')
    manifest = load_manifest()
    if '--markdown' in argv or '--write' in argv:
        table = markdown(mx, manifest, load_exclusions())
        if '--write' in argv:
            path = argv[argv.index('--write') + 1]
            with open(path, encoding='utf-8') as f:
                text = f.read()
            with open(path, 'w', encoding='utf-8') as f:
                f.write(replace_section(text, table))
            print('wrote the coverage table into', path)
        else:
            print(table, end='')
        return
    show = '--names' in argv
    wanted = [a for a in argv if not a.startswith('--')]
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
