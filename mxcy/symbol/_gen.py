"""Generate ``mx.sym.<Op>`` functions from the operator registry (same records as mx.nd).

A call names the node (NameManager), attaches scope attributes (AttrScope), parses the
parameters, and creates ``<name>_<argument>`` variables for every argument or auxiliary
state not given (``fc1_weight``, ``softmax_label``, ``bn_moving_mean``).
"""
from mxcy.attribute import current as current_attr
from mxcy.name import current as current_name
from mxcy.operator import get_op
from mxcy.operator._spec import default_arguments, drop_none_inputs, op_signature
from mxcy.symbol.symbol import Symbol, Variable, _Node, stored_attrs


def make_op_symbol(op_name, args, kwargs, name=None, attr=None):
    spec = get_op(op_name)
    if not spec.variadic and (any(a is None for a in args) or
                                  any(v is None for v in kwargs.values())):
        args, kwargs = drop_none_inputs(default_arguments(spec), spec.params.names(), args,
                                        kwargs)
    symbols = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
    params = {k: v for k, v in kwargs.items()
              if not isinstance(v, Symbol) and not _is_dunder(k)}
    extra_attr = {k: str(v) for k, v in kwargs.items() if _is_dunder(k)}
    if extra_attr:     # MXNet: keyword arguments like __layout__ are node attributes
        attr = {**(attr or {}), **extra_attr}
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
    node_attrs = stored_attrs(current_attr().get(attr))
    inputs = []
    for slot in slots:
        sym = given.get(slot)
        if sym is None:
            # as in MXNet, the op's attributes (attr=, AttrScope) go to the variables it
            # creates: attr={'lr_mult': '0.1'} sets the learning rate of fc_weight/fc_bias
            sym = Variable(f"{node_name}_{slot}", attr=node_attrs)
        if len(sym._outputs) != 1:
            raise TypeError(f"{op_name}: input '{slot}' must be a single-output symbol, "
                            f"got a group of {len(sym._outputs)}")
        inputs.append(sym._outputs[0])
    node = _Node(spec, node_name, p, node_attrs, inputs, given=params)
    visible = spec.num_visible_outputs(p)
    return Symbol([(node, i) for i in range(visible)])


def _is_dunder(key):
    return key.startswith('__') and key.endswith('__')


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
