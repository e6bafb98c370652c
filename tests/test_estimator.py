"""The scikit-learn-style estimator: rows in, the same answer as the column API."""
import doctest

import numpy as np
import pytest

import kmt_ref.estimator
from kmt_ref import lloyd
from kmt_ref.estimator import KMeansTransformer


def test_docstring_example():
    assert doctest.testmod(kmt_ref.estimator).failed == 0


@pytest.mark.parametrize("attention", ["euclidean", "dot"])
def test_rows_give_the_same_answer_as_lloyd_on_columns(attention):
    rng = np.random.default_rng(0)
    X_rows = rng.normal(size=(60, 3))  # (n, d)
    km = KMeansTransformer(n_clusters=4, n_layers=5, attention=attention).fit(X_rows)
    ref = lloyd(X_rows.T, X_rows[:4].T, 5)
    np.testing.assert_array_equal(km.trace_.labels[-1], ref.labels[-1])  # the last layer's own assignment
    np.testing.assert_allclose(km.cluster_centers_, ref.centers[-1].T, atol=1e-12)
    assert km.inertia_ == pytest.approx(ref.objective[-1], rel=1e-12)
    assert km.cluster_centers_.shape == (4, 3)
    np.testing.assert_array_equal(km.predict(km.cluster_centers_), np.arange(4))


def test_labels_and_inertia_belong_to_the_final_centers():
    # 2 layers from the first 4 points do not converge on this data, so the last
    # layer's assignment (to the centers entering it) differs from the final one.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))  # (n, d)
    km = KMeansTransformer(n_clusters=4, n_layers=2).fit(X)
    assert np.any(km.trace_.labels[-1] != km.labels_)  # the case that used to be wrong
    np.testing.assert_array_equal(km.labels_, km.predict(X))
    np.testing.assert_array_equal(KMeansTransformer(n_clusters=4, n_layers=2).fit_predict(X), km.labels_)
    sq = ((X[:, None, :] - km.cluster_centers_[None, :, :]) ** 2).sum(-1)  # (n, k), directly
    np.testing.assert_array_equal(km.labels_, sq.argmin(1))
    assert km.inertia_ == pytest.approx(sq.min(1).sum(), rel=1e-12)
    assert km.inertia_ == pytest.approx(km.trace_.objective[-1], rel=1e-12)


def test_random_init_is_seeded_and_array_init_is_rows():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    a = KMeansTransformer(3, 4, init="random", random_state=7).fit(X)
    b = KMeansTransformer(3, 4, init="random", random_state=7).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    c = KMeansTransformer(3, 4, init=X[[5, 6, 7]]).fit(X)
    np.testing.assert_array_equal(c.trace_.centers[0], X[[5, 6, 7]].T)


@pytest.mark.parametrize(
    "kwargs,X,exc,match",
    [
        ({"n_clusters": 5}, np.zeros((3, 2)), ValueError, r"n_samples=3 should be >= n_clusters=5"),
        ({"n_clusters": 0}, np.zeros((3, 2)), ValueError, r"n_clusters=0 should be >= 1"),
        ({"n_clusters": 2, "init": "kmeans"}, np.zeros((3, 2)), ValueError, r"init='kmeans' should be one of"),
        ({"n_clusters": 2, "init": np.zeros((3, 2))}, np.zeros((4, 2)), ValueError, r"init has shape \(3, 2\)"),
        ({"n_clusters": 2, "gamma": -1}, np.zeros((4, 2)), ValueError, r"gamma=-1.0 should be >= 0"),
        ({"n_clusters": 2}, np.zeros(4), ValueError, r"one row per point"),
    ],
)
def test_bad_input(kwargs, X, exc, match):
    with pytest.raises(exc, match=match):
        KMeansTransformer(**kwargs).fit(X)


def test_predict_needs_fit_and_matching_features():
    with pytest.raises(ValueError, match="not fitted"):
        KMeansTransformer(2).predict(np.zeros((3, 2)))
    km = KMeansTransformer(2, 2).fit(np.arange(8.0).reshape(4, 2))
    with pytest.raises(ValueError, match="X has 3 features, the fitted centers have 2"):
        km.predict(np.zeros((2, 3)))
