"""``mx.test_utils`` helpers that run models: numeric_grad on an executor,
check_consistency, check_speed, check_gluon_hybridize_consistency, compare_optimizer,
DummyIter, and the dataset helpers (get_mnist ...), which read local files: nothing here
unpickles, and downloads happen only where MXNet's helper downloads (they fail clearly
offline)."""
import gzip
import os
import struct
import time

import numpy as np

from mxcy.base import MXNetError
from mxcy.io.base import DataIter


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=np.float32):
    """Central differences of sum(all outputs) of a bound executor with respect to each
    argument in `location` (a dict name -> NumPy array); returns {name: gradient}."""
    for k, v in location.items():
        executor.arg_dict[k][:] = np.asarray(v, dtype=dtype)
    if aux_states is not None:
        for k, v in aux_states.items():
            executor.aux_dict[k][:] = v

    def f():
        executor.forward(is_train=use_forward_train)
        return sum(float(o.asnumpy().astype(np.float64).sum()) for o in executor.outputs)
    grads = {}
    for name, value in location.items():
        value = np.array(value, dtype=dtype)
        g = np.zeros(value.shape, np.float64)
        flat, gflat = value.reshape(-1), g.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps / 2
            executor.arg_dict[name][:] = value
            hi = f()
            flat[i] = old - eps / 2
            executor.arg_dict[name][:] = value
            lo = f()
            flat[i] = old
            gflat[i] = (hi - lo) / eps
        executor.arg_dict[name][:] = value
        grads[name] = g.astype(dtype)
    return grads


def check_consistency(sym, ctx_list, scale=1.0, grad_req='write', arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Run `sym` under each entry of ctx_list (dicts of 'ctx', input shapes and an
    optional 'type_dict') on the same random inputs and head gradients; outputs and
    gradients must agree with the most precise run (or `ground_truth`). Returns the
    ground-truth arrays {name: NumPy array}."""
    from mxcy.test_utils import assert_almost_equal
    if isinstance(sym, (list, tuple)):
        syms = list(sym)
    else:
        syms = [sym] * len(ctx_list)
    exes = []
    for s, spec in zip(syms, ctx_list):
        spec = dict(spec)
        ctx, types = spec.pop('ctx'), spec.pop('type_dict', {})
        exes.append(s.simple_bind(ctx, grad_req=grad_req, type_dict=types, **spec))
    arg_params = dict(arg_params or {})
    aux_params = dict(aux_params or {})
    rng = np.random.default_rng(0)
    for name, arr in exes[0].arg_dict.items():
        if name not in arg_params:
            arg_params[name] = (rng.uniform(-scale, scale, arr.shape) if use_uniform else
                                rng.normal(0, scale, arr.shape)).astype(rand_type)
    for name, arr in exes[0].aux_dict.items():
        aux_params.setdefault(name, np.zeros(arr.shape, rand_type))
    precision = [max(np.dtype(a.dtype).itemsize for a in e.arg_dict.values()) for e in exes]
    best = int(np.argmax(precision))
    results = []
    for exe in exes:
        for k, v in arg_params.items():
            exe.arg_dict[k][:] = np.asarray(v).astype(exe.arg_dict[k].dtype)
        for k, v in aux_params.items():
            exe.aux_dict[k][:] = np.asarray(v).astype(exe.aux_dict[k].dtype)
        exe.forward(is_train=grad_req != 'null')
        outs = [o.asnumpy() for o in exe.outputs]
        if grad_req != 'null':
            exe.backward([o.copy() for o in exe.outputs])
        grads = {k: g.asnumpy() for k, g in zip(exe._symbol.list_arguments()
                                                  if hasattr(exe, '_symbol') else
                                                  exe.arg_dict, exe.grad_arrays)
                 if g is not None} if grad_req != 'null' else {}
        results.append((outs, grads))
    gt_outs, gt_grads = results[best]
    if ground_truth is not None:
        gt_outs = [ground_truth[n] for n in syms[best].list_outputs()]
    for i, (outs, grads) in enumerate(results):
        dtype = np.dtype(exes[i].outputs[0].dtype)
        try:
            for o, g in zip(outs, gt_outs):
                assert_almost_equal(o, g.astype(o.dtype), rtol, atol,
                                    (f'ctx_list[{i}] output', 'ground truth'), equal_nan)
            for k, g in grads.items():
                assert_almost_equal(g, gt_grads[k].astype(g.dtype), rtol, atol,
                                    (f'ctx_list[{i}] grad {k}', 'ground truth'), equal_nan)
        except AssertionError:
            if raise_on_err:
                raise
            print(f"check_consistency: ctx_list[{i}] ({dtype}) differs")
    names = syms[best].list_outputs()
    return {**dict(zip(names, gt_outs)), **gt_grads}


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ='whole', **kwargs):
    """Seconds per iteration of forward+backward (typ='whole') or forward only
    (typ='forward'), after one warm-up run. Shapes come from `location` or kwargs."""
    from mxcy.context import cpu
    ctx = ctx or cpu()
    grad_req = grad_req or 'write'
    if location is None:
        exe = sym.simple_bind(ctx, grad_req=grad_req, **kwargs)
        location = {k: np.random.normal(size=a.shape) for k, a in exe.arg_dict.items()}
    else:
        exe = sym.simple_bind(ctx, grad_req=grad_req,
                              **{k: np.shape(v) for k, v in location.items()})
    for k, v in location.items():
        exe.arg_dict[k][:] = v
    if typ not in ('whole', 'forward'):
        raise ValueError(f"check_speed: typ must be 'whole' or 'forward', got {typ!r}")

    def step():
        exe.forward(is_train=typ == 'whole')
        if typ == 'whole':
            exe.backward([o.copy() for o in exe.outputs])
        for o in exe.outputs:
            o.wait_to_read()
    step()
    from mxcy.ndarray.utils import waitall
    waitall()
    tic = time.time()
    for _ in range(N):
        step()
    waitall()
    return (time.time() - tic) / N


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1e-4, atol=1e-4):
    """A network from net_builder() gives the same outputs (and input gradients) before
    and after hybridize(), and matches numpy_func(*data) when given."""
    from mxcy import autograd
    from mxcy.test_utils import assert_almost_equal
    results = []
    saved = None
    for hybridize in (False, True):
        net = net_builder()
        net.initialize()
        if saved is None:
            net(*data_l)
            saved = {k: v.data().copy() for k, v in net.collect_params().items()}
        params = net.collect_params()
        for (k, v), w in zip(params.items(), saved.values()):
            v.set_data(w)
        if hybridize:
            net.hybridize()
        inputs = [d.copy() for d in data_l]
        for d in inputs:
            d.attach_grad()
        with autograd.record():
            out = net(*inputs)
        if test_grad:
            out.backward()
        results.append((out.asnumpy(), [d.grad.asnumpy() for d in inputs] if test_grad
                        else []))
    assert_almost_equal(results[0][0], results[1][0], rtol, atol, ('imperative', 'hybrid'))
    for g0, g1 in zip(results[0][1], results[1][1]):
        assert_almost_equal(g0, g1, rtol, atol, ('imperative grad', 'hybrid grad'))
    if numpy_func is not None:
        expected = numpy_func(*[d.asnumpy() for d in data_l])
        assert_almost_equal(results[0][0], expected, rtol, atol, ('output', 'numpy_func'))


def compare_optimizer(opt1, opt2, shape, dtype, w_stype='default', g_stype='default',
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """One update by each optimizer from the same weights, gradients and fresh states
    gives the same weights (and states when compare_states)."""
    from mxcy import nd
    from mxcy.test_utils import assert_almost_equal, compare_ndarray_tuple
    if w_stype != 'default' or g_stype != 'default':
        raise ValueError("compare_optimizer: mxcy has dense arrays only")
    shapes = shape if ntensors > 1 and isinstance(shape, list) else [shape] * ntensors
    ws = [nd.array(np.random.uniform(-1, 1, s), dtype=dtype) for s in shapes]
    gs = [nd.array(np.random.uniform(-1, 1, s), dtype=dtype) for s in shapes]
    w1, w2 = [w.copy() for w in ws], [w.copy() for w in ws]
    s1 = [opt1.create_state_multi_precision(i, w) for i, w in enumerate(w1)]
    s2 = [opt2.create_state_multi_precision(i, w) for i, w in enumerate(w2)]
    if compare_states:
        compare_ndarray_tuple(tuple(s1), tuple(s2), rtol, atol)
    for i in range(ntensors):
        opt1.update_multi_precision(i, w1[i], gs[i], s1[i])
        opt2.update_multi_precision(i, w2[i], gs[i], s2[i])
    if compare_states:
        compare_ndarray_tuple(tuple(s1), tuple(s2), rtol, atol)
    for a, b in zip(w1, w2):
        assert_almost_equal(a, b, rtol, atol)


class DummyIter(DataIter):
    """Repeats the first batch of real_iter forever (speed tests without I/O)."""

    def __init__(self, real_iter):
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.the_batch = next(iter(real_iter))

    def next(self):
        return self.the_batch


# ---------------------------------------------------------------- datasets
_MNIST = {'train_data': 'train-images-idx3-ubyte', 'train_label': 'train-labels-idx1-ubyte',
          'test_data': 't10k-images-idx3-ubyte', 'test_label': 't10k-labels-idx1-ubyte'}


def _data_dir():
    return os.path.join(os.environ.get('MXNET_HOME', os.getcwd()), 'data')


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Fetch url into dirname/fname (kept if present unless overwrite); returns the path."""
    import urllib.request
    fname = fname or url.split('/')[-1]
    if dirname:
        os.makedirs(dirname, exist_ok=True)
        fname = os.path.join(dirname, fname)
    if os.path.exists(fname) and not overwrite:
        return fname
    last = None
    for _ in range(max(1, retries)):
        try:
            urllib.request.urlretrieve(url, fname)
            return fname
        except OSError as e:
            last = e
    raise MXNetError(f"download: could not fetch {url} ({last})")


def download_model(model_name, dst_dir='./', meta_info=None):
    raise MXNetError(f"download_model: MXNet's model server is gone; put {model_name}'s "
                     f"-symbol.json and .params files into {dst_dir} and load them")


def get_zip_data(data_dir, url, data_origin_name):
    import zipfile
    path = download(url, data_origin_name, data_dir)
    with zipfile.ZipFile(path) as z:
        z.extractall(data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    import bz2
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    path = download(url, data_origin_name, data_dir)
    with bz2.open(path) as src, open(target, 'wb') as dst:
        dst.write(src.read())


def _read_idx(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rb') as f:
        raw = f.read()
    if len(raw) < 8:
        raise MXNetError(f"{path}: not an IDX file (too short)")
    _, kind, ndim = struct.unpack('>HBB', raw[:4])
    dims = struct.unpack('>' + 'I' * ndim, raw[4:4 + 4 * ndim])
    if kind != 0x08 or len(raw) != 4 + 4 * ndim + int(np.prod(dims)):
        raise MXNetError(f"{path}: IDX header does not match the file size")
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def _find(name, path):
    for candidate in (name, name + '.gz'):
        full = os.path.join(path, candidate)
        if os.path.exists(full):
            return full
    raise MXNetError(f"MNIST file {name}(.gz) not found in {path}; put the four IDX files "
                     "there (or set MXNET_HOME)")


def get_mnist(path=None):
    """MNIST from the local IDX files (data/ under MXNET_HOME or the working directory):
    {'train_data', 'train_label', 'test_data', 'test_label'}, images (N, 1, 28, 28)
    float32 in [0, 1]."""
    path = path or _data_dir()
    out = {}
    for key, name in _MNIST.items():
        arr = _read_idx(_find(name, path))
        out[key] = (arr.reshape(-1, 1, 28, 28).astype(np.float32) / 255
                    if key.endswith('data') else arr.astype(np.float32))
    return out


def get_mnist_ubyte(path=None):
    """Make sure the four uncompressed MNIST IDX files are in data/ (unzipping .gz)."""
    path = path or _data_dir()
    for name in _MNIST.values():
        full = _find(name, path)
        if full.endswith('.gz'):
            with gzip.open(full) as src, open(full[:-3], 'wb') as dst:
                dst.write(src.read())


def get_mnist_pkl():
    raise MXNetError("get_mnist_pkl: mxcy never unpickles files (a pickle can run code); "
                     "use get_mnist() on the IDX files")


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """(train, val) MNISTIter over the local IDX files; flat input when input_shape is
    1-D."""
    from mxcy.io import MNISTIter
    path = _data_dir()
    get_mnist_ubyte(path)
    flat = len(input_shape) == 1
    train = MNISTIter(image=os.path.join(path, _MNIST['train_data']),
                      label=os.path.join(path, _MNIST['train_label']),
                      batch_size=batch_size, shuffle=True, flat=flat, num_parts=num_parts,
                      part_index=part_index)
    val = MNISTIter(image=os.path.join(path, _MNIST['test_data']),
                    label=os.path.join(path, _MNIST['test_label']),
                    batch_size=batch_size, flat=flat, num_parts=num_parts,
                    part_index=part_index)
    return train, val


def get_cifar10():
    raise MXNetError("get_cifar10: CIFAR-10 .rec files are not bundled; put train.rec and "
                     "test.rec into data/cifar/ and use mx.io.ImageRecordIter")


def get_im2rec_path(home_env='MXNET_HOME'):
    raise MXNetError("get_im2rec_path: mxcy ships no im2rec.py tool")
