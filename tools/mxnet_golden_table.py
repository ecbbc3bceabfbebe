"""The operator table that tools/mxnet_golden.py runs in MXNet 1.9.1 (see that file).

``CASES[op]`` is a list of cases for the ``mx.nd`` function ``op`` ("abs", "linalg.gemm",
"random.normal", ...). A case is a dict:

- ``n``: the case name (unique per op);
- ``i``: the inputs, in call order, each made by one of the helpers below: ``U`` uniform
  in [-1, 1), ``P`` positive in [0.5, 2), ``Q`` above one, ``I`` integers in [lo, hi)
  stored as the given dtype (indices, labels, lengths: no gradient), ``L`` a literal array,
  ``S`` a Python scalar passed as is, ``SPD`` batches of symmetric positive definite
  matrices, ``TRI`` lower triangular matrices with a dominant diagonal, ``Z`` zeros (the
  shape a ``*_like`` sampler copies);
- ``p``: keyword parameters (tuples are kept as tuples on both sides);
- ``call``: ``'pos'`` (default: inputs positional) or ``'list'`` (inputs as one list, as
  ``concatenate`` takes them);
- ``g``: ``False`` when MXNet has no gradient to record (outputs only);
- ``train``: record in training mode (default; MXNet's MKLDNN max pooling keeps no argmax in
  inference mode and sends its gradient to each window's first element) or, ``False``, in
  inference mode (Dropout).

Every op whose cases are all float32 also gets its first case in float64 and float16
(``auto``: dropped, with a printed note, where MXNet rejects that dtype).

``SAMPLERS[op]`` lists sampler cases (``i``/``p`` as above; mxnet_golden.py says how the
moments are taken). ``UNCOVERED[op]`` gives the reason an ``mx.nd`` name has no case; names
in tests/compat/exclusions.py and the optimizer update ops (tests/optimizer) are not listed.
"""


def U(*shape, dt='float32', s=1.0):
    return {'g': 'u', 'shape': shape, 'dt': dt, 's': s}


def P(*shape, dt='float32'):
    return {'g': 'p', 'shape': shape, 'dt': dt}


def Q(*shape, dt='float32'):
    return {'g': 'q', 'shape': shape, 'dt': dt}


def I(lo, hi, *shape, dt='float32'):  # noqa: E743 -- reads as "integers"
    return {'g': 'i', 'lo': lo, 'hi': hi, 'shape': shape, 'dt': dt}


def L(values, dt='float32', grad=False):
    return {'g': 'l', 'v': values, 'dt': dt, 'grad': grad}


def Z(*shape, dt='float32'):
    return {'g': 'z', 'shape': shape, 'dt': dt}


def S(value):
    return {'g': 's', 'v': value}


def SPD(*shape, dt='float32'):
    return {'g': 'spd', 'shape': shape, 'dt': dt}


def TRI(*shape, dt='float32'):
    return {'g': 'tri', 'shape': shape, 'dt': dt}


def C(n, *inputs, g=True, call='pos', train=True, **params):
    if n == 'size0':    # MXNet 1.x runs 0-size arrays only with np_shape semantics on
        g = False       # (mxnet_golden.py turns it on) and then has no gradient for them
    return {'n': n, 'i': list(inputs), 'p': params, 'g': g, 'call': call, 'train': train}


CASES = {}


def unary(names, gen, g=True):
    for name in names.split():
        CASES[name] = [C('f32', gen(2, 3), g=g), C('f64', gen(3, 4, dt='float64'), g=g),
                       C('f16', gen(2, 3, dt='float16'), g=g), C('size0', gen(0, 3), g=g)]


unary('abs sin cos tan arctan sinh cosh tanh arcsinh sigmoid relu softsign exp expm1 '
      'negative square sign ceil floor round rint fix trunc erf degrees radians cbrt '
      'identity BlockGrad stop_gradient make_loss MakeLoss zeros_like ones_like logical_not '
      'hard_sigmoid log_softmax softmax softmin Flatten flatten', U)
unary('log log10 log2 log1p sqrt rsqrt rcbrt reciprocal gamma gammaln', P)
unary('arccosh', Q)
for _name in ('arcsin', 'arccos', 'arctanh', 'erfinv'):
    CASES[_name] = [C('f32', U(2, 3, s=0.9)), C('f64', U(3, 4, dt='float64', s=0.9)),
                    C('f16', U(2, 3, dt='float16', s=0.9)), C('size0', U(0, 3))]

_BINARY = ('add plus sub minus mul div maximum minimum hypot power mod equal not_equal '
           'greater greater_equal lesser lesser_equal logical_and logical_or logical_xor')
_COMPARE = set('equal not_equal greater greater_equal lesser lesser_equal logical_and '
               'logical_or logical_xor'.split())


def _bin_inputs(op, lshape, rshape, dt='float32'):
    if op in _COMPARE:
        return I(0, 3, *lshape, dt=dt), I(0, 3, *rshape, dt=dt)
    if op in ('div', 'mod', 'power'):
        return P(*lshape, dt=dt), P(*rshape, dt=dt)
    return U(*lshape, dt=dt), U(*rshape, dt=dt)


for _op in _BINARY.split():
    CASES['broadcast_' + _op] = [
        C('same', *_bin_inputs(_op, (2, 3), (2, 3)), g=_op not in _COMPARE),
        C('bcast', *_bin_inputs(_op, (2, 1, 3), (1, 4, 3)), g=_op not in _COMPARE),
        C('bcast_ndim', *_bin_inputs(_op, (2, 4, 3), (4, 1)), g=_op not in _COMPARE),
        C('f64', *_bin_inputs(_op, (3, 1), (1, 2), 'float64'), g=_op not in _COMPARE),
        C('size0', *_bin_inputs(_op, (0, 3), (1, 3)), g=_op not in _COMPARE)]
for _op in ('add', 'sub', 'mul', 'div'):
    CASES['elemwise_' + _op] = [C('f32', *_bin_inputs(_op, (2, 3), (2, 3))),
                                C('f64', *_bin_inputs(_op, (3, 2), (3, 2), 'float64')),
                                C('size0', *_bin_inputs(_op, (0, 2), (0, 2)))]
# the Python-level wrappers: array-array (broadcasting) and array-scalar
for _name, _op in (('add', 'add'), ('subtract', 'sub'), ('multiply', 'mul'),
                   ('divide', 'div'), ('true_divide', 'div'), ('modulo', 'mod'),
                   ('power', 'power'), ('maximum', 'maximum'), ('minimum', 'minimum'),
                   ('equal', 'equal'), ('not_equal', 'not_equal'), ('greater', 'greater'),
                   ('greater_equal', 'greater_equal'), ('lesser', 'lesser'),
                   ('lesser_equal', 'lesser_equal'), ('logical_and', 'logical_and'),
                   ('logical_or', 'logical_or'), ('logical_xor', 'logical_xor')):
    _g = _op not in _COMPARE
    _l, _r = _bin_inputs(_op, (2, 1, 3), (4, 1))
    CASES[_name] = [C('same', *_bin_inputs(_op, (2, 3), (2, 3)), g=_g),
                    C('bcast', _l, _r, g=_g),
                    C('scalar_rhs', _bin_inputs(_op, (2, 3), ())[0], S(1.5), g=_g),
                    C('scalar_lhs', S(2.0), _bin_inputs(_op, (2, 3), ())[0], g=_g),
                    C('f64', *_bin_inputs(_op, (2, 2), (2, 2), 'float64'), g=_g)]

for _name in ('sum', 'mean', 'prod', 'nansum', 'nanprod', 'max', 'min'):
    CASES[_name] = [C('all', U(2, 3, 4)), C('axis1', U(2, 3, 4), axis=1),
                    C('neg_axis_keep', U(2, 3, 4), axis=-1, keepdims=True),
                    C('axes', U(2, 3, 4), axis=(0, 2)),
                    C('exclude', U(2, 3, 4), axis=1, exclude=True),
                    C('f64', U(3, 4, dt='float64'), axis=0)]
for _name in ('sum_axis', 'max_axis', 'min_axis'):
    CASES[_name] = [C('axis1', U(2, 3, 4), axis=1), C('neg', U(2, 3), axis=-1, keepdims=True)]
CASES['norm'] = [C('all', U(2, 3, 4)), C('l2_axis', U(2, 3, 4), ord=2, axis=1),
                 C('l1_neg_keep', U(2, 3, 4), ord=1, axis=-1, keepdims=True),
                 C('f64', U(3, 4, dt='float64'), axis=(0, 1))]
for _name in ('argmax', 'argmin'):
    CASES[_name] = [C('axis1', U(2, 3, 4), axis=1, g=False),
                    C('neg_keep', U(2, 3, 4), axis=-1, keepdims=True, g=False),
                    C('flat', U(3, 4), g=False), C('f64', U(3, 4, dt='float64'), axis=0, g=False)]
CASES['argmax_channel'] = [C('f32', U(3, 4), g=False)]
CASES['moments'] = [C('axes', U(2, 3, 4), axes=(0, 2)), C('keep', U(2, 3), axes=(1,),
                                                          keepdims=True)]

CASES['Activation'] = [C(a, U(2, 3), act_type=a)
                       for a in ('relu', 'sigmoid', 'tanh', 'softrelu', 'softsign')]
CASES['Activation'].append(C('f64', U(2, 3, dt='float64'), act_type='tanh'))
CASES['LeakyReLU'] = [C('leaky', U(2, 3), slope=0.1), C('elu', U(2, 3), act_type='elu', slope=0.3),
                      C('selu', U(2, 3), act_type='selu'), C('gelu', U(2, 3), act_type='gelu'),
                      C('prelu', U(2, 3, 4), U(3), act_type='prelu')]
# rrelu is random in training; in inference MXNet leaves its mask output unwritten, so
# there is nothing deterministic to record beyond the leaky case above
CASES['smooth_l1'] = [C('s1', U(2, 3, s=3), scalar=1.0), C('s2', U(2, 3, s=2), scalar=2.0)]
CASES['clip'] = [C('f32', U(2, 3), a_min=-0.5, a_max=0.4),
                 C('f64', U(2, 3, dt='float64'), a_min=0.0, a_max=1.0)]
for _name in ('softmax', 'log_softmax', 'softmin'):
    CASES[_name] += [C('axis0', U(3, 4), axis=0), C('temp', U(2, 3), temperature=2.0),
                     C('neg_axis', U(2, 3, 4), axis=-2)]
CASES['softmax'].append(C('length', U(2, 4), I(1, 5, 2, dt='int32'), axis=-1,
                          use_length=True))
# SoftmaxActivation is float32-only in MXNet 1.9.1 (float16/64 fail its TBlob type check)
CASES['SoftmaxActivation'] = [C('f32', U(2, 3)), C('channel', U(2, 3, 2), mode='channel')]
CASES['L2Normalization'] = [C(m, U(2, 3, 4), mode=m) for m in ('instance', 'channel',
                                                                 'spatial')]
CASES['LRN'] = [C('n3', U(1, 5, 2, 2), nsize=3)]
CASES['LayerNorm'] = [C('last', U(2, 3, 4), U(4), U(4)),
                      C('axis1', U(2, 3, 4), U(3), U(3), axis=1)]
CASES['InstanceNorm'] = [C('f32', U(2, 3, 4), U(3), U(3))]
CASES['GroupNorm'] = [C('g2', U(2, 4, 3), U(2), U(2), num_groups=2)]
CASES['BatchNorm'] = [C('eval', U(2, 3, 2), P(3), U(3), U(3), P(3), fix_gamma=False,
                        use_global_stats=True)]
CASES['FullyConnected'] = [C('bias', U(2, 3), U(4, 3), U(4), num_hidden=4),
                           C('no_bias', U(2, 3, 2), U(4, 6), num_hidden=4, no_bias=True),
                           C('no_flatten', U(2, 3, 2), U(4, 2), U(4), num_hidden=4,
                             flatten=False),
                           C('f64', U(2, 3, dt='float64'), U(2, 3, dt='float64'),
                             U(2, dt='float64'), num_hidden=2)]
CASES['Convolution'] = [C('2d', U(1, 2, 4, 4), U(3, 2, 3, 3), U(3), kernel=(3, 3),
                          num_filter=3, pad=(1, 1)),
                        C('1d_stride', U(2, 2, 5), U(2, 2, 2), kernel=(2,), num_filter=2,
                          stride=(2,), no_bias=True)]
CASES['Deconvolution'] = [C('2d', U(1, 2, 3, 3), U(2, 3, 2, 2), kernel=(2, 2), num_filter=3,
                            no_bias=True)]
CASES['Pooling'] = [C('max', U(1, 2, 4, 4), kernel=(2, 2), stride=(2, 2), pool_type='max'),
                    C('avg_pad', U(1, 2, 4, 4), kernel=(3, 3), pad=(1, 1), pool_type='avg'),
                    C('sum', U(1, 1, 4, 4), kernel=(2, 2), pool_type='sum'),
                    C('global', U(2, 3, 3, 3), kernel=(1, 1), global_pool=True,
                      pool_type='avg'),
                    C('lp2', U(1, 1, 4, 4), kernel=(2, 2), stride=(2, 2), pool_type='lp',
                      p_value=2)]
CASES['Dropout'] = [C('eval', U(2, 3), p=0.5, train=False)]
CASES['Embedding'] = [C('f32', I(0, 5, 2, 3), U(5, 4), input_dim=5, output_dim=4)]
CASES['UpSampling'] = [C('nearest', U(1, 2, 2, 2), scale=2, sample_type='nearest')]
for _name in ('Pad', 'pad'):
    CASES[_name] = [C('constant', U(1, 2, 2, 3), mode='constant', constant_value=0.5,
                      pad_width=(0, 0, 0, 0, 1, 2, 2, 1)),
                    C('edge', U(1, 2, 2, 3), mode='edge', pad_width=(0, 0, 0, 0, 1, 1, 1, 1)),
                    C('reflect', U(1, 1, 3, 3), mode='reflect',
                      pad_width=(0, 0, 0, 0, 1, 1, 2, 2))]
CASES['Crop'] = [C('center', U(1, 2, 4, 5), num_args=1, h_w=(2, 3), center_crop=True),
                 C('offset', U(1, 2, 4, 5), num_args=1, h_w=(3, 2), offset=(1, 2))]
CASES['crop'] = [C('begin_end', U(3, 4, 5), begin=(0, 1, 2), end=(2, 3, 5))]
CASES['slice'] = CASES['crop'] + [C('step_neg', U(3, 4, 5), begin=(None, 3), end=(None, 0),
                                    step=(1, -1)),
                                  C('none_end', U(3, 4), begin=(1,), end=(None,))]
CASES['slice_axis'] = [C('axis1', U(3, 4, 5), axis=1, begin=1, end=3),
                       C('neg', U(3, 4, 5), axis=-1, begin=-3, end=None)]
CASES['slice_like'] = [C('all', U(3, 4, 5), U(2, 3, 4)),
                       C('axes', U(3, 4, 5), U(2, 3, 4), axes=(0, -1))]
CASES['Reshape'] = [C('codes', U(2, 3, 4), shape=(0, -1)),
                    C('split', U(6, 4), shape=(-4, 2, 3, -2)),
                    C('merge', U(2, 3, 4), shape=(-3, -2)),
                    C('reverse', U(2, 3, 4), shape=(-1, 0), reverse=True)]
CASES['reshape'] = CASES['Reshape']
CASES['reshape_like'] = [C('f32', U(2, 6), U(3, 4)),
                         C('ranges', U(2, 6), U(5, 3, 2), lhs_begin=1, rhs_begin=1)]
CASES['transpose'] = [C('default', U(2, 3, 4)), C('axes', U(2, 3, 4), axes=(1, 0, 2))]
for _name in ('SwapAxis', 'swapaxes'):
    CASES[_name] = [C('d01', U(2, 3, 4), dim1=0, dim2=2)]
CASES['expand_dims'] = [C('axis1', U(2, 3), axis=1), C('neg', U(2, 3), axis=-1)]
CASES['squeeze'] = [C('all', U(2, 1, 3, 1)), C('axis', U(2, 1, 3, 1), axis=-1)]
CASES['flip'] = [C('axis1', U(2, 3, 4), axis=1)]
CASES['reverse'] = [C('axes', U(2, 3, 4), axis=(0, 2))]
CASES['tile'] = [C('reps', U(2, 3), reps=(2, 1, 2))]
CASES['repeat'] = [C('axis', U(2, 3), repeats=2, axis=1), C('flat', U(2, 3), repeats=3)]
CASES['broadcast_to'] = [C('f32', U(1, 3, 1), shape=(2, 3, 4)),
                         C('zero_keep', U(1, 3), shape=(4, 0))]
for _name in ('broadcast_axis', 'broadcast_axes'):
    CASES[_name] = [C('f32', U(1, 3, 1), axis=(0, 2), size=(2, 4))]
CASES['broadcast_like'] = [C('f32', U(1, 3), U(2, 3)),
                           C('axes', U(1, 3), U(3, 5), lhs_axes=(0,), rhs_axes=(1,))]
for _name in ('Concat', 'concat'):
    CASES[_name] = [C('dim1', U(2, 3), U(2, 1), dim=1), C('neg', U(2, 3), U(2, 3), dim=-2)]
CASES['concatenate'] = [C('axis1', U(2, 3), U(2, 2), axis=1, call='list', g=False)]
CASES['stack'] = [C('axis0', U(2, 3), U(2, 3)), C('neg', U(2, 3), U(2, 3), axis=-1)]
for _name in ('add_n', 'ElementWiseSum'):
    CASES[_name] = [C('three', U(2, 3), U(2, 3), U(2, 3))]
CASES['khatri_rao'] = [C('two', U(2, 3), U(4, 3))]
for _name in ('SliceChannel', 'split'):
    CASES[_name] = [C('axis1', U(2, 4), num_outputs=2, axis=1),
                    C('squeeze', U(2, 3), num_outputs=2, axis=0, squeeze_axis=True)]
CASES['split_v2'] = [C('sections', U(6, 2), S(3)), C('indices', U(2, 5), S((1, 3)), axis=-1)]
CASES['moveaxis'] = [C('f32', U(2, 3, 4), S(0), S(-1))]
CASES['dot'] = [C('mm', U(2, 3), U(3, 4)), C('trans', U(3, 2), U(4, 3), transpose_a=True,
                                              transpose_b=True),
                C('vv', U(3), U(3)), C('f64', U(2, 3, dt='float64'), U(3, 2, dt='float64'))]
CASES['batch_dot'] = [C('f32', U(2, 2, 3), U(2, 3, 4)),
                      C('trans', U(2, 3, 2), U(2, 4, 3), transpose_a=True, transpose_b=True)]
CASES['where'] = [C('same', I(0, 2, 2, 3), U(2, 3), U(2, 3)),
                  C('rowcond', I(0, 2, 2), U(2, 3), U(2, 3))]
CASES['take'] = [C('clip', U(4, 3), I(-1, 6, 2, 2)),
                 C('wrap_axis1', U(3, 4), I(-2, 6, 3), axis=1, mode='wrap')]
CASES['batch_take'] = [C('f32', U(3, 4), I(0, 4, 3, dt='int32'), g=False)]
CASES['pick'] = [C('axis1', U(3, 4), I(0, 4, 3)),
                 C('neg_keep', U(2, 3, 4), I(0, 4, 2, 3), axis=-1, keepdims=True),
                 C('wrap', U(3, 4), I(-3, 8, 3), mode='wrap')]
CASES['choose_element_0index'] = [C('f32', U(3, 4), I(0, 4, 3), g=False)]
CASES['fill_element_0index'] = [C('f32', U(3, 4), U(3), I(0, 4, 3), g=False)]
CASES['one_hot'] = [C('f32', I(0, 4, 2, 3), depth=4, g=False),
                    C('values', I(0, 3, 3), depth=3, on_value=2.0, off_value=-1.0,
                      dtype='float64', g=False)]
CASES['onehot_encode'] = [C('f32', I(0, 4, 3), L([[0.0] * 4] * 3), g=False)]
CASES['gather_nd'] = [C('f32', U(3, 4), L([[0, 2, 1], [3, 0, 1]]))]
CASES['scatter_nd'] = [C('f32', U(3), L([[0, 2, 1], [3, 0, 1]]), shape=(3, 4))]
CASES['ravel_multi_index'] = [C('f32', L([[0, 2, 1], [3, 0, 1]]), shape=(3, 4), g=False)]
CASES['unravel_index'] = [C('f32', L([0, 5, 11]), shape=(3, 4), g=False)]
CASES['shape_array'] = [C('f32', U(2, 3, 4), g=False)]
CASES['size_array'] = [C('f32', U(2, 3, 4), g=False)]
CASES['diag'] = [C('mat', U(3, 4)), C('k1', U(3, 4), k=1), C('vec', U(3), k=-1),
                 C('axes', U(2, 3, 3), k=0, axis1=1, axis2=2)]
CASES['cumsum'] = [C('flat', U(2, 3)), C('axis', U(2, 3), axis=1),
                   C('f64', U(3, 2, dt='float64'), axis=0)]
# MXNet 1.9.1's backward of sort with the default axis fails to parse its own axis
CASES['sort'] = [C('asc', U(2, 4), g=False), C('desc_axis0', U(3, 2), axis=0, is_ascend=False)]
CASES['argsort'] = [C('asc', U(2, 4), g=False),
                    C('desc_int', U(3, 2), axis=0, is_ascend=False, dtype='int32', g=False)]
CASES['topk'] = [C('indices', U(2, 5), k=2, g=False),
                 C('value', U(2, 5), k=2, ret_typ='value'),
                 C('both', U(3, 4), k=2, axis=0, ret_typ='both', is_ascend=True, g=False),
                 C('mask', U(2, 5), k=3, ret_typ='mask', g=False)]
for _name in ('Cast', 'cast'):
    CASES[_name] = [C('to_f64', U(2, 3), dtype='float64'), C('to_f16', U(2, 3), dtype='float16'),
                    C('to_int32', U(2, 3, s=5), dtype='int32', g=False)]
CASES['amp_cast'] = [C('to_f16', U(2, 3), dtype='float16')]
# float16/float64 inputs fail in MXNet's MKLDNN build ('unknown type for MKLDNN')
CASES['amp_multicast'] = [C('two', U(2, 3), U(3, 2), num_outputs=2)]
CASES['depth_to_space'] = [C('b2', U(1, 8, 2, 3), block_size=2)]
CASES['space_to_depth'] = [C('b2', U(1, 2, 4, 6), block_size=2)]
CASES['im2col'] = [C('k2', U(1, 2, 3, 3), kernel=(2, 2))]
CASES['col2im'] = [C('k2', U(1, 8, 4), output_size=(3, 3), kernel=(2, 2))]
# MXNet 1.9.1 segfaults on SequenceLast's backward without sequence_length
CASES['SequenceLast'] = [C('plain', U(3, 2, 4), g=False),
                         C('lengths', U(3, 2, 4), L([2, 3]), use_sequence_length=True),
                         C('axis1', U(2, 3, 4), L([1, 3]), use_sequence_length=True, axis=1)]
CASES['SequenceMask'] = [C('lengths', U(3, 2, 4), L([1, 3]), use_sequence_length=True,
                           value=-1.0),
                         C('axis1', U(2, 3, 4), L([2, 1]), use_sequence_length=True, axis=1)]
CASES['SequenceReverse'] = [C('plain', U(3, 2, 4)),
                            C('lengths', U(3, 2, 4), L([2, 3]), use_sequence_length=True)]
CASES['SoftmaxOutput'] = [C('plain', U(3, 4), I(0, 4, 3)),
                          C('multi', U(2, 3, 4), I(0, 3, 2, 4), multi_output=True,
                            normalization='valid', grad_scale=2.0),
                          C('ignore', U(4, 3), L([0, 1, 2, 1]), use_ignore=True,
                            ignore_label=1)]
CASES['Softmax'] = [C('plain', U(3, 4), I(0, 4, 3))]
CASES['LinearRegressionOutput'] = [C('f32', U(3, 2), U(3, 2), grad_scale=0.5)]
CASES['LogisticRegressionOutput'] = [C('f32', U(3, 2), I(0, 2, 3, 2))]
CASES['MAERegressionOutput'] = [C('f32', U(3, 2), U(3, 2))]
CASES['SVMOutput'] = [C('l1', U(3, 4), I(0, 4, 3), use_linear=True),
                      C('l2', U(3, 4), I(0, 4, 3), margin=0.5)]
CASES['softmax_cross_entropy'] = [C('f32', U(3, 4), I(0, 4, 3))]
CASES['MakeLoss'].append(C('valid', U(2, 3), normalization='batch', grad_scale=2.0))
for _name in ('CTCLoss', 'ctc_loss'):
    CASES[_name] = [C('plain', U(5, 2, 4), L([[1, 2], [3, 0]])),
                    C('lengths', U(5, 2, 4), L([[0, 1], [2, 2]]), L([4, 5]), L([2, 2]),
                      use_data_lengths=True, use_label_lengths=True, blank_label='last')]
CASES['BilinearSampler'] = [C('f32', U(1, 2, 3, 4), U(1, 2, 3, 3, s=0.9))]
CASES['GridGenerator'] = [C('affine', U(2, 6), transform_type='affine', target_shape=(3, 4)),
                          C('warp', U(1, 2, 3, 4), transform_type='warp')]
CASES['SpatialTransformer'] = [C('f32', U(1, 2, 4, 4), L([[0.83, 0.11, 0.05, -0.07, 0.77, 0.09]],
                                                          grad=True),
                                 target_shape=(3, 3), transform_type='affine',
                                 sampler_type='bilinear')]
CASES['ROIPooling'] = [C('f32', U(1, 2, 6, 6), L([[0, 0, 0, 3, 3], [0, 1, 2, 5, 5]]),
                         pooled_size=(2, 2), spatial_scale=1.0)]
CASES['Correlation'] = [C('f32', U(1, 2, 5, 5), U(1, 2, 5, 5), kernel_size=1,
                          max_displacement=1, stride1=1, stride2=1, pad_size=1)]
CASES['histogram'] = [C('bins', U(10), bins=4, range=(-1.0, 1.0), g=False)]
CASES['all_finite'] = [C('f32', U(2, 3), g=False)]
CASES['multi_all_finite'] = [C('two', U(2, 3), U(3), num_arrays=2, g=False)]
CASES['multi_sum_sq'] = [C('two', U(2, 3), U(3), num_arrays=2, g=False)]
CASES['multi_lars'] = [C('f32', P(3), P(3), P(3), P(3), eta=0.1, eps=1e-8, g=False)]
for _a in ('det', 'extractdiag', 'extracttrian', 'gelqf', 'gemm', 'gemm2', 'inverse',
           'makediag', 'maketrian', 'potrf', 'potri', 'slogdet', 'sumlogdiag', 'syrk',
           'trmm', 'trsm', 'syevd'):
    CASES['linalg.' + _a] = []
CASES['linalg.gemm'] = [C('plain', U(2, 3), U(3, 4), U(2, 4), alpha=1.5, beta=0.5),
                        C('trans_batch', U(2, 3, 2), U(2, 4, 3), U(2, 2, 4), transpose_a=True,
                          transpose_b=True),
                        C('f64', U(2, 2, dt='float64'), U(2, 2, dt='float64'),
                          U(2, 2, dt='float64'))]
CASES['linalg.gemm2'] = [C('plain', U(2, 3), U(3, 4), alpha=2.0),
                         C('batch_trans', U(2, 3, 2), U(2, 3, 4), transpose_a=True)]
CASES['linalg.det'] = [C('f64', SPD(2, 3, dt='float64')), C('f32', U(3, 3))]
CASES['linalg.slogdet'] = [C('f64', SPD(2, 3, dt='float64'))]
CASES['linalg.inverse'] = [C('f64', SPD(2, 3, dt='float64')), C('f32', SPD(3))]
CASES['linalg.potrf'] = [C('f64', SPD(2, 3, dt='float64')), C('f32', SPD(3))]
CASES['linalg.potri'] = [C('f64', TRI(2, 3, dt='float64'))]
CASES['linalg.sumlogdiag'] = [C('f64', SPD(2, 3, dt='float64'))]
CASES['linalg.trmm'] = [C('plain', TRI(3), U(3, 2), alpha=2.0),
                        C('right_t', TRI(2, 2, dt='float64'), U(2, 3, 2, dt='float64'),
                          rightside=True, transpose=True)]
CASES['linalg.trsm'] = [C('plain', TRI(3), U(3, 2)),
                        C('right_lower', TRI(2, 2, dt='float64'), U(2, 3, 2, dt='float64'),
                          rightside=True, lower=False, alpha=0.5)]
CASES['linalg.syrk'] = [C('plain', U(2, 3), alpha=1.5),
                        C('trans', U(2, 3, 2, dt='float64'), transpose=True)]
CASES['linalg.gelqf'] = [C('f64', U(2, 3, dt='float64')), C('batch', U(2, 2, 4))]
CASES['linalg.syevd'] = [C('f64', SPD(3, dt='float64')), C('batch', SPD(2, 3))]
CASES['linalg.extractdiag'] = [C('k', U(2, 3, 3), offset=1)]
CASES['linalg.makediag'] = [C('k', U(2, 3), offset=-1)]
CASES['linalg.extracttrian'] = [C('lower', U(3, 3)), C('upper', U(2, 3, 3), offset=1,
                                                      lower=False)]
CASES['linalg.maketrian'] = [C('lower', U(6)), C('upper', U(2, 3), offset=1, lower=False)]
# 0-size arrays: MXNet 1.9.1 fails them (even with NumPy shape semantics on) in Flatten,
# elemwise_* and the reductions ('delay_alloc' / 'Shape size mismatch')
for _name in ('Flatten', 'flatten', 'elemwise_add', 'elemwise_sub', 'elemwise_mul',
              'elemwise_div'):
    CASES[_name] = [c for c in CASES[_name] if c['n'] != 'size0']
for _a in list(CASES):
    if _a.startswith('linalg.'):
        CASES['linalg_' + _a[7:]] = CASES[_a]
del CASES['linalg_syevd']          # mx.nd has no linalg_syevd alias
for _d, _ins in (('normal', (U(2, 3), U(2, 3), P(2, 3))), ('uniform', (P(2, 3), U(2, 3),
                                                                        Q(2, 3))),
                 ('gamma', (P(2, 3), P(2, 3), P(2, 3))), ('exponential', (P(2, 3), P(2, 3))),
                 ('poisson', (I(0, 5, 2, 3), P(2, 3))),
                 ('negative_binomial', (I(0, 5, 2, 3), I(1, 4, 2), L([0.3, 0.6]))),
                 ('generalized_negative_binomial', (I(0, 5, 2, 3), P(2), P(2)))):
    CASES['random_pdf_' + _d] = [C('f32', *_ins), C('log', *_ins, is_log=True)]
CASES['random_pdf_dirichlet'] = [C('f32', L([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]), P(2, 3))]
CASES['arange'] = [C('step', start=1.0, stop=4.0, step=0.5, g=False),
                   C('repeat', start=0, stop=3, repeat=2, dtype='float64', g=False)]
CASES['linspace'] = [C('five', start=0.0, stop=1.0, num=5, g=False),
                     C('open', start=1.0, stop=2.0, num=4, endpoint=False, g=False)]
CASES['eye'] = [C('k', N=3, M=4, k=1, g=False)]
CASES['full'] = [C('f64', shape=(2, 3), val=1.5, dtype='float64', g=False)]
CASES['zeros'] = [C('f32', shape=(2, 3), g=False)]
CASES['ones'] = [C('int', shape=(2, 3), dtype='int32', g=False),
                 C('size0', shape=(2, 0), g=False)]
# RNN: one packed parameter vector (per layer and direction: W_x, W_h, then b_x, b_h)
CASES['RNN'] = [C('tanh', U(3, 2, 3), U(14), U(1, 2, 2), state_size=2, num_layers=1,
                  mode='rnn_tanh'),
                C('lstm_states', U(3, 2, 3), U(56, s=0.5), U(1, 2, 2), U(1, 2, 2), state_size=2,
                  num_layers=1, mode='lstm', state_outputs=True),
                C('gru_bi', U(2, 1, 2), U(2 * 3 * (2 * 2 + 2 * 2 + 4), s=0.5), U(2, 1, 2),
                  state_size=2, num_layers=1, mode='gru', bidirectional=True)]
CASES['reset_arrays'] = [C('two', U(2, 3), U(3), num_arrays=2, g=False)]


# ---------------------------------------------------------------- mx.nd.contrib
_ANCH = [[[0.1, 0.1, 0.4, 0.5], [0.3, 0.2, 0.8, 0.6], [0.5, 0.5, 0.9, 0.9]]]
_BOXES = [[[0, 0.9, 0.1, 0.1, 0.5, 0.5], [0, 0.8, 0.12, 0.1, 0.52, 0.5],
           [1, 0.7, 0.1, 0.1, 0.5, 0.5], [0, 0.6, 0.6, 0.6, 0.9, 0.9],
           [-1, 0.5, 0.0, 0.0, 0.2, 0.2]]]
CASES.update({
    'contrib.AdaptiveAvgPooling2D': [C('f32', U(1, 2, 5, 5), output_size=(2, 3)),
                                     C('square', U(2, 1, 4, 4), output_size=2)],
    'contrib.BilinearResize2D': [C('up', U(1, 2, 3, 4), height=5, width=6),
                                 C('down', U(1, 1, 5, 5), height=3, width=2)],
    'contrib.BatchNormWithReLU': [C('eval', U(2, 3, 2, 2), P(3), U(3), U(3), P(3),
                                    fix_gamma=False, use_global_stats=True)],
    'contrib.CTCLoss': CASES['CTCLoss'], 'contrib.ctc_loss': CASES['CTCLoss'],
    'contrib.DeformableConvolution': [C('f32', U(1, 2, 4, 4), U(1, 18, 2, 2), U(3, 2, 3, 3),
                                        kernel=(3, 3), num_filter=3, no_bias=True)],
    'contrib.ModulatedDeformableConvolution': [
        C('f32', U(1, 2, 4, 4), U(1, 18, 2, 2), P(1, 9, 2, 2), U(3, 2, 3, 3), U(3),
          kernel=(3, 3), num_filter=3)],
    'contrib.DeformablePSROIPooling': [
        C('no_trans', U(1, 8, 6, 6), L([[0, 0, 0, 4, 5], [0, 1, 2, 5, 5]]), spatial_scale=1.0,
          output_dim=2, group_size=2, pooled_size=2, no_trans=True)],
    'contrib.PSROIPooling': [C('f32', U(1, 8, 6, 6), L([[0, 0, 0, 4, 5], [0, 1, 2, 5, 5]]),
                               spatial_scale=1.0, output_dim=2, pooled_size=2)],
    'contrib.ROIAlign': [C('f32', U(1, 2, 6, 6), L([[0, 0.5, 0.5, 4.2, 3.7],
                                                    [0, 1.1, 2.0, 5.3, 5.5]]),
                           pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2),
                         C('aligned', U(1, 1, 5, 5), L([[0, 0.7, 0.3, 3.8, 4.1]]),
                           pooled_size=(3, 2), spatial_scale=0.5, aligned=True)],
    'contrib.RROIAlign': [C('f32', U(1, 2, 6, 6), L([[0, 3.0, 3.0, 3.0, 2.0, 30.0]]),
                            pooled_size=(2, 2), spatial_scale=1.0, sampling_ratio=2, g=False)],
    'contrib.MultiBoxPrior': [C('f32', U(1, 2, 3, 3), sizes=(0.5, 0.25), ratios=(1, 2), g=False),
                              C('clip_steps', U(1, 1, 2, 4), sizes=(0.6,), clip=True,
                                steps=(0.4, 0.3), offsets=(0.5, 0.4), g=False)],
    'contrib.MultiBoxTarget': [C('f32', L(_ANCH), L([[[0, 0.1, 0.1, 0.45, 0.5],
                                                      [1, 0.5, 0.45, 0.9, 0.85]]]),
                                 U(1, 3, 3), g=False)],
    'contrib.MultiBoxDetection': [C('f32', L([[[0.1, 0.2, 0.7], [0.6, 0.3, 0.1],
                                               [0.3, 0.5, 0.2]]]), U(1, 12, s=0.2), L(_ANCH),
                                    g=False, threshold=0.05)],
    'contrib.Proposal': [C('f32', P(1, 6, 3, 3), U(1, 12, 3, 3, s=0.2), L([[48.0, 48.0, 1.0]]),
                           scales=(2.0, 4.0, 8.0), ratios=(1.0,), feature_stride=16,
                           rpn_pre_nms_top_n=12, rpn_post_nms_top_n=4, rpn_min_size=1,
                           g=False)],
    'contrib.MultiProposal': [C('f32', P(2, 6, 3, 3), U(2, 12, 3, 3, s=0.2),
                                L([[48.0, 48.0, 1.0], [40.0, 44.0, 1.0]]),
                                scales=(2.0, 4.0, 8.0), ratios=(1.0,), feature_stride=16,
                                rpn_pre_nms_top_n=12, rpn_post_nms_top_n=4, rpn_min_size=1,
                                g=False)],
    'contrib.allclose': [C('close', U(2, 3), U(2, 3), rtol=10.0, atol=1.0, g=False),
                         C('far', U(2, 3), U(2, 3), g=False)],
    'contrib.arange_like': [C('flat', U(2, 3), start=1.0, step=0.5, g=False),
                            C('axis', U(2, 3), axis=-1, g=False)],
    'contrib.bipartite_matching': [C('f32', U(3, 4), threshold=-0.5, g=False),
                                   C('asc', U(2, 3, 2), threshold=0.5, is_ascend=True,
                                     g=False)],
    'contrib.boolean_mask': [C('rows', U(4, 3), L([1, 0, 1, 1])),   # MXNet: axis 0 only
                             C('none', U(2, 3), L([0, 0]))],
    'contrib.box_iou': [C('corner', L([[0.1, 0.1, 0.5, 0.5], [0.2, 0.3, 0.9, 0.7]]),
                          L([[0.1, 0.2, 0.4, 0.6], [0.0, 0.0, 1.0, 1.0], [0.6, 0.6, 0.7, 0.8]]),
                          g=False),
                        C('center', L([[0.3, 0.3, 0.4, 0.4]]), L([[0.35, 0.3, 0.2, 0.5]]),
                          format='center', g=False)],
    'contrib.box_decode': [C('f32', U(1, 3, 4, s=0.3), L(_ANCH), std0=0.1, std1=0.1,
                             std2=0.2, std3=0.2)],
    'contrib.box_encode': [C('f32', L([[1, 1, -1]]), L([[0, 1, 0]]), L(_ANCH),
                             L([[[0.1, 0.1, 0.45, 0.5], [0.5, 0.45, 0.9, 0.85]]]),
                             L([0.0, 0.0, 0.0, 0.0]), L([0.1, 0.1, 0.2, 0.2]), g=False)],
    'contrib.div_sqrt_dim': [C('f32', U(2, 3, 4))],
    'contrib.gradientmultiplier': [C('f32', U(2, 3), scalar=-0.5)],
    'contrib.quadratic': [C('f32', U(2, 3), a=0.5, b=-1.0, c=2.0)],
    'contrib.round_ste': [C('f32', U(2, 3, s=3))],
    'contrib.sign_ste': [C('f32', U(2, 3))],
    'contrib.index_array': [C('all', U(2, 3), g=False), C('axes', U(2, 3, 2), axes=(0, -1),
                                                          g=False)],
    'contrib.index_copy': [C('f32', U(5, 3), L([0, 3], dt='int64'), U(2, 3))],
    'contrib.isfinite': [C('f32', L([[1.0, float('inf'), float('nan')], [-float('inf'), 0, 2]]),
                           g=False)],
    'contrib.hawkesll': [C('f32', P(2, 3), P(3), P(3), U(2, 3, s=0.1), P(2, 4),
                           I(0, 3, 2, 4, dt='int32'), L([3.0, 4.0]), L([10.0, 12.0]))],
    'contrib.interleaved_matmul_selfatt_qk': [C('f32', U(3, 2, 12), heads=2)],
    'contrib.interleaved_matmul_selfatt_valatt': [C('f32', U(3, 2, 12), U(4, 3, 3),
                                                    heads=2)],
    'contrib.interleaved_matmul_encdec_qk': [C('f32', U(3, 2, 4), U(5, 2, 8), heads=2)],
    'contrib.interleaved_matmul_encdec_valatt': [C('f32', U(5, 2, 8), U(4, 3, 5), heads=2)],
})
CASES['contrib.box_nms'] = [C('f32', L(_BOXES, grad=True), overlap_thresh=0.5, coord_start=2,
                              score_index=1, id_index=0, topk=-1),
                            C('force', L(_BOXES, grad=True), overlap_thresh=0.3,
                              coord_start=2, score_index=1, id_index=0, force_suppress=True,
                              valid_thresh=0.55)]
CASES['contrib.box_non_maximum_suppression'] = CASES['contrib.box_nms']
CASES['contrib.isinf'] = CASES['contrib.isfinite']
CASES['contrib.isnan'] = CASES['contrib.isfinite']


def _with_dtype(case, dt):
    ins = [dict(x, dt=dt) if x.get('dt') == 'float32' else x for x in case['i']]
    return dict(case, n=f"{case['n']}_{dt[5:]}", i=ins, auto=True)


# every op whose cases are all float32 also gets its first case in float64 and float16;
# mxnet_golden.py drops an automatic variant that MXNet itself rejects (and says so)
for _op, _cases in CASES.items():
    _dts = {x['dt'] for c in _cases for x in c['i'] if x['g'] in ('u', 'p', 'q', 'spd', 'tri')}
    if _dts == {'float32'}:
        _cases += [_with_dtype(_cases[0], 'float64'), _with_dtype(_cases[0], 'float16')]

SAMPLERS = {
    'random.uniform': [C('scalar', low=-1.0, high=3.0, shape=(100000,)),
                       C('arrays', L([0.0, 2.0]), L([1.0, 5.0]), shape=(100000,))],
    'random.normal': [C('scalar', loc=1.0, scale=2.0, shape=(100000,)),
                      C('arrays', L([0.0, -2.0]), L([1.0, 0.5]), shape=(100000,))],
    'random.gamma': [C('scalar', alpha=2.0, beta=0.5, shape=(100000,))],
    'random.exponential': [C('scalar', scale=2.0, shape=(100000,))],
    'random.poisson': [C('scalar', lam=3.0, shape=(100000,))],
    'random.negative_binomial': [C('scalar', k=3, p=0.4, shape=(100000,))],
    'random.generalized_negative_binomial': [C('scalar', mu=2.0, alpha=0.5, shape=(100000,))],
    'random.randint': [C('scalar', low=-2, high=5, shape=(100000,), dtype='int32')],
    'random.randn': [C('scalar', S(100000), loc=1.0, scale=0.5)],
    'random.multinomial': [C('probs', L([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]]), shape=100000)],
    'random.shuffle': [C('position0', L(list(range(8))))],
    'sample_multinomial': [C('probs', L([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]]), shape=100000)],
    'shuffle': [C('position0', L(list(range(8))))],
    # the sampled classes (output 0); the expected counts are checked as values below
    'contrib.rand_zipfian': [C('classes', L([1.0, 3.0]), num_sampled=100000, range_max=20)],
}
for _d, _kw in (('uniform', dict(low=-1.0, high=3.0)), ('normal', dict(loc=1.0, scale=2.0)),
                ('gamma', dict(alpha=2.0, beta=0.5)), ('exponential', dict(lam=2.0)),
                ('poisson', dict(lam=3.0)), ('negative_binomial', dict(k=3, p=0.4)),
                ('generalized_negative_binomial', dict(mu=2.0, alpha=0.5))):
    SAMPLERS[f'random.{_d}_like'] = [C('like', Z(100000), **_kw)]
    SAMPLERS['random_' + _d] = [C('scalar', shape=(100000,), **_kw)]
    if _d == 'normal':
        SAMPLERS['normal'] = [C('scalar', shape=(100000,), **_kw)]
    if _d == 'uniform':
        SAMPLERS['uniform'] = [C('scalar', shape=(100000,), **_kw)]
SAMPLERS['random_randint'] = [C('scalar', low=-2, high=5, shape=(100000,), dtype='int32')]
for _d, _ins in (('uniform', (L([0.0, 2.0]), L([1.0, 5.0]))),
                 ('normal', (L([0.0, -2.0]), L([1.0, 0.5]))),
                 ('gamma', (L([2.0, 0.5]), L([0.5, 2.0]))), ('exponential', (L([2.0, 0.5]),)),
                 ('poisson', (L([3.0, 0.5]),)),
                 ('negative_binomial', (L([3.0, 1.0]), L([0.4, 0.8]))),
                 ('generalized_negative_binomial', (L([2.0, 1.0]), L([0.5, 0.1])))):
    SAMPLERS['sample_' + _d] = [C('rows', *_ins, shape=(100000,))]

_NOT_OP = "not an operator (file/DLPack/engine helper): no values to compare"
_CONTROL = ("control flow over a Python function (contrib.cond/foreach/while_loop): no "
            "fixed operator to record; tests/operator/test_contrib_ops.py covers it")
UNCOVERED = {
    'Custom': "runs a user-registered CustomOp: needs a Python op class (tests/operator)",
    'array': "builds an array from data (no computation)",
    'empty': "uninitialised memory: no values to compare",
    'from_numpy': "zero-copy view of a NumPy array (no computation)",
    'from_dlpack': _NOT_OP, 'to_dlpack_for_read': _NOT_OP, 'to_dlpack_for_write': _NOT_OP,
    'load': _NOT_OP, 'load_frombuffer': _NOT_OP, 'save': _NOT_OP, 'waitall': _NOT_OP,
    'imdecode': "decodes image bytes (tests/image covers it with MXNet's outputs)",
    'get_oshape_of_gather_nd_op': "shape helper of gather_nd, not an operator",
    'contrib.cond': _CONTROL, 'contrib.foreach': _CONTROL, 'contrib.while_loop': _CONTROL,
}
