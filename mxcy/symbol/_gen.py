"""Generate ``mx.sym.<Op>`` functions from the operator registry (same records as mx.nd).

A call names the node (NameManager), attaches scope attributes (AttrScope), parses the
parameters, and creates ``<name>_<argument>`` variables for every argument or auxiliary
state not given (``fc1_weight``, ``softmax_label``, ``bn_moving_mean``).
"""
from mxcy.attribute import current as current_attr
from mxcy.name import current as current_name
from mxcy.operator import get_op
from mxcy.operator._spec import default_arguments, drop_none_inputs, op_signature
from mxcy.symbol.symbol import (HIDDEN_KEYS, Symbol, Variable, _Node, check_attr_values,
                                is_dunder, stored_attrs)

# MXNet's compose hook (FSetInputVarAttrOnCompose): the inputs these operators create
# carry their initializer as an ``__init__`` attribute
_INPUT_INIT = {('BatchNorm', 'moving_mean'): '["zero", {}]',
               ('BatchNorm', 'moving_var'): '["one", {}]',
               ('_contrib_BatchNormWithReLU', 'moving_mean'): '["zero", {}]',
               ('_contrib_BatchNormWithReLU', 'moving_var'): '["one", {}]',
               ('LeakyReLU', 'gamma'): '["Constant", {"value": 0.25}]',
               ('UpSampling', 'weight'): '["bilinear", {}]'}


def _split_attrs(spec, op_name, kwargs, attr):
    """(parameters, node attributes) as MXNet 1.9.1 sorts keyword arguments and the
    ``attr=``/AttrScope attributes: ``__key__`` and the hidden keys (``lr_mult``,
    ``ctx_group``...) are attributes (values as strings), everything else from the
    keywords is a parameter; a plain key from attr=/AttrScope is read as a parameter
    too, unless the operator takes no parameters (then it is kept as an attribute)."""
    params, attrs = {}, {}
    for key, value in kwargs.items():
        if is_dunder(key) or key in HIDDEN_KEYS:
            attrs[key] = str(value)
        else:
            params[key] = value
    scoped = stored_attrs(current_attr().get(check_attr_values(attr, op_name)))
    takes_params = bool(spec.params.names())
    for key, value in scoped.items():
        if takes_params and not is_dunder(key):
            if key not in spec.params.names():
                from mxcy.operator._params import ParamTypeError
                raise ParamTypeError(
                    f"{op_name}: attribute {key!r} (from attr= or mx.AttrScope) is not a "
                    f"parameter of this operator {spec.params.names()}; MXNet reads an "
                    "operator's plain attribute keys as parameters, so further attributes "
                    f"must look like '__{key}__' (or be one of {list(HIDDEN_KEYS)})")
            params.setdefault(key, value)
        else:
            attrs.setdefault(key, value)
    return params, stored_attrs(attrs)


def make_op_symbol(op_name, args, kwargs, name=None, attr=None):
    spec = get_op(op_name)
    if not spec.variadic and (any(a is None for a in args) or
                                  any(v is None for v in kwargs.values())):
        args, kwargs = drop_none_inputs(default_arguments(spec), spec.params.names(), args,
                                        kwargs)
    symbols = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
    params, node_attrs = _split_attrs(
        spec, op_name, {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)}, attr)
    # MXNet's generated functions take symbols first, then parameters positionally
    nsym = 0
    while nsym < len(args) and isinstance(args[nsym], Symbol):
        nsym += 1
    positional_params = args[nsym:]
    args = args[:nsym]
    if positional_params:
        # as MXNet's generated signature: every input slot comes before the parameters
        names = [n for n in spec.params.names() if n not in params]
        if any(isinstance(a, Symbol) for a in positional_params) or \
                len(positional_params) > len(names):
            raise TypeError(f"{op_name}: positional arguments must be the input symbols "
                            f"followed by at most {len(names)} parameters {names}")
        trial = {**params, **dict(zip(names, positional_params))}
        try:
            p0 = spec.params.parse(op_name, trial)
            nslots = len(spec.arguments(p0)) + len(spec.aux_states(p0))
        except (TypeError, ValueError):
            nslots = None
        if spec.variadic or nslots is None or nsym < nslots:
            raise TypeError(f"{op_name}: positional argument {nsym} must be a Symbol, got "
                            f"{type(positional_params[0]).__name__}; pass parameters as "
                            "keywords")
        params = trial
    if spec.variadic and spec.variadic not in params:
        params[spec.variadic] = len(args) + len(symbols)
    p = spec.params.parse(op_name, params)
    slots = spec.arguments(p) + spec.aux_states(p)
    if len(args) > len(slots):
        raise TypeError(f"{op_name}: takes {len(slots)} inputs {slots}, got {len(args)}")
    given = dict(zip(slots, args))
    for key, value in symbols.items():
        if key not in slots:
            raise TypeError(f"{op_name}: unexpected input '{key}'; expected {slots}")
        if key in given:
            raise TypeError(f"{op_name}: input '{key}' given twice")
        given[key] = value
    # MXNet names a contrib node after its short name (multiboxprior0, not
    # _contrib_multiboxprior0); _linalg_/_random_ ops keep their prefix
    hint = op_name[len('_contrib_'):] if op_name.startswith('_contrib_') else op_name
    node_name = current_name().get(name, hint.lower())
    # as in MXNet, the variables an operator creates carry its attributes (attr=,
    # AttrScope: attr={'lr_mult': '0.1'} sets the learning rate of fc_weight/fc_bias) and
    # its explicitly given parameters, as MXNet writes them into the JSON
    var_attrs = {k: v for k, v in p.attrs().items() if k in params}
    var_attrs.update(node_attrs)
    inputs = []
    for slot in slots:
        sym = given.get(slot)
        if sym is None:
            init = _INPUT_INIT.get((spec.name, slot))
            extra = {'__init__': init} if init else {}
            sym = Variable(f"{node_name}_{slot}", attr={**var_attrs, **extra})
        if len(sym._outputs) != 1:
            raise TypeError(f"{op_name}: input '{slot}' must be a single-output symbol, "
                            f"got a group of {len(sym._outputs)}")
        inputs.append(sym._outputs[0])
    node = _Node(spec, node_name, p, node_attrs, inputs, given=params)
    visible = spec.num_visible_outputs(p)
    return Symbol([(node, i) for i in range(visible)])


def make_function(op_name):
    def fn(*args, name=None, attr=None, out=None, **kwargs):
        return make_op_symbol(op_name, args, kwargs, name=name, attr=attr)
    fn.__name__ = op_name
    fn.__qualname__ = op_name
    spec = get_op(op_name)
    fn.__signature__ = op_signature(spec, ('name', 'attr', 'out'))
    fn.__doc__ = (spec.__class__.__doc__ or op_name) + \
        f"\n\nParameters: {', '.join(spec.params.names()) or 'none'}."
    return fn


_METHOD_CACHE = {}


def method_op(name):
    """The registered operator usable as ``sym.<name>(...)`` (None when there is none)."""
    from mxcy.operator import list_ops
    if name not in _METHOD_CACHE:
        _METHOD_CACHE[name] = make_function(name) if name in list_ops() else None
    return _METHOD_CACHE[name]


def install(namespace):
    """Put a function for every registered operator into `namespace` (a module dict)."""
    from mxcy.operator import list_ops
    for op_name in list_ops():
        if op_name not in namespace:
            namespace[op_name] = make_function(op_name)
