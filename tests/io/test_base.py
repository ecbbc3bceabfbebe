"""DataDesc, DataBatch, the DataIter protocol and mx.io.create."""
import pickle

import numpy as np
import pytest

import mxcy as mx


def test_data_desc():
    desc = mx.io.DataDesc('data', (2, 3), np.float64, 'NTC')
    name, shape = desc
    assert (name, shape) == ('data', (2, 3)) and desc.dtype == np.float64
    assert desc.layout == 'NTC' and desc == ('data', (2, 3))
    assert repr(desc) == "DataDesc[data,(2, 3),<class 'numpy.float64'>,NTC]"
    default = mx.io.DataDesc('x', [4])
    assert default.shape == (4,) and default.dtype == np.float32 and default.layout == 'NCHW'
    assert mx.io.DataDesc.get_batch_axis('TNC') == 1
    assert mx.io.DataDesc.get_batch_axis(None) == 0
    descs = mx.io.DataDesc.get_list([('a', (1,)), ('b', (2,))], [('a', np.int32),
                                                                  ('b', np.float16)])
    assert [(d.name, d.shape, d.dtype) for d in descs] == [('a', (1,), np.int32),
                                                           ('b', (2,), np.float16)]
    back = pickle.loads(pickle.dumps(desc))
    assert back == desc and back.dtype == np.float64 and back.layout == 'NTC'


def test_data_batch():
    x = mx.nd.zeros((2, 3))
    batch = mx.io.DataBatch([x], [mx.nd.zeros((2,))], pad=1, index=np.array([0, 1]))
    assert batch.pad == 1 and batch.bucket_key is None and batch.provide_data is None
    assert str(batch) == 'DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]'
    with pytest.raises(TypeError, match='data must be a list'):
        mx.io.DataBatch(x)
    with pytest.raises(TypeError, match='label must be a list'):
        mx.io.DataBatch([x], x)


class Countdown(mx.io.DataIter):
    """A user-defined iterator written against the base protocol only."""

    def __init__(self, n):
        super().__init__(batch_size=1)
        self.n, self.left = n, n

    def reset(self):
        self.left = self.n

    def iter_next(self):
        self.left -= 1
        return self.left >= 0

    def getdata(self):
        return [mx.nd.full((1,), self.left)]

    def getlabel(self):
        return []


def test_user_iterator_protocol():
    it = Countdown(3)
    values = [b.data[0].asnumpy()[0] for b in it]
    assert values == [2, 1, 0]
    assert iter(it) is it
    it.reset_for_predict()                                  # defaults to reset()
    batch = it.next()
    assert batch.pad == 0 and batch.index is None and batch.label == []


def test_create():
    it = mx.io.NDArrayIter(np.zeros((2, 1)))
    assert mx.io.create(it) is it
    made = mx.io.create({'name': 'ndarrayiter', 'data': np.zeros((4, 1)), 'batch_size': 2})
    assert made.batch_size == 2
    with pytest.raises(ValueError, match='unknown iterator'):
        mx.io.create('NoSuchIter')
