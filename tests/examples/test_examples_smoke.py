"""Each example runs end to end for a few batches (CI smoke test), on the offline digits."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'examples')


def run_example(name, *args, timeout=300):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        os.path.abspath(os.path.join(EXAMPLES, '..')), os.environ.get('PYTHONPATH')])))
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                          capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=EXAMPLES)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def _accuracy(output):
    line = [ln for ln in output.splitlines() if ln.startswith('test accuracy:')][-1]
    return float(line.split(':')[1])


def test_async_ndarray_demo():
    out = run_example('async_ndarray_demo.py', '--size', '256')
    assert 'error surfaced at the wait: ZeroDivisionError' in out
    assert 'counter[0] = 20000' in out


@pytest.mark.parametrize('script', ['mnist_mlp.py', 'mnist_lenet.py'])
def test_mnist_examples_train_a_few_batches(script, tmp_path):
    out = run_example(script, '--num-epochs', '1', '--max-batches', '8',
                      '--model-prefix', str(tmp_path / 'model'))
    assert 'reloaded accuracy' in out
    assert os.path.exists(tmp_path / 'model-symbol.json')
    assert _accuracy(out) > 0.3     # better than chance (0.1) after 8 batches


@pytest.mark.parametrize('workers', ['0', '2'])
def test_gluon_mnist_trains_exports_and_reloads(workers, tmp_path):
    out = run_example('gluon_mnist.py', '--num-epochs', '2', '--max-batches', '10',
                      '--num-workers', workers, '--model-prefix', str(tmp_path / 'net'))
    assert 'SymbolBlock.imports and Module predict the same' in out
    accuracy = float(out.split('test accuracy')[-1].split()[0])
    assert accuracy > 0.3           # better than chance (0.1) after 20 batches
    assert os.path.exists(tmp_path / 'net-symbol.json')
