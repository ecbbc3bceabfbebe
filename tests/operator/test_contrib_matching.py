"""contrib.bipartite_matching (mxcy/operator/contrib_ops.py) against the plain greedy scan
it must equal: pairs in sorted order (stable; reversed for descending), stop at the first
pair past the threshold, a pair taken when its row and column are free, topk; with ties,
NaN, batches and more rows than columns."""
import numpy as np
import pytest

import mxcy as mx


def reference(x, threshold, is_ascend, topk):
    n, m = x.shape[-2:]
    flat = x.reshape(-1, n, m)
    rows, cols = -np.ones((len(flat), n)), -np.ones((len(flat), m))
    for b, s in enumerate(flat):
        order = np.argsort(s, axis=None, kind='stable')
        order = order if is_ascend else order[::-1]
        count = 0
        for k in order:
            i, j = divmod(int(k), m)
            v = s[i, j]
            if (v >= threshold) if is_ascend else (v <= threshold):
                break
            if rows[b, i] < 0 and cols[b, j] < 0:
                rows[b, i], cols[b, j] = j, i
                count += 1
                if 0 < topk <= count:
                    break
    return rows.reshape(x.shape[:-1]), cols.reshape(x.shape[:-2] + (m,))


@pytest.mark.parametrize('shape', [(5, 3), (3, 6), (2, 4, 4), (1, 1)])
@pytest.mark.parametrize('is_ascend,threshold', [(False, 0.2), (False, -2.0), (True, 0.5),
                                                 (True, 2.0)])
@pytest.mark.parametrize('topk', [-1, 2])
def test_matches_greedy_scan(shape, is_ascend, threshold, topk):
    x = np.round(np.random.RandomState(3).uniform(-1, 1, shape), 1)     # ties
    if x.size > 3:
        x.flat[2] = np.nan
    rows, cols = mx.nd.contrib.bipartite_matching(mx.nd.array(x, dtype='float64'),
                                                  threshold=threshold, is_ascend=is_ascend,
                                                  topk=topk)
    want_rows, want_cols = reference(x, threshold, is_ascend, topk)
    np.testing.assert_array_equal(rows.asnumpy(), want_rows)
    np.testing.assert_array_equal(cols.asnumpy(), want_cols)
