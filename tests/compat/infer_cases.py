"""The small graphs on which mxcy's shape/type inference is compared with MXNet 1.9.1's.

Shared by tools/mxnet_infer_fixtures.py (run with MXNet as `mx`, it records MXNet's
answers into infer_golden.json) and test_infer_golden.py (run with mxcy as `mx`, it
checks mxcy gives the same answers). Each graph is a function of the `mx` module, so one
definition builds the same graph in both libraries; each query is (kind, given), kind one
of 'shape', 'shape_partial', 'type', 'type_partial'.
"""


def _fc_softmax(mx):
    fc = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=4, name='fc')
    return mx.sym.SoftmaxOutput(fc, name='sm')


def _fc_nobias_noflatten(mx):
    return mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=4, no_bias=True,
                                 flatten=False, name='fc')


def _add(mx):
    return mx.sym.Variable('a') + mx.sym.Variable('b')


def _unary_chain(mx):
    return mx.sym.exp(mx.sym.Variable('d')) + mx.sym.Variable('f')


def _broadcast_add(mx):
    return mx.sym.broadcast_add(mx.sym.Variable('a'), mx.sym.Variable('b'), name='badd')


def _concat_then_add(mx):
    cat = mx.sym.Concat(mx.sym.Variable('a'), mx.sym.Variable('b'), dim=1, name='cat')
    return cat + mx.sym.Variable('c')


def _reshape(mx):
    return mx.sym.Reshape(mx.sym.Variable('data'), shape=(-1, 4), name='r')


def _reshape_then_add(mx):
    r = mx.sym.Reshape(mx.sym.Variable('data'), shape=(2, 6), name='r')
    return r + mx.sym.Variable('c')


def _softmax_label(mx):
    return mx.sym.SoftmaxOutput(mx.sym.Variable('data'), name='sm')


def _softmax_multi(mx):
    return mx.sym.SoftmaxOutput(mx.sym.Variable('data'), multi_output=True, name='sm')


def _regression(mx):
    return mx.sym.LinearRegressionOutput(mx.sym.Variable('data'), name='lro')


def _embedding(mx):
    return mx.sym.Embedding(mx.sym.Variable('data'), input_dim=10, output_dim=4, name='emb')


def _batchnorm(mx):
    return mx.sym.BatchNorm(mx.sym.Variable('data'), name='bn')


def _batchnorm_then_add(mx):
    return mx.sym.BatchNorm(mx.sym.Variable('data'), name='bn') + mx.sym.Variable('c')


def _conv(mx):
    return mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), num_filter=8,
                              name='conv')


def _conv_pool(mx):
    conv = mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3), num_filter=8,
                              pad=(1, 1), name='conv')
    return mx.sym.Pooling(conv, kernel=(2, 2), stride=(2, 2), pool_type='max', name='pool')


def _deconv(mx):
    return mx.sym.Deconvolution(mx.sym.Variable('data'), kernel=(2, 2), num_filter=3,
                                stride=(2, 2), name='deconv')


def _dot(mx):
    return mx.sym.dot(mx.sym.Variable('a'), mx.sym.Variable('b'), name='dot')


def _cast(mx):
    return mx.sym.Cast(mx.sym.Variable('data'), dtype='int32', name='cast')


def _var_attrs(mx):
    x = mx.sym.Variable('x', shape=(2, 3), dtype='float64')
    return x + mx.sym.Variable('y')


def _single_var(mx):
    return mx.sym.Variable('x')


def _group(mx):
    a = mx.sym.Variable('a')
    fc = mx.sym.FullyConnected(a, num_hidden=3, name='fc')
    return mx.sym.Group([fc, mx.sym.relu(a, name='r')])


def _layernorm(mx):
    return mx.sym.LayerNorm(mx.sym.Variable('data'), name='ln')


def _activation_flatten(mx):
    act = mx.sym.Activation(mx.sym.Variable('data'), act_type='relu', name='act')
    return mx.sym.Flatten(act, name='flat') + mx.sym.Variable('c')


def _transpose_then_add(mx):
    t = mx.sym.transpose(mx.sym.Variable('data'), axes=(1, 0), name='t')
    return t + mx.sym.Variable('c')


def _mul_shared(mx):
    a = mx.sym.Variable('a')
    b = a * mx.sym.Variable('b')
    return mx.sym.Group([b, a + mx.sym.Variable('c')])


def _sum_axis(mx):
    return mx.sym.sum(mx.sym.Variable('data'), axis=1, name='s')


def _leaky_prelu(mx):
    return mx.sym.LeakyReLU(mx.sym.Variable('data'), act_type='prelu', name='pr')


def _instancenorm(mx):
    return mx.sym.InstanceNorm(mx.sym.Variable('data'), name='inorm')


def _slice_channel(mx):
    return mx.sym.SliceChannel(mx.sym.Variable('data'), num_outputs=2, axis=1, name='sc')


def _where(mx):
    return mx.sym.where(mx.sym.Variable('cond'), mx.sym.Variable('x'), mx.sym.Variable('y'),
                        name='w')


def _embedding_fc(mx):
    emb = mx.sym.Embedding(mx.sym.Variable('data'), input_dim=10, output_dim=4, name='emb')
    return mx.sym.FullyConnected(emb, num_hidden=2, name='fc')


def _elemwise_sum(mx):
    return mx.sym.ElementWiseSum(mx.sym.Variable('a'), mx.sym.Variable('b'),
                                 mx.sym.Variable('c'), name='es')


def _rnn(mx):
    return mx.sym.RNN(mx.sym.Variable('data'), state_size=4, num_layers=1, mode='lstm',
                      name='rnn')


def _activation_then_add(mx):
    act = mx.sym.Activation(mx.sym.Variable('data'), act_type='tanh', name='act')
    drop = mx.sym.Dropout(act, p=0.5, name='drop')
    return drop + mx.sym.Variable('c')


def _swap_expand(mx):
    s = mx.sym.SwapAxis(mx.sym.Variable('data'), dim1=0, dim2=1, name='sw')
    e = mx.sym.expand_dims(s, axis=0, name='ed')
    return e + mx.sym.Variable('c')


def _stack(mx):
    return mx.sym.stack(mx.sym.Variable('a'), mx.sym.Variable('b'), axis=1, name='st')


def _broadcast_mul_chain(mx):
    m = mx.sym.broadcast_mul(mx.sym.Variable('a'), mx.sym.Variable('b'), name='bm')
    return mx.sym.sum(m, axis=0, name='s')


def _pool_fc(mx):
    pool = mx.sym.Pooling(mx.sym.Variable('data'), kernel=(2, 2), stride=(2, 2),
                          pool_type='avg', name='pool')
    return mx.sym.FullyConnected(pool, num_hidden=3, name='fc')


def _scalar_ops(mx):
    return (mx.sym.Variable('x') * 2 + 1) / mx.sym.Variable('y')


def _many(mx):
    return mx.sym.Group([mx.sym.Variable(f'v{i}') for i in range(12)])


S, SP, T, TP = 'shape', 'shape_partial', 'type', 'type_partial'

CASES = {
    'fc_softmax': (_fc_softmax, [
        (S, {}), (SP, {}), (S, {'data': (2, 3)}), (S, {'fc_weight': (4, 3)}),
        (SP, {'fc_weight': (4, 3)}), (SP, {'data': (0, 3)}), (S, {'data': (0, 3)}),
        (SP, {'sm_label': (2,)}), (S, {'data': (2, 3), 'sm_label': (2,)}),
        (T, {}), (TP, {}), (T, {'data': 'float64'}), (TP, {'fc_weight': 'float16'}),
        (T, {'sm_label': 'float32'})]),
    'fc_nobias_noflatten': (_fc_nobias_noflatten, [
        (S, {'data': (2, 5, 3)}), (SP, {'data': (2, 0, 3)}), (SP, {'fc_weight': (4, 3)}),
        (S, {'data': (2, 5, 0)})]),
    'add': (_add, [
        (S, {'a': (2, 3)}), (S, {'b': (2, 3)}), (SP, {}), (S, {}),
        (SP, {'a': (2, 0)}), (S, {'a': (2, 0)}), (S, {'a': (2, 0), 'b': (0, 3)}),
        (T, {'a': 'float16'}), (TP, {'b': 'int32'}), (T, {}), (TP, {})]),
    'unary_chain': (_unary_chain, [
        (SP, {'f': (2,)}), (S, {'f': (2,)}), (T, {'f': 'float64'}), (S, {'d': (4, 1)})]),
    'broadcast_add': (_broadcast_add, [
        (SP, {'a': (2, 1)}), (S, {'a': (2, 1), 'b': (1, 3)}), (S, {'a': (2, 3)}),
        (SP, {'a': (2, 3)}), (T, {'b': 'float64'})]),
    'concat_then_add': (_concat_then_add, [
        (S, {'a': (2, 3), 'b': (2, 4)}), (S, {'a': (2, 3), 'c': (2, 7)}),
        (SP, {'a': (2, 3)}), (SP, {'a': (2, 0), 'b': (2, 4), 'c': (2, 7)}),
        (S, {'c': (2, 7)}), (SP, {'c': (2, 7)}), (T, {'a': 'float16'})]),
    'reshape': (_reshape, [
        (S, {'data': (2, 6)}), (SP, {}), (S, {'data': (3, 4)})]),
    'reshape_then_add': (_reshape_then_add, [
        (S, {'c': (2, 6)}), (SP, {'c': (2, 6)}), (S, {'data': (3, 4)})]),
    'softmax_label': (_softmax_label, [
        (S, {'data': (2, 5)}), (SP, {'sm_label': (2,)}), (S, {'data': (2, 5, 3)}),
        (T, {'data': 'float64'}), (T, {'sm_label': 'int32'})]),
    'softmax_multi': (_softmax_multi, [
        (S, {'data': (2, 5, 3)}), (SP, {'sm_label': (2, 3)})]),
    'regression': (_regression, [
        (S, {'data': (2, 5)}), (S, {'lro_label': (2, 5)}), (SP, {'lro_label': (2, 5)})]),
    'embedding': (_embedding, [
        (S, {'data': (2, 3)}), (SP, {}), (T, {'data': 'int32'}), (T, {'data': 'float32'}),
        (TP, {'emb_weight': 'float16'}), (T, {'data': 'int32', 'emb_weight': 'float64'})]),
    'embedding_fc': (_embedding_fc, [
        (S, {'data': (2, 3)}), (SP, {'fc_weight': (2, 12)})]),
    'batchnorm': (_batchnorm, [
        (S, {'data': (2, 3, 4, 4)}), (SP, {}), (SP, {'bn_gamma': (3,)}),
        (S, {'bn_gamma': (3,)}), (T, {'data': 'float64'}), (T, {'data': 'float16'}),
        (TP, {'bn_gamma': 'float32'})]),
    'batchnorm_then_add': (_batchnorm_then_add, [
        (S, {'c': (2, 3, 4)}), (SP, {'c': (2, 3, 4)})]),
    'conv': (_conv, [
        (S, {'data': (1, 2, 5, 5)}), (SP, {}), (SP, {'conv_weight': (8, 2, 3, 3)}),
        (S, {'data': (1, 2, 2, 2)}), (SP, {'data': (0, 2, 5, 5)}),
        (T, {'data': 'float64'})]),
    'conv_pool': (_conv_pool, [
        (S, {'data': (2, 3, 8, 8)}), (SP, {'data': (0, 3, 8, 8)})]),
    'deconv': (_deconv, [
        (S, {'data': (1, 2, 4, 4)}), (SP, {}), (SP, {'deconv_weight': (2, 3, 2, 2)})]),
    'dot': (_dot, [
        (S, {'a': (2, 3), 'b': (3, 4)}), (S, {'a': (2, 3), 'b': (4, 5)}),
        (SP, {'a': (2, 3)}), (S, {'a': (2, 3)}), (T, {'a': 'float64'})]),
    'cast': (_cast, [
        (S, {'data': (2,)}), (T, {'data': 'float64'}), (TP, {}), (T, {})]),
    'var_attrs': (_var_attrs, [
        (S, {}), (T, {}), (S, {'y': (2, 3)}), (S, {'x': (4, 5)}), (T, {'y': 'float64'})]),
    'single_var': (_single_var, [
        (S, {'x': (2, 3)}), (S, {'x': (2, 0)}), (SP, {'x': (2, 0)}), (S, {}), (T, {}),
        (T, {'x': 'uint8'}), (TP, {})]),
    'group': (_group, [
        (S, {'a': (2, 5)}), (SP, {'fc_weight': (3, 5)}), (S, {})]),
    'layernorm': (_layernorm, [
        (S, {'data': (2, 3, 4)}), (SP, {'ln_gamma': (4,)})]),
    'activation_flatten': (_activation_flatten, [
        (S, {'data': (2, 3, 4)}), (SP, {'c': (2, 12)}), (S, {'c': (2, 12)})]),
    'transpose_then_add': (_transpose_then_add, [
        (S, {'data': (2, 3)}), (SP, {'c': (3, 2)}), (S, {'c': (3, 2)})]),
    'mul_shared': (_mul_shared, [
        (S, {'c': (4,)}), (SP, {'b': (4,)}), (T, {'c': 'float16'})]),
    'sum_axis': (_sum_axis, [
        (S, {'data': (2, 3, 4)}), (SP, {})]),
    'leaky_prelu': (_leaky_prelu, [
        (S, {'data': (2, 3, 4)}), (SP, {'pr_gamma': (3,)})]),
    'instancenorm': (_instancenorm, [
        (S, {'data': (2, 3, 4)}), (SP, {})]),
    'slice_channel': (_slice_channel, [
        (S, {'data': (2, 4, 3)}), (S, {'data': (2, 3, 3)})]),
    'where': (_where, [
        (S, {'cond': (2, 3)}), (SP, {'x': (2, 3)}), (S, {'x': (2, 3)}),
        (T, {'x': 'float64'}), (T, {'cond': 'int32', 'x': 'float32'})]),
    'elemwise_sum': (_elemwise_sum, [
        (S, {'b': (2, 2)}), (SP, {}), (T, {'c': 'float64'}),
        (T, {'a': 'float64', 'b': 'float32'})]),
    'rnn': (_rnn, [
        (S, {'data': (5, 2, 3)}), (SP, {}), (SP, {'data': (5, 0, 3)}),
        (T, {'data': 'float32'}), (S, {'data': (5, 2, 3), 'rnn_state': (1, 2, 4)})]),
    'activation_then_add': (_activation_then_add, [
        (S, {'c': (2, 3)}), (SP, {'data': (2, 0)}), (T, {'c': 'float64'})]),
    'swap_expand': (_swap_expand, [
        (S, {'data': (2, 3)}), (SP, {'c': (1, 3, 2)})]),
    'stack': (_stack, [
        (S, {'a': (2, 3)}), (SP, {'b': (2, 3)}), (S, {'a': (2, 3), 'b': (2, 4)})]),
    'broadcast_mul_chain': (_broadcast_mul_chain, [
        (S, {'a': (2, 3), 'b': (1, 3)}), (SP, {'a': (2, 3)}), (S, {'a': (2, 3), 'b': (3, 3)})]),
    'pool_fc': (_pool_fc, [
        (S, {'data': (2, 3, 4, 4)}), (SP, {'fc_weight': (3, 12)}), (SP, {'data': (0, 3, 4, 4)})]),
    'scalar_ops': (_scalar_ops, [
        (S, {'x': (2, 2)}), (S, {'y': (2, 2)}), (SP, {'x': (2, 2)}), (T, {'y': 'float16'})]),
    'many': (_many, [(S, {}), (T, {}), (S, {'v0': (1,)})]),
    'add_type_conflict': (_add, [
        (T, {'a': 'float16', 'b': 'float32'}), (S, {'a': (2, 3), 'b': (3, 3)})]),
}
