"""Spatial sampling operators of MXNet 1.9.1 in NumPy (`NumpyOp`): GridGenerator,
BilinearSampler, SpatialTransformer and ROIPooling.

* GridGenerator 'affine': data (N, 6) holds theta (2 x 3); the output (N, 2, H, W) is
  theta · (x, y, 1) over the normalised target grid (x, y in [-1, 1]; channel 0 is x);
  'warp': data (N, 2, H, W) is a flow in pixels, the output the normalised (base + flow).
* BilinearSampler: out[n, c, i, j] samples data[n, c] at the normalised grid point
  grid[n, :, i, j] ((-1, -1) the top-left pixel's centre, (1, 1) the bottom-right's),
  bilinearly, with zeros outside; gradients to data and grid.
* SpatialTransformer (affine, bilinear): GridGenerator(loc) then BilinearSampler.
  Both sample with the C kernels of `mxcy._sampling` (in the data's float dtype).
* ROIPooling: rois (R, 5) = (batch index, x1, y1, x2, y2) in input-image coordinates,
  scaled by spatial_scale and rounded; each of the pooled_size bins of a region takes
  the max of its cells (0 for an empty bin); the gradient goes to the arg-max cell, which
  the forward keeps in a hidden output (maxidx, as MXNet; C kernels in mxcy/_detect.pyx).
"""
import numpy as np

from mxcy import _detect, _ndarray, _sampling
from mxcy.operator._kernel_op import push_kernel
from mxcy.operator._numpy_op import NumpyOp, check_roi_shapes
from mxcy.operator._params import Param, ParamSchema
from mxcy.operator._spec import register_op


def _base_grid(h, w):
    ys, xs = np.meshgrid(np.linspace(-1, 1, h), np.linspace(-1, 1, w), indexing='ij')
    return np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)])       # (3, H*W)


@register_op
class GridGenerator(NumpyOp):
    """A sampling grid from an affine transform or a flow field."""
    name = 'GridGenerator'
    params = ParamSchema(Param('transform_type', 'str', choices=('affine', 'warp')),
                         Param('target_shape', 'shape', (0, 0)))
    backward_needs = ('out_grads', 'inputs')

    def infer_shape(self, p, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None], []
        if p.transform_type == 'affine':
            if len(d) != 2 or d[1] != 6:
                raise self.shape_error('data', '(N, 6) affine parameters', tuple(d))
            h, w = p.target_shape
            if h < 1 or w < 1:
                raise ValueError(f"{self.name}: parameter 'target_shape' must be a positive "
                                 f"(H, W), got {p.target_shape}")
            return [tuple(d)], [(d[0], 2, h, w)], []
        if len(d) != 4 or d[1] != 2:
            raise self.shape_error('data', '(N, 2, H, W) flow', tuple(d))
        return [tuple(d)], [tuple(d)], []

    def compute(self, p, x):
        if p.transform_type == 'affine':
            h, w = p.target_shape
            return (x.reshape(-1, 2, 3) @ _base_grid(h, w)).reshape(-1, 2, h, w)
        n, _, h, w = x.shape
        base = np.stack(np.meshgrid(np.arange(w), np.arange(h), indexing='xy'))
        scale = np.array([(w - 1) / 2.0, (h - 1) / 2.0]).reshape(1, 2, 1, 1)
        return (base[None] + x) / scale - 1

    def grad(self, p, dys, xs, ys):
        dy = dys[0]
        if p.transform_type == 'affine':
            n, _, h, w = dy.shape
            return ((dy.reshape(n, 2, h * w) @ _base_grid(h, w).T).reshape(n, 6),)
        h, w = dy.shape[2:]
        return (dy / np.array([(w - 1) / 2.0, (h - 1) / 2.0]).reshape(1, 2, 1, 1),)


def _sample(xs, bufs, adds):
    _sampling.bilinear_forward(xs[0], xs[1], bufs[0])


def _affine_grid(loc, h, w):
    """GridGenerator 'affine' in loc's dtype: (N, 2, H, W)."""
    base = _base_grid(h, w).astype(loc.dtype)
    theta = loc.reshape(-1, 2, 3, 1)
    grid = theta[:, :, 0] * base[0] + theta[:, :, 1] * base[1] + theta[:, :, 2]
    return grid.reshape(-1, 2, h, w), base


def _push_sampler_grads(op, p, req, dy, ins, in_grads):
    """d data and d grid (SpatialTransformer: d loc) of the bilinear sampling, one op."""
    affine = op.name == 'SpatialTransformer'

    def run(xs, bufs, adds):
        dyv, data, second = xs
        if affine:
            grid, base = _affine_grid(second, *p.target_shape)
            ggrid = None if bufs[1] is None else np.empty(grid.shape, grid.dtype)
        else:
            grid, ggrid = second, bufs[1]
        _sampling.bilinear_backward(data, grid, dyv, bufs[0], ggrid, adds[0], adds[1])
        if affine and ggrid is not None:
            n = grid.shape[0]
            bufs[1][...] = (ggrid.reshape(2 * n, -1) @ base.T).reshape(n, 6)
    push_kernel(run, [dy] + list(ins), in_grads, req, op.name + '_backward',
                can_add=not affine)


@register_op
class BilinearSampler(NumpyOp):
    """data sampled at a normalised grid, bilinearly (zeros outside)."""
    name = 'BilinearSampler'
    params = ParamSchema(Param('cudnn_off', 'bool', None, optional=True))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'grid']

    def infer_shape(self, p, in_shapes):
        d, g = in_shapes
        if d is None or g is None:
            return list(in_shapes), [None], []
        if len(d) != 4:
            raise self.shape_error('data', 'a 4-D (N, C, H, W) shape', tuple(d))
        if len(g) != 4 or g[0] != d[0] or g[1] != 2:
            raise self.shape_error('grid', f'({d[0]}, 2, H, W)', tuple(g))
        return [tuple(d), tuple(g)], [(d[0], d[1]) + tuple(g[2:])], []

    def forward(self, p, is_train, req, ins, outs, aux):
        push_kernel(_sample, ins, outs, req, self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        _push_sampler_grads(self, p, req, out_grads[0], ins, in_grads)


@register_op
class SpatialTransformer(NumpyOp):
    """BilinearSampler(data, GridGenerator(loc, 'affine', target_shape))."""
    name = 'SpatialTransformer'
    params = ParamSchema(Param('target_shape', 'shape', (0, 0)),
                         Param('transform_type', 'str', choices=('affine',)),
                         Param('sampler_type', 'str', choices=('bilinear',)),
                         Param('cudnn_off', 'bool', None, optional=True))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data', 'loc']

    def infer_shape(self, p, in_shapes):
        d, loc = in_shapes
        if d is not None and len(d) != 4:
            raise self.shape_error('data', 'a 4-D (N, C, H, W) shape', tuple(d))
        if d is not None:
            loc = loc or (d[0], 6)
            if tuple(loc) != (d[0], 6):
                raise self.shape_error('loc', (d[0], 6), tuple(loc))
        out = None if d is None else (d[0], d[1]) + tuple(p.target_shape)
        return [d and tuple(d), loc and tuple(loc)], [out], []

    def forward(self, p, is_train, req, ins, outs, aux):
        def run(xs, bufs, adds):
            _sampling.bilinear_forward(xs[0], _affine_grid(xs[1], *p.target_shape)[0],
                                       bufs[0])
        push_kernel(run, ins, outs, req, self.name)

    def backward(self, p, req, out_grads, ins, outs, in_grads, aux):
        _push_sampler_grads(self, p, req, out_grads[0], ins, in_grads)


@register_op
class ROIPooling(NumpyOp):
    """Max pooling of each region of interest into pooled_size bins."""
    name = 'ROIPooling'
    params = ParamSchema(Param('pooled_size', 'shape'), Param('spatial_scale', 'float'))
    backward_needs = ('out_grads', 'inputs', 'outputs')

    def arguments(self, p):
        return ['data', 'rois']

    def outputs(self, p):
        return ['output', 'maxidx']

    def num_visible_outputs(self, p):
        return 1

    def infer_shape(self, p, in_shapes):
        d, r = check_roi_shapes(self, in_shapes)
        if d is None or r is None:
            return list(in_shapes), [None, None], []
        out = (r[0], d[1]) + tuple(p.pooled_size)
        return [tuple(d), tuple(r)], [out, out], []

    def infer_type(self, p, in_types):
        ins, outs, aux = super().infer_type(p, in_types)
        return ins, [outs[0], 'int64'], aux

    def _bins(self, p, data, rois):
        """Yield (roi index, batch, bin i, bin j, row slice, col slice)."""
        ph, pw = p.pooled_size
        h, w = data.shape[2:]
        for r, roi in enumerate(rois):
            b = int(roi[0])
            if not 0 <= b < data.shape[0]:
                raise IndexError(f"{self.name}: rois[{r}] names batch {b}, data has "
                                 f"{data.shape[0]}")
            # C's round (half away from zero), of the product in the rois' precision
            x1, y1, x2, y2 = (int(np.copysign(np.floor(np.abs(v * p.spatial_scale) + 0.5),
                                              v)) for v in roi[1:])
            bh, bw = max(y2 - y1 + 1, 1) / ph, max(x2 - x1 + 1, 1) / pw
            for i in range(ph):
                hs = min(max(int(np.floor(i * bh)) + y1, 0), h)
                he = min(max(int(np.ceil((i + 1) * bh)) + y1, 0), h)
                for j in range(pw):
                    ws = min(max(int(np.floor(j * bw)) + x1, 0), w)
                    we = min(max(int(np.ceil((j + 1) * bw)) + x1, 0), w)
                    yield r, b, i, j, slice(hs, he), slice(ws, we)

    def forward(self, p, is_train, req, ins, outs, aux):
        fits = outs[0].dtype in (np.float32, np.float64) and ins[0].dtype == outs[0].dtype
        if req[0] != 'write' or req[1] not in ('write', 'null') or not fits:
            return super().forward(p, is_train, req, ins, outs, aux)
        # the kernel writes into the outputs' own memory (no copies of compute's arrays)
        ph, pw = p.pooled_size

        def run(data, rois, out, argmax=None):
            if argmax is None:
                argmax = np.empty(out.shape, np.int64)
            _detect.roi_pool(np.ascontiguousarray(data), self._batch(data, rois),
                             self._coords(p, rois), out, argmax)
        targets = [outs[0]] + ([outs[1]] if req[1] == 'write' else [])
        _ndarray.push_numpy(run, list(ins), targets, self.name)

    def _coords(self, p, rois):
        # C's round after the product in the rois' precision (NumPy's: float32 stays float32)
        return np.ascontiguousarray(rois[:, 1:] * p.spatial_scale, np.float64)

    def compute(self, p, data, rois):
        """(output, maxidx): the C kernels; reference() is the NumPy twin."""
        ph, pw = p.pooled_size
        batch = self._batch(data, rois)
        x = _detect.as_real(data)
        out = np.empty((len(rois), data.shape[1], ph, pw), x.dtype)
        argmax = np.empty(out.shape, np.int64)
        _detect.roi_pool(x, batch, self._coords(p, rois), out, argmax)
        return out, argmax

    def grad(self, p, dys, xs, ys):
        data, rois = xs
        dx = np.zeros(data.shape)
        _detect.roi_pool_grad(_detect.as_real(dys[0]), np.ascontiguousarray(ys[1]),
                              self._batch(data, rois), dx)
        return dx, None

    def _batch(self, data, rois):
        b = rois[:, 0]
        bad = np.flatnonzero(~((b > -1) & (b < data.shape[0])))    # truncated toward zero
        if bad.size:
            raise IndexError(f"{self.name}: rois[{bad[0]}] names batch {b[bad[0]]:g}, data "
                             f"has {data.shape[0]}")
        return b.astype(np.int64)

    def reference(self, p, data, rois):
        """The NumPy twin of compute's output (tests)."""
        out = np.zeros((rois.shape[0], data.shape[1]) + tuple(p.pooled_size), data.dtype)
        for r, b, i, j, rs, cs in self._bins(p, data, rois):
            cell = data[b, :, rs, cs]
            if cell.size:
                out[r, :, i, j] = cell.reshape(data.shape[1], -1).max(axis=1)
        return out

    def reference_grad(self, p, dys, xs):
        """The NumPy twin of grad: each bin's first maximum found again (tests)."""
        data, rois = xs
        g = np.zeros(data.shape, np.float64)
        c = np.arange(data.shape[1])
        for r, b, i, j, rs, cs in self._bins(p, data, rois):
            cell = data[b, :, rs, cs].reshape(data.shape[1], -1)
            if cell.shape[1]:
                k = cell.argmax(axis=1)
                rows = rs.start + k // (cs.stop - cs.start)
                cols = cs.start + k % (cs.stop - cs.start)
                np.add.at(g, (b, c, rows, cols), dys[0][r, :, i, j])
        return g, None


@register_op
class Correlation(NumpyOp):
    """FlowNet's correlation of two feature maps: for each displacement (dy, dx) in
    [-max_displacement, max_displacement] (step stride2) and each output position (step
    stride1, after pad_size zero padding and a border of max_displacement + kernel
    radius), the mean over channels and the kernel window of data1 · shifted data2
    (|data1 - shifted data2| when is_multiply is False). Output (N, D², H', W'),
    D = 2 (max_displacement // stride2) + 1."""
    name = 'Correlation'
    params = ParamSchema(Param('kernel_size', 'int', 1), Param('max_displacement', 'int', 1),
                         Param('stride1', 'int', 1), Param('stride2', 'int', 1),
                         Param('pad_size', 'int', 0), Param('is_multiply', 'bool', True))
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return ['data1', 'data2']

    def outputs(self, p):
        return ['output', 'tmp1', 'tmp2']

    def num_visible_outputs(self, p):
        return 1

    def _geom(self, p, shape):
        n, c, h, w = shape
        r = (p.kernel_size - 1) // 2
        border = p.max_displacement + r
        ph, pw = h + 2 * p.pad_size, w + 2 * p.pad_size
        oh = int(np.ceil((ph - 2 * border) / p.stride1))
        ow = int(np.ceil((pw - 2 * border) / p.stride1))
        grid = p.max_displacement // p.stride2
        return r, border, oh, ow, grid, (n, c, ph, pw)

    def infer_shape(self, p, in_shapes):
        a, b = in_shapes
        known = a or b
        if known is None:
            return list(in_shapes), [None] * 3, []
        for name, s in (('data1', a), ('data2', b)):
            if s is not None and (len(s) != 4 or tuple(s) != tuple(known)):
                raise self.shape_error(name, f'a 4-D shape equal to {tuple(known)}', tuple(s))
        if p.kernel_size % 2 == 0:
            raise ValueError(f"{self.name}: parameter 'kernel_size' must be odd, got "
                             f"{p.kernel_size}")
        r, border, oh, ow, grid, padded = self._geom(p, known)
        if oh < 1 or ow < 1:
            raise self.shape_error('data1', f'spatial size larger than 2 x {border} (border)',
                                   tuple(known))
        d = 2 * grid + 1
        return [tuple(known)] * 2, [(known[0], d * d, oh, ow), padded, padded], []

    def _pairs(self, p, shape):
        """(k, rows of data1, cols of data1, rows of data2, cols of data2) as strided
        slices (views, not fancy-index copies) for displacement k and each kernel tap."""
        r, border, oh, ow, grid, _ = self._geom(p, shape)
        s1 = p.stride1

        def span(start, n):
            return slice(start, start + (n - 1) * s1 + 1, s1)
        for k, (gy, gx) in enumerate((gy, gx) for gy in range(-grid, grid + 1)
                                     for gx in range(-grid, grid + 1)):
            for ky in range(-r, r + 1):
                for kx in range(-r, r + 1):
                    y, x = border + ky, border + kx
                    yield (k, span(y, oh), span(x, ow), span(y + gy * p.stride2, oh),
                           span(x + gx * p.stride2, ow))

    def _pad(self, p, x):
        q = p.pad_size
        return np.pad(x, ((0, 0), (0, 0), (q, q), (q, q)))

    def compute(self, p, a, b):
        fa, fb = self._pad(p, a.astype(np.float64)), self._pad(p, b.astype(np.float64))
        shapes = self.infer_shape(p, [a.shape, b.shape])[1]
        out = np.zeros(shapes[0])
        norm = p.kernel_size ** 2 * a.shape[1]
        for k, y1, x1, y2, x2 in self._pairs(p, a.shape):
            u, v = fa[:, :, y1, x1], fb[:, :, y2, x2]
            if p.is_multiply:
                out[:, k] += np.einsum('nchw,nchw->nhw', u, v) / norm
            else:
                out[:, k] += np.abs(u - v).sum(1) / norm
        return out, fa, fb

    def grad(self, p, dys, xs, ys):
        a, b = xs
        fa, fb = self._pad(p, a.astype(np.float64)), self._pad(p, b.astype(np.float64))
        ga, gb = np.zeros_like(fa), np.zeros_like(fb)
        norm = p.kernel_size ** 2 * a.shape[1]
        for k, y1, x1, y2, x2 in self._pairs(p, a.shape):
            u, v = fa[:, :, y1, x1], fb[:, :, y2, x2]
            d = dys[0][:, k][:, None] / norm
            du, dv = (d * v, d * u) if p.is_multiply else (d * np.sign(u - v),
                                                           -d * np.sign(u - v))
            ga[:, :, y1, x1] += du
            gb[:, :, y2, x2] += dv
        q = p.pad_size
        crop = (slice(None), slice(None), slice(q, q + a.shape[2]), slice(q, q + a.shape[3]))
        return ga[crop], gb[crop]
