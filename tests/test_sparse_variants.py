"""Sparse and sampling variants (SPEC §5): each transformer equals its classical reference.

Two kinds of equivalence:

- *trajectory*: the transformer run for T layers equals the reference run for
  T iterations (labels exactly, centers to 1e-10 relative), on a table of 120
  seeded instances with far outliers, singleton clusters, empty clusters and
  exact (dyadic) ties, for each variant;
- *layer by layer*: on the shared table of tests/cases.py (ties, duplicates,
  empty clusters, k = 1, k = n, large and tiny scales), every layer of the
  transformer equals one reference step started from that layer's input
  centers. (Along a whole trajectory two centers that coincide only in exact
  arithmetic -- one kept, one a mean computed by a different summation -- can
  break a later tie differently; the one-step comparison is free of that.)

Plus hand-computed toys, the gamma limits, the Gumbel sampler's frequencies,
Cuesta-Albertos trimmed k-means, and invalid parameters.
"""
import numpy as np
import pytest
from scipy.stats import chisquare

from kmt_ref.normalizers import softmax
from kmt_ref.reference import lloyd
from kmt_ref.reference_sparse import (
    randomized_kmedoids,
    robust_kmeans,
    trimmed_kmeans,
    trimmed_kmeans_attention,
    trimmed_size,
)
from kmt_ref.sparse_variants import (
    randomized_kmedoids_transformer,
    robust_kmeans_transformer,
    separating_penalties,
    trimmed_kmeans_transformer,
)

from kmt_ref.data import blobs_with_outliers
from kmt_ref.viz.variant_figures import figure_variants_outliers

from cases import all_cases

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


def test_trimmed_whole_trajectory_bitwise_on_shared_cases():
    """Block 3's normmax(alpha=inf) is a uniform mean over disjoint supports: the attention code
    sums it in key order like the reference, so whole trajectories agree bit for bit."""
    for name, X, C0 in SHARED_CASES:
        tr = trimmed_kmeans_transformer(X, C0, T, 30.0)
        ref = trimmed_kmeans_attention(X, C0, T, 30.0)
        np.testing.assert_array_equal(tr.labels, ref.labels, err_msg=name)
        np.testing.assert_array_equal(tr.centers, ref.centers, err_msg=name)


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


# --------------------------------------------------------------------------
# hand-computed toys
# --------------------------------------------------------------------------
X_TOY = np.array([[0.0, 0.1, 0.2, 5.0]])
C_TOY = np.array([[0.0]])


def test_trimmed_toy():
    # gamma2 = 1: z = -[0, .01, .04, 25]; (S_s - 1)/s = -1, -.505, -.35, -6.5 -> s* = 3: the outlier is trimmed
    for fn in (trimmed_kmeans_attention, trimmed_kmeans_transformer):
        tr = fn(X_TOY, C_TOY, 1, 1.0)
        np.testing.assert_allclose(tr.centers[1], [[0.1]], atol=1e-15)
        tr0 = fn(X_TOY, C_TOY, 1, 0.0)  # gamma2 = 0: no trimming, the mean
        np.testing.assert_allclose(tr0.centers[1], [[1.325]], atol=1e-15)
    assert trimmed_kmeans_attention(X_TOY, C_TOY, 1, 1.0).info["kept"].tolist() == [[True, True, True, False]]


def test_robust_toy():
    X = np.array([[0.0, 1.0]])
    # gamma = .5: z = [0, -.5], tau = -.75, p = [.75, .25]
    for fn in (robust_kmeans, robust_kmeans_transformer):
        np.testing.assert_allclose(fn(X, C_TOY, 1, 0.5).centers[1], [[0.25]], atol=1e-15)
        # gamma = 1: z = [0, -1], tau = -1: the far point gets weight exactly 0
        np.testing.assert_allclose(fn(X, C_TOY, 1, 1.0).centers[1], [[0.0]], atol=0)


def test_kmedoids_toy_large_gamma_picks_point_nearest_the_mean():
    X = np.array([[0.0, 1.0, 2.0, 10.0]])  # mean 3.25: nearest member 2
    for seed in range(5):
        for fn in (randomized_kmedoids, randomized_kmedoids_transformer):
            tr = fn(X, C_TOY, 1, 1e3, np.random.default_rng(seed))
            np.testing.assert_array_equal(tr.centers[1], [[2.0]])


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


def test_trimming_grows_with_gamma2():
    X, C0, is_out = blobs_with_outliers(rng=np.random.default_rng(1))
    kept = [trimmed_kmeans_attention(X, C0, 3, g).info["kept"][-1].sum() for g in (0.0, 1.0, 10.0, 100.0, 1e8)]
    assert kept[0] == X.shape[1]
    assert all(b <= a for a, b in zip(kept, kept[1:])) and kept[-1] == C0.shape[1]
    # at a moderate gamma2 the far outliers are the ones trimmed
    tr = trimmed_kmeans_attention(X, C0, 3, 10.0)
    assert not tr.info["kept"][-1][is_out].any()


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


# --------------------------------------------------------------------------
# invalid parameters
# --------------------------------------------------------------------------
X_OK = np.array([[0.0, 1.0, 2.0]])
C_OK = np.array([[0.0]])


@pytest.mark.parametrize("alpha", [-0.1, 1.0, 1.5, np.nan])
def test_trimming_proportion_outside_unit_interval(alpha):
    with pytest.raises(ValueError, match="alpha"):
        trimmed_kmeans(X_OK, C_OK, 1, alpha)


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
    D2 = np.sum((np.concatenate([X, C0], 1).max(1) - np.concatenate([X, C0], 1).min(1)) ** 2)
    assert g1 == gf == pytest.approx(2.0 * D2 + 2.0)
    tr = trimmed_kmeans_transformer(X, C0, 2, 10.0, record=True)
    W = tr.layers[-1].weights["3"]  # (n + k, k): block 3's attention, keys [points, centers]
    assert W.shape == (X.shape[1] + C0.shape[1], C0.shape[1])
    np.testing.assert_allclose(W.sum(axis=0), 1.0)
    labels = tr.labels[-1]
    assert np.all(W[: X.shape[1]][labels[:, None] != np.arange(C0.shape[1])[None, :]] == 0)  # members only


def test_figure4(tmp_path):
    path = figure_variants_outliers(tmp_path / "fig4.png")
    assert path.exists() and path.stat().st_size > 10_000
