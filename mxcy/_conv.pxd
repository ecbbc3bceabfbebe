# Convolution and pooling kernel arguments (NCHW; req: 0 null, 1 write, 2 add).
cdef struct ConvArgs:
    char* x
    char* wt
    char* b
    char* y
    char* dy
    char* dx
    char* dwt
    char* db
    int dtype
    int n
    int c
    int h
    int w
    int f
    int kh
    int kw
    int sh
    int sw
    int ph
    int pw
    int dil_h
    int dil_w
    int oh
    int ow
    int groups
    int req_y
    int req_x
    int req_w
    int req_b
    int act                # forward: 1 asks for y := clamp(y, act_lo, act_hi) (the kernel
    double act_lo          #   sets 2 when it applied it; the caller clamps otherwise)
    double act_hi

cdef struct PoolArgs:
    char* x
    char* y
    char* dy
    char* dx
    int dtype
    long planes
    int h
    int w
    int kh
    int kw
    int sh
    int sw
    int ph
    int pw
    int oh
    int ow
    int pool_type          # 0 max, 1 avg, 2 sum
    int count_include_pad
    int req

cdef int conv_fwd_kernel(void* args, char* errmsg) noexcept nogil
cdef int geometry(ConvArgs* a, tuple xs, tuple ws, tuple ys, stride, pad, dilate,
                  int groups) except -1
cdef int conv_bwd_kernel(void* args, char* errmsg) noexcept nogil
cdef int pool_fwd_kernel(void* args, char* errmsg) noexcept nogil
cdef int pool_bwd_kernel(void* args, char* errmsg) noexcept nogil
