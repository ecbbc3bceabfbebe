# Kernel argument structs and entry points shared by _ndarray and the engine (nogil).
from libc.stdint cimport int64_t

# dtype codes: MXNet's type flags (mshadow), also used by the file format
cdef enum:
    DT_FLOAT32 = 0
    DT_FLOAT64 = 1
    DT_FLOAT16 = 2
    DT_UINT8 = 3
    DT_INT32 = 4
    DT_INT8 = 5
    DT_INT64 = 6

# binary op codes (the R* forms swap the operands: scalar OP array)
cdef enum:
    OP_ADD = 0
    OP_SUB = 1
    OP_MUL = 2
    OP_DIV = 3
    OP_MOD = 4
    OP_POW = 5
    OP_MAX = 6
    OP_MIN = 7
    OP_EQ = 8
    OP_NE = 9
    OP_GT = 10
    OP_GE = 11
    OP_LT = 12
    OP_LE = 13
    OP_RSUB = 14
    OP_RDIV = 15
    OP_RMOD = 16
    OP_RPOW = 17
    OP_HYPOT = 18

# unary op codes
cdef enum:
    U_NEG = 0
    U_ABS = 1
    U_SIGN = 2
    U_SQUARE = 3
    U_SQRT = 4
    U_EXP = 5
    U_LOG = 6
    U_RELU = 7
    U_SIGMOID = 8
    U_TANH = 9
    U_RSQRT = 10
    U_FLOOR = 11
    U_CEIL = 12
    U_ROUND = 13
    U_LOG1P = 14
    U_EXPM1 = 15
    U_SIN = 16
    U_COS = 17
    U_RECIPROCAL = 18
    U_SOFTRELU = 19
    U_SOFTSIGN = 20
    U_TRUNC = 21
    U_LOG2 = 22
    U_LOG10 = 23
    U_CBRT = 24
    U_ARCTAN = 25
    U_TAN = 26
    U_GELU = 27         # x Φ(x) (LeakyReLU act_type='gelu')

cdef enum:
    MAX_DIM = 16

cdef struct BinaryArgs:
    char* x
    char* y
    char* out
    int64_t n              # output elements
    int dtype
    int op
    int ndim               # 0: same shape, flat loop; else broadcast with strides below
    double scalar          # for scalar ops (y == NULL)
    int64_t shape[16]
    int64_t xstride[16]    # in elements; 0 on broadcast axes
    int64_t ystride[16]

cdef struct UnaryArgs:
    char* x
    char* out
    int64_t n
    int dtype
    int op

cdef struct FillArgs:
    char* out
    int64_t n
    int dtype
    double value

cdef struct CopyArgs:
    char* src
    char* dst
    size_t nbytes

cdef struct GemmArgs:
    char* a
    char* b
    char* c
    int dtype
    int m
    int n
    int k
    int trans_a
    int trans_b
    int batch              # batched GEMM: `batch` independent products
    int64_t stride_a       # elements between batches
    int64_t stride_b
    int64_t stride_c
    double alpha
    double beta

cdef struct SparseCEArgs:  # sparse softmax cross-entropy (_ops_pick.pxi)
    char* x              # forward: the data; backward: the data gradient written
    char* logp           # log_softmax(data), (outer, n, inner): forward writes, backward reads
    char* idx            # (outer, inner) class indices, float or int (clipped into [0, n))
    char* y              # (outer, inner): forward writes -logp[label]; backward reads dy
    int64_t outer
    int64_t n
    int64_t inner
    int dtype
    int idx_dtype
    int add              # backward with req 'add'

cdef int binary_kernel(void* args, char* errmsg) noexcept nogil
cdef int sparse_ce_kernel(void* args, char* errmsg) noexcept nogil
cdef int sparse_ce_grad_kernel(void* args, char* errmsg) noexcept nogil
cdef int unary_kernel(void* args, char* errmsg) noexcept nogil
cdef int fill_kernel(void* args, char* errmsg) noexcept nogil
cdef int copy_kernel(void* args, char* errmsg) noexcept nogil
cdef int gemm_kernel(void* args, char* errmsg) noexcept nogil

# activation gradient codes: dx (req) dy · f'(v), v the input (x) or output (y) as noted
cdef enum:
    G_RELU = 0          # v = x: 1 if x > 0
    G_SIGMOID = 1       # v = y: y (1 - y)
    G_TANH = 2          # v = y: 1 - y²
    G_SOFTRELU = 3      # v = x: sigmoid(x)
    G_SOFTSIGN = 4      # v = x: 1 / (1 + |x|)²
    G_SQUARE = 5        # v = x: 2x
    G_SQRT = 6          # v = y: 1 / (2y)
    G_EXP = 7           # v = y: y
    G_LOG = 8           # v = x: 1 / x
    G_ABS = 9           # v = x: sign(x)
    G_IDENTITY = 10     # dy
    G_SOFTRELU_Y = 11   # v = y: 1 - exp(-y)
    G_SOFTSIGN_Y = 12   # v = y: (1 - |y|)²
    G_GELU = 13         # v = x: Φ(x) + x φ(x)

cdef struct GradArgs:
    char* v
    char* dy
    char* dx
    int64_t n
    int dtype
    int op
    int req             # 1 write, 2 add

cdef struct SoftmaxArgs:
    char* x             # forward: input; backward: the forward output y
    char* dy
    char* out           # forward: y; backward: dx
    int64_t outer
    int64_t length      # the softmax axis
    int64_t inner
    int dtype
    int log             # log_softmax
    int backward
    int req             # 1 write, 2 add
    double temperature

cdef struct SoftmaxOutputGradArgs:
    char* y             # the forward output (probabilities), (outer, length, inner)
    char* label         # class indices as floats, (outer, inner)
    char* dx
    int64_t outer
    int64_t length
    int64_t inner
    int dtype
    int req             # 1 write, 2 add
    int use_ignore
    int normalization   # 0 null, 1 batch, 2 valid
    double ignore_label
    double scale
    double smooth_alpha
    int64_t batch

cdef int grad_kernel(void* args, char* errmsg) noexcept nogil
cdef int softmax_kernel(void* args, char* errmsg) noexcept nogil
cdef int softmax_output_grad_kernel(void* args, char* errmsg) noexcept nogil
