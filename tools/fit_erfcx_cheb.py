"""Polynomial coefficients of g(t) = ln(erfcx(z) / t), t = 1 / (1 + z/2), for _vecmath.h.

erfc(z) = t · exp(−z² + g(t)) for z >= 0 (z = 2/t − 2, t in (0, 1]); g is smooth on [0, 1]
(its limit at t = 0 is −ln(2√π)), so a polynomial in u = 2t − 1 fits it (a Chebyshev
fit, printed as power-series coefficients for Horner's rule; their sum of magnitudes
is 1.5, so nothing is lost in the conversion): degree 14
to 3e-10 (the float32 kernels, computed in double), degree 24 to 2e-15 (float64; SciPy's
erfcx is the truth, so the fit is as good as that). Deterministic: prints the C arrays.

    /work/main/.venv/bin/python tools/fit_erfcx_cheb.py
"""
import numpy as np
from numpy.polynomial import chebyshev, polynomial
from scipy.special import erfcx


def fit(degree, nodes=400):
    k = np.arange(nodes)
    u = np.cos(np.pi * (k + 0.5) / nodes)
    t = np.maximum((u + 1) / 2, 1e-12)
    z = 2.0 / t - 2.0
    return chebyshev.chebfit(u, np.log(erfcx(z) / t), degree)


def max_rel_error(m):
    t = np.linspace(0.02, 1, 20001)
    z = 2.0 / t - 2.0
    return float(np.abs(t * np.exp(polynomial.polyval(2 * t - 1, m)) / erfcx(z) - 1).max())


def main():
    for name, degree in (('MXCY_ERFCX_C14', 14), ('MXCY_ERFCX_C24', 24)):
        c = chebyshev.cheb2poly(fit(degree))
        print(f"/* degree {degree}: max relative error {max_rel_error(c):.1e} */")
        print(f"#define {name} {{ \\")
        for i in range(0, degree + 1, 3):
            row = ', '.join(float(v).hex() for v in c[i:i + 3])
            print(f"    {row}, \\")
        print("}")


if __name__ == '__main__':
    main()
