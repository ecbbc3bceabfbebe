"""Which mx.nd functions are also NDArray methods (``a.sum()`` is ``mx.nd.sum(a)``)."""

# MXNet 1.x NDArray methods that take the array as their first argument.
METHOD_NAMES = (
    'sum', 'mean', 'max', 'min', 'prod', 'argmax', 'argmin', 'norm', 'nansum', 'nanprod',
    'transpose', 'swapaxes', 'expand_dims', 'flatten', 'squeeze', 'split', 'slice',
    'slice_axis', 'slice_like', 'clip', 'exp', 'log', 'sqrt', 'rsqrt', 'square', 'abs',
    'sign', 'relu', 'sigmoid', 'tanh', 'floor', 'ceil', 'round', 'rint', 'fix', 'trunc',
    'log1p', 'expm1', 'log2', 'log10', 'sin', 'cos', 'tan', 'arctan', 'reciprocal', 'cbrt',
    'softmax', 'log_softmax', 'one_hot', 'take', 'pick', 'topk', 'sort', 'argsort',
    'tile', 'repeat', 'flip', 'broadcast_to', 'broadcast_like', 'broadcast_axes',
    'broadcast_axis', 'zeros_like', 'ones_like', 'diag', 'dot', 'where', 'maximum',
    'minimum', 'pad', 'depth_to_space', 'space_to_depth', 'reshape_like', 'size_array',
    'shape_array', 'softmin',
)


def method_table():
    """name -> function, for the names that mx.nd defines."""
    import mxcy.ndarray as nd
    return {name: getattr(nd, name) for name in METHOD_NAMES if hasattr(nd, name)}
