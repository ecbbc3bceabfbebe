"""Every run-time SIMD path of the packed GEMM, the depthwise convolution, the pools and the
small-batch FullyConnected (mxcy/_isa.h) on this one machine: a child process capped with
MXCY_ISA_CAP=avx2 or =none computes convolutions, pools, small-batch products and a fused
LSTM, and must agree with this process (the widest path the CPU has)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

CHILD = r'''
import json, sys
import numpy as np
import mxcy as mx
from mxcy import _conv
rng = np.random.default_rng(0)
out = {}
for name, (xs, ws, pad, groups) in {
        'lenet2': ((5, 20, 12, 12), (50, 20, 5, 5), (0, 0), 1),
        'padded': ((3, 16, 9, 11), (12, 8, 3, 3), (1, 2), 2),
        'depthwise': ((2, 20, 13, 19), (20, 1, 3, 3), (1, 1), 20)}.items():
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    args = dict(stride=(1, 1), pad=pad, dilate=(1, 1), groups=groups)
    y = _conv.conv_fwd_np(x, w, b, **args)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    out[name] = [a.tolist() for a in (y,) + _conv.conv_bwd_np(x, w, dy, True, **args)]
x = rng.standard_normal((2, 3, 10, 42)).astype(np.float32)
y = _conv.pool_fwd_np(x, (2, 2), (2, 2), (0, 0), 5, 21, 0)
dy = rng.standard_normal(y.shape).astype(np.float32)
out['pool'] = [y.tolist(), _conv.pool_bwd_np(x, dy, (2, 2), (2, 2), (0, 0), 0).tolist()]
for ptype in (0, 1):                          # the row loops of _pool_rows.h
    y = _conv.pool_fwd_np(x, (3, 3), (2, 2), (1, 1), 5, 21, ptype, False)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    out[f'pool_rows{ptype}'] = [y.tolist(), _conv.pool_bwd_np(x, dy, (3, 3), (2, 2), (1, 1),
                                                                ptype, False).tolist()]
from mxcy import _gemv
xf = rng.standard_normal((3, 301)).astype(np.float32)
wf = rng.standard_normal((70, 301)).astype(np.float32)
out['gemv'] = [_gemv.fc_forward_np(xf, wf, wf[:, 0]).tolist()]
data = mx.sym.Variable('data')
params = mx.sym.Variable('p')
rnn = mx.sym.RNN(data, parameters=params, state_size=40, num_layers=1, mode='lstm',
                 state=mx.sym.Variable('h0'), state_cell=mx.sym.Variable('c0'))
exe = rnn.simple_bind(mx.cpu(), data=(6, 4, 24), grad_req='write')
for arr in exe.arg_arrays:
    arr[:] = rng.standard_normal(arr.shape).astype(np.float32) * 0.3
exe.forward(is_train=True)
exe.backward([mx.nd.ones(exe.outputs[0].shape)])
out['lstm'] = [exe.outputs[0].asnumpy().tolist(), exe.grad_dict['p'].asnumpy().tolist()]
json.dump(out, sys.stdout)
'''


def run_child(cap):
    env = dict(os.environ)
    if cap is None:
        env.pop('MXCY_ISA_CAP', None)
    else:
        env['MXCY_ISA_CAP'] = cap
    done = subprocess.run([sys.executable, '-c', CHILD], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def cpu_has(flag):
    try:
        with open('/proc/cpuinfo') as f:
            return f' {flag}' in f.read()
    except OSError:
        return False


@pytest.fixture(scope='module')
def widest():
    return run_child(None)


@pytest.mark.parametrize('cap', ['avx2', 'none'])
def test_capped_paths_agree_with_the_widest(cap, widest):
    if cap == 'avx2' and not (cpu_has('avx2') and cpu_has('fma')):
        pytest.skip('the CPU has no AVX2+FMA')
    capped = run_child(cap)
    assert capped.keys() == widest.keys()
    for name in widest:
        for got, ref in zip(capped[name], widest[name]):
            got, ref = np.asarray(got), np.asarray(ref)
            assert got.shape == ref.shape, name
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max(),
                                       err_msg=f'{name} with MXCY_ISA_CAP={cap}')
