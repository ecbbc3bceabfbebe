"""Contrib optimizer updates (AdamW, multi AdamW/LAMB, group AdaGrad, multi_lars) against
values recorded from MXNet 1.9.1 (tools/mxnet_optimizer_contrib_fixtures.py)."""
import json
import pathlib

import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError

CASES = json.loads((pathlib.Path(__file__).parent / 'mxnet_files' /
                    'optimizer_contrib.json').read_text())['cases']


def A(x, dtype='float32'):
    return mx.nd.array(np.array(x), dtype=dtype)


def close(got, want, tol=1e-6):
    np.testing.assert_allclose(got.asnumpy(), np.array(want), rtol=tol, atol=tol)


def cases(*ops):
    return [c for c in CASES if c['op'] in ops]


@pytest.mark.parametrize('case', cases('adamw_update'))
def test_adamw_update_matches_mxnet(case):
    w, g, m, v = (A(x) for x in case['ins'])
    res = mx.nd.contrib.adamw_update(w, g, m, v, case['rescale_grad'], out=w,
                                     **case['params'])
    assert res is w
    close(w, case['weight'])
    close(m, case['mean'])
    close(v, case['var'])


def test_adamw_update_skips_on_zero_rescale_and_takes_an_array():
    case = cases('adamw_update')[2]
    assert case['rescale_grad'] == 0.0
    w0 = np.array(case['ins'][0], np.float32)
    np.testing.assert_allclose(case['weight'], w0, atol=1e-7)    # MXNet skipped it too
    w, g, m, v = (A(x) for x in case['ins'])
    out = mx.nd.contrib.adamw_update(w, g, m, v, mx.nd.array([np.nan]), lr=0.1, eta=1.0)
    np.testing.assert_array_equal(out.asnumpy(), w0)


def test_mp_adamw_update_matches_mxnet():
    case = cases('mp_adamw_update')[0]
    w32, g, m, v = case['ins']
    w16, g16 = A(w32, 'float16'), A(g, 'float16')
    w32, m, v = A(w32), A(m), A(v)
    mx.nd.contrib.mp_adamw_update(w16, g16, m, v, w32, case['rescale_grad'], out=w16,
                                  **case['params'])
    close(w32, case['weight32'])
    close(w16, case['weight'], 1e-3)
    close(m, case['mean'])


@pytest.mark.parametrize('case', cases('multi_adamw_update', 'multi_mp_adamw_update',
                                       'multi_lamb_update', 'multi_mp_lamb_update'),
                         ids=lambda c: c['op'])
def test_multi_updates_match_mxnet(case):
    op, ins, p = case['op'], case['ins'], dict(case['params'])
    ws, gs = [A(x) for x in ins['weights']], [A(x) for x in ins['grads']]
    ms, vs = [A(x) for x in ins['mean']], [A(x) for x in ins['var']]
    args = [ws, gs, ms, vs]
    if '_mp_' in op:
        w32 = ws
        ws = [x.astype('float16') for x in ws]
        args = [ws, [x.astype('float16') for x in gs], ms, vs, w32]
    fn = getattr(mx.nd.contrib, op)
    if 'adamw' in op:
        fn(*args, case['rescale_grad'], p.pop('lrs'), p.pop('wds'), p.pop('etas'), out=ws,
           **p)
    else:
        fn(*args, p.pop('step_count'), p.pop('lrs'), p.pop('wds'), out=ws, **p)
    tol = 1e-3 if '_mp_' in op else 1e-6
    for got, want in zip(ws, case['weights']):
        close(got, want, tol)
    for got, want in zip(vs, case['var']):
        close(got, want)
    if '_mp_' in op:
        # NOTE: MXNet's mp LAMB takes the weight norm in reduced precision; mxcy uses the
        # float16 weight's norm, 1e-5 relative from MXNet's (float32's is 3e-5 away)
        for got, want in zip(w32, case['weights32']):
            close(got, want, 2e-5 if 'lamb' in op else 1e-6)


@pytest.mark.parametrize('case', cases('group_adagrad_update'))
def test_group_adagrad_update_matches_mxnet(case):
    w, g, h = (A(x) for x in case['ins'])
    mx.nd.contrib.group_adagrad_update(w, g, h, out=w, **case['params'])
    close(w, case['weight'])
    close(h, case['history'])


def test_multi_lars_matches_mxnet():
    case = cases('multi_lars')[0]
    out = mx.nd.multi_lars(*(A(x) for x in case['ins']), **case['params'])
    close(out, case['out'])


def test_symbol_forms_infer_and_run():
    w, g, m, v = (mx.sym.var(n) for n in 'wgmv')
    s = mx.sym.contrib.adamw_update(w, g, m, v, 0.5, lr=0.1, eta=1.0)
    assert s.infer_shape(w=(2, 3))[1] == [(2, 3)]
    s = mx.sym.contrib.group_adagrad_update(w, g, mx.sym.var('h'), lr=0.1)
    assert s.infer_shape(w=(2, 3))[0] == [(2, 3), (2, 3), (2, 1)]
    s = mx.sym.multi_lars(w, g, m, v, eta=0.01, eps=1e-3, rescale_grad=0.5)
    case = cases('multi_lars')[0]
    ex = s.bind(mx.cpu(), dict(zip('wgmv', (A(x) for x in case['ins']))))
    close(ex.forward()[0], case['out'])


def test_bad_inputs_name_op_and_argument():
    w, g = mx.nd.ones((2, 3)), mx.nd.ones((2, 3))
    with pytest.raises(MXNetError, match=r"_adamw_update.*'mean'.*\(2, 3\).*\(3, 2\)"):
        mx.nd.contrib.adamw_update(w, g, mx.nd.ones((3, 2)), mx.nd.ones((2, 3)), 1.0,
                                   lr=0.1, eta=1.0)
    with pytest.raises(MXNetError, match=r"group_adagrad_update.*'history'.*\(2, 1\)"):
        mx.nd.contrib.group_adagrad_update(w, g, mx.nd.ones((2, 3)), lr=0.1)
    with pytest.raises(MXNetError, match=r"_multi_lamb_update.*'wds'.*num_weights=2"):
        mx.nd.contrib.multi_lamb_update([w, w], [g, g], [w, w], [w, w], (1, 1),
                                        (0.1, 0.1), (0.1,))
    with pytest.raises(MXNetError, match=r"multi_lars.*'weights_sum_sq'.*\(3,\).*\(2,\)"):
        mx.nd.multi_lars(mx.nd.ones(3), mx.nd.ones(2), mx.nd.ones(3), mx.nd.ones(3),
                         eta=1.0, eps=0.0)


def test_reset_arrays_symbol_and_op():
    from mxcy.operator import get_op
    s = mx.sym.reset_arrays(mx.sym.var('a'), mx.sym.var('b'), num_arrays=2)
    assert s.list_outputs() == []
    x, y = mx.nd.ones((2, 3)), mx.nd.ones(4)
    get_op('reset_arrays').forward(None, False, [], [x, y], [], [])
    assert not x.asnumpy().any() and not y.asnumpy().any()
