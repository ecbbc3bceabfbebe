"""BucketingModule: one Module per bucket sharing the SAME parameter arrays, a shared
optimizer, forward picking data_batch.bucket_key, training a tiny sequence task,
checkpoints; and Module.bind(shared_module=...) sharing parameters."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError

VOCAB, EMBED, HIDDEN = 7, 6, 12


def sym_gen(seq_len):
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('softmax_label')
    embed = mx.sym.Embedding(data, input_dim=VOCAB, output_dim=EMBED, name='embed')
    cell = mx.rnn.LSTMCell(HIDDEN, prefix='lstm_')
    outputs, _ = cell.unroll(seq_len, embed, merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, HIDDEN)),
                                 num_hidden=VOCAB, name='pred')
    label = mx.sym.Reshape(label, shape=(-1,))
    out = mx.sym.SoftmaxOutput(pred, label, name='softmax', use_ignore=True, ignore_label=0)
    return out, ('data',), ('softmax_label',)


def counting_sentences(n, rng):
    """Sequences k, k+1, ... (mod 6, ids 1..6): each next token follows from the last."""
    out = []
    for _ in range(n):
        length = int(rng.choice([3, 4, 6, 8]))
        start = int(rng.integers(6))
        out.append([(start + i) % 6 + 1 for i in range(length)])
    return out


def bound_module(buckets=(4, 8), batch_size=8):
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=max(buckets))
    mod.bind(data_shapes=[('data', (batch_size, max(buckets)))],
             label_shapes=[('softmax_label', (batch_size, max(buckets)))])
    mod.init_params(mx.init.Xavier())
    return mod


def batch_for(key, rng, batch_size=8):
    data = rng.integers(1, VOCAB, (batch_size, key)).astype(np.float32)
    label = np.roll(data, -1, axis=1)
    return mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(label)], bucket_key=key,
                           provide_data=[mx.io.DataDesc('data', data.shape)],
                           provide_label=[mx.io.DataDesc('softmax_label', label.shape)])


def test_training_a_tiny_sequence_task():
    np.random.seed(0)
    rng = np.random.default_rng(0)
    it = mx.rnn.BucketSentenceIter(counting_sentences(320, rng), batch_size=16,
                                   buckets=[4, 8], invalid_label=0)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=it.default_bucket_key)
    metric = mx.metric.Perplexity(ignore_label=0)
    mod.fit(it, num_epoch=6, eval_metric=metric, optimizer='adam',
            optimizer_params={'learning_rate': 0.03}, initializer=mx.init.Xavier())
    assert sorted(mod._buckets) == [4, 8]
    (_, perplexity), = mod.score(it, mx.metric.Perplexity(ignore_label=0))
    assert perplexity < 1.3          # 6 equally likely tokens would give 6.0
    for name in mod._buckets[8]._param_names:
        assert mod._buckets[4]._exec.arg_dict[name] is mod._buckets[8]._exec.arg_dict[name]


def test_buckets_share_parameter_and_gradient_arrays():
    rng = np.random.default_rng(1)
    mod = bound_module()
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5})
    mod.forward(batch_for(4, rng))
    small, big = mod._buckets[4], mod._buckets[8]
    assert mod._curr_module is small
    for name in big._param_names:
        assert small._exec.arg_dict[name] is big._exec.arg_dict[name], name
        assert small._exec.grad_dict[name] is big._exec.grad_dict[name], name
    assert small._updater is big._updater and small._optimizer is big._optimizer
    assert small._param_index == big._param_index
    # train on bucket 4 only: bucket 8's executor sees the new values
    before = {n: a.asnumpy().copy() for n, a in big._exec.arg_dict.items()
              if n in big._param_names}
    for _ in range(3):
        mod.forward_backward(batch_for(4, rng))
        mod.update()
    args, _ = mod.get_params()
    for name in big._param_names:
        now = big._exec.arg_dict[name].asnumpy()
        np.testing.assert_array_equal(now, args[name].asnumpy())
        assert not np.array_equal(now, before[name]), name


def test_forward_on_a_bucket_matches_a_fresh_module_with_the_same_params():
    rng = np.random.default_rng(2)
    mod = bound_module()
    batch4, batch8 = batch_for(4, rng), batch_for(8, rng)
    mod.forward(batch4, is_train=False)
    out4 = mod.get_outputs()[0].asnumpy().copy()
    mod.forward(batch8, is_train=False)     # reuses the memory the bucket-4 graph shares
    out8 = mod.get_outputs()[0].asnumpy().copy()
    mod.forward(batch4, is_train=False)
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), out4)
    args, aux = mod.get_params()
    for key, batch, out in ((4, batch4, out4), (8, batch8, out8)):
        symbol, data_names, label_names = sym_gen(key)
        fresh = mx.mod.Module(symbol, data_names, label_names)
        fresh.bind(batch.provide_data, batch.provide_label, for_training=False)
        fresh.set_params(args, aux)
        fresh.forward(batch, is_train=False)
        np.testing.assert_allclose(fresh.get_outputs()[0].asnumpy(), out, rtol=1e-6)
    assert mod.output_shapes == [('softmax_output', (32, VOCAB))]
    assert mod.data_names == ['data'] and mod.symbol is mod._buckets[4].symbol


def test_set_params_reaches_every_bucket():
    rng = np.random.default_rng(3)
    mod = bound_module()
    mod.forward(batch_for(4, rng))
    args, aux = mod.get_params()
    args = {k: mx.nd.ones(v.shape) * 0.25 for k, v in args.items()}
    mod.set_params(args, aux)
    for bucket in mod._buckets.values():
        np.testing.assert_array_equal(bucket._exec.arg_dict['pred_weight'].asnumpy(),
                                      np.full((VOCAB, HIDDEN), 0.25, np.float32))


def test_checkpoint_round_trip(tmp_path):
    rng = np.random.default_rng(4)
    mod = bound_module()
    batch = batch_for(4, rng)
    mod.forward(batch, is_train=False)
    want = mod.get_outputs()[0].asnumpy().copy()
    prefix = str(tmp_path / 'bucket')
    mod.save_checkpoint(prefix, 3)
    loaded = mx.mod.BucketingModule.load(prefix, 3, sym_gen=sym_gen, default_bucket_key=8)
    loaded.bind(data_shapes=[('data', (8, 8))], label_shapes=[('softmax_label', (8, 8))],
                for_training=False)
    loaded.forward(batch, is_train=False)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy(), want, rtol=1e-6)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match='default_bucket_key must be given'):
        mx.mod.BucketingModule(sym_gen)
    with pytest.raises(ValueError, match=r"data names \['text'\] are not arguments"):
        mx.mod.BucketingModule(lambda k: (sym_gen(k)[0], ('text',), ('softmax_label',)), 4)
    with pytest.raises(TypeError, match='must return \\(symbol, data_names, label_names\\)'):
        mx.mod.BucketingModule(lambda k: sym_gen(k)[0], 4)

    def extra_param_gen(key):
        sym, data, label = sym_gen(key)
        if key == 4:
            sym = mx.sym.FullyConnected(sym, num_hidden=3, name='extra')
        return sym, data, label
    mod = mx.mod.BucketingModule(extra_param_gen, default_bucket_key=8)
    mod.bind([('data', (8, 8))], [('softmax_label', (8, 8))])
    mod.init_params()
    with pytest.raises(MXNetError, match=r"bucket 4 has parameters \['extra_weight'"):
        mod.forward(batch_for(4, np.random.default_rng(5)))
    unbound = mx.mod.BucketingModule(sym_gen, default_bucket_key=8)
    with pytest.raises(MXNetError, match='bind'):
        unbound.forward(batch_for(8, np.random.default_rng(5)))


def test_module_bind_with_shared_module_shares_parameters():
    sym8, _, _ = sym_gen(8)
    sym4, _, _ = sym_gen(4)
    owner = mx.mod.Module(sym8)
    owner.bind([('data', (8, 8))], [('softmax_label', (8, 8))])
    owner.init_params(mx.init.Xavier())
    other = mx.mod.Module(sym4)
    other.bind([('data', (8, 4))], [('softmax_label', (8, 4))], shared_module=owner)
    for name in owner._param_names:
        assert other._exec.arg_dict[name] is owner._exec.arg_dict[name]
    assert other._exec.arg_dict['data'] is not owner._exec.arg_dict['data']
    wrong = mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=VOCAB,
                                                name='pred'), label_names=None)
    with pytest.raises(MXNetError, match="parameter 'pred_weight' is \\(7, 12\\)"):
        wrong.bind([('data', (8, 5))], shared_module=owner)
