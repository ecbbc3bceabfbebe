"""``mx.nd.random``: sampling ops, reproducible for a seed whatever the engine does.

Contract:

* One generator (NumPy ``Generator(PCG64)``) serves every sampling op. It is guarded
  by one engine variable, ``RNG_VAR``, that every sampling op lists among its WRITES,
  so sampling ops run one at a time in push order, and ``mx.random.seed`` is itself
  an op writing ``RNG_VAR`` (it replaces the generator inside the op). Hence the values
  depend only on the seed and the push order: NaiveEngine, ThreadedEngine and any
  worker count give identical arrays. The generator starts as if ``seed(0)`` ran.
* Parameters are either all numbers (``uniform(0, 1, shape=(2, 3))``; shape defaults
  to ``(1,)``) or all NDArrays of one shape (one sample set per element: the output
  shape is ``param.shape + shape``), as in MXNet 1.x.
* Numbers, shapes and dtypes are validated before the push, so bad arguments raise at
  the call. NDArray parameters are checked inside the op (their values are not known
  at the push); such an error comes back at the next wait, as any op error does.
* Floating samplers return float32 unless `dtype` or `out` says otherwise (float16,
  float32, float64); ``randint`` returns int32 or int64.

Other ops that need randomness (Dropout, initializers) push with ``push_random``.
"""
import numbers

import numpy as np

from mxcy import engine
from mxcy._ndarray import NDArray, new_empty
from mxcy.base import as_shape, dtype_code
from mxcy.context import check_usable, current_context

__all__ = [
    'exponential',
    'gamma',
    'generalized_negative_binomial',
    'negative_binomial',
    'normal',
    'normal_like',
    'poisson',
    'randint',
    'randn',
    'shuffle',
    'uniform',
    'uniform_like', 'poisson_like', 'exponential_like', 'gamma_like',
    'negative_binomial_like', 'generalized_negative_binomial_like', 'multinomial',
]

RNG_VAR = engine.new_var()
_FLOAT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
_INT_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _make_generator(seed_state):
    # Seeds are taken modulo 2**64: a negative seed acts as its two's complement.
    return np.random.Generator(np.random.PCG64(int(seed_state) % (1 << 64)))


class _State:
    """The generator; touched only inside ops that write RNG_VAR."""
    generator = _make_generator(0)


def push_seed(seed_state):
    """Push an op that replaces the generator (ordered with every sampling op)."""
    def run():
        _State.generator = _make_generator(seed_state)
    engine.push(run, (), [RNG_VAR], 0, 'random_seed')


def push_random(fn, inputs, outputs, name):
    """Push ``fn(generator, *input_views, *output_views)`` as a sampling op.

    As ``push_numpy``, but the op also writes RNG_VAR, so it draws from the generator in
    push order. `fn` must write its results into the output views.
    """
    def run():
        fn(_State.generator, *[x._np_view() for x in inputs],
           *[o._np_view() for o in outputs])
    engine.push(run, [x._chunk for x in inputs], list(outputs) + [RNG_VAR], 0, name)


# ---------------------------------------------------------------- argument handling
def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _params_kind(name, params):
    """'scalar' or 'ndarray'; the parameters must all be of one kind (MXNet's rule)."""
    if all(_is_number(v) for _, v in params):
        return 'scalar'
    if all(isinstance(v, NDArray) for _, v in params):
        first_name, first = params[0]
        for pname, v in params[1:]:
            if v.shape != first.shape:
                raise ValueError(f"{name}: NDArray parameters must have one shape, got "
                                 f"{first_name} {first.shape} and {pname} {v.shape}")
        return 'ndarray'
    kinds = ', '.join(f"{pname}={type(v).__name__}" for pname, v in params)
    raise TypeError(f"{name}: distribution parameters must be all numbers or all NDArrays, "
                    f"got {kinds}")


def _resolve_dtype(name, dtype, out, allowed, default):
    if dtype is not None:
        dtype_code(dtype, f"{name}: dtype")      # clear error for non-dtypes
        dt = np.dtype(dtype)
        if dt not in allowed:
            raise TypeError(f"{name}: dtype must be one of "
                            f"{', '.join(map(str, allowed))}, got {dt}")
        if out is not None and np.dtype(out.dtype) != dt:
            raise TypeError(f"{name}: out has dtype {np.dtype(out.dtype)} but dtype={dt} "
                            "was requested")
        return dt
    if out is not None:
        dt = np.dtype(out.dtype)
        if dt not in allowed:
            raise TypeError(f"{name}: out must have dtype "
                            f"{' or '.join(map(str, allowed))}, got {dt}")
        return dt
    return np.dtype(default)


def _resolve_shape(name, shape, out, param_shape):
    """The output shape: param_shape + shape (param_shape is () for number parameters)."""
    if shape is None:
        sample_shape = () if param_shape else None
    else:
        sample_shape = as_shape(shape, f"{name}: shape")
        if not sample_shape and not param_shape:
            raise ValueError(f"{name}: shape must have at least one dimension, got (); "
                             "MXNet 1.x arrays are at least 1-d")
    if sample_shape is None:          # number parameters, no shape: out's, else (1,)
        return out.shape if out is not None else (1,)
    full_shape = tuple(param_shape) + sample_shape
    if out is not None and out.shape != full_shape:
        raise ValueError(f"{name}: out has shape {out.shape}, but the samples have shape "
                         f"{full_shape}")
    return full_shape


def _output(name, shape, dtype, ctx, out, like=None):
    if out is not None:
        check_usable(out.context, name)
        return out
    if ctx is None:
        ctx = like.context if like is not None else current_context()
    check_usable(ctx, name)
    return new_empty(shape, dtype_code(dtype), ctx)


def _sample(name, params, check, draw, shape, dtype, ctx, out, kwargs,
            allowed=_FLOAT_DTYPES, default=np.float32):
    """Validate, allocate and push one sampling op.

    `params` is [(name, value)]; `check(*values)` returns an error message or None and
    accepts numbers or NumPy arrays; `draw(generator, out_view, *values)` fills
    out_view, with NDArray parameters reshaped to broadcast against it.
    """
    _check_kwargs(name, kwargs)
    kind = _params_kind(name, params)
    values = [v for _, v in params]
    if out is not None and not isinstance(out, NDArray):
        raise TypeError(f"{name}: out must be an NDArray, got {type(out).__name__}")
    dt = _resolve_dtype(name, dtype, out, allowed, default)
    if kind == 'scalar':
        message = check(*values)
        if message:
            raise ValueError(f"{name}: {message}")
        full_shape = _resolve_shape(name, shape, out, ())
        result = _output(name, full_shape, dt, ctx, out)
        push_random(lambda gen, o: draw(gen, o, *values), [], [result], name)
        return result
    param_shape = values[0].shape
    full_shape = _resolve_shape(name, shape, out, param_shape)
    result = _output(name, full_shape, dt, ctx, out, like=values[0])
    expand = (1,) * (len(full_shape) - len(param_shape))

    def run(gen, *views):
        *param_views, o = views
        # copies: `out` may be one of the parameters, and draw() overwrites it
        arrays = [np.array(v, np.float64).reshape(v.shape + expand) for v in param_views]
        message = check(*arrays)
        if message:
            raise ValueError(f"{name}: {message}")
        draw(gen, o, *arrays)
    push_random(run, values, [result], name)
    return result


def _fill_unit(gen, out):
    """out := uniform samples in [0, 1), drawn in out's precision."""
    if out.dtype == np.float16:
        out[...] = gen.random(out.shape, dtype=np.float32)
    else:
        gen.random(out=out, dtype=out.dtype)


def _fill_std_normal(gen, out):
    if out.dtype == np.float16:
        out[...] = gen.standard_normal(out.shape, dtype=np.float32)
    else:
        gen.standard_normal(out=out, dtype=out.dtype)


def _all(cond):
    return bool(np.all(cond))


# ---------------------------------------------------------------- samplers
def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the uniform distribution on [low, high)."""
    def draw(gen, o, lo, hi):
        _fill_unit(gen, o)
        o *= hi - lo
        o += lo
    def check(lo, hi):
        if not _all(lo <= hi):
            return (f"low must be less than or equal to high, got low={_show(lo)}, "
                    f"high={_show(hi)}")
        return _finite('low', lo) or _finite('high', hi)
    return _sample('uniform', [('low', low), ('high', high)], check, draw, shape, dtype,
                   ctx, out, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the normal distribution N(loc, scale**2)."""
    def draw(gen, o, mu, sigma):
        _fill_std_normal(gen, o)
        o *= sigma
        o += mu
    return _sample('normal', [('loc', loc), ('scale', scale)],
                   lambda mu, sigma: _positive('scale', sigma) or _finite('loc', mu),
                   draw, shape, dtype, ctx, out, kwargs)


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, out=None, **kwargs):
    """Normal samples of the given shape: ``randn(2, 3)`` (MXNet's positional shape)."""
    return normal(loc, scale, shape if shape else None, dtype, ctx, out, **kwargs)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from [low, high); int32 unless dtype/out say int64."""
    for pname, v in (('low', low), ('high', high)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"randint: {pname} must be an integer, got "
                            f"{type(v).__name__} {v!r}")
    low, high = int(low), int(high)
    if low >= high:
        raise ValueError(f"randint: low must be less than high, got low={low}, "
                         f"high={high}")
    dt = _resolve_dtype('randint', dtype, out, _INT_DTYPES, np.int32)
    info = np.iinfo(dt)
    if low < info.min or high - 1 > info.max:
        raise ValueError(f"randint: [low, high) = [{low}, {high}) does not fit in {dt}; "
                         "use dtype='int64'")

    def draw(gen, o):
        o[...] = gen.integers(low, high, size=o.shape, dtype=o.dtype)
    return _sample('randint', [('low', low), ('high', high)], lambda lo, hi: None,
                   lambda gen, o, lo, hi: draw(gen, o), shape, dt, ctx, out, kwargs,
                   allowed=_INT_DTYPES)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the exponential distribution with the given scale (1 / lambda)."""
    def draw(gen, o, beta):
        o[...] = gen.exponential(beta, size=o.shape)
    return _sample('exponential', [('scale', scale)], lambda beta: _positive('scale', beta),
                   draw, shape, dtype, ctx, out, kwargs)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the gamma distribution with shape `alpha` and scale `beta`."""
    def draw(gen, o, a, b):
        o[...] = gen.gamma(a, b, size=o.shape)
    return _sample('gamma', [('alpha', alpha), ('beta', beta)],
                   lambda a, b: _positive('alpha', a) or _positive('beta', b),
                   draw, shape, dtype, ctx, out, kwargs)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the Poisson distribution with rate `lam` (as floats, like MXNet)."""
    def draw(gen, o, rate):
        o[...] = gen.poisson(rate, size=o.shape)
    return _sample('poisson', [('lam', lam)], lambda rate: _non_negative('lam', rate),
                   draw, shape, dtype, ctx, out, kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Failures before the k-th success, each trial succeeding with probability p."""
    def draw(gen, o, kk, pp):
        o[...] = gen.negative_binomial(kk, pp, size=o.shape)
    return _sample('negative_binomial', [('k', k), ('p', p)],
                   lambda kk, pp: _positive('k', kk) or (
                       None if _all((pp > 0) & (pp <= 1)) else
                       f"p must be in (0, 1], got p={_show(pp)}"),
                   draw, shape, dtype, ctx, out, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None,
                                  out=None, **kwargs):
    """Gamma-Poisson mixture with mean `mu` and dispersion `alpha` (Poisson if alpha=0)."""
    def draw(gen, o, m, a):
        m, a = np.broadcast_to(m, o.shape), np.broadcast_to(a, o.shape)
        dispersed = a > 0
        safe_a = np.where(dispersed, a, 1.0)
        rate = np.where(dispersed, gen.gamma(1.0 / safe_a, m * safe_a), m)
        o[...] = gen.poisson(rate)
    return _sample('generalized_negative_binomial', [('mu', mu), ('alpha', alpha)],
                   lambda m, a: _non_negative('mu', m) or _non_negative('alpha', a),
                   draw, shape, dtype, ctx, out, kwargs)


def shuffle(data, out=None, **kwargs):
    """A copy of `data` with its first axis randomly permuted (``out`` may be `data`)."""
    _check_kwargs('shuffle', kwargs)
    if not isinstance(data, NDArray):
        raise TypeError(f"shuffle: data must be an NDArray, got {type(data).__name__}")
    if not data.shape:
        raise ValueError("shuffle: data must have at least one dimension")
    if out is None:
        out = new_empty(data.shape, dtype_code(data.dtype), data.context)
    elif not isinstance(out, NDArray):
        raise TypeError(f"shuffle: out must be an NDArray, got {type(out).__name__}")
    elif out.shape != data.shape or out.dtype != data.dtype:
        raise ValueError(f"shuffle: out has shape {out.shape} and dtype "
                         f"{np.dtype(out.dtype)}, expected {data.shape} "
                         f"{np.dtype(data.dtype)}")

    def run(gen, src, dst):
        dst[...] = src[gen.permutation(src.shape[0])]    # fancy indexing copies first
    push_random(run, [data], [out], 'shuffle')
    return out


def _like(dist):
    """``mx.nd.random.<dist>_like(data, params..., out=None, name=None)``: the generated
    ``_random_<dist>_like`` operator (data's shape, dtype and context)."""
    from mxcy.operator.random_ops import like_params
    pnames = like_params(dist)
    import inspect
    P = inspect.Parameter

    def fn(data=None, *args, out=None, name=None, **kwargs):
        from mxcy.ndarray._gen import function
        _check_like(f'{dist}_like', data)
        kwargs.update(zip(pnames, args))
        return function(f'_random_{dist}_like')(data, out=out, **kwargs)
    fn.__signature__ = inspect.Signature(
        [P('data', P.POSITIONAL_OR_KEYWORD, default=None)] +
        [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in pnames] +
        [P('out', P.POSITIONAL_OR_KEYWORD, default=None),
         P('name', P.POSITIONAL_OR_KEYWORD, default=None), P('kwargs', P.VAR_KEYWORD)])
    fn.__name__ = fn.__qualname__ = f'{dist}_like'
    fn.__doc__ = f"Samples of the {dist} distribution with data's shape, dtype and context."
    return fn


uniform_like = _like('uniform')
normal_like = _like('normal')
poisson_like = _like('poisson')
exponential_like = _like('exponential')
gamma_like = _like('gamma')
negative_binomial_like = _like('negative_binomial')
generalized_negative_binomial_like = _like('generalized_negative_binomial')


def multinomial(data, shape=None, get_prob=False, out=None, dtype='int32', **kwargs):
    """Indices drawn from the probabilities on data's last axis (``shape`` samples per
    distribution); with get_prob, also their log-probabilities (for REINFORCE)."""
    from mxcy.ndarray._gen import function
    if not isinstance(data, NDArray):
        raise TypeError(f"multinomial: data must be an NDArray, got {type(data).__name__}")
    return function('_sample_multinomial')(data, shape=shape or (), get_prob=get_prob,
                                           dtype=dtype, out=out, **kwargs)


def _check_kwargs(name, kwargs):
    """MXNet's generated ops accept `name`; anything else is a mistake, not ignored."""
    unknown = sorted(set(kwargs) - {'name'})
    if unknown:
        raise TypeError(f"{name}: unexpected keyword arguments {unknown}")


def _check_like(name, data):
    if not isinstance(data, NDArray):
        raise TypeError(f"{name}: data must be an NDArray, got {type(data).__name__}")


# ---------------------------------------------------------------- value checks
def _show(value):
    """A parameter for an error message: the number, or the first offending array."""
    return value if np.ndim(value) == 0 else f"array of shape {np.shape(value)}"


def _positive(pname, value):
    if not _all(value > 0):
        return f"{pname} must be positive, got {pname}={_show(value)}"


def _non_negative(pname, value):
    if not _all(value >= 0):
        return f"{pname} must be non-negative, got {pname}={_show(value)}"


def _finite(pname, value):
    if not _all(np.isfinite(value)):
        return f"{pname} must be finite, got {pname}={_show(value)}"


# ---------------------------------------------------------------- mx.nd aliases
def random_uniform(low=0, high=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    return uniform(low, high, shape, dtype, ctx, out, **kwargs)


def random_normal(loc=0, scale=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    return normal(loc, scale, shape, dtype, ctx, out, **kwargs)


def random_randint(low, high, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    return randint(low, high, shape, dtype, ctx, out, **kwargs)


def random_exponential(lam=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    """The raw op takes the rate `lam`; ``mx.nd.random.exponential`` takes the scale."""
    if not _is_number(lam):
        raise TypeError(f"random_exponential: lam must be a number, got {type(lam).__name__}")
    if not lam > 0:
        raise ValueError(f"random_exponential: lam must be positive, got lam={lam}")
    return exponential(1.0 / lam, shape, dtype, ctx, out, **kwargs)


def random_gamma(alpha=1, beta=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    return gamma(alpha, beta, shape, dtype, ctx, out, **kwargs)


def random_poisson(lam=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    return poisson(lam, shape, dtype, ctx, out, **kwargs)


def _sample_op(fn, pnames):
    """``mx.nd.sample_*``: the NDArray-parameter form only."""
    def sample(*args, shape=None, dtype=None, out=None, **kwargs):
        values = list(args) + [kwargs.pop(p) for p in pnames[len(args):] if p in kwargs]
        if len(values) != len(pnames) or not all(isinstance(v, NDArray) for v in values):
            raise TypeError(f"sample_{fn.__name__}: needs NDArray parameters "
                            f"{', '.join(pnames)}")
        return fn(*values, shape=shape, dtype=dtype, out=out, **kwargs)
    sample.__name__ = f"sample_{fn.__name__}"
    sample.__doc__ = f"``{fn.__name__}`` with one sample set per element of the NDArray " \
                     "parameters."
    return sample


sample_uniform = _sample_op(uniform, ('low', 'high'))
sample_normal = _sample_op(normal, ('mu', 'sigma'))
sample_gamma = _sample_op(gamma, ('alpha', 'beta'))
sample_poisson = _sample_op(poisson, ('lam',))

# Names that mx.nd exports directly (MXNet's generated op functions).
ND_ALIASES = ('random_uniform', 'random_normal', 'random_randint', 'random_exponential',
              'random_gamma', 'random_poisson', 'sample_uniform', 'sample_normal',
              'sample_gamma', 'sample_poisson')
