# Part of mxcy/_ops.pyx (textually included there): the C vector loops it calls.
# vectorised exp and the loops on it (AVX-512/AVX2/baseline picked at load; see the header)
cdef extern from "_vecmath.h" nogil:
    void mxcy_vexp_f32(const float* x, float* y, int64_t n)
    void mxcy_vexp_f64(const double* x, double* y, int64_t n)
    void mxcy_vsigmoid_f32(const float* x, float* y, int64_t n)
    void mxcy_vsigmoid_f64(const double* x, double* y, int64_t n)
    void mxcy_vtanh_f32(const float* x, float* y, int64_t n)
    void mxcy_vtanh_f64(const double* x, double* y, int64_t n)
    void mxcy_vsoftrelu_f64(const double* x, double* y, int64_t n)
    void mxcy_vgelu_f64(const double* x, double* y, int64_t n)
    void mxcy_vgelu_grad_f64(const double* x, const double* dy, double* dx, int64_t n,
                             int add)
    void mxcy_vsoftrelu_grad_x_f64(const double* x, const double* dy, double* dx, int64_t n,
                                   int add)
    void mxcy_vsoftrelu_grad_y_f64(const double* y, const double* dy, double* dx, int64_t n,
                                   int add)
    void mxcy_softmax_rows_f32(const float* x, float* out, int64_t rows, int64_t length,
                               double inv_temp, int log, int add)
    void mxcy_softmax_rows_f64(const double* x, double* out, int64_t rows, int64_t length,
                               double inv_temp, int log, int add)
    void mxcy_softmax_grad_rows_f32(const float* y, const float* dy, float* dx, int64_t rows,
                                    int64_t length, double inv_temp, int log, int add)
    void mxcy_softmax_grad_rows_f64(const double* y, const double* dy, double* dx,
                                    int64_t rows, int64_t length, double inv_temp, int log,
                                    int add)

# float32 gelu/softrelu in float32, sin/cos/log/pow/hypot and gradient loops (see the header)
cdef extern from "_vecmath_elem.h" nogil:
    void mxcy_vgelu32_f32(const float* x, float* y, int64_t n)
    void mxcy_vsoftrelu32_f32(const float* x, float* y, int64_t n)
    void mxcy_vgelu32_grad_f32(const float* x, const float* dy, float* dx, int64_t n, int add)
    void mxcy_vsoftrelu32_grad_x_f32(const float* x, const float* dy, float* dx, int64_t n,
                                     int add)
    void mxcy_vsoftrelu32_grad_y_f32(const float* y, const float* dy, float* dx, int64_t n,
                                     int add)
    void mxcy_vsin_f32(const float* x, float* y, int64_t n)
    void mxcy_vcos_f32(const float* x, float* y, int64_t n)
    void mxcy_vlog_f32(const float* x, float* y, int64_t n)
    void mxcy_vsqrt_f32(const float* x, float* y, int64_t n)
    void mxcy_vsqrt_f64(const double* x, double* y, int64_t n)
    void mxcy_vpow_f32(const float* x, const float* y, int64_t ys, float* out, int64_t n)
    void mxcy_vhypot_f32(const float* x, const float* y, int64_t ys, float* out, int64_t n)
    void mxcy_vgrad_square_f32(const float* v, const float* dy, float* dx, int64_t n, int add)
    void mxcy_vgrad_square_f64(const double* v, const double* dy, double* dx, int64_t n,
                               int add)
    void mxcy_vgrad_sqrt_f32(const float* v, const float* dy, float* dx, int64_t n, int add)
    void mxcy_vgrad_sqrt_f64(const double* v, const double* dy, double* dx, int64_t n, int add)
    void mxcy_vgrad_log_f32(const float* v, const float* dy, float* dx, int64_t n, int add)
    void mxcy_vgrad_log_f64(const double* v, const double* dy, double* dx, int64_t n, int add)
    void mxcy_vgrad_exp_f32(const float* v, const float* dy, float* dx, int64_t n, int add)
    void mxcy_vgrad_exp_f64(const double* v, const double* dy, double* dx, int64_t n, int add)
