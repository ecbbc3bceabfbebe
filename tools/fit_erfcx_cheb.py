"""Polynomial coefficients of g(t) = ln(erfcx(z) / t), t = 1 / (1 + z/2), for _vecmath.h.

erfc(z) = t · exp(−z² + g(t)) for z >= 0 (z = 2/t − 2, t in (0, 1]); g is smooth on [0, 1]
(its limit at t = 0 is −ln(2√π)), so a polynomial in u = 2t − 1 fits it (a Chebyshev
fit, printed as power-series coefficients for Horner's rule; their sum of magnitudes
is 1.5, so nothing is lost in the conversion): degree 14
to 3e-10, degree 24 to 2e-15 (the float64 kernels; SciPy's erfcx is the truth, so the fit
is as good as that). The float32 kernels compute in float32 for |x| <= 14.5 (z <= 10.3, so
t >= 0.15): degree 9 on that interval, coefficients rounded to float32, evaluated by
Horner's rule in float32 to 1.5e-7 (the rounding of float32 arithmetic is most of it).
Deterministic: prints the C arrays.

    /work/main/.venv/bin/python tools/fit_erfcx_cheb.py
"""
import re

import numpy as np
from numpy.polynomial import chebyshev, polynomial
from scipy.special import erfcx


def fit(degree, nodes=400):
    k = np.arange(nodes)
    u = np.cos(np.pi * (k + 0.5) / nodes)
    t = np.maximum((u + 1) / 2, 1e-12)
    z = 2.0 / t - 2.0
    return chebyshev.chebfit(u, np.log(erfcx(z) / t), degree)


def fit_f32(degree, t_lo=0.15, nodes=400):
    """Power-series coefficients in u = 2t - 1 of a Chebyshev fit on t in [t_lo, 1],
    rounded to float32."""
    u_lo = 2 * t_lo - 1
    k = np.arange(nodes)
    v = np.cos(np.pi * (k + 0.5) / nodes)             # v in (-1, 1) maps to u in (u_lo, 1)
    u = u_lo + (v + 1) / 2 * (1 - u_lo)
    t = (u + 1) / 2
    z = 2.0 / t - 2.0
    in_v = chebyshev.cheb2poly(chebyshev.chebfit(v, np.log(erfcx(z) / t), degree))
    scale, shift = 2 / (1 - u_lo), -2 * u_lo / (1 - u_lo) - 1     # v = scale u + shift
    in_u = np.zeros(1)
    for c in in_v[::-1]:
        in_u = polynomial.polyadd(polynomial.polymul(in_u, [shift, scale]), [c])
    return in_u.astype(np.float32)


def max_rel_error(m, t_lo=0.02):
    t = np.linspace(t_lo, 1, 20001)
    z = 2.0 / t - 2.0
    if m.dtype == np.float32:          # Horner's rule in float32, as the kernel does
        u = (2 * t - 1).astype(np.float32)
        g = np.full_like(u, m[-1])
        for c in m[-2::-1]:
            g = g * u + c
        g = g.astype(np.float64)
    else:
        g = polynomial.polyval(2 * t - 1, m)
    return float(np.abs(t * np.exp(g) / erfcx(z) - 1).max())


def main():
    for name, degree in (('MXCY_ERFCX_C24', 24),):
        c = chebyshev.cheb2poly(fit(degree))
        print(f"/* degree {degree}: max relative error {max_rel_error(c):.1e} */")
        print(f"#define {name} {{ \\")
        for i in range(0, degree + 1, 3):
            row = ', '.join(float(v).hex() for v in c[i:i + 3])
            print(f"    {row}, \\")
        print("}")
    c = fit_f32(9)
    print(f"/* float32, degree 9 on t >= 0.15: max relative error "
          f"{max_rel_error(c, 0.15):.1e} */")
    print("#define MXCY_ERFCX_F9 { \\")
    for i in range(0, 10, 4):
        row = ', '.join(re.sub(r'\.?0+p', 'p', float(v).hex()) + 'f' for v in c[i:i + 4])
        print(f"    {row}, \\")
    print("}")


if __name__ == '__main__':
    main()
