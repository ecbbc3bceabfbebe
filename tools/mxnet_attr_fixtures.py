#!/usr/bin/env python3
"""Record how MXNet 1.9.1 stores symbol attributes, for mxcy's tests.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_attr_fixtures.py

For every case of tests/compat/attr_cases.py it writes, into
tests/compat/attr_golden.json, MXNet's ``tojson()`` string, ``list_attr()``,
``attr_dict()`` and ``attr(key)`` for the keys of attr_cases.KEYS (single-output symbols
only), and whether ``load_json(tojson())`` gives the same string back; or, where MXNet
refuses the construction, the exception's type name and message. Deterministic output.
"""
import importlib.util
import json
import os
import re

import mxnet as mx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'tests', 'compat', 'attr_golden.json')


def load_cases():
    path = os.path.join(ROOT, 'tests', 'compat', 'attr_cases.py')
    spec = importlib.util.spec_from_file_location('attr_cases', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record(build, keys):
    try:
        sym = build(mx)
    except Exception as e:      # noqa: BLE001  (what MXNet refuses is part of the record)
        kind = 'MXNetError' if isinstance(e, mx.base.MXNetError) else type(e).__name__
        text = re.sub(r'\[\d\d:\d\d:\d\d\] ', '', str(e).strip().splitlines()[0])
        return {'error': kind, 'message': text[:200]}
    entry = {'tojson': sym.tojson(), 'attr_dict': sym.attr_dict(),
             'roundtrip': mx.sym.load_json(sym.tojson()).tojson() == sym.tojson()}
    if len(sym.list_outputs()) == 1:
        entry['list_attr'] = sym.list_attr()
        entry['attr'] = {k: sym.attr(k) for k in keys}
    return entry


def main():
    cases = load_cases()
    golden = {name: record(build, cases.KEYS) for name, build in cases.CASES.items()}
    with open(OUT, 'w') as f:
        json.dump({'mxnet_version': mx.__version__, 'cases': golden}, f, indent=1,
                  sort_keys=True)
        f.write('\n')
    print('wrote', OUT, len(golden), 'cases')


if __name__ == '__main__':
    main()
