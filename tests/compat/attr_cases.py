"""Symbols built with attributes in every form MXNet 1.9.1 accepts (and some it refuses).

Shared by tools/mxnet_attr_fixtures.py (run with MXNet as `mx`: records MXNet's
``tojson()``, ``list_attr()``, ``attr_dict()`` and ``attr(key)`` answers, or that it
raised, into attr_golden.json) and test_attr_golden.py (run with mxcy as `mx`). Each case
is a function of the `mx` module that returns a Symbol.
"""


def _var_everything(mx):
    return mx.sym.Variable('w', lr_mult=2.0, wd_mult=0.5, init=mx.init.Xavier(),
                           dtype='float16', shape=(3, 4), stype='default',
                           attr={'mood': 'ok', '__x__': 'y'}, __layout__='NCHW')


CASES = {
    'var_everything': _var_everything,
    'var_plain': lambda mx: mx.sym.Variable('v'),
    'var_init_str': lambda mx: mx.sym.Variable('v', init='zeros'),
    'var_init_uniform': lambda mx: mx.sym.Variable('v', init=mx.init.Uniform(0.1)),
    'var_stype_csr': lambda mx: mx.sym.Variable('v', stype='csr'),
    'var_shape_list': lambda mx: mx.sym.Variable('v', shape=[2, 3]),
    'var_shape_tuple': lambda mx: mx.sym.Variable('v', shape=(2, 0)),
    'var_dtype_int32': lambda mx: mx.sym.Variable('v', dtype='int32'),
    'var_dtype_numpy': lambda mx: mx.sym.Variable('v', dtype=__import__('numpy').float64),
    'var_lr_mult_int': lambda mx: mx.sym.Variable('v', lr_mult=1),
    'var_wd_mult_str': lambda mx: mx.sym.Variable('v', wd_mult='0.5'),
    'var_attr_hidden_keys': lambda mx: mx.sym.Variable(
        'v', attr={'ctx_group': 'a', 'profiler_scope': 'p:', 'force_mirroring': 'True'}),
    'var_bad_kwarg': lambda mx: mx.sym.Variable('v', foo='bar'),
    'var_attr_int': lambda mx: mx.sym.Variable('v', attr={'a': 1}),
    'var_dunder_int': lambda mx: mx.sym.Variable('v', __k__=1),
    'fc_plain': lambda mx: mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=4,
                                                 name='fc'),
    'fc_unknown_kwarg': lambda mx: mx.sym.FullyConnected(mx.sym.Variable('data'),
                                                         num_hidden=4, foo='bar', name='fc'),
    'fc_dunder_kwarg': lambda mx: mx.sym.FullyConnected(mx.sym.Variable('data'),
                                                        num_hidden=4, __foo__='x', name='fc'),
    'fc_dunder_int': lambda mx: mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=4,
                                                      __k__=1, name='fc'),
    'fc_lr_mult_kwarg': lambda mx: mx.sym.FullyConnected(mx.sym.Variable('data'),
                                                         num_hidden=4, lr_mult=0.1, name='fc'),
    'fc_ctx_group_kwarg': lambda mx: mx.sym.FullyConnected(
        mx.sym.Variable('data'), num_hidden=4, ctx_group='dev1', name='fc'),
    'fc_attr_hidden': lambda mx: mx.sym.FullyConnected(
        mx.sym.Variable('data'), num_hidden=4, attr={'lr_mult': '0.1', '__k__': 'v'},
        name='fc'),
    'fc_attr_dunder_lr': lambda mx: mx.sym.FullyConnected(
        mx.sym.Variable('data'), num_hidden=4, attr={'__lr_mult__': '0.1'}, name='fc'),
    'fc_attr_plain_key': lambda mx: mx.sym.FullyConnected(
        mx.sym.Variable('data'), num_hidden=4, attr={'k': 'v'}, name='fc'),
    'fc_given_weight_attr': lambda mx: mx.sym.FullyConnected(
        mx.sym.Variable('data'), mx.sym.Variable('w', wd_mult=0), num_hidden=4,
        attr={'__k__': 'v'}, name='fc'),
    'fc_no_bias_attr': lambda mx: mx.sym.FullyConnected(
        mx.sym.Variable('data'), num_hidden=4, no_bias=True, flatten=False,
        __lr_mult__=0.5, name='fc'),
    'conv_layout': lambda mx: mx.sym.Convolution(mx.sym.Variable('data'), kernel=(3, 3),
                                                 num_filter=2, __layout__='NCHW', name='c'),
    'bn_aux_attr': lambda mx: mx.sym.BatchNorm(mx.sym.Variable('data'), fix_gamma=False,
                                               attr={'ctx_group': 'g'}, name='bn'),
    'prelu_gamma_init': lambda mx: mx.sym.LeakyReLU(mx.sym.Variable('data'),
                                                    act_type='prelu', name='pr'),
    'upsampling_weight_init': lambda mx: mx.sym.UpSampling(
        mx.sym.Variable('data'), scale=2, sample_type='bilinear', num_filter=2, name='up'),
    'elemwise_attr': lambda mx: mx.sym.elemwise_add(mx.sym.Variable('a'),
                                                    mx.sym.Variable('b'),
                                                    attr={'__a__': 'b'}, name='p'),
    'softmax_label_attr': lambda mx: mx.sym.SoftmaxOutput(
        mx.sym.Variable('data'), __wd_mult__='0', name='sm'),
    'scope_hidden': lambda mx: _scoped(mx, {'ctx_group': 'g1'}, {'__k3__': 'v3'}),
    'scope_plain_key_on_op': lambda mx: _scoped(mx, {'k2': 'v2'}, {}),
    'scope_var_only': lambda mx: _scoped_var(mx),
    'set_attr': lambda mx: _set_attr(mx),
    'set_attr_int': lambda mx: _set_attr(mx, mood=1),
    'group': lambda mx: mx.sym.Group([
        mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, lr_mult=3, name='fc'),
        mx.sym.relu(mx.sym.Variable('x', __y__='z'), name='r')]),
}


def _scoped(mx, outer, inner):
    with mx.AttrScope(**outer):
        with mx.AttrScope(**inner):
            x = mx.sym.Variable('x', attr={'__k3__': 'over'})
            return mx.sym.Activation(x, act_type='relu', name='act',
                                     attr={'__k4__': 'x'})


def _scoped_var(mx):
    with mx.AttrScope(group='1', __g__='2'):
        x = mx.sym.Variable('x')
    return x


def _set_attr(mx, **attrs):
    s = mx.sym.Activation(mx.sym.Variable('x'), act_type='relu', name='act')
    s._set_attr(**(attrs or {'mood': 'happy', 'lr_mult': '3', '__k__': 'v'}))
    return s


# attr(key) looked up on each case's head (absent keys included: they give None)
KEYS = ('lr_mult', '__lr_mult__', 'wd_mult', 'ctx_group', '__ctx_group__', 'num_hidden',
        '__shape__', '__dtype__', '__init__', 'mood', '__layout__', 'k2', 'nothing')
