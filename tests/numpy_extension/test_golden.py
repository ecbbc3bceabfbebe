"""Every npx operator case recorded from MXNet 1.9.1 (tools/mxnet_npx_golden.py):
outputs and input gradients under npx.set_np() and autograd, as mx.np arrays."""
import json
import pathlib

import numpy as onp
import pytest

import mxcy as mx
from mxcy import autograd, npx

GOLDEN = pathlib.Path(__file__).resolve().parent.parent / 'compat' / 'golden'
INDEX = json.loads((GOLDEN / 'npx.json').read_text())
ARRAYS = onp.load(GOLDEN / 'npx.npz')


def _params(meta):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in meta['params'].items()}


@pytest.fixture(autouse=True)
def _np_mode():
    npx.set_np()
    yield
    npx.reset_np()


@pytest.mark.parametrize('case', sorted(INDEX))
def test_npx_matches_mxnet(case):
    meta = INDEX[case]
    n_in = sum(1 for k in ARRAYS.files if k.startswith(f'{case}/in'))
    host = [ARRAYS[f'{case}/in{j}'] for j in range(n_in)]
    arrays = [mx.np.array(h, dtype=h.dtype) for h in host]
    for j in meta['grads']:
        arrays[j].attach_grad()
    with autograd.record(train_mode=meta['train']):
        out = getattr(npx, meta['op'])(*arrays, **_params(meta))
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    assert len(outs) == meta['n_out']
    for j, o in enumerate(outs):
        assert isinstance(o, mx.np.ndarray), (case, type(o))
        want = ARRAYS[f'{case}/out{j}']
        assert o.shape == want.shape, (case, j, o.shape, want.shape)
        onp.testing.assert_allclose(o.asnumpy(), want, rtol=1e-4, atol=1e-5,
                                    err_msg=f'{case} out{j}')
    if meta['grads']:
        heads = [(o, ARRAYS[f'{case}/head{j}']) for j, o in enumerate(outs)
                 if f'{case}/head{j}' in ARRAYS.files]
        autograd.backward([o for o, _ in heads], [mx.np.array(h) for _, h in heads])
        for j in meta['grads']:
            onp.testing.assert_allclose(arrays[j].grad.asnumpy(), ARRAYS[f'{case}/grad{j}'],
                                        rtol=1e-4, atol=1e-5, err_msg=f'{case} grad{j}')
