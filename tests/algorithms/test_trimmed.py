"""Trimmed k-means (kmt_ref/algorithms/trimmed.py): the normmax circuit equals its rule bit for bit; Cuesta-Albertos et al. (1997).
"""
import numpy as np
import pytest
from cases import all_cases

from kmt_ref.algorithms import (
    trimmed_kmeans,
    trimmed_kmeans_attention,
    trimmed_kmeans_transformer,
    trimmed_size,
)
from kmt_ref.algorithms.lloyd import lloyd
from kmt_ref.data import blobs_with_outliers

T = 4



SHARED_CASES = all_cases()



# --------------------------------------------------------------------------
# hand-computed toys
# --------------------------------------------------------------------------
X_TOY = np.array([[0.0, 0.1, 0.2, 5.0]])



C_TOY = np.array([[0.0]])



# --------------------------------------------------------------------------
# invalid parameters
# --------------------------------------------------------------------------
X_OK = np.array([[0.0, 1.0, 2.0]])



C_OK = np.array([[0.0]])



def test_trimmed_whole_trajectory_bitwise_on_shared_cases():
    """Block 3's normmax(alpha=inf) is a uniform mean over disjoint supports: the attention code
    sums it in key order like the reference, so whole trajectories agree bit for bit."""
    for name, X, C0 in SHARED_CASES:
        tr = trimmed_kmeans_transformer(X, C0, T, 30.0)
        ref = trimmed_kmeans_attention(X, C0, T, 30.0)
        np.testing.assert_array_equal(tr.labels, ref.labels, err_msg=name)
        np.testing.assert_array_equal(tr.centers, ref.centers, err_msg=name)



def test_trimmed_toy():
    # gamma2 = 1: z = -[0, .01, .04, 25]; (S_s - 1)/s = -1, -.505, -.35, -6.5 -> s* = 3: the outlier is trimmed
    for fn in (trimmed_kmeans_attention, trimmed_kmeans_transformer):
        tr = fn(X_TOY, C_TOY, 1, 1.0)
        np.testing.assert_allclose(tr.centers[1], [[0.1]], atol=1e-15)
        tr0 = fn(X_TOY, C_TOY, 1, 0.0)  # gamma2 = 0: no trimming, the mean
        np.testing.assert_allclose(tr0.centers[1], [[1.325]], atol=1e-15)
    assert trimmed_kmeans_attention(X_TOY, C_TOY, 1, 1.0).info["kept"].tolist() == [[True, True, True, False]]



def test_trimming_grows_with_gamma2():
    X, C0, is_out = blobs_with_outliers(rng=np.random.default_rng(1))
    kept = [trimmed_kmeans_attention(X, C0, 3, g).info["kept"][-1].sum() for g in (0.0, 1.0, 10.0, 100.0, 1e8)]
    assert kept[0] == X.shape[1]
    assert all(b <= a for a, b in zip(kept, kept[1:])) and kept[-1] == C0.shape[1]
    # at a moderate gamma2 the far outliers are the ones trimmed
    tr = trimmed_kmeans_attention(X, C0, 3, 10.0)
    assert not tr.info["kept"][-1][is_out].any()



# --------------------------------------------------------------------------
# Cuesta-Albertos, Gordaliza & Matran (1997)
# --------------------------------------------------------------------------
def test_trimmed_size():
    assert trimmed_size(10, 0.0) == 10
    assert trimmed_size(10, 0.7) == 3  # (1 - .7) * 10 = 3.0000000000000004 in floating point
    assert trimmed_size(10, 0.25) == 8
    assert trimmed_size(3, 0.99) == 1



def test_trimmed_kmeans_toy_and_lloyd_limit():
    X = np.array([[0.0, 1.0, 2.0, 100.0]])
    tr = trimmed_kmeans(X, C_TOY, 2, 0.25)  # h = 3: the point at 100 is trimmed
    np.testing.assert_allclose(tr.centers[1], [[1.0]])
    np.testing.assert_array_equal(tr.labels[0], [0, 0, 0, -1])
    np.testing.assert_allclose(tr.info["trimmed_objective"], [5.0, 2.0, 2.0])
    Xb, C0, _ = blobs_with_outliers(rng=np.random.default_rng(2))
    a, b = trimmed_kmeans(Xb, C0, 4, 0.0), lloyd(Xb, C0, 4)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.centers, b.centers)  # alpha = 0 is Lloyd, bit for bit



@pytest.mark.parametrize("seed", range(5))
def test_trimmed_objective_never_increases(seed):
    X, C0, _ = blobs_with_outliers(rng=np.random.default_rng(seed))
    obj = trimmed_kmeans(X, C0, 8, 0.1).info["trimmed_objective"]
    assert np.all(np.diff(obj) <= 1e-12 * obj[0])



@pytest.mark.parametrize("alpha", [-0.1, 1.0, 1.5, np.nan])
def test_trimming_proportion_outside_unit_interval(alpha):
    with pytest.raises(ValueError, match="alpha"):
        trimmed_kmeans(X_OK, C_OK, 1, alpha)
