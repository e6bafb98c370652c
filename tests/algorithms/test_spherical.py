"""Spherical k-means (kmt_ref/algorithms/spherical.py): the transformer equals Dhillon & Modha's algorithm.
"""
import numpy as np
import pytest

from kmt_ref.algorithms import (
    spherical_kmeans_transformer,
)
from kmt_ref.algorithms.spherical import spherical_kmeans


# ======================================================================
# Spherical k-means
# ======================================================================
@pytest.mark.parametrize("d", [2, 3, 5, 10])
@pytest.mark.parametrize("seed", range(6))
def test_spherical_transformer_equals_reference(d, seed):
    rng = np.random.default_rng([d, seed])
    n = int(rng.integers(5, 80))
    k = int(rng.integers(1, min(n, 6) + 1))
    directions = rng.normal(size=(d, k))
    X = directions[:, rng.integers(0, k, n)] + 0.5 * rng.normal(size=(d, n))
    X *= rng.uniform(0.1, 10.0, n)  # the length of a point must not matter
    C0 = rng.normal(size=(d, k))
    ref = spherical_kmeans(X, C0, 8)
    trf = spherical_kmeans_transformer(X, C0, 8)
    np.testing.assert_array_equal(trf.labels, ref.labels)
    np.testing.assert_allclose(trf.centers, ref.centers, rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(trf.centers, axis=1), 1.0, atol=1e-14)  # on the sphere



def test_spherical_hand_computed_toy_ties_and_empty_cluster():
    s = np.sqrt(0.5)
    X = np.array([[1.0, 0.0, 2.0, 5.0], [0.0, 1.0, 2.0, 0.0]])  # (2,2) is the diagonal: a tie
    C0 = np.array([[1.0, 0.0, -1.0], [0.0, 1.0, -1.0]])  # the third center points away: empty
    for tr in (spherical_kmeans(X, C0, 1), spherical_kmeans_transformer(X, C0, 1)):
        np.testing.assert_array_equal(tr.labels[0], [0, 1, 0, 0])
        # cluster 0: (1,0) + (s,s) + (1,0), normalized; cluster 1: (0,1); cluster 2 keeps (-s,-s)
        m = np.array([2.0 + s, s])
        np.testing.assert_allclose(tr.centers[1], np.column_stack([m / np.linalg.norm(m), [0, 1], [-s, -s]]),
                                   atol=1e-15)



def test_spherical_antipodal_members_give_the_zero_center_not_nan():
    X = np.array([[1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0]])  # two antipodal pairs
    C0 = np.array([[1.0], [0.0]])  # k = 1: the member sum is exactly 0
    for tr in (spherical_kmeans(X, C0, 3), spherical_kmeans_transformer(X, C0, 3)):
        assert not np.any(np.isnan(tr.centers))
        np.testing.assert_array_equal(tr.centers[1:], 0.0)
        np.testing.assert_array_equal(tr.labels, 0)
    # k = 2: (1,0) and (-1,0) have cosine 0 with both centers: a tie, so both join center 0
    X = np.array([[1.0, -1.0, 0.0], [0.0, 0.0, 1.0]])
    C0 = np.array([[0.0, 0.0], [1.0, -1.0]])  # both x-axis points tie at cosine 0: lowest index
    ref, trf = spherical_kmeans(X, C0, 2), spherical_kmeans_transformer(X, C0, 2)
    np.testing.assert_array_equal(ref.labels[0], [0, 0, 0])
    # cluster 0 holds (1,0), (-1,0), (0,1): sum (0,1); cluster 1 empty keeps (0,-1)
    np.testing.assert_array_equal(ref.centers[1], [[0.0, 0.0], [1.0, -1.0]])
    np.testing.assert_array_equal(trf.labels, ref.labels)
    np.testing.assert_allclose(trf.centers, ref.centers, atol=1e-15)



@pytest.mark.parametrize("f", [spherical_kmeans, spherical_kmeans_transformer])
def test_spherical_zero_vectors_are_rejected(f):
    X = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match=r"X\[:, 1\] has zero norm"):
        f(X, np.array([[1.0], [0.0]]), 1)
    X = np.array([[1.0, 3.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"C0\[:, 0\] has zero norm"):
        f(X, np.zeros((2, 1)), 1)



def test_spherical_is_scale_invariant():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(3, 30))
    C0 = rng.normal(size=(3, 4))
    a = spherical_kmeans_transformer(X, C0, 5)
    b = spherical_kmeans_transformer(X * rng.uniform(0.5, 4.0, 30), 7.0 * C0, 5)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_allclose(a.centers, b.centers, atol=1e-14)


@pytest.mark.parametrize("chunk_size", [1, 2, 1024])
def test_spherical_tie_does_not_depend_on_the_chunks(chunk_size):
    """Center 0 is exactly the points' direction; no chunk of queries is a one-column product."""
    X = np.array([[1e8 + 1] * 2, [1e8] * 2, [1e8] * 2])
    C0 = np.array([[1e8 + 1, 1e8], [1e8, 1e8], [1e8, 1e8 + 1]])
    with pytest.warns(UserWarning):
        ref = spherical_kmeans(X, C0, 2)
    with pytest.warns(UserWarning):
        tr = spherical_kmeans_transformer(X, C0, 2, chunk_size=chunk_size)
    np.testing.assert_array_equal(ref.labels, 0)
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_array_equal(tr.centers, ref.centers)


def test_spherical_last_point_of_a_chunked_block_1():
    """k = 1025 > chunk_size: n = 4097 queries in chunks of 1024, the last one joined to the chunk before."""
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(3, 4097)) * 2) + 0.5
    C0 = X[:, rng.choice(4097, 1025, replace=False)]
    ref = spherical_kmeans(X, C0, 1)
    tr = spherical_kmeans_transformer(X, C0, 1)
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_array_equal(tr.centers, ref.centers)
