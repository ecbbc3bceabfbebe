# The packed float32 GEMM of mxcy/_gemm_packed.h, declared once for the RNN and the
# convolution kernels.
from libc.stdint cimport int64_t

cdef extern from "_gemm_packed.h" nogil:
    int64_t mxcy_packed_len(int k, int n)
    void mxcy_pack_b(const float* b, int ldb, int trans, int k, int n, float* packed)
    int mxcy_gemm_packed(int m, int n, int k, const float* a, int lda, int inc,
                         const float* packed, float* c, int ldc, int accumulate)
    int mxcy_gemm_indirect(int m, int n, int k, const float* a, const int64_t* row_off,
                           const int64_t* koff, const float* packed, float* c, int64_t rs,
                           int64_t cs, int accumulate)
    int mxcy_gemm_isa()
    enum: MXCY_NR
