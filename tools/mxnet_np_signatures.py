#!/usr/bin/env python3
"""Record the parameter names of MXNet 1.9.1's ``mx.np``, ``mx.np.random`` and
``mx.np.linalg`` functions into ``mxcy/numpy/_signatures.py`` (data: name -> parameters).

Run in the MXNet peer venv (never in CI; the file it writes is committed):

    /work/mxnet_venv/bin/python tools/mxnet_np_signatures.py

Each entry is a string of parameter specs: ``name`` (required), ``name=`` (has a default),
``*name`` (varargs), ``**name`` (keywords), ``|`` before keyword-only ones. mxcy builds
the ``__signature__`` of its functions from it (defaults are mxcy's own, the names are
MXNet's), so ``inspect.signature`` reports what MXNet's does. ``FALLBACK`` and
``FALLBACK_LINALG`` list the names MXNet itself computes with NumPy.
"""
import inspect
import os

import mxnet as mx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'mxcy', 'numpy',
                   '_signatures.py')


def spec(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    parts, kwonly = [], False
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            parts.append('*' + p.name)
            kwonly = True
        elif p.kind is p.VAR_KEYWORD:
            parts.append('**' + p.name)
        else:
            if p.kind is p.KEYWORD_ONLY and not kwonly:
                parts.append('|')
                kwonly = True
            parts.append(p.name + ('=' if p.default is not p.empty else ''))
    return ' '.join(parts)


def main():
    lines = ['"""MXNet 1.9.1\'s parameter names of mx.np functions (written by',
             'tools/mxnet_np_signatures.py; data, see there for the format)."""', '']
    for var, mod in (('NP', mx.np), ('RANDOM', mx.np.random), ('LINALG', mx.np.linalg)):
        lines.append(f'{var} = {{')
        for name in sorted(dir(mod)):
            obj = getattr(mod, name)
            if name.startswith('_') or inspect.ismodule(obj) or not callable(obj):
                continue
            s = spec(obj)
            lines.append(f'    {name!r}: {s!r},')
        lines.append('}')
    # the names MXNet itself leaves to NumPy (their scalar results stay NumPy scalars)
    from mxnet.numpy import fallback, fallback_linalg
    for var, names in (('FALLBACK', fallback.__all__), ('FALLBACK_LINALG',
                                                          fallback_linalg.__all__)):
        lines.append(f'{var} = frozenset({{')
        lines += [f'    {n!r},' for n in sorted(names)]
        lines.append('})')
    with open(OUT, 'w') as f:
        f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
