"""mx.io.LibSVMIter (dense batches), with the values MXNet 1.9.1 gives for the same files
(recorded from its LibSVMIter: its CSR batches as dense lists)."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.io.libsvm_iter import split_part

DATA = b'1 0:1.5 3:2\n0 1:-1\n2 2:3 4:0.5\n1\n0 0:7 4:1\n'
LABELS = b'0 0:1 1:2\n1 1:3\n0 0:4\n1 1:5\n0 0:6\n'
ROWS = [[1.5, 0, 0, 2, 0], [0, -1, 0, 0, 0], [0, 0, 3, 0, 0.5], [0, 0, 0, 0, 0],
        [7, 0, 0, 0, 1]]


@pytest.fixture
def files(tmp_path):
    (tmp_path / 'd.libsvm').write_bytes(DATA)
    (tmp_path / 'l.libsvm').write_bytes(LABELS)
    return str(tmp_path / 'd.libsvm'), str(tmp_path / 'l.libsvm')


def batches(it):
    return [(b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad,
             [int(i) for i in b.index]) for b in it]


def test_batches_labels_and_round_batch_match_mxnet(files):
    it = mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5,), batch_size=2)
    assert isinstance(it, mx.io.MXDataIter)
    assert [(d.name, d.shape) for d in it.provide_data] == [('data', (2, 5))]
    assert [(d.name, d.shape) for d in it.provide_label] == [('softmax_label', (2,))]
    expected = [(ROWS[0:2], [1, 0], 0, [0, 1]), (ROWS[2:4], [2, 1], 0, [2, 3]),
                ([ROWS[4], ROWS[0]], [0, 1], 1, [4, 0])]
    assert batches(it) == expected
    it.reset()
    assert batches(it) == expected          # every epoch starts at the first sample
    big = mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5,), batch_size=8)
    assert batches(big) == [(ROWS + ROWS[:3], [1, 0, 2, 1, 0, 1, 0, 2], 3,
                             [0, 1, 2, 3, 4, 0, 1, 2])]
    zeros = mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5,), batch_size=2,
                             round_batch=False)
    assert batches(zeros)[-1] == ([ROWS[4], [0] * 5], [0, 0], 1, [4, 0])


def test_label_file_gives_label_shape(files):
    it = mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5,), label_libsvm=files[1],
                          label_shape=(2,), batch_size=2)
    assert it.provide_label[0].shape == (2, 2)
    assert [b[1] for b in batches(it)] == [[[1, 2], [0, 3]], [[4, 0], [0, 5]],
                                           [[6, 0], [1, 2]]]


@pytest.mark.parametrize('num_parts, part_index, rows', [
    (2, 0, [0, 1, 2]), (2, 1, [3, 4]), (3, 0, [0, 1]), (3, 1, [2]), (3, 2, [3, 4])])
def test_parts_split_by_bytes_as_mxnet(files, num_parts, part_index, rows):
    it = mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5,), batch_size=1,
                          num_parts=num_parts, part_index=part_index)
    assert [b[0][0] for b in batches(it)] == [ROWS[r] for r in rows]
    parts = [split_part(DATA, num_parts, p) for p in range(num_parts)]
    assert b''.join(parts) == DATA          # the parts tile the file


def test_directory_dtype_and_hints(tmp_path):
    (tmp_path / 'dir').mkdir()
    (tmp_path / 'dir' / 'b.txt').write_bytes(b'0 4:1')        # no final newline
    (tmp_path / 'dir' / 'a.txt').write_bytes(b'1 0:2\n')
    it = mx.io.LibSVMIter(data_libsvm=str(tmp_path / 'dir'), data_shape=(5,), batch_size=2,
                          dtype='float64', prefetch_buffer=2, ctx='cpu')
    batch = it.next()
    assert batch.data[0].dtype == np.float64 and batch.label[0].dtype == np.float32
    assert batch.data[0].asnumpy().tolist() == [[2, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
    assert batch.label[0].asnumpy().tolist() == [1, 0]


def test_bad_input_names_the_problem(files, tmp_path):
    with pytest.raises(ValueError, match=r"line 1 .*index 3 is outside \[0, 3\)"):
        mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(3,), batch_size=2)
    bad = tmp_path / 'bad.libsvm'
    bad.write_bytes(b'1 0:1\n1 x:2\n')
    with pytest.raises(ValueError, match="line 2 .*not 'label index:value"):
        mx.io.LibSVMIter(data_libsvm=str(bad), data_shape=(3,), batch_size=2)
    with pytest.raises(ValueError, match='part_index must be in'):
        mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5,), batch_size=2, num_parts=2,
                         part_index=2)
    with pytest.raises(ValueError, match=r'data_shape must be \(num_features,\)'):
        mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5, 1), batch_size=2)
    with pytest.raises(ValueError, match='label_shape .* needs label_libsvm'):
        mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5,), label_shape=(2,),
                         batch_size=2)
    with pytest.raises(TypeError, match='dtype must be None or one of'):
        mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5,), batch_size=2, dtype='int8')
    with pytest.raises(ValueError, match="ctx must be 'cpu' or 'gpu'"):
        mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5,), batch_size=2, ctx='tpu')
    with pytest.raises(FileNotFoundError, match='data_libsvm'):
        mx.io.LibSVMIter(data_libsvm=str(tmp_path / 'none'), data_shape=(5,), batch_size=2)
    with pytest.raises(ValueError, match='has 5 samples but label_libsvm'):
        short = tmp_path / 'short'
        short.write_bytes(b'0 0:1\n')
        mx.io.LibSVMIter(data_libsvm=files[0], data_shape=(5,), label_libsvm=str(short),
                         label_shape=(2,), batch_size=2)
