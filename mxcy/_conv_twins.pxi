# Part of mxcy/_conv.pyx (textually included there): the kernels' NumPy twins, which run
# them synchronously on NumPy arrays for the kernel tests.
# ---------------------------------------------------------------- test twins (NumPy)
cdef char* _ptr(object arr):
    cdef cnp.ndarray a
    if arr is None:
        return NULL
    a = <cnp.ndarray?>arr
    if not a.flags['C_CONTIGUOUS']:
        raise ValueError("kernel twins take C-contiguous arrays")
    return <char*>cnp.PyArray_DATA(a)


def conv_geometry(x_shape, w_shape, stride, pad, dilate):
    n, c, h, w = x_shape
    f, cg, kh, kw = w_shape
    oh = (h + 2 * pad[0] - dilate[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + 2 * pad[1] - dilate[1] * (kw - 1) - 1) // stride[1] + 1
    return oh, ow


cdef void fill_conv(ConvArgs* a, x, wt, stride, pad, dilate, int groups, int oh, int ow):
    a.dtype = DT_FLOAT32 if x.dtype == np.float32 else DT_FLOAT64
    a.n, a.c, a.h, a.w = x.shape
    a.f = wt.shape[0]
    a.kh, a.kw = wt.shape[2], wt.shape[3]
    a.sh, a.sw = stride
    a.ph, a.pw = pad
    a.dil_h, a.dil_w = dilate
    a.oh, a.ow = oh, ow
    a.groups = groups


def conv_fwd_np(x, wt, b, stride=(1, 1), pad=(0, 0),
                dilate=(1, 1), int groups=1, y0=None):
    """y = conv2d(x, w) + b on NumPy arrays (NCHW), through conv_fwd_kernel; with `y0`,
    y = y0 + conv2d(x, w) + b (req add)."""
    cdef ConvArgs a
    cdef char msg[256]
    oh, ow = conv_geometry(x.shape, wt.shape, stride, pad, dilate)
    y = np.empty((x.shape[0], wt.shape[0], oh, ow), dtype=x.dtype)
    if y0 is not None:
        y[...] = y0
    memset(&a, 0, sizeof(a))
    fill_conv(&a, x, wt, stride, pad, dilate, groups, oh, ow)
    a.x, a.wt, a.b, a.y = _ptr(x), _ptr(wt), _ptr(b), _ptr(y)
    a.req_y = 1 if y0 is None else 2
    if conv_fwd_kernel(&a, msg):
        raise MemoryError("conv_fwd_np failed")
    return y


def conv_bwd_np(x, wt, dy, bint with_bias=True,
                stride=(1, 1), pad=(0, 0), dilate=(1, 1), int groups=1, int req_x=1,
                int req_w=1):
    """(dx, dw, db) of conv2d on NumPy arrays, through conv_bwd_kernel (req 0: that one
    is skipped and returned uninitialised)."""
    cdef ConvArgs a
    cdef char msg[256]
    dx = np.empty_like(x)
    dw = np.empty_like(wt)
    db = np.empty(wt.shape[0], dtype=x.dtype) if with_bias else None
    memset(&a, 0, sizeof(a))
    fill_conv(&a, x, wt, stride, pad, dilate, groups, dy.shape[2], dy.shape[3])
    a.x, a.wt, a.dy, a.dx, a.dwt, a.db = _ptr(x), _ptr(wt), _ptr(dy), _ptr(dx), _ptr(dw), _ptr(db)
    a.req_x, a.req_w = req_x, req_w
    a.req_b = 1 if with_bias else 0
    if conv_bwd_kernel(&a, msg):
        raise MemoryError("conv_bwd_np failed")
    return dx, dw, db


cdef void fill_pool(PoolArgs* a, shape, kernel, stride, pad, int oh, int ow, int pool_type,
                    bint count_include_pad):
    a.planes = shape[0] * shape[1]
    a.h, a.w = shape[2], shape[3]
    a.kh, a.kw = kernel
    a.sh, a.sw = stride
    a.ph, a.pw = pad
    a.oh, a.ow = oh, ow
    a.pool_type = pool_type
    a.count_include_pad = count_include_pad


def pool_fwd_np(x, kernel, stride, pad, int oh, int ow, int pool_type=0,
                bint count_include_pad=True):
    cdef PoolArgs a
    cdef char msg[256]
    y = np.empty(x.shape[:2] + (oh, ow), dtype=x.dtype)
    memset(&a, 0, sizeof(a))
    fill_pool(&a, x.shape, kernel, stride, pad, oh, ow, pool_type, count_include_pad)
    a.dtype = DT_FLOAT32 if x.dtype == np.float32 else DT_FLOAT64
    a.x, a.y = _ptr(x), _ptr(y)
    a.req = 1
    pool_fwd_kernel(&a, msg)
    return y


def pool_bwd_np(x, dy, kernel, stride, pad, int pool_type=0,
                bint count_include_pad=True):
    cdef PoolArgs a
    cdef char msg[256]
    dx = np.empty_like(x)
    memset(&a, 0, sizeof(a))
    fill_pool(&a, x.shape, kernel, stride, pad, dy.shape[2], dy.shape[3], pool_type,
              count_include_pad)
    a.dtype = DT_FLOAT32 if x.dtype == np.float32 else DT_FLOAT64
    a.x, a.dy, a.dx = _ptr(x), _ptr(dy), _ptr(dx)
    a.req = 1
    pool_bwd_kernel(&a, msg)
    return dx
