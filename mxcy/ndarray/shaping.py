"""Shape functions of ``mx.nd`` (kept as an import path): every one of them (reshape,
shape_array, slice_like, depth_to_space, ...) is now a registry operator, so importing a
name from here gives the generated ``mx.nd`` function."""


def __getattr__(name):
    from mxcy.ndarray._gen import module_attr
    return module_attr(__name__, name)
