"""examples/frontend_mnist.py runs end to end for a few batches on the offline digits."""
import os
import subprocess
import sys

EXAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'examples')


def test_frontend_mnist_trains_a_few_batches(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        os.path.abspath(os.path.join(EXAMPLES, '..')), os.environ.get('PYTHONPATH')])))
    proc = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, 'frontend_mnist.py'), '--num-epochs', '2',
         '--max-batches', '8', '--model-prefix', str(tmp_path / 'model')],
        capture_output=True, text=True, timeout=300, check=False, env=env, cwd=EXAMPLES)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "parameters: ['dense0_weight', 'dense0_bias'" in out
    line = [ln for ln in out.splitlines() if ln.startswith('test accuracy:')][-1]
    assert float(line.split(':')[1]) > 0.4          # chance is 0.1; 16 SGD steps reach ~0.6
    assert 'reloaded accuracy' in out
    assert os.path.exists(tmp_path / 'model-0002.params')
