"""The gamma = inf shortcuts of kmt_ref/core/exact/limits.py against brute force and their memory bound.
"""
import numpy as np

from kmt_ref import kmeans_transformer


def test_no_n_by_n_matrix_at_gamma_inf():
    """Memory stays O(n (d + k)): 20,000 points would need 3.2 GB for one n x n matrix."""
    import tracemalloc

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (2, 20_000))
    X[:, 100:200] = X[:, :100]  # duplicates exercise the exact grouping path
    tracemalloc.start()
    kmeans_transformer(X, X[:, :3], 2)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 40e6, f"peak {peak / 1e6:.1f} MB"



def test_duplicate_grouping_matches_brute_force():
    from kmt_ref.core.exact import duplicate_groups as _duplicate_groups

    rng = np.random.default_rng(5)
    base = rng.integers(0, 3, (3, 40)).astype(float)
    KZ = base[:, rng.integers(0, 40, 300)]
    first, inverse = _duplicate_groups(KZ)
    for i in range(KZ.shape[1]):
        same = np.flatnonzero(np.all(KZ == KZ[:, [i]], axis=0))
        assert first[i] == same[0]
        assert set(np.flatnonzero(inverse == inverse[i])) == set(same)
