/* Greedy NMS's inner loop for mxcy/_detect.pyx: gone[j] |= "kept box i suppresses box j"
 * for every j in (i, n), over boxes as coordinate columns (x0, y0, x1, y1) with their
 * areas. Branch-free so that it vectorises (built with -fno-trapping-math).
 *
 * The three formulas (mode): box_nms (IoU > t, 0 for a non-positive union), MultiBoxDetection
 * (IoU >= t, same fix-up) and Proposal (+1 pixel sizes, IoU > t, no fix-up). Plain min/max
 * stand for NumPy's NaN-propagating ones: a NaN (or inf - inf) coordinate they could hide
 * also makes its box's area, hence the union and the IoU, NaN, so the pair never
 * suppresses in either form. ids (NULL: all one class): only boxes of box i's id. */
#ifndef MXCY_DETECT_NMS_H
#define MXCY_DETECT_NMS_H
#include <stddef.h>
#include <stdint.h>

#define MXCY_NMS_BODY(T, ONE, FIX, CMP, SAME)                                            \
    for (ptrdiff_t j = i + 1; j < n; j++) {                                              \
        T w = (ax1 < x1[j] ? ax1 : x1[j]) - (ax0 > x0[j] ? ax0 : x0[j]) + ONE;          \
        T h = (ay1 < y1[j] ? ay1 : y1[j]) - (ay0 > y0[j] ? ay0 : y0[j]) + ONE;          \
        w = w > 0 ? w : 0;                                                               \
        h = h > 0 ? h : 0;                                                               \
        T inter = w * h, uni = aa + area[j] - inter, q = inter / uni;                    \
        q = FIX;                                                                         \
        gone[j] |= SAME & (q CMP t);                                                     \
    }

#define MXCY_NMS_ROW(T, NAME, ONE, FIX, CMP)                                             \
static void NAME(ptrdiff_t i, ptrdiff_t n, const T* x0, const T* y0, const T* x1,        \
                 const T* y1, const T* area, const T* ids, T t, int32_t* gone) {        \
    const T ax0 = x0[i], ay0 = y0[i], ax1 = x1[i], ay1 = y1[i], aa = area[i];           \
    if (ids) {                                                                           \
        const T cls = ids[i];                                                            \
        _Pragma("omp simd")                                                              \
        MXCY_NMS_BODY(T, ONE, FIX, CMP, (ids[j] == cls))                                 \
    } else {                                                                             \
        _Pragma("omp simd")                                                              \
        MXCY_NMS_BODY(T, ONE, FIX, CMP, 1)                                               \
    }                                                                                    \
}

MXCY_NMS_ROW(float, mxcy_nms_row_box_f, 0, (uni > 0 ? q : 0), >)
MXCY_NMS_ROW(double, mxcy_nms_row_box_d, 0, (uni > 0 ? q : 0), >)
MXCY_NMS_ROW(float, mxcy_nms_row_multibox_f, 0, (uni > 0 ? q : 0), >=)
MXCY_NMS_ROW(double, mxcy_nms_row_multibox_d, 0, (uni > 0 ? q : 0), >=)
MXCY_NMS_ROW(float, mxcy_nms_row_proposal_f, 1, q, >)
MXCY_NMS_ROW(double, mxcy_nms_row_proposal_d, 1, q, >)

/* box_iou: out[j] = IoU of box a with box j (columns x0, y0, x1, y1, areas max(w, 0) *
 * max(h, 0)), in double, 0 where the union is not positive; stored as T. */
#define MXCY_IOU_ROW(T, NAME)                                                            \
static void NAME(const double* a, double aa, const double* x0, const double* y0,         \
                 const double* x1, const double* y1, const double* area, T* out,         \
                 ptrdiff_t n) {                                                          \
    const double ax0 = a[0], ay0 = a[1], ax1 = a[2], ay1 = a[3];                         \
    _Pragma("omp simd")                                                                  \
    for (ptrdiff_t j = 0; j < n; j++) {                                                  \
        double w = (ax1 < x1[j] ? ax1 : x1[j]) - (ax0 > x0[j] ? ax0 : x0[j]);            \
        double h = (ay1 < y1[j] ? ay1 : y1[j]) - (ay0 > y0[j] ? ay0 : y0[j]);            \
        w = w > 0 ? w : 0;                                                               \
        h = h > 0 ? h : 0;                                                               \
        double inter = w * h, uni = aa + area[j] - inter, q = inter / uni;               \
        out[j] = (T)(uni > 0 ? q : 0);                                                   \
    }                                                                                    \
}

MXCY_IOU_ROW(float, mxcy_iou_row_f)
MXCY_IOU_ROW(double, mxcy_iou_row_d)

#endif
