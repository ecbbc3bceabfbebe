"""examples/numpy_interface.py runs end to end for a few batches (CI smoke test)."""
import os
import subprocess
import sys

EXAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'examples')


def test_numpy_interface_example_learns():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        os.path.abspath(os.path.join(EXAMPLES, '..')), os.environ.get('PYTHONPATH')])))
    proc = subprocess.run([sys.executable, 'numpy_interface.py', '--linreg-epochs', '2',
                           '--num-epochs', '1', '--max-batches', '40', '--batch-size', '32'],
                          capture_output=True, text=True, timeout=300, env=env, cwd=EXAMPLES)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    linreg = [float(ln.split('loss')[1]) for ln in lines if ln.startswith('epoch 2, loss')]
    assert linreg and linreg[0] < 1e-3                 # from ~30 at the start
    w_err = [ln for ln in lines if ln.startswith('error in estimating w')][0]
    assert all(abs(float(v)) < 0.05 for v in w_err.split('[')[1].rstrip(']').split())
    accuracy = float([ln for ln in lines if ln.startswith('test accuracy:')][-1].split(':')[1])
    assert accuracy > 0.2                               # chance is 0.1, after 40 batches
