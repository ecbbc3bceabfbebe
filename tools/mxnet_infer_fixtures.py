#!/usr/bin/env python3
"""Record MXNet 1.9.1's shape/type inference answers on small graphs.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_infer_fixtures.py

For every graph and query of tests/compat/infer_cases.py it writes, into
tests/compat/infer_golden.json, what ``infer_shape``/``infer_shape_partial``/
``infer_type``/``infer_type_partial`` return (shapes as lists, dtypes by name, ``None``
for MXNet's ``(None, None, None)``), the text of the warning MXNet gives, or that MXNet
raised (with its message, for the reader; tests only check that mxcy raises too). The
output is deterministic (sorted keys, no timestamps).
"""
import importlib.util
import json
import os
import re
import warnings

import mxnet as mx
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'tests', 'compat', 'infer_golden.json')


def load_cases():
    path = os.path.join(ROOT, 'tests', 'compat', 'infer_cases.py')
    spec = importlib.util.spec_from_file_location('infer_cases', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES


def encode(kind, result):
    if result is None or result == (None, None, None):
        return None
    if kind.startswith('shape'):
        return [[list(s) for s in group] for group in result]
    return [[None if t is None else np.dtype(t).name for t in group] for group in result]


def query(sym, kind, given):
    fn = {'shape': sym.infer_shape, 'shape_partial': sym.infer_shape_partial,
          'type': sym.infer_type, 'type_partial': sym.infer_type_partial}[kind]
    entry = {'kind': kind, 'given': {k: list(v) if isinstance(v, tuple) else v
                                     for k, v in given.items()}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            entry['result'] = encode(kind, fn(**given))
            entry['error'] = None
        except mx.base.MXNetError as e:
            entry['result'] = None
            # the message without its log timestamp ('[15:12:05] '), for determinism
            text = re.sub(r'\[\d\d:\d\d:\d\d\] ', '', str(e).strip().splitlines()[-1])
            entry['error'] = text[:300]
    entry['warning'] = '\n'.join(str(w.message) for w in caught) or None
    return entry


def main():
    golden = {}
    for name, (build, queries) in load_cases().items():
        sym = build(mx)
        golden[name] = {'arguments': sym.list_arguments(),
                        'aux_states': sym.list_auxiliary_states(),
                        'outputs': sym.list_outputs(),
                        'queries': [query(sym, kind, given) for kind, given in queries]}
    with open(OUT, 'w') as f:
        json.dump({'mxnet_version': mx.__version__, 'cases': golden}, f, indent=1,
                  sort_keys=True)
        f.write('\n')
    print('wrote', OUT, sum(len(c['queries']) for c in golden.values()), 'queries')


if __name__ == '__main__':
    main()
