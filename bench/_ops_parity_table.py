"""The calls bench/bench_ops_parity.py times: one representative call per ``mx.nd`` operator.

``CASES[key]`` is a golden-table case (``tools/mxnet_golden_table.py``: inputs ``i`` made by
``U``/``P``/``I``/``L``/..., keyword parameters ``p``, ``g`` = differentiable) at a realistic
size (a few hundred KB to a few MB of float32); ``key`` is the ``mx.nd`` name, or
``name/variant`` for a second call of the same operator. An operator with no sized case
here keeps its first golden case (``small``: a per-call overhead figure, said in the
output). ``FLOORS[key]`` is a plain NumPy expression of the same forward, where one exists:
``fn(inputs, params)`` over the NumPy inputs.
"""
import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
from mxnet_golden_table import (C, CASES as GOLDEN, SAMPLERS, I, L, P, Q, S, SPD,  # noqa: E402
                                TRI, U, Z)

CASES = {}
FLOORS = {}
SIZED = set()
M = (512, 512)      # 1 MB of float32
V = (64, 64, 64)    # 1 MB, three axes


def add(key, case, floor=None):
    CASES[key] = case
    SIZED.add(key)
    if floor is not None:
        FLOORS[key] = floor


# ------------------------------------------------------------------ elementwise
_UNARY_NP = {
    'abs': np.abs, 'sin': np.sin, 'cos': np.cos, 'tan': np.tan, 'arctan': np.arctan,
    'sinh': np.sinh, 'cosh': np.cosh, 'tanh': np.tanh, 'arcsinh': np.arcsinh,
    'sigmoid': lambda x: 1 / (1 + np.exp(-x)), 'relu': lambda x: np.maximum(x, 0),
    'softsign': lambda x: x / (1 + np.abs(x)), 'exp': np.exp, 'expm1': np.expm1,
    'negative': np.negative, 'square': np.square, 'sign': np.sign, 'ceil': np.ceil,
    'floor': np.floor, 'round': np.round, 'rint': np.rint, 'fix': np.fix, 'trunc': np.trunc,
    'degrees': np.degrees, 'radians': np.radians, 'cbrt': np.cbrt, 'identity': np.copy,
    'BlockGrad': np.copy, 'stop_gradient': np.copy, 'make_loss': np.copy,
    'MakeLoss': np.copy, 'zeros_like': np.zeros_like, 'ones_like': np.ones_like,
    'logical_not': np.logical_not, 'hard_sigmoid': lambda x: np.clip(0.2 * x + 0.5, 0, 1),
    'Flatten': np.copy, 'flatten': np.copy, 'log': np.log, 'log10': np.log10,
    'log2': np.log2, 'log1p': np.log1p, 'sqrt': np.sqrt, 'rsqrt': lambda x: 1 / np.sqrt(x),
    'rcbrt': lambda x: 1 / np.cbrt(x), 'reciprocal': np.reciprocal, 'gamma': None,
    'gammaln': None, 'erf': None, 'arccosh': np.arccosh, 'arcsin': np.arcsin,
    'arccos': np.arccos, 'arctanh': np.arctanh, 'erfinv': None,
    'contrib.isfinite': np.isfinite, 'contrib.isinf': np.isinf, 'contrib.isnan': np.isnan,
    'contrib.div_sqrt_dim': lambda x: x / np.sqrt(x.shape[-1]),
    'contrib.round_ste': np.round, 'contrib.sign_ste': np.sign,
}
for _name, _f in _UNARY_NP.items():
    if _name in ('log', 'log10', 'log2', 'log1p', 'sqrt', 'rsqrt', 'rcbrt', 'reciprocal',
                 'gamma', 'gammaln'):
        _x = P(*M)
    elif _name == 'arccosh':
        _x = Q(*M)
    elif _name in ('arcsin', 'arccos', 'arctanh', 'erfinv'):
        _x = U(*M, s=0.9)
    else:
        _x = U(*M, s=3.0)
    _g = not _name.startswith(('contrib.is', 'logical')) and _name not in (
        'zeros_like', 'ones_like')
    add(_name, C('f32', _x, g=_g), _f and (lambda xs, p, f=_f: f(xs[0])))
add('softmax', C('f32', U(*M), axis=-1),
    lambda xs, p: np.exp(xs[0]) / np.exp(xs[0]).sum(-1, keepdims=True))
add('log_softmax', C('f32', U(*M), axis=-1),
    lambda xs, p: xs[0] - np.log(np.exp(xs[0]).sum(-1, keepdims=True)))
add('softmin', C('f32', U(*M), axis=-1),
    lambda xs, p: np.exp(-xs[0]) / np.exp(-xs[0]).sum(-1, keepdims=True))
add('SoftmaxActivation', C('f32', U(*M)),
    lambda xs, p: np.exp(xs[0]) / np.exp(xs[0]).sum(-1, keepdims=True))

_BIN_NP = {'add': np.add, 'plus': np.add, 'sub': np.subtract, 'minus': np.subtract,
           'mul': np.multiply, 'div': np.divide, 'maximum': np.maximum,
           'minimum': np.minimum, 'hypot': np.hypot, 'power': np.power, 'mod': np.mod,
           'equal': np.equal, 'not_equal': np.not_equal, 'greater': np.greater,
           'greater_equal': np.greater_equal, 'lesser': np.less,
           'lesser_equal': np.less_equal, 'logical_and': np.logical_and,
           'logical_or': np.logical_or, 'logical_xor': np.logical_xor,
           'subtract': np.subtract, 'multiply': np.multiply, 'divide': np.divide,
           'true_divide': np.divide, 'modulo': np.mod}
_CMP = {'equal', 'not_equal', 'greater', 'greater_equal', 'lesser', 'lesser_equal',
        'logical_and', 'logical_or', 'logical_xor'}


def _binary_inputs(op, lshape, rshape):
    if op in _CMP:
        return I(0, 3, *lshape), I(0, 3, *rshape)
    if op in ('div', 'mod', 'power', 'divide', 'true_divide', 'modulo'):
        return P(*lshape), P(*rshape)
    return U(*lshape), U(*rshape)


_WRAPPERS = ('add subtract multiply divide true_divide modulo power maximum minimum equal '
             'not_equal greater greater_equal lesser lesser_equal logical_and logical_or '
             'logical_xor').split()
for _op, _f in _BIN_NP.items():
    _fl = (lambda xs, p, f=_f: f(xs[0], xs[1]))
    _g = _op not in _CMP
    if 'broadcast_' + _op in GOLDEN:
        add('broadcast_' + _op, C('bcast', *_binary_inputs(_op, M, (512, 1)), g=_g), _fl)
    if _op in ('add', 'sub', 'mul', 'div'):
        add('elemwise_' + _op, C('same', *_binary_inputs(_op, M, M)), _fl)
    if _op in _WRAPPERS:
        add(_op, C('bcast', *_binary_inputs(_op, M, (512, 1)), g=_g), _fl)
        add(_op + '/scalar', C('scalar', _binary_inputs(_op, M, ())[0], S(1.5), g=_g),
            lambda xs, p, f=_f: f(xs[0], np.float32(1.5)))
add('clip', C('f32', U(*M), a_min=-0.5, a_max=0.4), lambda xs, p: np.clip(xs[0], -0.5, 0.4))
add('smooth_l1', C('f32', U(*M, s=3), scalar=1.0))
add('contrib.quadratic', C('f32', U(*M), a=0.5, b=-1.0, c=2.0),
    lambda xs, p: 0.5 * xs[0] ** 2 - xs[0] + 2.0)
add('contrib.gradientmultiplier', C('f32', U(*M), scalar=-0.5), lambda xs, p: xs[0].copy())
add('Activation', C('tanh', U(*M), act_type='tanh'), lambda xs, p: np.tanh(xs[0]))
add('Activation/softrelu', C('softrelu', U(*M), act_type='softrelu'),
    lambda xs, p: np.log1p(np.exp(xs[0])))
add('LeakyReLU', C('leaky', U(*M), slope=0.1), lambda xs, p: np.where(xs[0] > 0, xs[0],
                                                                      0.1 * xs[0]))
add('LeakyReLU/gelu', C('gelu', U(*M), act_type='gelu'))
add('LeakyReLU/prelu', C('prelu', U(64, 64, 64), U(64), act_type='prelu'))
add('Cast', C('to_f16', U(*M), dtype='float16'), lambda xs, p: xs[0].astype(np.float16))
add('cast', C('to_f64', U(*M), dtype='float64'), lambda xs, p: xs[0].astype(np.float64))
add('amp_cast', C('to_f16', U(*M), dtype='float16'), lambda xs, p: xs[0].astype(np.float16))
add('amp_multicast', C('two', U(*M), U(*M), num_outputs=2))
add('where', C('same', I(0, 2, *M), U(*M), U(*M)),
    lambda xs, p: np.where(xs[0] != 0, xs[1], xs[2]))
for _n in ('add_n', 'ElementWiseSum'):
    add(_n, C('three', U(*M), U(*M), U(*M)), lambda xs, p: xs[0] + xs[1] + xs[2])
add('contrib.allclose', C('close', U(*M), U(*M), rtol=10.0, atol=1.0, g=False))
add('all_finite', C('f32', U(*M), g=False), lambda xs, p: np.isfinite(xs[0]).all())
add('multi_all_finite', C('two', U(*M), U(512), num_arrays=2, g=False))
add('multi_sum_sq', C('two', U(*M), U(512), num_arrays=2, g=False),
    lambda xs, p: [np.square(x).sum() for x in xs])
add('multi_lars', C('f32', P(1024), P(1024), P(1024), P(1024), eta=0.1, eps=1e-8, g=False))
add('reset_arrays', C('two', U(*M), U(512), num_arrays=2, g=False))

# ------------------------------------------------------------------ reductions
for _n, _f in (('sum', np.sum), ('mean', np.mean), ('prod', np.prod), ('nansum', np.nansum),
               ('nanprod', np.nanprod), ('max', np.max), ('min', np.min)):
    add(_n, C('axis1', U(*V), axis=1), lambda xs, p, f=_f: f(xs[0], axis=1))
    add(_n + '/all', C('all', U(*V)), lambda xs, p, f=_f: f(xs[0]))
for _n, _f in (('sum_axis', np.sum), ('max_axis', np.max), ('min_axis', np.min)):
    add(_n, C('axis1', U(*V), axis=1), lambda xs, p, f=_f: f(xs[0], axis=1))
add('norm', C('l2_axis', U(*V), ord=2, axis=1),
    lambda xs, p: np.sqrt(np.square(xs[0]).sum(1)))
add('argmax', C('axis1', U(*V), axis=1, g=False), lambda xs, p: np.argmax(xs[0], 1))
add('argmin', C('axis1', U(*V), axis=1, g=False), lambda xs, p: np.argmin(xs[0], 1))
add('argmax_channel', C('f32', U(1024, 256), g=False), lambda xs, p: np.argmax(xs[0], 1))
add('moments', C('axes', U(*V), axes=(0, 2)),
    lambda xs, p: (xs[0].mean((0, 2)), xs[0].var((0, 2))))
add('cumsum', C('axis', U(*M), axis=1), lambda xs, p: np.cumsum(xs[0], 1))
add('histogram', C('bins', U(262144), bins=64, range=(-1.0, 1.0), g=False),
    lambda xs, p: np.histogram(xs[0], 64, (-1.0, 1.0)))
add('sort', C('asc', U(*M), g=False), lambda xs, p: np.sort(xs[0], -1))
add('argsort', C('asc', U(*M), g=False), lambda xs, p: np.argsort(xs[0], -1))
add('topk', C('indices', U(*M), k=10, g=False),
    lambda xs, p: np.argpartition(xs[0], -10, -1)[:, -10:])
add('topk/value', C('value', U(*M), k=10, ret_typ='value'))
add('topk/mask', C('mask', U(*M), k=10, ret_typ='mask', g=False))
add('topk/both_axis0', C('both', U(*M), k=10, axis=0, ret_typ='both', g=False))

# ------------------------------------------------------------------ nn layers
IMG = (8, 32, 32, 32)   # 1 MB
add('FullyConnected', C('bias', U(128, 512), U(512, 512), U(512), num_hidden=512),
    lambda xs, p: xs[0] @ xs[1].T + xs[2])
add('Convolution', C('3x3', U(8, 16, 32, 32), U(32, 16, 3, 3), U(32), kernel=(3, 3),
                     num_filter=32, pad=(1, 1)))
add('Deconvolution', C('2x2s2', U(8, 16, 16, 16), U(16, 16, 2, 2), kernel=(2, 2),
                       stride=(2, 2), num_filter=16, no_bias=True))
add('Pooling', C('max', U(*IMG), kernel=(2, 2), stride=(2, 2), pool_type='max'),
    lambda xs, p: xs[0].reshape(8, 32, 16, 2, 16, 2).max((3, 5)))
add('Pooling/avg3', C('avg_pad', U(*IMG), kernel=(3, 3), pad=(1, 1), pool_type='avg'))
add('Pooling/global', C('global', U(*IMG), kernel=(1, 1), global_pool=True, pool_type='avg'),
    lambda xs, p: xs[0].mean((2, 3), keepdims=True))
add('Dropout', C('eval', U(*M), p=0.5, train=False), lambda xs, p: xs[0].copy())
add('Embedding', C('f32', I(0, 1000, 64, 32), U(1000, 128), input_dim=1000, output_dim=128),
    lambda xs, p: xs[1][xs[0].astype(np.int64)])
add('BatchNorm', C('eval', U(*IMG), P(32), U(32), U(32), P(32), fix_gamma=False,
                   use_global_stats=True))
add('contrib.BatchNormWithReLU', C('eval', U(*IMG), P(32), U(32), U(32), P(32),
                                   fix_gamma=False, use_global_stats=True))
add('LayerNorm', C('last', U(256, 1024), U(1024), U(1024)))
add('InstanceNorm', C('f32', U(*IMG), U(32), U(32)))
add('GroupNorm', C('g4', U(*IMG), U(4), U(4), num_groups=4))
add('L2Normalization', C('instance', U(32, 64, 128), mode='instance'),
    lambda xs, p: xs[0] / np.sqrt((xs[0] ** 2).sum((1, 2), keepdims=True) + 1e-10))
add('L2Normalization/channel', C('channel', U(32, 64, 128), mode='channel'),
    lambda xs, p: xs[0] / np.sqrt((xs[0] ** 2).sum(1, keepdims=True) + 1e-10))
add('LRN', C('n5', U(*IMG), nsize=5))
add('UpSampling', C('nearest', U(8, 16, 32, 32), scale=2, sample_type='nearest'),
    lambda xs, p: xs[0].repeat(2, 2).repeat(2, 3))
for _n in ('Pad', 'pad'):
    add(_n, C('constant', U(*IMG), mode='constant', constant_value=0.5,
              pad_width=(0, 0, 0, 0, 2, 2, 2, 2)),
        lambda xs, p: np.pad(xs[0], ((0, 0), (0, 0), (2, 2), (2, 2)), constant_values=0.5))
    add(_n + '/edge', C('edge', U(*IMG), mode='edge', pad_width=(0, 0, 0, 0, 2, 2, 2, 2)),
        lambda xs, p: np.pad(xs[0], ((0, 0), (0, 0), (2, 2), (2, 2)), mode='edge'))
    add(_n + '/reflect', C('reflect', U(*IMG), mode='reflect',
                           pad_width=(0, 0, 0, 0, 2, 2, 2, 2)),
        lambda xs, p: np.pad(xs[0], ((0, 0), (0, 0), (2, 2), (2, 2)), mode='reflect'))
add('contrib.AdaptiveAvgPooling2D', C('7x7', U(*IMG), output_size=(7, 7)))
add('contrib.BilinearResize2D', C('up', U(8, 16, 32, 32), height=64, width=64))
add('RNN', C('lstm', U(32, 32, 128), U(4 * 128 * 256 + 8 * 128, s=0.1), U(1, 32, 128),
             U(1, 32, 128), state_size=128, num_layers=1, mode='lstm'))
add('contrib.DeformableConvolution', C('3x3', U(2, 16, 16, 16), U(2, 18, 16, 16),
                                       U(16, 16, 3, 3), kernel=(3, 3), pad=(1, 1),
                                       num_filter=16, no_bias=True))
add('contrib.ModulatedDeformableConvolution', C(
    '3x3', U(2, 16, 16, 16), U(2, 18, 16, 16), P(2, 9, 16, 16), U(16, 16, 3, 3), U(16),
    kernel=(3, 3), pad=(1, 1), num_filter=16))
add('im2col', C('3x3', U(8, 16, 32, 32), kernel=(3, 3), pad=(1, 1)))
add('col2im', C('3x3', U(8, 144, 1024), output_size=(32, 32), kernel=(3, 3), pad=(1, 1)))

# ------------------------------------------------------------------ losses
add('SoftmaxOutput', C('plain', U(1024, 256), I(0, 256, 1024)))
add('Softmax', C('plain', U(1024, 256), I(0, 256, 1024)))
add('SVMOutput', C('l2', U(1024, 256), I(0, 256, 1024), margin=0.5))
add('SVMOutput/l1', C('l1', U(1024, 256), I(0, 256, 1024), use_linear=True))
add('softmax_cross_entropy', C('f32', U(1024, 256), I(0, 256, 1024)))
add('LinearRegressionOutput', C('f32', U(1024, 256), U(1024, 256)),
    lambda xs, p: xs[0].copy())
add('LogisticRegressionOutput', C('f32', U(1024, 256), I(0, 2, 1024, 256)),
    lambda xs, p: 1 / (1 + np.exp(-xs[0])))
add('MAERegressionOutput', C('f32', U(1024, 256), U(1024, 256)), lambda xs, p: xs[0].copy())
for _n in ('CTCLoss', 'ctc_loss', 'contrib.CTCLoss', 'contrib.ctc_loss'):
    add(_n, C('plain', U(50, 32, 20), I(1, 20, 32, 10)))

# ------------------------------------------------------------------ shapes and copies
add('crop', C('begin_end', U(*V), begin=(0, 8, 8), end=(64, 56, 56)),
    lambda xs, p: xs[0][:, 8:56, 8:56].copy())
add('slice', C('begin_end', U(*V), begin=(0, 8, 8), end=(64, 56, 56)),
    lambda xs, p: xs[0][:, 8:56, 8:56].copy())
add('slice/step_neg', C('step_neg', U(*V), begin=(None, 60), end=(None, 0), step=(1, -2)),
    lambda xs, p: xs[0][:, 60:0:-2].copy())
add('slice_axis', C('axis1', U(*V), axis=1, begin=8, end=56),
    lambda xs, p: xs[0][:, 8:56].copy())
add('slice_like', C('axes', U(*V), U(32, 48, 64)), lambda xs, p: xs[0][:32, :48].copy())
add('Crop', C('center', U(*IMG), num_args=1, h_w=(24, 24), center_crop=True),
    lambda xs, p: xs[0][:, :, 4:28, 4:28].copy())
for _n in ('Reshape', 'reshape'):
    add(_n, C('codes', U(*V), shape=(0, -1)), lambda xs, p: xs[0].reshape(64, -1))
add('reshape_like', C('f32', U(64, 4096), U(4096, 64)), lambda xs, p: xs[0].reshape(4096, 64))
add('transpose', C('axes', U(*V), axes=(2, 0, 1)),
    lambda xs, p: np.ascontiguousarray(xs[0].transpose(2, 0, 1)))
for _n in ('SwapAxis', 'swapaxes'):
    add(_n, C('d02', U(*V), dim1=0, dim2=2),
        lambda xs, p: np.ascontiguousarray(xs[0].swapaxes(0, 2)))
add('moveaxis', C('f32', U(*V), S(0), S(-1)),
    lambda xs, p: np.ascontiguousarray(np.moveaxis(xs[0], 0, -1)))
add('expand_dims', C('axis1', U(*M), axis=1), lambda xs, p: xs[0][:, None].copy())
add('squeeze', C('all', U(512, 1, 512, 1)), lambda xs, p: xs[0].squeeze().copy())
add('flip', C('axis1', U(*V), axis=1), lambda xs, p: xs[0][:, ::-1].copy())
add('reverse', C('axes', U(*V), axis=(0, 2)), lambda xs, p: xs[0][::-1, :, ::-1].copy())
add('tile', C('reps', U(256, 256), reps=(2, 2)), lambda xs, p: np.tile(xs[0], (2, 2)))
add('repeat', C('axis', U(256, 256), repeats=2, axis=1), lambda xs, p: xs[0].repeat(2, 1))
add('broadcast_to', C('f32', U(1, 512, 1), shape=(4, 512, 128)),
    lambda xs, p: np.broadcast_to(xs[0], (4, 512, 128)).copy())
for _n in ('broadcast_axis', 'broadcast_axes'):
    add(_n, C('f32', U(1, 512, 1), axis=(0, 2), size=(4, 128)),
        lambda xs, p: np.broadcast_to(xs[0], (4, 512, 128)).copy())
add('broadcast_like', C('f32', U(1, 512), U(*M)),
    lambda xs, p: np.broadcast_to(xs[0], M).copy())
for _n in ('Concat', 'concat'):
    add(_n, C('dim1', U(512, 256), U(512, 256), dim=1),
        lambda xs, p: np.concatenate(xs, 1))
add('concatenate', C('axis1', U(512, 256), U(512, 256), axis=1, call='list', g=False),
    lambda xs, p: np.concatenate(xs, 1))
add('stack', C('axis0', U(*M), U(*M)), lambda xs, p: np.stack(xs))
add('khatri_rao', C('two', U(64, 64), U(64, 64)),
    lambda xs, p: (xs[0][:, None, :] * xs[1][None, :, :]).reshape(-1, 64))
for _n in ('SliceChannel', 'split'):
    add(_n, C('axis1', U(*M), num_outputs=4, axis=1),
        lambda xs, p: [x.copy() for x in np.split(xs[0], 4, 1)])
add('split_v2', C('sections', U(*M), S(4)),
    lambda xs, p: [x.copy() for x in np.split(xs[0], 4, 0)])
add('depth_to_space', C('b2', U(8, 64, 32, 32), block_size=2))
add('space_to_depth', C('b2', U(8, 16, 64, 64), block_size=2))
add('diag', C('mat', U(*M)), lambda xs, p: np.diag(xs[0]).copy())
add('diag/axes', C('axes', U(64, 128, 128), axis1=1, axis2=2),
    lambda xs, p: np.diagonal(xs[0], 0, 1, 2).copy())
add('shape_array', C('f32', U(*V), g=False))
add('size_array', C('f32', U(*V), g=False))
add('contrib.index_array', C('all', U(*V), g=False),
    lambda xs, p: np.moveaxis(np.indices(V), 0, -1).astype(np.int64))
add('contrib.arange_like', C('flat', U(*M), start=1.0, step=0.5, g=False),
    lambda xs, p: np.arange(M[0] * M[1], dtype=np.float32).reshape(M) * 0.5 + 1)

# ------------------------------------------------------------------ indexing
add('take', C('clip', U(1000, 256), I(0, 1000, 4096)),
    lambda xs, p: xs[0][xs[1].astype(np.int64)])
add('take/wrap_axis1', C('wrap', U(256, 1000), I(-2000, 2000, 1024), axis=1, mode='wrap'),
    lambda xs, p: np.take(xs[0], xs[1].astype(np.int64), 1, mode='wrap'))
add('batch_take', C('f32', U(4096, 64), I(0, 64, 4096, dt='int32'), g=False),
    lambda xs, p: xs[0][np.arange(4096), xs[1]])
add('pick', C('axis1', U(4096, 64), I(0, 64, 4096)),
    lambda xs, p: xs[0][np.arange(4096), xs[1].astype(np.int64)])
add('choose_element_0index', C('f32', U(4096, 64), I(0, 64, 4096), g=False),
    lambda xs, p: xs[0][np.arange(4096), xs[1].astype(np.int64)])
add('fill_element_0index', C('f32', U(4096, 64), U(4096), I(0, 64, 4096), g=False))
add('one_hot', C('f32', I(0, 64, 4096), depth=64, g=False),
    lambda xs, p: np.eye(64, dtype=np.float32)[xs[0].astype(np.int64)])
add('onehot_encode', C('f32', I(0, 64, 4096), Z(4096, 64), g=False),
    lambda xs, p: np.eye(64, dtype=np.float32)[xs[0].astype(np.int64)])
add('gather_nd', C('f32', U(256, 256, 8), I(0, 256, 2, 4096)),
    lambda xs, p: xs[0][tuple(xs[1].astype(np.int64))])
add('scatter_nd', C('f32', U(4096, 8), I(0, 256, 2, 4096), shape=(256, 256, 8)))
add('ravel_multi_index', C('f32', I(0, 256, 2, 65536), shape=(256, 256), g=False),
    lambda xs, p: np.ravel_multi_index(tuple(xs[0].astype(np.int64)), (256, 256)))
add('unravel_index', C('f32', I(0, 65536, 65536), shape=(256, 256), g=False),
    lambda xs, p: np.unravel_index(xs[0].astype(np.int64), (256, 256)))
add('contrib.boolean_mask', C('rows', U(4096, 64), I(0, 2, 4096)),
    lambda xs, p: xs[0][xs[1] != 0])
add('contrib.index_copy', C('f32', U(4096, 64), L(list(range(0, 4096, 2)), dt='int64'),
                            U(2048, 64)))
for _n in ('SequenceLast', 'SequenceMask', 'SequenceReverse'):
    add(_n, C('lengths', U(64, 32, 256), I(1, 65, 32), use_sequence_length=True))
add('SequenceReverse/plain', C('plain', U(64, 32, 256)), lambda xs, p: xs[0][::-1].copy())
add('SequenceLast/plain', C('plain', U(64, 32, 256), g=False), lambda xs, p: xs[0][-1].copy())

# ------------------------------------------------------------------ spatial, ROI, detection


def _rois(n, batch, size, angle=False):
    """n boxes [batch_index, x1, y1, x2, y2] (or centre/size/angle) inside size x size."""
    rng = np.random.RandomState(zlib.crc32(b'rois'))
    x1, y1 = rng.uniform(0, size * 0.6, (2, n))
    w, h = rng.uniform(size * 0.1, size * 0.4, (2, n))
    b = np.arange(n) % batch
    if angle:
        cols = (b, x1 + w / 2, y1 + h / 2, w, h, rng.uniform(-90, 90, n))
    else:
        cols = (b, x1, y1, x1 + w, y1 + h)
    return L(np.round(np.stack(cols, 1), 2).tolist())


def _boxes(batch, n):
    rng = np.random.RandomState(zlib.crc32(b'boxes'))
    xy = rng.uniform(0, 0.7, (batch, n, 2))
    wh = rng.uniform(0.05, 0.3, (batch, n, 2))
    return np.concatenate([xy, xy + wh], -1)


_ANCHORS = _boxes(1, 1024)
add('BilinearSampler', C('f32', U(8, 16, 64, 64), U(8, 2, 64, 64, s=0.9)))
add('GridGenerator', C('affine', U(8, 6), transform_type='affine', target_shape=(64, 64)))
add('GridGenerator/warp', C('warp', U(8, 2, 64, 64), transform_type='warp'))
add('SpatialTransformer', C('f32', U(8, 16, 64, 64),
                            L([[0.83, 0.11, 0.05, -0.07, 0.77, 0.09]] * 8, grad=True),
                            target_shape=(64, 64), transform_type='affine',
                            sampler_type='bilinear'))
add('ROIPooling', C('f32', U(4, 64, 32, 32), _rois(128, 4, 32), pooled_size=(7, 7),
                    spatial_scale=1.0))
add('contrib.ROIAlign', C('f32', U(4, 64, 32, 32), _rois(128, 4, 32), pooled_size=(7, 7),
                          spatial_scale=1.0, sample_ratio=2))
add('contrib.RROIAlign', C('f32', U(4, 16, 32, 32), _rois(128, 4, 32, angle=True),
                           pooled_size=(7, 7), spatial_scale=1.0, sampling_ratio=2, g=False))
add('contrib.PSROIPooling', C('f32', U(2, 72, 32, 32), _rois(64, 2, 32), spatial_scale=1.0,
                              output_dim=8, pooled_size=3))
add('contrib.DeformablePSROIPooling', C(
    'no_trans', U(2, 72, 32, 32), _rois(64, 2, 32), spatial_scale=1.0, output_dim=8,
    group_size=3, pooled_size=3, no_trans=True))
add('Correlation', C('d4', U(4, 32, 32, 32), U(4, 32, 32, 32), kernel_size=1,
                     max_displacement=4, stride1=1, stride2=1, pad_size=4))
add('contrib.MultiBoxPrior', C('f32', U(1, 8, 32, 32), sizes=(0.5, 0.25), ratios=(1, 2, 0.5),
                               g=False))
_labels = np.full((4, 8, 5), -1.0)
_labels[:, :, 0] = np.arange(8) % 3
_labels[:, :, 1:] = _boxes(4, 8)
add('contrib.MultiBoxTarget', C('f32', L(_ANCHORS.tolist()), L(_labels.tolist()),
                                U(4, 4, 1024), g=False))
add('contrib.MultiBoxDetection', C('f32', P(4, 4, 1024), U(4, 4096, s=0.2),
                                   L(_ANCHORS.tolist()), g=False, threshold=0.05))
_PROP = dict(scales=(8.0, 16.0, 32.0), ratios=(0.5, 1.0, 2.0), feature_stride=16,
             rpn_pre_nms_top_n=1000, rpn_post_nms_top_n=100, rpn_min_size=1, g=False)
add('contrib.Proposal', C('f32', P(1, 18, 32, 32), U(1, 36, 32, 32, s=0.2),
                          L([[512.0, 512.0, 1.0]]), **_PROP))
add('contrib.MultiProposal', C('f32', P(2, 18, 32, 32), U(2, 36, 32, 32, s=0.2),
                               L([[512.0, 512.0, 1.0], [480.0, 500.0, 1.0]]), **_PROP))
_nms = np.concatenate([np.arange(2048)[None, :, None] % 4,
                       np.random.RandomState(3).uniform(0, 1, (1, 2048, 1)),
                       _boxes(1, 2048)], -1)
for _n in ('contrib.box_nms', 'contrib.box_non_maximum_suppression'):
    add(_n, C('f32', L(_nms.tolist()), overlap_thresh=0.5, coord_start=2, score_index=1,
              id_index=0, topk=-1, g=False))
add('contrib.box_iou', C('corner', L(_boxes(1, 1024)[0].tolist()),
                         L(_boxes(1, 256)[0].tolist()), g=False))
add('contrib.box_decode', C('f32', U(4, 1024, 4, s=0.3), L(_ANCHORS.tolist()), std0=0.1,
                            std1=0.1, std2=0.2, std3=0.2))
add('contrib.box_encode', C('f32', I(-1, 2, 4, 1024), I(0, 8, 4, 1024),
                            L(np.repeat(_ANCHORS, 4, 0).tolist()),
                            L(_boxes(4, 8).tolist()), L([0.0, 0.0, 0.0, 0.0]),
                            L([0.1, 0.1, 0.2, 0.2]), g=False))
add('contrib.bipartite_matching', C('f32', U(256, 256), threshold=-0.5, g=False))
_H, _T, _B = 8, 128, 16
add('contrib.interleaved_matmul_selfatt_qk', C('f32', U(_T, _B, 3 * _H * 64), heads=_H))
add('contrib.interleaved_matmul_selfatt_valatt', C('f32', U(_T, _B, 3 * _H * 64),
                                                   U(_B * _H, _T, _T), heads=_H))
add('contrib.interleaved_matmul_encdec_qk', C('f32', U(_T, _B, _H * 64),
                                              U(_T, _B, 2 * _H * 64), heads=_H))
add('contrib.interleaved_matmul_encdec_valatt', C('f32', U(_T, _B, 2 * _H * 64),
                                                  U(_B * _H, _T, _T), heads=_H))

# ------------------------------------------------------------------ dot and linalg
add('dot', C('mm', U(256, 512), U(512, 256)), lambda xs, p: xs[0] @ xs[1])
add('dot/trans', C('trans', U(512, 256), U(256, 512), transpose_a=True, transpose_b=True),
    lambda xs, p: xs[0].T @ xs[1].T)
add('batch_dot', C('f32', U(16, 64, 128), U(16, 128, 64)), lambda xs, p: xs[0] @ xs[1])
B, N = 32, 64
_LA = {
    'gemm': (C('plain', U(B, N, N), U(B, N, N), U(B, N, N), alpha=1.5, beta=0.5),
             lambda xs, p: 1.5 * xs[0] @ xs[1] + 0.5 * xs[2]),
    'gemm2': (C('plain', U(B, N, N), U(B, N, N), alpha=2.0), lambda xs, p: 2 * xs[0] @ xs[1]),
    'det': (C('f32', SPD(B, N)), lambda xs, p: np.linalg.det(xs[0])),
    'slogdet': (C('f32', SPD(B, N)), lambda xs, p: np.linalg.slogdet(xs[0])),
    'inverse': (C('f32', SPD(B, N)), lambda xs, p: np.linalg.inv(xs[0])),
    'potrf': (C('f32', SPD(B, N)), lambda xs, p: np.linalg.cholesky(xs[0])),
    'potri': (C('f32', TRI(B, N)), None),
    'sumlogdiag': (C('f32', SPD(B, N)),
                   lambda xs, p: np.log(np.diagonal(xs[0], 0, 1, 2)).sum(-1)),
    'trmm': (C('plain', TRI(B, N), U(B, N, N), alpha=2.0),
             lambda xs, p: 2 * np.tril(xs[0]) @ xs[1]),
    'trsm': (C('plain', TRI(B, N), U(B, N, N)), None),
    'syrk': (C('plain', U(B, N, N), alpha=1.5),
             lambda xs, p: 1.5 * xs[0] @ xs[0].transpose(0, 2, 1)),
    'gelqf': (C('f32', U(B, N // 2, N)), None),
    'syevd': (C('f32', SPD(B, N // 2)), lambda xs, p: np.linalg.eigh(xs[0])),
    'extractdiag': (C('k', U(B, N, N), offset=1),
                    lambda xs, p: np.diagonal(xs[0], 1, 1, 2).copy()),
    'makediag': (C('k', U(B, N), offset=-1), None),
    'extracttrian': (C('lower', U(B, N, N)), None),
    'maketrian': (C('lower', U(B, N * (N + 1) // 2)), None),
}
for _n, (_c, _f) in _LA.items():
    add('linalg.' + _n, _c, _f)
    if 'linalg_' + _n in GOLDEN:
        add('linalg_' + _n, _c, _f)

# ------------------------------------------------------------------ creation, pdfs
add('arange', C('big', start=0.0, stop=262144.0, step=1.0, g=False),
    lambda xs, p: np.arange(0, 262144, dtype=np.float32))
add('linspace', C('big', start=0.0, stop=1.0, num=262144, g=False),
    lambda xs, p: np.linspace(0, 1, 262144, dtype=np.float32))
add('eye', C('big', N=512, M=512, k=1, g=False), lambda xs, p: np.eye(512, k=1, dtype='f4'))
add('full', C('big', shape=M, val=1.5, g=False), lambda xs, p: np.full(M, 1.5, 'f4'))
add('zeros', C('big', shape=M, g=False), lambda xs, p: np.zeros(M, 'f4'))
add('ones', C('big', shape=M, g=False), lambda xs, p: np.ones(M, 'f4'))
_S = (64, 4096)
for _d, _ins in (('normal', (U(*_S), U(64), P(64))), ('uniform', (P(*_S), U(64), Q(64))),
                 ('gamma', (P(*_S), P(64), P(64))), ('exponential', (P(*_S), P(64))),
                 ('poisson', (I(0, 5, *_S), P(64))),
                 ('negative_binomial', (I(0, 5, *_S), I(1, 4, 64), L([0.3] * 64))),
                 ('generalized_negative_binomial', (I(0, 5, *_S), P(64), P(64)))):
    add('random_pdf_' + _d, C('f32', *_ins, g=_d in ('normal', 'uniform', 'gamma',
                                                     'exponential')))
for _k, _c in SAMPLERS.items():
    if _k.endswith('shuffle'):
        add(_k, C('big', U(4096, 64), g=False))
    else:
        add(_k, dict(_c[0], g=False))

# every other mx.nd operator of the golden table keeps its first (small) case
for _k, _cs in GOLDEN.items():
    if _k not in CASES:
        _first = [c for c in _cs if c['n'] != 'size0' and not c.get('auto')] or _cs
        CASES[_k] = _first[0]
