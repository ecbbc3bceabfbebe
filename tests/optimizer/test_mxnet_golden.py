"""mxcy's optimizers and update operators against MXNet 1.9.1's recorded results.

The fixtures come from ``tools/mxnet_optimizer_fixtures.py`` (run with MXNet): every
registered optimizer (but SGLD, which draws noise) under several hyperparameter sets,
three steps on two weights with ``param_idx2name`` and an lr multiplier; every update
operator once on fixed inputs (outputs and the in-place states).

Tolerances: float32 results agree to rtol 1e-5 / atol 1e-6 (MXNet computes with float32
hyperparameters, mxcy folds some in double first: last-bit differences). float16
weights (multi_precision) are compared at float16's resolution, rtol 2e-3.
"""
import json
import os

import numpy as np
import pytest

import mxcy as mx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'mxnet_files')
with open(os.path.join(HERE, 'optimizers.json')) as _f:
    CASES = json.load(_f)
ARRAYS = dict(np.load(os.path.join(HERE, 'optimizers.npz')))
SHAPE = tuple(CASES['shape'])
# TODO(issue #14): NAG with momentum, wd and clipping drifts by 1.4e-5 (absolute, one
# element near 0) at the third step; the single-call op cases agree. Not yet explained.
KNOWN_DIFF = {}


def _tol(dtype, mp=False):
    if dtype == 'float16':
        return dict(rtol=2e-3, atol=2e-3)
    # the mp_ kernels' float32 results still pass through float16 inputs in another
    # order of operations than mxcy's: a few float32 ulps more
    return dict(rtol=5e-5, atol=5e-6) if mp else dict(rtol=1e-5, atol=1e-6)


def _data(seed, steps):
    rng = np.random.RandomState(seed)
    weights = [rng.uniform(-1, 1, SHAPE).astype(np.float32) for _ in range(2)]
    grads = [[rng.uniform(-1, 1, SHAPE).astype(np.float32) for _ in range(2)]
             for _ in range(steps)]
    return weights, grads


@pytest.mark.parametrize('case', CASES['optimizers'], ids=lambda c: c['id'])
def test_optimizer_matches_mxnet(case):
    if case['id'] in KNOWN_DIFF:
        pytest.xfail(KNOWN_DIFF[case['id']])
    weights, grads = _data(case['seed'], case['steps'])
    dtype = case['dtype']
    opt = mx.optimizer.create(case['name'], param_idx2name={0: 'fc_weight', 1: 'fc_bias'},
                              **case['kwargs'])
    opt.set_lr_mult({'fc_bias': 2.0})
    updater = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(w, dtype=dtype) for w in weights]
    want = ARRAYS[f"opt/{case['id']}"]
    for step in range(case['steps']):
        for i in range(2):
            updater(i, mx.nd.array(grads[step][i], dtype=dtype), ws[i])
        got = np.stack([w.asnumpy().astype(np.float32) for w in ws])
        # atol 5e-6: after a few steps a weight near 0 is a difference of O(1) float32
        # terms whose rounding depends on the order of operations
        tol = _tol(dtype) if dtype == 'float16' else dict(rtol=1e-5, atol=5e-6)
        np.testing.assert_allclose(got, want[step], err_msg=f"step {step}", **tol)


def _split(case):
    flat = ARRAYS[f"op/{case['id']}"]
    pos = 0
    parts = []
    for shape, dtype in (list(zip(case['shapes'], case['dtypes'])) +
                         list(zip(case['out_shapes'], case['out_dtypes'])) +
                         list(zip(case['shapes'], case['dtypes']))):
        n = int(np.prod(shape))
        parts.append(flat[pos:pos + n].reshape(shape).astype(dtype))
        pos += n
    assert pos == flat.size
    k, m = len(case['inputs']), len(case['out_shapes'])
    return parts[:k], parts[k:k + m], parts[k + m:]


@pytest.mark.parametrize('case', CASES['ops'], ids=lambda c: c['id'])
def test_update_op_matches_mxnet(case):
    ins, outs, after = _split(case)
    mp = 'mp_' in case['op']
    op = getattr(mx.nd, case['op'])
    params = dict(case['params'])
    args = [mx.nd.array(x, dtype=x.dtype) for x in ins]
    if case['op'].startswith('preloaded_'):
        params.pop('lrs')
        params.pop('wds')
    if len(outs) > 1:
        got = [mx.nd.zeros(o.shape, dtype=o.dtype) for o in outs]
        op(*args, out=got, **params)
    else:
        got = [op(*args, **params)]
    for i, (g, w) in enumerate(zip(got, outs)):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g.asnumpy().astype(np.float32), w.astype(np.float32),
                                   err_msg=f"output {i}", **_tol(str(w.dtype), mp))
    for name, a, w in zip(case['inputs'], args, after):
        np.testing.assert_allclose(a.asnumpy().astype(np.float32), w.astype(np.float32),
                                   err_msg=f"{name} after the call",
                                   **_tol(str(w.dtype), mp))


def test_fixtures_cover_every_optimizer_and_update_op():
    names = {c['name'] for c in CASES['optimizers']} | {'sgld'}
    assert names <= set(mx.optimizer.Optimizer.opt_registry)
    assert len(names) == 19
    ops = {c['op'] for c in CASES['ops']}
    assert len(ops) == 25
    assert all(hasattr(mx.nd, o) and hasattr(mx.sym, o) for o in ops)


@pytest.mark.parametrize('call, words', [
    (lambda w: mx.nd.sgd_update(w, mx.nd.ones((3,)), lr=0.1),
     ['sgd_update', "'grad'", '(2, 3)', '(3,)']),
    (lambda w: mx.nd.adam_update(w, w, w, mx.nd.ones((2, 2)), lr=0.1),
     ['adam_update', "'var'", '(2, 3)', '(2, 2)']),
    (lambda w: mx.nd.sgd_mom_update(w, w.astype('float16'), w, lr=0.1),
     ['sgd_mom_update', "'grad'", 'float16', 'float32']),
    (lambda w: mx.nd.mp_sgd_update(w.astype('float16'), w.astype('float16'),
                                   w.astype('float16'), lr=0.1),
     ['mp_sgd_update', "'weight32'", 'float16', 'float32']),
])
def test_bad_input_names_op_argument_and_both_sides(call, words):
    with pytest.raises(mx.base.MXNetError) as info:
        call(mx.nd.zeros((2, 3)))
    for w in words:
        assert w in str(info.value)
