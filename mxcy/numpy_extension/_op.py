"""``mx.npx``'s operators: each is the registry operator ``mx.nd`` runs, returning
``mx.np.ndarray``.

`OPS` maps MXNet 1.9.1's npx name to the registered operator (``npx.fully_connected`` is
``FullyConnected``, ``npx.reshape`` is ``_npx_reshape``); the functions are made from the
same records as ``mx.nd.<Op>`` (`mxcy.ndarray._gen`), so their parameters, defaults,
checks and gradients are the operator's own and autograd records them. ``mx.np.ndarray``
subclasses NDArray, so inputs go in as they are; outputs come back as ``mx.np.ndarray``
over the same memory (autograd's record travels with them).

``nonzero`` (a data-dependent shape) waits for its input and is computed on the host, as
MXNet's does; it has no gradient (integer output).
"""
import numpy as _onp

from mxcy._ndarray import NDArray
from mxcy.ndarray import _gen

# npx name -> registry operator
OPS = {
    'activation': 'Activation', 'arange_like': '_contrib_arange_like',
    'batch_dot': 'batch_dot', 'batch_flatten': 'Flatten', 'batch_norm': 'BatchNorm',
    'cast': 'Cast', 'convolution': 'Convolution', 'deconvolution': 'Deconvolution',
    'dropout': 'Dropout', 'embedding': 'Embedding', 'erf': 'erf', 'erfinv': 'erfinv',
    'fully_connected': 'FullyConnected', 'gamma': 'gamma', 'gammaln': 'gammaln',
    'gather_nd': 'gather_nd', 'layer_norm': 'LayerNorm', 'leaky_relu': 'LeakyReLU',
    'log_softmax': 'log_softmax', 'multibox_detection': '_contrib_MultiBoxDetection',
    'multibox_prior': '_contrib_MultiBoxPrior', 'multibox_target': '_contrib_MultiBoxTarget',
    'one_hot': 'one_hot', 'pick': 'pick', 'pooling': 'Pooling', 'relu': 'relu',
    'reshape_like': 'reshape_like', 'rnn': 'RNN', 'roi_pooling': 'ROIPooling',
    'sequence_mask': 'SequenceMask', 'shape_array': 'shape_array', 'sigmoid': 'sigmoid',
    'slice': 'slice', 'smooth_l1': 'smooth_l1', 'softmax': 'softmax', 'topk': 'topk',
}


_NP = []          # [mx.np.ndarray], filled at the first use (mxcy.numpy imports later)


def as_np(x):
    """`x` (an NDArray, or a list/tuple of them) as mx.np.ndarray, without a copy."""
    if isinstance(x, NDArray):
        if not _NP:
            from mxcy.numpy import ndarray
            _NP.append(ndarray)
        cls = _NP[0]
        return x if type(x) is cls else x._as_class(cls)
    if isinstance(x, (list, tuple)):
        return type(x)(as_np(v) for v in x)
    return x


def make(npx_name, op_name):
    """The ``npx.<npx_name>`` function: the operator's ``mx.nd`` call, np outputs."""
    call = _gen.caller(op_name, npx_name)
    nd_fn = _gen.function(op_name)

    def fn(*args, out=None, name=None, **kwargs):
        return as_np(call(args, kwargs, out))
    fn.__name__ = fn.__qualname__ = npx_name
    fn.__module__ = 'mxcy.numpy_extension'
    fn.__signature__ = nd_fn.__signature__
    fn.__doc__ = (f"``npx.{npx_name}``: the {op_name} operator on mx.np arrays.\n\n" +
                  (nd_fn.__doc__ or ''))
    return fn


_reshape_call = _gen.caller('_npx_reshape', 'reshape')


def reshape(a, newshape, reverse=False, order='C'):
    """`a` with a new shape; `newshape` takes npx's codes -1 (infer), -2 (copy a dim),
    -3 (drop a size-1 dim), -4 (copy the rest), -5 (merge two dims), -6 (split a dim in
    the next two values); `reverse` reads them from the right. Only order 'C'."""
    if not isinstance(a, NDArray):
        raise TypeError(f"reshape: a must be an mx.np.ndarray, got {type(a).__name__}")
    if isinstance(newshape, int):
        newshape = (newshape,)
    return as_np(_reshape_call((a,), {'newshape': tuple(newshape), 'reverse': reverse,
                                      'order': order}, None))


def nonzero(a):
    """The indices of `a`'s non-zero elements, one row each: shape (N, a.ndim), int64."""
    if not isinstance(a, NDArray):
        raise TypeError(f"nonzero: a must be an mx.np.ndarray, got {type(a).__name__}")
    from mxcy import numpy as np
    return np.array(_onp.argwhere(a.asnumpy()).astype(_onp.int64), ctx=a.context)


def constraint_check(x, msg):
    """Raise ValueError(`msg`) unless every element of the boolean `x` is true; returns
    a 0-d boolean True."""
    from mxcy import numpy as np
    if not isinstance(x, NDArray) or _onp.dtype(x.dtype) != _onp.bool_:
        got = _onp.dtype(x.dtype).name if isinstance(x, NDArray) else type(x).__name__
        raise TypeError(f"constraint_check: x must be a boolean mx.np.ndarray, got {got}")
    if not bool(x.asnumpy().all()):
        raise ValueError(f"constraint_check: {msg}")
    return np.array(True, ctx=x.context)
