"""Tensor operators inside whole symbol graphs: inference through several nodes (both
directions where the operators allow it), simple_bind, forward and backward against a
NumPy transcription of the graph, grad_req='add', JSON round trips of the parameters."""
import numpy as np
import pytest

import mxcy as mx
from mxcy.base import MXNetError

RNG = np.random.default_rng(21)


def test_reshape_of_fully_connected_infers_shapes():
    data = mx.sym.Variable('data')
    fc = mx.sym.FullyConnected(data, num_hidden=6, name='fc')
    net = mx.sym.Reshape(fc, shape=(0, -1, 2), name='r')
    args, outs, aux = net.infer_shape(data=(4, 5))
    assert dict(zip(net.list_arguments(), args)) == {'data': (4, 5), 'fc_weight': (6, 5),
                                                      'fc_bias': (6,)}
    assert outs == [(4, 3, 2)] and aux == []
    flat = mx.sym.Flatten(mx.sym.transpose(net, axes=(0, 2, 1)))
    assert flat.infer_shape(data=(4, 5))[1] == [(4, 6)]


def test_slice_channel_concat_graph_forward_backward():
    """loss = sum(square(concat(part2, part0)), axis=1): part1 is unused, so its head
    gradient is zero and the middle columns of d data must be 0."""
    data = mx.sym.Variable('data')
    parts = mx.sym.SliceChannel(data, num_outputs=3, axis=1, name='sp')
    assert parts.list_outputs() == ['sp_output0', 'sp_output1', 'sp_output2']
    cat = mx.sym.Concat(parts[2], parts[0], dim=1, name='cat')
    assert cat.list_arguments() == ['data']
    loss = mx.sym.sum(mx.sym.square(cat), axis=1, name='loss')
    exe = loss.simple_bind(mx.cpu(), data=(4, 6))
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    exe.arg_dict['data'][:] = x
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, (np.concatenate([x[:, 4:], x[:, :2]], 1) ** 2).sum(1),
                               rtol=1e-6)
    head = RNG.standard_normal(4).astype(np.float32)
    exe.backward(mx.nd.array(head))
    want = 2 * x * head[:, None]
    want[:, 2:4] = 0
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), want, rtol=1e-6)


def test_embedding_dot_softmax_graph_with_grad_req_add():
    """Embedding -> mean over the sequence -> dot -> log_softmax, checked against NumPy;
    with grad_req='add' two backward passes double every gradient."""
    idx = mx.sym.Variable('idx')
    w = mx.sym.Variable('w')
    emb = mx.sym.Embedding(idx, input_dim=5, output_dim=3, name='emb')
    pooled = mx.sym.mean(emb, axis=1, name='pool')
    logits = mx.sym.dot(pooled, w, name='logits')
    out = mx.sym.log_softmax(logits, axis=-1, name='out')
    args, outs, _ = out.infer_shape(idx=(2, 4), w=(3, 6))
    assert dict(zip(out.list_arguments(), args))['emb_weight'] == (5, 3)
    assert outs == [(2, 6)]
    exe = out.simple_bind(mx.cpu(), grad_req={'idx': 'null', 'emb_weight': 'add', 'w': 'add'},
                          idx=(2, 4), w=(3, 6))
    ids = np.array([[0, 1, 1, 4], [3, 3, 2, 0]], dtype=np.float32)
    table = RNG.standard_normal((5, 3)).astype(np.float32)
    wv = RNG.standard_normal((3, 6)).astype(np.float32)
    exe.arg_dict['idx'][:] = ids
    exe.arg_dict['emb_weight'][:] = table
    exe.arg_dict['w'][:] = wv
    for g in exe.grad_dict.values():
        g[:] = 0
    head = RNG.standard_normal((2, 6)).astype(np.float32)
    y = exe.forward(is_train=True)[0].asnumpy()
    # NumPy transcription of the graph and its gradient
    p = table[ids.astype(int)].mean(1)
    z = p @ wv
    ref = z - z.max(1, keepdims=True)
    ref = ref - np.log(np.exp(ref).sum(1, keepdims=True))
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    dz = head - np.exp(ref) * head.sum(1, keepdims=True)
    dw = p.T @ dz
    dp = dz @ wv.T
    dtable = np.zeros_like(table)
    np.add.at(dtable, ids.astype(int).reshape(-1), np.repeat(dp / 4, 4, axis=0))
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward(mx.nd.array(head))
    np.testing.assert_allclose(exe.grad_dict['w'].asnumpy(), 2 * dw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(exe.grad_dict['emb_weight'].asnumpy(), 2 * dtable, rtol=1e-5,
                               atol=1e-6)


def test_stack_infers_its_other_arguments():
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    net = mx.sym.stack(a, b, axis=1, name='st')
    args, outs, _ = net.infer_shape(a=(2, 3))
    assert args == [(2, 3), (2, 3)] and outs == [(2, 2, 3)]


def test_graph_shape_error_names_node_and_argument():
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    net = mx.sym.Concat(a, b, dim=1, name='joined')
    with pytest.raises(MXNetError, match=r"node 'joined' \(operator Concat\).*'arg1'.*"
                                         r"given \(3, 4\)"):
        net.infer_shape(a=(2, 3), b=(3, 4))


def test_parameters_survive_json():
    data = mx.sym.Variable('data')
    net = mx.sym.slice(data, begin=(None, 1), end=(None, -1), name='s')
    net = mx.sym.Reshape(net, shape=(0, -1), name='r')
    net = mx.sym.sum(net, axis=(1,), keepdims=True, name='total')
    again = mx.sym.load_json(net.tojson())
    assert again.infer_shape(data=(2, 5, 3)) == net.infer_shape(data=(2, 5, 3))
    assert net.infer_shape(data=(2, 5, 3))[1] == [(2, 1)]
