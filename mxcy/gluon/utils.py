"""``mx.gluon.utils``: data-parallel splitting, gradient clipping, file checks, download.

MXNet 1.9.1's functions and signatures. ``download`` never touches the network (mxcy runs
offline): it returns a file already in place and otherwise raises, naming the URL and
the path to put the file at.
"""
import hashlib
import os
import warnings
import weakref

import numpy as np

from mxcy import ndarray as nd
from mxcy._ndarray import NDArray
from mxcy.util import is_np_array

__all__ = ['split_data', 'split_and_load', 'clip_global_norm', 'check_sha1', 'download',
           'replace_file', 'shape_is_known', 'HookHandle']


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """`data` cut into `num_slice` slices along `batch_axis` (a list, even for one).
    Uneven sizes raise ValueError unless ``even_split=False``; then the first
    ``size % num_slice`` slices are one longer (and trailing slices may be empty)."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            f"data with shape {data.shape} cannot be evenly split into {num_slice} slices "
            f"along axis {batch_axis}. Use a batch size that's multiple of {num_slice} or "
            f"set even_split=False to allow uneven partitioning of data.")
    each, extras = divmod(size, num_slice)
    bounds = np.cumsum([0] + [each + 1] * extras + [each] * (num_slice - extras))
    if batch_axis == 0:
        return [data[int(bounds[i]):int(bounds[i + 1])] for i in range(num_slice)]
    cls = type(data)        # an mx.np.ndarray gives mx.np slices
    return [nd.slice_axis(data, axis=batch_axis, begin=int(bounds[i]),
                          end=int(bounds[i + 1]))._as_class(cls) for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """`data` (an NDArray, or anything ``nd.array`` takes) split along `batch_axis`
    into one slice per context of `ctx_list`, each slice copied to its context."""
    if not isinstance(data, NDArray):
        data = nd.array(data, ctx=ctx_list[0])
        if is_np_array():           # MXNet's split_and_load makes an mx.np array then
            data = data.as_np_ndarray()
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(ctx) for s, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale `arrays` in place so that the 2-norm of all of them together is at most
    `max_norm`; returns that norm before scaling. With `check_isfinite` (default) the
    norm is a Python-side float and a NaN/inf norm warns (the clipped values are then
    undefined); without, it is a (1,) NDArray and nothing waits for it."""
    if not arrays:
        raise ValueError("clip_global_norm: arrays must be a non-empty list of NDArrays")
    ctx = arrays[0].context
    total = None
    for arr in arrays:
        flat = arr.reshape((-1,))
        sq = nd.dot(flat, flat).as_in_context(ctx)
        total = sq if total is None else total + sq
    total_norm = nd.sqrt(total)
    if check_isfinite and not np.isfinite(total_norm.asscalar()):
        warnings.warn(UserWarning('nan or inf is detected. Clipping results will be '
                                  'undefined.'), stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = nd.min(nd.concat(scale, nd.ones(1, ctx=ctx, dtype=scale.dtype), dim=0))
    for arr in arrays:
        arr *= scale.as_in_context(arr.context)
    return total_norm.asscalar() if check_isfinite else total_norm


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 of the file `filename` is `sha1_hash` (hex digits)."""
    sha1 = hashlib.sha1()
    with open(filename, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            sha1.update(chunk)
    return sha1.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Move `src` over `dst` atomically (``os.replace``); on failure `src` is removed."""
    try:
        os.replace(src, dst)
    except OSError:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError(f"Moving downloaded temp file - {src}, to {dst} failed. Please retry "
                      f"the download.") from None


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """The local path for `url` (MXNet's signature), which must already hold the file.

    The path is `path` (a file, or a folder to hold the URL's last component) or that
    component in the current folder. A file in place (matching `sha1_hash` when given,
    and unless `overwrite`) is returned as is; otherwise RuntimeError says which URL to
    fetch and where to put it, because mxcy never downloads."""
    if path is None:
        fname = url.split('/')[-1]
        if not fname:
            raise ValueError("Can't construct file-name from this URL. Please set the "
                             "`path` option manually.")
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split('/')[-1]) if os.path.isdir(path) else path
    if retries < 0:
        raise ValueError(f"Number of retries should be at least 0, currently it's {retries}")
    target = os.path.abspath(fname)
    if not os.path.exists(fname):
        reason = "it is not there"
    elif overwrite:
        reason = "overwrite=True asks for a fresh copy"
    elif sha1_hash and not check_sha1(fname, sha1_hash):
        reason = f"the file there does not have SHA-1 {sha1_hash}"
    else:
        return fname
    raise RuntimeError(f"download: mxcy does not access the network, and {reason}. Fetch "
                       f"{url} yourself and save it as {target}")


def shape_is_known(shape):
    """Whether `shape` is fully known: not None, not () and no 0 (MXNet 1.x's unknown
    size); a negative size raises ValueError."""
    if shape is None or len(shape) == 0:
        return False
    if any(dim < 0 for dim in shape):
        raise ValueError(f"shape dimension size cannot be less than 0, while received "
                         f"{shape}")
    return all(dim != 0 for dim in shape)


class HookHandle:
    """The handle of a hook kept in an OrderedDict (a Block's forward hooks, say): ``detach()``,
    or the end of a ``with`` block, removes it. The dict is held weakly, so a handle
    does not keep a Block alive."""

    def __init__(self):
        self._owner = None      # weakref to the hooks dict once attached
        self._key = None

    def attach(self, hooks_dict, hook):
        if self._owner is not None:
            raise RuntimeError("The same handle cannot be attached twice.")
        self._key = id(hook)
        hooks_dict[self._key] = hook
        self._owner = weakref.ref(hooks_dict)

    def detach(self):
        hooks = self._owner() if self._owner is not None else None
        if hooks is not None:
            hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.detach()
