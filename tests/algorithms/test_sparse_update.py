"""Trimmed, robust k-means and k-medoids together (kmt_ref/algorithms/sparse_update.py): block 3 over the members only.

Each transformer equals its classical reference on seeded instances with outliers,
singletons, empty clusters and exact ties, at every layer of the shared case table;
the penalties keep non-members out; bad arguments get clear errors.
"""
import numpy as np
import pytest
from cases import all_cases

from kmt_ref.algorithms import (
    randomized_kmedoids,
    randomized_kmedoids_transformer,
    robust_kmeans,
    robust_kmeans_transformer,
    separating_penalties,
    trimmed_kmeans,
    trimmed_kmeans_attention,
    trimmed_kmeans_transformer,
)
from kmt_ref.algorithms.lloyd import lloyd
from kmt_ref.data import blobs_with_outliers

T = 4



def variant_cases(count=120, seed=4):
    """Seeded instances with outliers, singletons, empty clusters and exact ties."""
    cases = []
    for s in range(count):
        rng = np.random.default_rng([seed, s])
        d = int(rng.integers(1, 5))
        k = int(rng.integers(1, 6))
        kind = s % 4
        if kind == 0:  # blobs plus far outliers; initial centers are data points
            n_in = int(rng.integers(k, 40))
            means = rng.uniform(0, 1, (d, k))
            X = means[:, rng.integers(0, k, n_in)] + 0.08 * rng.normal(size=(d, n_in))
            out = 0.5 + rng.uniform(3, 10) * rng.normal(size=(d, int(rng.integers(1, 4))))
            X = np.concatenate([X, out], axis=1)
            C0 = X[:, rng.choice(X.shape[1], k, replace=False)]
        elif kind == 1:  # singleton clusters: isolated points that are initial centers
            n_in = int(rng.integers(1, 30))
            X = rng.uniform(0, 1, (d, n_in))
            lonely = 20.0 + 5.0 * rng.normal(size=(d, k))
            X = np.concatenate([X, lonely], axis=1)
            C0 = lonely[:, rng.permutation(k)]
            C0[:, 0] = X[:, 0]  # one center among the bulk
        elif kind == 2:  # dyadic grid: exact ties between centers at the first assignment
            k = max(k, 2)
            n = int(rng.integers(k, 40))
            X = rng.integers(-8, 9, (d, n)) / 4.0
            C0 = rng.integers(-8, 9, (d, k)) / 2.0
            v = rng.integers(1, 3, d) / 4.0  # x_0 is exactly midway between centers 0 and 1
            C0[:, 0], C0[:, 1] = X[:, 0] + v, X[:, 0] - v
        else:  # empty clusters: some initial centers far from everything, plus outliers
            n = int(rng.integers(k, 40))
            X = np.concatenate([rng.normal(size=(d, n)), 30.0 * np.ones((d, 1))], axis=1)
            C0 = rng.normal(size=(d, k))
            C0[:, rng.integers(0, k)] = -50.0
        cases.append((f"v{s}_{['outliers', 'singletons', 'dyadic_ties', 'empty'][kind]}_d{d}_k{k}", X, C0))
    return cases



VARIANT_CASES = variant_cases()



SHARED_CASES = all_cases()



def _scale(X):
    return max(1.0, float(np.abs(X).max()))



def assert_same_trace(tr, ref, X, tol=1e-10):
    assert tr.labels.shape == ref.labels.shape
    np.testing.assert_array_equal(tr.labels, ref.labels)
    assert np.all(np.isfinite(tr.centers))
    err = np.abs(tr.centers - ref.centers).max() / _scale(X)
    assert err <= tol, err



# the variants: (transformer(X, C0, T, rng), reference(X, C0, T, rng)) with a fixed parameter each
VARIANTS = {
    "trimmed": (lambda X, C, T, g, r: trimmed_kmeans_transformer(X, C, T, g),
                lambda X, C, T, g, r: trimmed_kmeans_attention(X, C, T, g), [0.7, 30.0]),
    "robust": (lambda X, C, T, g, r: robust_kmeans_transformer(X, C, T, g),
               lambda X, C, T, g, r: robust_kmeans(X, C, T, g), [0.01, 25.0]),
    "kmedoids": (lambda X, C, T, g, r: randomized_kmedoids_transformer(X, C, T, g, r),
                 lambda X, C, T, g, r: randomized_kmedoids(X, C, T, g, r), [0.5, 40.0]),
}



# --------------------------------------------------------------------------
# invalid parameters
# --------------------------------------------------------------------------
X_OK = np.array([[0.0, 1.0, 2.0]])



C_OK = np.array([[0.0]])



# --------------------------------------------------------------------------
# equivalence with the references
# --------------------------------------------------------------------------
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_trajectory_equals_reference_on_variant_cases(variant):
    tf, rf, gammas = VARIANTS[variant]
    for s, (name, X, C0) in enumerate(VARIANT_CASES):
        g = gammas[s % len(gammas)]
        tr = tf(X, C0, T, g, np.random.default_rng(s))
        ref = rf(X, C0, T, g, np.random.default_rng(s))
        try:
            assert_same_trace(tr, ref, X)
        except AssertionError as exc:
            raise AssertionError(f"{variant} differs from its reference on {name} (gamma={g})") from exc



@pytest.mark.parametrize("variant", ["trimmed", "robust"])
def test_every_layer_equals_one_reference_step_on_shared_cases(variant):
    gamma = {"trimmed": 30.0, "robust": 5.0}[variant]
    transformer = {"trimmed": trimmed_kmeans_transformer, "robust": robust_kmeans_transformer}[variant]
    step = {"trimmed": trimmed_kmeans_attention, "robust": robust_kmeans}[variant]
    for name, X, C0 in SHARED_CASES:
        tr = transformer(X, C0, T, gamma)
        assert np.all(np.isfinite(tr.centers)), name
        for t in range(T):
            ref = step(X, tr.centers[t], 1, gamma)
            assert np.array_equal(ref.labels[0], tr.labels[t]), (name, t)
            err = np.abs(ref.centers[1] - tr.centers[t + 1]).max() / _scale(X)
            assert err <= 1e-10, (name, t, err)



def test_singleton_and_empty_clusters_never_nan():
    X = np.array([[0.0, 0.1, 0.2, 9.0]])
    C0 = np.array([[0.0, 9.0, 500.0]])  # cluster 1 is the singleton {9}, cluster 2 is empty
    for tr in (trimmed_kmeans_transformer(X, C0, 3, 50.0), robust_kmeans_transformer(X, C0, 3, 50.0),
               randomized_kmedoids_transformer(X, C0, 3, 50.0, np.random.default_rng(0))):
        assert np.all(np.isfinite(tr.centers))
        np.testing.assert_array_equal(tr.centers[-1][:, 1:], [[9.0, 500.0]])



def test_gamma_zero_is_lloyd():
    X, C0, _ = blobs_with_outliers(rng=np.random.default_rng(3))
    ref = lloyd(X, C0, 5)
    for tr in (trimmed_kmeans_transformer(X, C0, 5, 0.0), robust_kmeans_transformer(X, C0, 5, 0.0)):
        np.testing.assert_array_equal(tr.labels, ref.labels)
        np.testing.assert_allclose(tr.centers, ref.centers, atol=1e-12)



@pytest.mark.parametrize("fn", [
    lambda g: trimmed_kmeans_transformer(X_OK, C_OK, 1, g),
    lambda g: trimmed_kmeans_attention(X_OK, C_OK, 1, g),
    lambda g: robust_kmeans_transformer(X_OK, C_OK, 1, g),
    lambda g: robust_kmeans(X_OK, C_OK, 1, g),
    lambda g: randomized_kmedoids_transformer(X_OK, C_OK, 1, g, np.random.default_rng(0)),
    lambda g: randomized_kmedoids(X_OK, C_OK, 1, g, np.random.default_rng(0)),
])
@pytest.mark.parametrize("gamma", [-1.0, np.nan, np.inf])
def test_bad_gamma(fn, gamma):
    with pytest.raises(ValueError, match="gamma"):
        fn(gamma)



def test_other_bad_arguments():
    with pytest.raises(TypeError, match="Generator"):
        randomized_kmedoids_transformer(X_OK, C_OK, 1, 1.0, 42)
    with pytest.raises(TypeError, match="Generator"):
        randomized_kmedoids(X_OK, C_OK, 1, 1.0, None)
    with pytest.raises(ValueError, match="gamma1"):
        trimmed_kmeans_transformer(X_OK, C_OK, 1, 1.0, gamma1=0.0)
    with pytest.raises(ValueError, match="gamma_flag"):
        robust_kmeans_transformer(X_OK, C_OK, 1, 1.0, gamma_flag=-3.0)
    with pytest.raises(ValueError, match="n_layers"):
        trimmed_kmeans_transformer(X_OK, C_OK, -1, 1.0)
    with pytest.raises(ValueError, match="C0"):
        robust_kmeans_transformer(X_OK, np.zeros((2, 1)), 1)
    with pytest.raises(ValueError, match="empty"):
        trimmed_kmeans(X_OK, C_OK, 1, 0.1, empty="drop")



def test_penalties_and_record():
    X, C0, _ = blobs_with_outliers(rng=np.random.default_rng(0))
    g1, gf = separating_penalties(X, C0, 2.0)
    D2 = max(np.sum((X.max(1) - X.min(1)) ** 2),  # the data's bounding box, and each point's nearest initial center
             np.max(np.min(np.sum((X[:, :, None] - C0[:, None, :]) ** 2, axis=0), axis=1)))
    assert g1 == gf == pytest.approx(2.0 * D2 * (1 + 2.0**-20) + 2.0, rel=1e-12)
    tr = trimmed_kmeans_transformer(X, C0, 2, 10.0, record=True)
    W = tr.layers[-1].weights["3"]  # (n + k, k): block 3's attention, keys [points, centers]
    assert W.shape == (X.shape[1] + C0.shape[1], C0.shape[1])
    np.testing.assert_allclose(W.sum(axis=0), 1.0)
    labels = tr.labels[-1]
    assert np.all(W[: X.shape[1]][labels[:, None] != np.arange(C0.shape[1])[None, :]] == 0)  # members only
