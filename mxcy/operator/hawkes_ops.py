"""The log likelihood of univariate Hawkes processes with exponential kernels, MXNet
1.9.1's ``contrib.hawkesll`` in NumPy.

hawkesll(lda (N, K), alpha (K,), beta (K,), state (N, K), lags (N, T), marks (N, T)
int32, valid_length (N,), max_time (N,)) -> (loglike (N,), out_state (N, K)).

Per sample, the first valid_length points arrive at t = cumsum(lags) with process
(mark) k = marks[., j]. Each process k runs on its own: with s its memory (state at
t = 0) and t' its previous point (0 at first), a point at t with d = t − t' adds

    log(lda_k + alpha_k · beta_k · s · e^(−beta_k d)) − lda_k d − alpha_k s (1 − e^(−beta_k d))

and sets s = 1 + s e^(−beta_k d); at the end each process subtracts its compensator up
to max_time the same way, and out_state = s e^(−beta_k (max_time − t')).

Gradients (as MXNet's): loglike's head gradient reaches lda, alpha and beta (exact
derivatives of the recurrence); state, the data inputs and out_state's head gradient
take no part (zero).
"""
import numpy as np

from mxcy._npkernels import hawkes_loglike
from mxcy.operator._numpy_op import NumpyOp
from mxcy.operator._spec import DTypeError, register_op, unify_shape

_ARGS = ['lda', 'alpha', 'beta', 'state', 'lags', 'marks', 'valid_length', 'max_time']


def hawkes(lda, alpha, beta, state, lags, marks, valid_length, max_time):
    """(loglike (N,), out_state (N, K), d loglike / d (lda (N, K), alpha (N, K),
    beta (N, K)) per sample), in float64."""
    lda, state = lda.astype(np.float64), state.astype(np.float64)
    a = np.broadcast_to(alpha.astype(np.float64), lda.shape)
    b = np.broadcast_to(beta.astype(np.float64), lda.shape)
    n, k = lda.shape
    s, sb = state.copy(), np.zeros((n, k))        # memory and its derivative in beta
    last = np.zeros((n, k))
    ll = np.zeros(n)
    g_lda, g_a, g_b = np.zeros((n, k)), np.zeros((n, k)), np.zeros((n, k))
    t = np.zeros(n)
    length = valid_length.astype(np.int64)

    def compensator(rows, m, d):
        """Subtract lda d + alpha s (1 − e^(−beta d)) at (rows, m); return e^(−beta d)."""
        ed = np.exp(-b[rows, m] * d)
        ss, aa = s[rows, m], a[rows, m]
        ll[rows] -= lda[rows, m] * d + aa * ss * (1 - ed)
        g_lda[rows, m] -= d
        g_a[rows, m] -= ss * (1 - ed)
        g_b[rows, m] -= aa * (sb[rows, m] * (1 - ed) + ss * d * ed)
        return ed

    for j in range(lags.shape[1]):
        rows = np.nonzero(length > j)[0]
        if not rows.size:
            break
        m = marks[rows, j].astype(np.int64)
        t[rows] += lags[rows, j]
        d = t[rows] - last[rows, m]
        ss, sbb, aa, bb = s[rows, m], sb[rows, m], a[rows, m], b[rows, m]
        ed = np.exp(-bb * d)
        rate = lda[rows, m] + aa * bb * ss * ed
        ll[rows] += np.log(rate)
        g_lda[rows, m] += 1 / rate
        g_a[rows, m] += bb * ss * ed / rate
        g_b[rows, m] += aa * ed * (ss + bb * sbb - bb * ss * d) / rate
        compensator(rows, m, d)
        s[rows, m], sb[rows, m] = 1 + ss * ed, sbb * ed - ss * d * ed
        last[rows, m] = t[rows]
    out_state = np.zeros((n, k))
    rows = np.arange(n)
    for m in range(k):
        mm = np.full(n, m)
        ed = compensator(rows, mm, max_time.astype(np.float64) - last[:, m])
        out_state[:, m] = s[:, m] * ed
    return ll, out_state, (g_lda, g_a, g_b)


@register_op
class _contrib_hawkesll(NumpyOp):
    """Hawkes process log likelihood (see the module docstring)."""
    name = '_contrib_hawkesll'
    backward_needs = ('out_grads', 'inputs')

    def arguments(self, p):
        return list(_ARGS)

    def outputs(self, p):
        return ['output', 'out_state']

    def infer_shape(self, p, in_shapes):
        shapes = [None if s is None else tuple(s) for s in in_shapes]
        lda, lags = shapes[0], shapes[4]
        if lda is not None and len(lda) != 2:
            raise self.shape_error('lda', '(N, K)', lda)
        if lags is not None and len(lags) != 2:
            raise self.shape_error('lags', '(N, T)', lags)
        n = next((s[0] for s in (lda, lags, shapes[3], shapes[6], shapes[7]) if s), None)
        k = next((s[-1] for s in (lda, shapes[3], shapes[1], shapes[2]) if s), None)
        if n is None or k is None or lags is None:
            return shapes, [None, None], []
        want = [(n, k), (k,), (k,), (n, k), (n, lags[1]), (n, lags[1]), (n,), (n,)]
        shapes = [unify_shape(self, name, w, s) for name, w, s in zip(_ARGS, want, shapes)]
        return shapes, [(n,), (n, k)], []

    def infer_type(self, p, in_types):
        known = next((t for i, t in enumerate(in_types) if t is not None and i != 5), None)
        for i, t in enumerate(in_types):
            if i != 5 and t is not None and t != known:
                raise DTypeError(f"{self.name}: argument '{_ARGS[i]}' has dtype {t}, expected "
                                 f"{known} (the same as lda)")
        if in_types[5] is not None and in_types[5] != 'int32':
            raise DTypeError(f"{self.name}: argument 'marks' has dtype {in_types[5]}, "
                             f"expected int32")
        types = [known] * 8
        types[5] = 'int32'
        return types, [known, known], []

    def compute(self, p, lda, alpha, beta, state, lags, marks, valid_length, max_time):
        k = lda.shape[1]
        length = valid_length.astype(np.int64)
        if length.size and (length.min() < 0 or length.max() > lags.shape[1]):
            raise ValueError(f"{self.name}: valid_length must lie in [0, {lags.shape[1]}], "
                             f"got {valid_length.tolist()}")
        used = np.arange(lags.shape[1])[None, :] < length[:, None]
        if used.any() and (marks[used].min() < 0 or marks[used].max() >= k):
            raise ValueError(f"{self.name}: marks must lie in [0, {k}) (K = lda.shape[1]), "
                             f"got {np.unique(marks[used]).tolist()}")
        # the forward in C (mxcy._npkernels); hawkes() below keeps the gradients
        f64 = [np.ascontiguousarray(v, np.float64) for v in (lda, state, lags, max_time)]
        n = lda.shape[0]
        ll, out_state = np.empty(n), np.empty((n, k))
        hawkes_loglike(f64[0], np.ascontiguousarray(np.broadcast_to(alpha, (k,)), np.float64),
                       np.ascontiguousarray(np.broadcast_to(beta, (k,)), np.float64), f64[1],
                       f64[2], np.ascontiguousarray(marks, np.int64), length, f64[3], ll,
                       out_state)
        return ll, out_state

    def grad(self, p, dys, xs, ys):
        _, _, (g_lda, g_a, g_b) = hawkes(*xs)
        dy = dys[0].astype(np.float64)[:, None]
        return (g_lda * dy, (g_a * dy).sum(0), (g_b * dy).sum(0)) + (None,) * 5
