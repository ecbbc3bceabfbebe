"""mx.io.MXDataIter: the base of MNISTIter / CSVIter / LibSVMIter, debug_skip_load, and
the arguments MXNet 1.9.1's C++ iterators take (prefetch_buffer, ctx, dtype=None)."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.io.mnist import write_idx


@pytest.fixture
def mnist(tmp_path):
    rng = np.random.RandomState(0)
    image = write_idx(str(tmp_path / 'img'), rng.randint(0, 256, (10, 28, 28)).astype('u1'))
    label = write_idx(str(tmp_path / 'lab'), (np.arange(10) % 10).astype('u1'))
    return image, label


@pytest.fixture
def csv(tmp_path):
    (tmp_path / 'd.csv').write_text('1,2\n3,4\n5,6\n')
    return str(tmp_path / 'd.csv')


def test_file_iterators_are_mxdataiters_and_it_is_not_built_directly(mnist, csv):
    assert isinstance(mx.io.MNISTIter(image=mnist[0], label=mnist[1]), mx.io.MXDataIter)
    assert isinstance(mx.io.CSVIter(data_csv=csv, data_shape=(2,), batch_size=2),
                      mx.io.MXDataIter)
    assert not isinstance(mx.io.NDArrayIter(np.zeros((2, 2))), mx.io.MXDataIter)
    with pytest.raises(TypeError, match='create an iterator by name'):
        mx.io.MXDataIter(None)


def test_debug_skip_load_repeats_the_first_batch(csv):
    it = mx.io.CSVIter(data_csv=csv, data_shape=(2,), batch_size=2)
    it.debug_skip_load()
    first = it.next()
    for _ in range(5):                      # no StopIteration: the same batch forever
        assert it.next() is first
    assert first.data[0].asnumpy().tolist() == [[1, 2], [3, 4]]


def test_mnist_takes_mxnet_arguments(mnist):
    image, label = mnist
    it = mx.io.MNISTIter(image=image, label=label, batch_size=4, shuffle=False, flat=True,
                         data_shape=(784,), seed=3, silent=True, num_parts=1, part_index=0,
                         prefetch_buffer=8, ctx='cpu', dtype=None)
    assert it.provide_data[0].shape == (4, 784) and it.provide_data[0].dtype == np.float32
    # as in MXNet, data_shape does not reshape: the sample shape comes from flat
    plain = mx.io.MNISTIter(image=image, label=label, batch_size=4, data_shape=(784,))
    assert plain.provide_data[0].shape == (4, 1, 28, 28)
    with pytest.raises(ValueError, match=r'data_shape \(100,\) must hold 28x28 = 784'):
        mx.io.MNISTIter(image=image, label=label, data_shape=(100,))
    with pytest.raises(ValueError, match='prefetch_buffer must be a non-negative int'):
        mx.io.MNISTIter(image=image, label=label, prefetch_buffer=-1)
    with pytest.raises(TypeError, match='unexpected keyword'):
        mx.io.MNISTIter(image=image, label=label, no_such_argument=1)


def test_csv_dtype_none_and_directory(csv, tmp_path):
    it = mx.io.CSVIter(data_csv=csv, data_shape=(2,), batch_size=3, dtype=None,
                       prefetch_buffer=0, ctx='gpu')
    assert it.next().data[0].dtype == np.float32
    folder = tmp_path / 'parts'
    folder.mkdir()
    (folder / '1.csv').write_text('7,8\n')
    (folder / '0.csv').write_text('1,2\n3,4')
    it = mx.io.CSVIter(data_csv=str(folder), data_shape=(2,), batch_size=3)
    assert it.next().data[0].asnumpy().tolist() == [[1, 2], [3, 4], [7, 8]]
