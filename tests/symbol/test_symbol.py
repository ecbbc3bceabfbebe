"""mx.sym: variables, operators, arithmetic, groups, internals, attributes, composition,
debug_str; the MXNet.jl guide's "Intermediate Level Interface" examples as tests."""
import json

import numpy as np
import pytest

import mxcy as mx
from mxcy.test_utils import simple_forward


@pytest.fixture(autouse=True)
def fresh_names():
    """Every test names from zero, as in a fresh MXNet process."""
    with mx.name.NameManager():
        yield


def mlp():
    """The 2-layer MLP of the guide."""
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data=net, name='fc1', num_hidden=128)
    net = mx.sym.Activation(data=net, name='relu1', act_type="relu")
    net = mx.sym.FullyConnected(data=net, name='fc2', num_hidden=64)
    return mx.sym.SoftmaxOutput(data=net, name='out')


# ---------------------------------------------------------------- variables
def test_variable_attributes_as_mxnet_stores_them():
    init = mx.init.Uniform(0.1)
    a = mx.sym.Variable('a', shape=(2, 3), dtype='float64', init=init, lr_mult=2,
                        wd_mult=0.5, attr={'mood': 'calm'}, __extra__='1')
    assert a.name == 'a' and a.list_arguments() == ['a'] and a.list_outputs() == ['a']
    attrs = a.list_attr()
    # MXNet: dtype as its type flag (float64 = 1), lr/wd_mult hidden as __x__ and
    # listed under both names, init as the initializer's dumps()
    assert attrs == {'__shape__': '(2, 3)', '__dtype__': '1', '__init__': init.dumps(),
                     '__lr_mult__': '2', 'lr_mult': '2', '__wd_mult__': '0.5',
                     'wd_mult': '0.5', 'mood': 'calm', '__extra__': '1'}
    assert a.attr('lr_mult') == '2' and a.attr('__lr_mult__') == '2'
    assert a.attr('missing') is None
    assert a.attr_dict() == {'a': attrs}
    assert mx.sym.var('x', init='zeros').attr('__init__') == 'zeros'
    assert mx.sym.var is mx.sym.Variable
    for dtype, flag in ((np.float32, '0'), ('float16', '2'), (np.int32, '4'), ('int64', '6')):
        assert mx.sym.var('v', dtype=dtype).attr('__dtype__') == flag


def test_variable_rejects_bad_arguments():
    with pytest.raises(TypeError, match='name must be a string'):
        mx.sym.Variable(3)
    with pytest.raises(ValueError, match="'extra'"):
        mx.sym.Variable('a', extra='1')
    with pytest.raises(TypeError, match='Variable shape'):
        mx.sym.Variable('a', shape='big')
    with pytest.raises(TypeError, match='Variable dtype'):
        mx.sym.Variable('a', dtype='complex64')
    with pytest.raises(ValueError, match='stype'):
        mx.sym.Variable('a', stype='sparse')
    assert mx.sym.Variable('a', stype='default').attr('__storage_type__') == '0'


# ---------------------------------------------------------------- operators and arithmetic
def test_operator_functions_create_named_parameters():
    fc = mx.sym.FullyConnected(data=mx.sym.var('data'), num_hidden=10, name='fc')
    assert fc.name == 'fc'
    assert fc.list_arguments() == ['data', 'fc_weight', 'fc_bias']
    assert fc.list_outputs() == ['fc_output']
    nb = mx.sym.FullyConnected(data=mx.sym.var('data'), num_hidden=10, no_bias=True)
    assert nb.list_arguments() == ['data', 'fullyconnected0_weight']
    # positional data, a given weight symbol
    w = mx.sym.var('w')
    fc2 = mx.sym.FullyConnected(mx.sym.var('x'), w, num_hidden=3, name='f')
    assert fc2.list_arguments() == ['x', 'w', 'f_bias']
    with pytest.raises(TypeError, match="FullyConnected: unexpected input 'wieght'"):
        mx.sym.FullyConnected(data=mx.sym.var('x'), wieght=w, num_hidden=3)
    with pytest.raises(TypeError, match="required parameter 'num_hidden'"):
        mx.sym.FullyConnected(data=mx.sym.var('x'))
    with pytest.raises(TypeError, match='positional argument 1 must be a Symbol'):
        mx.sym.FullyConnected(mx.sym.var('x'), 3)


# expression, MXNet 1.9's node name, NumPy reference (recorded from MXNet 1.9.1)
ARITH = [
    ('a + b', '_plus0', lambda a, b: a + b),
    ('a - b', '_minus0', lambda a, b: a - b),
    ('a * b', '_mul0', lambda a, b: a * b),
    ('a / b', '_div0', lambda a, b: a / b),
    ('a % b', '_mod0', lambda a, b: np.mod(a, b)),
    ('a ** b', '_power0', lambda a, b: a ** b),
    ('a + 2', '_plusscalar0', lambda a, b: a + 2),
    ('2 + a', '_plusscalar0', lambda a, b: 2 + a),
    ('a - 2', '_minusscalar0', lambda a, b: a - 2),
    ('2 - a', '_rminusscalar0', lambda a, b: 2 - a),
    ('a * 2', '_mulscalar0', lambda a, b: a * 2),
    ('2 * a', '_mulscalar0', lambda a, b: 2 * a),
    ('a / 2', '_divscalar0', lambda a, b: a / 2),
    ('2 / a', '_rdivscalar0', lambda a, b: 2 / a),
    ('a % 2', '_modscalar0', lambda a, b: np.mod(a, 2)),
    ('2 % a', '_rmodscalar0', lambda a, b: np.mod(2, a)),
    ('a ** 2', '_powerscalar0', lambda a, b: a ** 2),
    ('2 ** a', '_rpower_scalar0', lambda a, b: 2 ** a),
    ('-a', '_mulscalar0', lambda a, b: -a),
    ('a == b', '_equal0', lambda a, b: a == b),
    ('a != b', '_not_equal0', lambda a, b: a != b),
    ('a > b', '_greater0', lambda a, b: a > b),
    ('a >= b', '_greater_equal0', lambda a, b: a >= b),
    ('a < b', '_lesser0', lambda a, b: a < b),
    ('a <= b', '_lesser_equal0', lambda a, b: a <= b),
    ('a == 2', '_equal_scalar0', lambda a, b: a == 2),
    ('a != 2', '_not_equal_scalar0', lambda a, b: a != 2),
    ('a > 2', '_greater_scalar0', lambda a, b: a > 2),
    ('a >= 2', '_greater_equal_scalar0', lambda a, b: a >= 2),
    ('a < 2', '_lesser_scalar0', lambda a, b: a < 2),
    ('a <= 2', '_lesser_equal_scalar0', lambda a, b: a <= 2),
    ('2 < a', '_greater_scalar0', lambda a, b: a > 2),
]


@pytest.mark.parametrize('expr,name,ref', ARITH, ids=[e for e, _, _ in ARITH])
def test_arithmetic_names_and_values(expr, name, ref):
    sym = eval(expr, {}, {'a': mx.sym.var('a'), 'b': mx.sym.var('b')})
    assert sym.name == name
    x = np.array([[1., 2., 3.], [4., 2., 0.5]], dtype=np.float32)
    y = np.array([[2., 2., 1.], [3., 5., 2.]], dtype=np.float32)
    inputs = {'a': x, 'b': y} if 'b' in sym.list_arguments() else {'a': x}
    np.testing.assert_allclose(simple_forward(sym, **inputs),
                               ref(x, y).astype(np.float32), rtol=1e-6)


def test_arithmetic_with_numpy_scalars_and_bad_operands():
    a = mx.sym.var('a')
    assert (a * np.float32(3)).name == '_mulscalar0'
    np.testing.assert_allclose(simple_forward(a * np.float64(3), a=np.ones(2)), [3, 3])
    with pytest.raises(TypeError):
        a + 'x'
    with pytest.raises(TypeError):
        a + [1]
    with pytest.raises(TypeError, match='truth value'):
        bool(a)


def test_methods_resolve_to_registered_operators():
    a = mx.sym.var('a')
    e = a.exp()
    assert e.name == 'exp0'
    np.testing.assert_allclose(simple_forward(e, a=np.array([0., 1.])), np.exp([0., 1.]),
                               rtol=1e-6)
    with pytest.raises(AttributeError, match='no_such_op'):
        a.no_such_op()


# ---------------------------------------------------------------- groups, internals, children
def test_group_outputs_indexing_and_repr():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    g = mx.sym.Group([a + b, a * b])
    assert g.list_outputs() == ['_plus0_output', '_mul0_output']
    assert g.name is None and len(g) == 2
    assert repr(g) == '<Symbol group [_plus0, _mul0]>'
    assert g[1].name == '_mul0' and g[-1].name == '_mul0'
    assert g['_mul0_output'].name == '_mul0'
    assert [s.name for s in g] == ['_plus0', '_mul0']
    assert g.list_arguments() == ['a', 'b']
    with pytest.raises(IndexError, match='out of range'):
        g[2]
    with pytest.raises(ValueError, match="no output named 'nope'.*_plus0_output"):
        g['nope']
    with pytest.raises(TypeError):
        g[1.5]
    with pytest.raises(TypeError, match='Group'):
        mx.sym.Group([a, 3])
    with pytest.raises(ValueError, match='at least one'):
        mx.sym.Group([])
    x, y = simple_forward(g, a=np.array([1., 2.]), b=np.array([3., 4.]))
    np.testing.assert_allclose(x, [4., 6.])
    np.testing.assert_allclose(y, [3., 8.])


def test_get_internals_and_children():
    net = mlp()
    internals = net.get_internals()
    assert internals.list_outputs() == [
        'data', 'fc1_weight', 'fc1_bias', 'fc1_output', 'relu1_output', 'fc2_weight',
        'fc2_bias', 'fc2_output', 'out_label', 'out_output']
    fc1 = internals['fc1_output']
    assert fc1.name == 'fc1'
    assert fc1.list_arguments() == ['data', 'fc1_weight', 'fc1_bias']
    # a feature extractor: the internal output runs on its own
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    w = np.ones((128, 5), np.float32)
    out = simple_forward(fc1, data=x, fc1_weight=w, fc1_bias=np.zeros(128))
    np.testing.assert_allclose(out, x @ w.T, rtol=1e-5)
    children = net.get_children()
    assert children.list_outputs() == ['fc2_output', 'out_label']
    assert mx.sym.var('v').get_children() is None
    assert mx.sym.var('v').get_internals().list_outputs() == ['v']
    # children of a group: the inputs of each head node (MXNet's MXSymbolGetChildren)
    grouped = internals.get_children()
    assert grouped.list_outputs() == ['data', 'fc1_weight', 'fc1_bias', 'fc1_output',
                                      'relu1_output', 'fc2_weight', 'fc2_bias',
                                      'fc2_output', 'out_label']


# ---------------------------------------------------------------- attributes
def test_op_attributes_are_the_given_parameters():
    fc = mx.sym.FullyConnected(data=mx.sym.var('data'), num_hidden=10, name='fc',
                               attr={'lr_mult': '0.1', '__note__': 'x'})
    # MXNet keeps only what was given, defaults are not attributes
    assert fc.list_attr() == {'num_hidden': '10', '__lr_mult__': '0.1', 'lr_mult': '0.1',
                              '__note__': 'x'}
    assert fc.attr('num_hidden') == '10' and fc.attr('no_bias') is None
    # the variables it creates carry its attributes and given parameters (MXNet's JSON)
    assert fc.attr_dict() == {'fc': fc.list_attr(), 'fc_weight': fc.list_attr(),
                              'fc_bias': fc.list_attr()}
    fc._set_attr(mirror_stage='1', __color__='red')
    assert fc.attr('mirror_stage') == '1' and fc.attr('__mirror_stage__') == '1'
    assert fc.attr('__color__') == 'red'
    with pytest.raises(ValueError, match='string'):
        fc._set_attr(__color__=1)
    # MXNet reads an operator's plain keys as parameters: refused, naming the key
    with pytest.raises(mx.MXNetError, match="'color'"):
        fc._set_attr(color='red')
    with pytest.raises(mx.MXNetError, match=r"attribute 'note' .*'__note__'"):
        mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=10, attr={'note': 'x'})
    with pytest.raises(mx.MXNetError, match=r"unexpected parameter\(s\) \['foo'\]"):
        mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=10, foo='bar')
    # keyword arguments: hidden keys and __key__ are attributes, as in MXNet
    fc2 = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, lr_mult=0.5,
                                ctx_group='dev1', __layout__='NC', name='fc2')
    assert fc2.list_attr() == {'num_hidden': '2', '__lr_mult__': '0.5', 'lr_mult': '0.5',
                               '__ctx_group__': 'dev1', 'ctx_group': 'dev1',
                               '__layout__': 'NC'}
    # as in MXNet, the op's attributes reach the parameter variables it creates, so
    # attr={'lr_mult': ...} on a layer sets its weight's and bias's learning rate
    for param in ('fc_weight', 'fc_bias'):
        assert fc.get_internals()[param].attr('lr_mult') == '0.1'
    assert fc.get_internals()['data'].attr('lr_mult') is None
    g = mx.sym.Group([fc, fc])
    with pytest.raises(mx.MXNetError, match='single-output'):
        g.attr('num_hidden')
    with pytest.raises(DeprecationWarning):
        fc.list_attr(recursive=True)


def test_attr_scope_nests_and_restores():
    with mx.AttrScope(group='4', data='great'):
        x = mx.sym.Variable('x', attr={'dtype': 'data', 'group': '1'})
        with mx.AttrScope(group='5'):
            y = mx.sym.Variable('y')
            # an operator with parameters reads plain keys as parameters (MXNet raises
            # "Cannot find argument 'group'")
            with pytest.raises(mx.MXNetError, match="'group'"):
                mx.sym.FullyConnected(y, num_hidden=2, name='fc')
        z = x + y
    with mx.AttrScope(__group__='5'):
        fc = mx.sym.FullyConnected(y, num_hidden=2, name='fc')
    w = mx.sym.Variable('w')
    # the values MXNet 1.9.1 gives for this example
    assert x.list_attr() == {'dtype': 'data', 'data': 'great', 'group': '1'}
    assert y.list_attr() == {'data': 'great', 'group': '5'}
    assert z.list_attr() == {'data': 'great', 'group': '4'}
    assert fc.attr('__group__') == '5' and fc.attr('num_hidden') == '2'
    # auto-created parameter variables carry the scope too
    assert fc.get_internals()['fc_weight'].attr('__group__') == '5'
    assert w.list_attr() == {}
    with mx.AttrScope(ctx_group='dev1'):
        v = mx.sym.var('v')
    assert v.list_attr() == {'__ctx_group__': 'dev1', 'ctx_group': 'dev1'}
    with pytest.raises(ValueError, match="AttrScope: attribute 'group' must be a string"):
        mx.AttrScope(group=1)


# ---------------------------------------------------------------- composition and listing
def test_guide_composition():
    net = mlp()
    data2 = mx.sym.Variable('data2')
    net2 = mx.sym.FullyConnected(data=data2, name='net2', num_hidden=128)
    composed = net2(data2=net, name='composed')
    assert composed.list_arguments() == ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight',
                                         'fc2_bias', 'out_label', 'net2_weight', 'net2_bias']
    # the originals are unchanged
    assert net2.list_arguments() == ['data2', 'net2_weight', 'net2_bias']
    assert net.list_arguments() == ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight',
                                    'fc2_bias', 'out_label']
    # positional composition fills list_arguments() in order
    c2 = net2(net)
    assert c2.list_arguments() == composed.list_arguments()
    _, outs, _ = composed.infer_shape(data=(4, 20))
    assert outs == [(4, 128)]
    with pytest.raises(ValueError, match="no free variable 'data3'"):
        net2(data3=net)
    with pytest.raises(TypeError, match='single-output Symbol'):
        net2(data2=3)
    with pytest.raises(TypeError, match='not both'):
        net2(net, data2=net)


def test_guide_mlp_lists_and_print():
    net = mlp()
    # the arguments the guide prints for the 2-layer MLP
    assert net.list_arguments() == ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight',
                                    'fc2_bias', 'out_label']
    assert net.list_outputs() == ['out_output']
    assert net.list_auxiliary_states() == []
    assert net.list_inputs() == net.list_arguments()
    assert str(net) == repr(net) == '<Symbol out>'
    # a variable used twice is listed once
    a = mx.sym.var('a')
    assert (a * a + a).list_arguments() == ['a']


def test_copy_is_independent():
    import copy
    net = mlp()
    for dup in (net.copy(), copy.copy(net), copy.deepcopy(net)):
        assert dup.tojson() == net.tojson()
        dup._set_attr(__tag__='x')
        assert net.attr('__tag__') is None and dup.attr('__tag__') == 'x'


def test_debug_str_matches_mxnet_format():
    d = mx.sym.var('data')
    fc = mx.sym.FullyConnected(d, num_hidden=3, name='fc')
    act = mx.sym.Activation(fc, act_type='relu', name='r')
    # the text MXNet 1.9.1 prints for this graph
    expected = ("Symbol Outputs:\n\toutput[0]=r(0)\nVariable:data\nVariable:fc_weight\n"
                "Variable:fc_bias\n--------------------\nOp:FullyConnected, Name=fc\n"
                "Inputs:\n\targ[0]=data(0) version=0\n\targ[1]=fc_weight(0) version=0\n"
                "\targ[2]=fc_bias(0) version=0\nAttrs:\n\tnum_hidden=3\n"
                "--------------------\nOp:Activation, Name=r\nInputs:\n\targ[0]=fc(0)\n"
                "Attrs:\n\tact_type=relu\n")
    assert act.debug_str() == expected
    assert d.debug_str() == 'Variable:data\n'
    grouped = mx.sym.Group([act, d]).debug_str()
    assert grouped.startswith("Symbol Outputs:\n\toutput[0]=r(0)\n\toutput[1]=data(0)\n")


def test_eval_and_pickle():
    import pickle
    a, b = mx.sym.var('a'), mx.sym.var('b')
    c = a * b + 1
    out = c.eval(ctx=mx.cpu(), a=mx.nd.array([1., 2.]), b=mx.nd.array([3., 4.]))
    np.testing.assert_allclose(out[0].asnumpy(), [4., 9.])
    back = pickle.loads(pickle.dumps(c))
    assert back.tojson() == c.tojson()
    assert json.loads(back.tojson())['heads'] == [[3, 0, 0]]
