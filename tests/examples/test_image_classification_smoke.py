"""examples/image_classification.py end to end on a few generated images (CI smoke test)."""
import os

from tests.examples.test_examples_smoke import run_example


def test_image_classification_trains_from_rec(tmp_path):
    out = run_example('image_classification.py', '--per-class', '24', '--num-epochs', '2',
                      '--max-batches', '4', '--workdir', str(tmp_path))
    assert os.path.getsize(tmp_path / 'train.rec') > 0
    assert 'ImageRecordIter epoch 1' in out and 'ImageRecordDataset epoch' in out
    acc = float([ln for ln in out.splitlines() if ln.startswith('val accuracy:')][-1]
                .split(':')[1])
    assert acc > 0.5      # three classes: chance is 1/3
