#!/usr/bin/env python3
"""Check that a block written with ``F.np`` and hybridized by mxcy exports files MXNet
1.9.1 loads under ``npx.set_np()``, and record MXNet's output for the test.

Two steps (never in CI; the files are committed under tests/gluon/mxnet_files/):

    PYTHONPATH=. python tools/mxnet_np_hybrid_fixtures.py export      # with mxcy
    /work/mxnet_venv/bin/python tools/mxnet_np_hybrid_fixtures.py record   # MXNet 1.9.1

``export`` hybridizes ``tests/gluon/test_np_mode_hybrid.py``'s ``export_block()`` (fixed
weights) and writes ``fnp-symbol.json`` / ``fnp-0000.params``; ``record`` loads them with
MXNet's ``SymbolBlock.imports`` under ``npx.set_np()`` and writes ``fnp_io.npz`` (the
input ``x`` and MXNet's output ``y``).
"""
import os
import sys

import numpy as onp

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
OUT = os.path.join(ROOT, 'tests', 'gluon', 'mxnet_files')
X = onp.linspace(-1, 2, 12).reshape(3, 4).astype('float32')


def export():
    sys.path.insert(0, os.path.join(ROOT, 'tests', 'gluon'))
    import mxcy as mx
    from test_np_mode_hybrid import export_block
    mx.npx.set_np()
    net = export_block()
    net(mx.np.array(X))
    net.export(os.path.join(OUT, 'fnp'))


def record():
    import mxnet as mx
    from mxnet import gluon, npx
    npx.set_np()
    net = gluon.SymbolBlock.imports(os.path.join(OUT, 'fnp-symbol.json'), ['data'],
                                    os.path.join(OUT, 'fnp-0000.params'))
    y = net(mx.np.array(X))
    onp.savez(os.path.join(OUT, 'fnp_io.npz'), x=X, y=y.asnumpy())


if __name__ == '__main__':
    {'export': export, 'record': record}[sys.argv[1]]()
