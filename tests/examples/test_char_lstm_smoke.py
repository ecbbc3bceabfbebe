"""examples/char_lstm.py runs a few batches (fixed length and bucketing): perplexity falls
between the first and last Speedometer lines, a checkpoint is written, and sampling from
it prints generated text."""
import os
import re
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'examples')


def run_char_lstm(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        os.path.abspath(os.path.join(EXAMPLES, '..')), os.environ.get('PYTHONPATH')])))
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, 'char_lstm.py'), *args],
                          capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=EXAMPLES, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def speedometer_perplexities(output):
    return [float(v) for v in re.findall(r'Speed: [\d.]+ samples/sec\tperplexity=([\d.]+)',
                                         output)]


@pytest.mark.parametrize('mode', [[], ['--bucketing'], ['--fused']],
                         ids=['fixed', 'bucketing', 'fused'])
def test_char_lstm_trains_and_samples(mode, tmp_path):
    prefix = str(tmp_path / 'char')
    out = run_char_lstm('--max-chars', '40000', '--max-batches', '16', '--disp-batches', '4',
                        '--num-hidden', '128', '--num-embed', '64', '--model-prefix', prefix,
                        '--sample', '120', *mode)
    values = speedometer_perplexities(out)
    assert len(values) >= 3, out[-2000:]
    assert values[-1] < values[0], values
    assert os.path.exists(prefix + '-symbol.json') and os.path.exists(prefix + '-0001.params')
    sample = out.split('----- sample (120 characters')[1].split('\n', 1)[1]
    sample = sample.rsplit('-----', 1)[0]
    assert sample.startswith('def ') and len(sample.rstrip('\n')) >= 120
    # sampling alone, from the checkpoint written above
    again = run_char_lstm('--num-epochs', '0', '--model-prefix', prefix, '--sample', '40',
                          '--prime', 'import ')
    assert '----- sample (40 characters' in again and 'import ' in again
