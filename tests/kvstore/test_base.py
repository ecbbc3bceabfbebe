"""mx.kv.KVStoreBase: the interface of the stores, registration and create by name."""
import pytest

import mxcy as mx


def test_local_store_is_a_kvstorebase():
    store = mx.kv.create('local')
    assert isinstance(store, mx.kv.KVStoreBase)
    assert store.is_capable(mx.kv.KVStoreBase.OPTIMIZER) and mx.kv.KVStoreBase.OPTIMIZER == \
        'optimizer'


def test_register_and_create_a_user_store():
    class NoOpStore(mx.kv.KVStoreBase):
        def broadcast(self, key, value, out, priority=0):
            out[:] = value

        def pushpull(self, key, value, out=None, priority=0):
            if out is not None:
                out[:] = value

        def is_capable(self, capability):
            return False

        def set_optimizer(self, optimizer):
            pass

        def save_optimizer_states(self, fname, dump_optimizer=False):
            pass

        def load_optimizer_states(self, fname):
            pass

        type = 'noopstore'
        rank = 0
        num_workers = 1
    try:
        assert mx.kv.KVStoreBase.register(NoOpStore) is NoOpStore
        store = mx.kv.create('NoOpStore')
        assert isinstance(store, NoOpStore)
        out = mx.nd.zeros((2,))
        store.broadcast('w', mx.nd.ones((2,)), out)
        assert out.asnumpy().tolist() == [1, 1]
        with pytest.raises(ValueError, match="'noopstore' is already registered"):
            mx.kv.KVStoreBase.register(NoOpStore)
    finally:
        mx.kv.KVStoreBase.kv_registry.pop('noopstore', None)


def test_incomplete_store_and_bad_register_raise():
    class Half(mx.kv.KVStoreBase):
        def broadcast(self, key, value, out, priority=0):
            pass
    with pytest.raises(TypeError, match='abstract'):
        Half()
    with pytest.raises(TypeError, match='expected a subclass of KVStoreBase'):
        mx.kv.KVStoreBase.register(dict)
