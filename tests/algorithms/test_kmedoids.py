"""Randomized k-medoids (kmt_ref/algorithms/kmedoids.py): the Gumbel circuit equals its reference draw for draw; frequencies pass a chi-square test.
"""
import numpy as np
from cases import all_cases
from scipy.stats import chisquare

from kmt_ref.algorithms import (
    randomized_kmedoids,
    randomized_kmedoids_transformer,
)
from kmt_ref.core.normalizers import softmax
from kmt_ref.data import blobs_with_outliers

T = 4



SHARED_CASES = all_cases()



C_TOY = np.array([[0.0]])



def test_kmedoids_trajectory_equals_reference_on_shared_cases():
    """Centers are data points (copied, no arithmetic), so whole trajectories agree bit for bit."""
    for s, (name, X, C0) in enumerate(SHARED_CASES):
        tr = randomized_kmedoids_transformer(X, C0, T, 2.0, np.random.default_rng(s))
        ref = randomized_kmedoids(X, C0, T, 2.0, np.random.default_rng(s))
        np.testing.assert_array_equal(tr.labels, ref.labels, err_msg=name)
        np.testing.assert_array_equal(tr.centers, ref.centers, err_msg=name)



def test_kmedoids_same_seed_same_result_and_seed_matters():
    X, C0, _ = blobs_with_outliers(rng=np.random.default_rng(0))
    a = randomized_kmedoids_transformer(X, C0, 5, 5.0, np.random.default_rng(7))
    b = randomized_kmedoids_transformer(X, C0, 5, 5.0, np.random.default_rng(7))
    c = randomized_kmedoids_transformer(X, C0, 5, 5.0, np.random.default_rng(8))
    np.testing.assert_array_equal(a.centers, b.centers)
    assert not np.array_equal(a.centers, c.centers)
    # every center is a data point (or its kept initial position)
    for C in a.centers[1:]:
        for j in range(C.shape[1]):
            assert np.any(np.all(X == C[:, [j]], axis=0)) or np.array_equal(C[:, j], C0[:, j])



def test_kmedoids_toy_large_gamma_picks_point_nearest_the_mean():
    X = np.array([[0.0, 1.0, 2.0, 10.0]])  # mean 3.25: nearest member 2
    for seed in range(5):
        for fn in (randomized_kmedoids, randomized_kmedoids_transformer):
            tr = fn(X, C_TOY, 1, 1e3, np.random.default_rng(seed))
            np.testing.assert_array_equal(tr.centers[1], [[2.0]])



def test_kmedoids_sampling_frequencies_chi_square():
    """One layer, one cluster: the sampled medoid follows softmax(-gamma ||x_i - mu||^2)."""
    X = np.array([[0.0, 0.4, 0.5, 1.0, 1.7]])
    C0 = np.array([[0.6]])
    gamma = 2.0
    p = softmax(-gamma * (X[0] - X[0].mean()) ** 2)
    rng = np.random.default_rng(11)
    draws = 3000
    counts = np.zeros(5)
    for _ in range(draws):
        c = randomized_kmedoids_transformer(X, C0, 1, gamma, rng).centers[1, 0, 0]
        counts[np.flatnonzero(X[0] == c)[0]] += 1
    assert chisquare(counts, draws * p).pvalue > 1e-3


def test_kmedoids_large_gamma_picks_the_medoid_of_squared_distances():
    """The docstring's identity: sum_l ||x_i - x_l||^2 = m ||x_i - mu||^2 + const over the members,
    so the point nearest the mean is the medoid (minimal total squared distance), and a large gamma
    draws it. One cluster (k = 1), skewed data so that mean and medoid are not trivially the same."""
    rng = np.random.default_rng(4)
    X = rng.exponential(size=(2, 25))
    mu = X.mean(axis=1, keepdims=True)
    total = ((X[:, :, None] - X[:, None, :]) ** 2).sum(axis=(0, 2))      # (n,) sum_l ||x_i - x_l||^2
    to_mean = ((X - mu) ** 2).sum(axis=0)
    const = ((X - mu) ** 2).sum()
    np.testing.assert_allclose(total, X.shape[1] * to_mean + const, rtol=1e-12)
    medoid = int(np.argmin(total))
    assert medoid == int(np.argmin(to_mean))
    tr = randomized_kmedoids(X, X[:, [0]], 1, 1e6, np.random.default_rng(0))
    assert tr.info["medoids"][0, 0] == medoid



def test_kmedoids_tied_medoids_are_drawn_uniformly_by_both():
    """Four members tie for the medoid at gamma = 1e6: the noise draws each with probability 1/4 (no
    lowest-index rule), and the transformer draws the very member the reference draws, seed by seed."""
    X = np.array([[1.0, -1.0, 1.0, -1.0, 3.0, -3.0, 0.0, 0.0],  # corners tie at ||x - mu||^2 = 2,
                  [1.0, 1.0, -1.0, -1.0, 0.0, 0.0, 3.0, -3.0]])  # the rest at 9 (mu = 0)
    C0 = np.array([[0.5], [0.5]])
    counts = np.zeros(X.shape[1], dtype=int)
    for seed in range(400):
        ref = randomized_kmedoids(X, C0, 1, 1e6, np.random.default_rng(seed))
        tr = randomized_kmedoids_transformer(X, C0, 1, 1e6, np.random.default_rng(seed))
        np.testing.assert_array_equal(tr.centers, ref.centers)
        counts[ref.info["medoids"][0, 0]] += 1
    np.testing.assert_array_equal(counts, [119, 101, 96, 84, 0, 0, 0, 0])  # these seeds' draws
    assert chisquare(counts[:4]).pvalue > 0.01  # uniform over the tied four (here p = 0.096)


def test_kmedoids_far_empty_center_keeps_the_draws_identical():
    """A far initial center that stays empty does not enter the penalties: the same draws over 100 seeds."""
    X, C0 = np.array([[0.0, 0.1, 0.7, 1.0]]), np.array([[0.5, 1e8]])
    for seed in range(100):
        ref = randomized_kmedoids(X, C0, 2, 1.0, np.random.default_rng(seed))
        tr = randomized_kmedoids_transformer(X, C0, 2, 1.0, np.random.default_rng(seed))
        np.testing.assert_array_equal(tr.centers, ref.centers, err_msg=f"seed {seed}")
        np.testing.assert_array_equal(tr.labels, ref.labels, err_msg=f"seed {seed}")


def test_kmedoids_tied_medoids_far_out_are_drawn_alike():
    """Two members 2^40 from their mean, exactly tied: both sides compute the same logits, so the noise decides
    alike (the expansion's rounding, about 1e8 at gamma = 0.25, had outweighed it)."""
    X = np.array([[0.0] * 12, [0.0, 0.0, 2.0**40] + [0.0] * 8 + [2.0**41]])
    C0 = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 2.0**40]])
    for seed in range(20):
        ref = randomized_kmedoids(X, C0, 2, 0.25, np.random.default_rng(seed))
        tr = randomized_kmedoids_transformer(X, C0, 2, 0.25, np.random.default_rng(seed))
        np.testing.assert_array_equal(tr.centers, ref.centers, err_msg=f"seed {seed}")
