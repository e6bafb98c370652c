"""The scikit-learn-compatible estimator: rows in, the same answer as the column API.

Hand-computed four-point toys pin labels_, inertia_, transform and score;
scikit-learn's own conformance suite (check_estimator) runs check by check
when scikit-learn is installed and is skipped otherwise.
"""
import doctest
import math
import sys
import warnings

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
    for method in (km.predict, km.transform, km.score):
        with pytest.raises(ValueError, match="X has 3 features, but KMeansTransformer is expecting 2 features"):
            method(np.zeros((2, 3)))


# ---------------------------------------------------------------------------
# Hand-computed toys (scikit-learn's four-point habit)
# ---------------------------------------------------------------------------
# Four corners of a 6 x 2 rectangle:  (0,2) (6,2)
#                                     (0,0) (6,0)
CORNERS = np.array([[0.0, 0.0], [0.0, 2.0], [6.0, 0.0], [6.0, 2.0]])  # (n, d) = (4, 2)


def test_toy_first_init_finds_the_horizontal_split():
    # init="first": c0 = (0,0), c1 = (0,2). Layer 1: (6,0) is 36 from c0 and 40
    # from c1, (6,2) the reverse, so the labels are [0, 1, 0, 1] and the centers
    # move to (3,0), (3,2); layer 2 changes nothing. Every point is 3 from its
    # center and sqrt(3^2 + 2^2) = sqrt(13) from the other: inertia 4 * 9 = 36
    # (a local optimum: the vertical split below has inertia 4).
    km = KMeansTransformer(n_clusters=2, n_layers=2).fit(CORNERS)
    np.testing.assert_array_equal(km.labels_, [0, 1, 0, 1])
    np.testing.assert_array_equal(km.cluster_centers_, [[3.0, 0.0], [3.0, 2.0]])
    assert km.inertia_ == 36.0
    assert km.score(CORNERS) == -36.0
    r = math.sqrt(13.0)
    np.testing.assert_allclose(km.transform(CORNERS), [[3, r], [r, 3], [3, r], [r, 3]], rtol=1e-15)
    np.testing.assert_array_equal(km.fit_transform(CORNERS), km.transform(CORNERS))
    # a tie (y = 1 is equidistant) goes to the lowest index
    np.testing.assert_array_equal(km.predict([[3.0, 0.9], [3.0, 1.0], [3.0, 1.1]]), [0, 0, 1])


def test_toy_array_init_finds_the_vertical_split():
    # init centers (0,1) and (6,1) are already the means of the left and right
    # pairs: every point is 1 from its center and sqrt(6^2 + 1) from the other.
    km = KMeansTransformer(n_clusters=2, n_layers=3, init=[[0.0, 1.0], [6.0, 1.0]]).fit(CORNERS)
    np.testing.assert_array_equal(km.labels_, [0, 0, 1, 1])
    np.testing.assert_array_equal(km.cluster_centers_, [[0.0, 1.0], [6.0, 1.0]])
    assert km.inertia_ == 4.0
    r = math.sqrt(37.0)
    np.testing.assert_allclose(km.transform(CORNERS), [[1, r], [1, r], [r, 1], [r, 1]], rtol=1e-15)
    assert km.score([[0.0, 1.0], [7.0, 1.0]]) == -1.0  # 0 + 1
    assert km.n_iter_ == 3 and km.n_features_in_ == 2


def test_toy_labels_are_to_the_final_centers_not_those_entering_the_last_layer():
    # 1-D points 0, 1, 4, 10 and one layer from c = (0, 1): the layer assigns
    # [0, 1, 1, 1] and moves the centers to (0, 5). Assigned to (0, 5), point 1
    # (distance 1 vs 4) joins cluster 0: labels_ = [0, 0, 1, 1], inertia
    # 0 + 1 + 1 + 25 = 27, distances [[0, 5], [1, 4], [4, 1], [10, 5]].
    X = np.array([[0.0], [1.0], [4.0], [10.0]])
    km = KMeansTransformer(n_clusters=2, n_layers=1).fit(X)
    np.testing.assert_array_equal(km.trace_.labels[-1], [0, 1, 1, 1])
    np.testing.assert_array_equal(km.cluster_centers_, [[0.0], [5.0]])
    np.testing.assert_array_equal(km.labels_, [0, 0, 1, 1])
    np.testing.assert_array_equal(km.fit_predict(X), [0, 0, 1, 1])
    np.testing.assert_array_equal(km.predict(X), [0, 0, 1, 1])
    assert km.inertia_ == 27.0
    np.testing.assert_array_equal(km.transform(X), [[0, 5], [1, 4], [4, 1], [10, 5]])


# ---------------------------------------------------------------------------
# Parameters: stored unchanged, validated in fit
# ---------------------------------------------------------------------------
def test_get_params_set_params_and_repr():
    km = KMeansTransformer(3)
    assert km.get_params() == {"attention": "euclidean", "gamma": np.inf, "init": "first", "n_clusters": 3,
                               "n_layers": 10, "random_state": None}
    assert km.get_params(deep=False) == km.get_params()
    assert km.set_params(n_layers=4, init="random") is km
    assert (km.n_layers, km.init) == (4, "random")
    assert repr(km) == "KMeansTransformer(n_clusters=3, n_layers=4, init='random')"
    assert repr(KMeansTransformer()) == "KMeansTransformer()" and KMeansTransformer().n_clusters == 8  # as KMeans
    with pytest.raises(ValueError, match=r"Invalid parameter 'n_iter' for estimator KMeansTransformer"):
        km.set_params(n_layers=5, n_iter=5)
    assert km.n_layers == 4  # nothing set when one name is invalid


def test_constructor_stores_parameters_unchanged_and_fit_validates_them():
    init = [[0.0, 0.0], [1.0, 1.0]]
    bad = KMeansTransformer(n_clusters="two", n_layers=-1, gamma="hot", init=init, random_state="seed")
    assert bad.n_clusters == "two" and bad.init is init and bad.random_state == "seed"
    with pytest.raises(TypeError, match="n_clusters must be an integer, got 'two'"):
        bad.fit(CORNERS)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"n_layers": 0}, ValueError, r"n_layers=0 should be >= 1"),
        ({"attention": "cosine"}, ValueError, r"attention='cosine' should be one of"),
        ({"random_state": -1}, ValueError, r"random_state=-1 should be in \[0, 2\*\*32\)"),
        ({"random_state": 1.5}, TypeError, r"random_state must be None, an int, .*got 1.5"),
        ({"random_state": True}, TypeError, r"random_state must be None, an int, .*got True"),
        ({"random_state": "7"}, TypeError, r"random_state must be None, an int, .*got '7'"),
        ({"gamma": np.nan}, ValueError, r"gamma=nan must not be NaN"),
    ],
)
def test_bad_parameters_are_refused_by_fit(kwargs, exc, match):
    km = KMeansTransformer(2, **kwargs)  # no error here (scikit-learn's rule)
    with pytest.raises(exc, match=match):
        km.fit(CORNERS)


def test_random_state_kinds():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    # an int: the same k distinct points as before this estimator followed scikit-learn
    km = KMeansTransformer(3, 1, init="random", random_state=7).fit(X)
    idx = np.sort(np.random.default_rng(7).choice(30, 3, replace=False))
    np.testing.assert_array_equal(km.trace_.centers[0], X[idx].T)
    np.testing.assert_array_equal(KMeansTransformer(3, 1, init="random", random_state=np.int64(7)).fit(X).labels_,
                                  km.labels_)
    # a Generator or a RandomState: used as given, advanced by each fit
    g = KMeansTransformer(3, 1, init="random", random_state=np.random.default_rng(7)).fit(X)
    np.testing.assert_array_equal(g.trace_.centers[0], X[idx].T)
    rs = KMeansTransformer(3, 1, init="random", random_state=np.random.RandomState(7)).fit(X)
    idx_rs = np.sort(np.random.RandomState(7).choice(30, 3, replace=False))
    np.testing.assert_array_equal(rs.trace_.centers[0], X[idx_rs].T)
    # random_state is ignored (but validated) by init="first"
    np.testing.assert_array_equal(KMeansTransformer(3, 2, random_state=5).fit(X).cluster_centers_,
                                  KMeansTransformer(3, 2).fit(X).cluster_centers_)


# ---------------------------------------------------------------------------
# Data: clear errors at the boundary; numbers held as objects are converted
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "X,exc,match",
    [
        (np.zeros((0, 3)), ValueError, r"Found array with 0 sample\(s\) \(shape=\(0, 3\)\)"),
        (np.zeros((4, 0)), ValueError, r"Found array with 0 feature\(s\) \(shape=\(4, 0\)\)"),
        (np.zeros(4), ValueError, r"got shape=\(4,\)\. Reshape your data: X.reshape\(-1, 1\)"),
        (np.zeros((2, 2, 2)), ValueError, r"X must be 2-D with one row per point, got shape=\(2, 2, 2\)"),
        (CORNERS + 1j, ValueError, r"Complex data not supported: X has dtype=complex128"),
        (np.array([[1.0, {"a": 1}], [2.0, 3.0]], dtype=object), TypeError,
         r"dtype=object and could not be converted to float64: .*argument must be a string or a real number"),
        (np.array([["a", 1.0], [2.0, 3.0]], dtype=object), ValueError, r"could not convert string to float"),
        (np.array([["a", "b"], ["c", "d"]]), TypeError, r"must be a real numeric array"),
        ("CORNERS", TypeError, r"X must be a numeric array, got str"),
        (np.where(CORNERS == 6.0, np.nan, CORNERS), ValueError, r"NaN"),
        (np.where(CORNERS == 6.0, np.inf, CORNERS), ValueError, r"NaN|inf"),
    ],
)
def test_bad_data_is_refused_by_fit_predict_transform_and_score(X, exc, match):
    with pytest.raises(exc, match=match):
        KMeansTransformer(2).fit(X)
    km = KMeansTransformer(2).fit(CORNERS)
    if np.ndim(X) == 2 and np.shape(X)[1] == 2:  # the same error after fit
        for method in (km.predict, km.transform, km.score):
            with pytest.raises(exc, match=match):
                method(X)


def test_sparse_input_is_refused_with_a_hint():
    sparse = pytest.importorskip("scipy.sparse")
    for X in (sparse.csr_matrix(CORNERS), sparse.csr_array(CORNERS), sparse.coo_matrix(CORNERS)):
        with pytest.raises(TypeError, match=r"X is a sparse matrix \(\w+\): .*dense array; pass X.toarray\(\)"):
            KMeansTransformer(2).fit(X)
        with pytest.raises(TypeError, match="sparse"):
            KMeansTransformer(2).fit(CORNERS).predict(X)


def test_masked_entries_are_refused_not_ignored():
    X = np.ma.masked_array(CORNERS, mask=[[0, 0], [0, 1], [0, 0], [0, 0]])
    with pytest.raises(TypeError, match=r"X is a masked array with 1 masked entries"):
        KMeansTransformer(2).fit(X)
    km = KMeansTransformer(2, 2).fit(np.ma.masked_array(CORNERS))  # nothing masked: plain data
    np.testing.assert_array_equal(km.labels_, [0, 1, 0, 1])
    with pytest.raises(TypeError, match="masked"):
        km.predict(X)


def test_numbers_as_objects_lists_ints_and_float32_give_the_float64_answer():
    ref = KMeansTransformer(2, 3).fit(CORNERS)
    for X in (CORNERS.astype(object), CORNERS.tolist(), CORNERS.astype(np.int32), CORNERS.astype(np.float32)):
        km = KMeansTransformer(2, 3).fit(X)
        np.testing.assert_array_equal(km.labels_, ref.labels_)
        np.testing.assert_array_equal(km.cluster_centers_, ref.cluster_centers_)
        assert km.cluster_centers_.dtype == np.float64 and km.transform(X).dtype == np.float64


def test_fit_leaves_the_data_and_the_parameters_alone():
    X = CORNERS.copy()
    init = np.array([[0.0, 1.0], [6.0, 1.0]])
    km = KMeansTransformer(2, 2, init=init)
    params = km.get_params()
    km.fit(X).predict(X)
    np.testing.assert_array_equal(X, CORNERS)
    np.testing.assert_array_equal(init, [[0.0, 1.0], [6.0, 1.0]])
    assert km.get_params()["init"] is params["init"]


# ---------------------------------------------------------------------------
# Not fitted: scikit-learn's NotFittedError if it is installed, ours if not
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["predict", "transform", "score"])
def test_not_fitted_without_sklearn(monkeypatch, method):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # `import sklearn...` now raises ImportError
    monkeypatch.setitem(sys.modules, "sklearn.exceptions", None)
    with pytest.raises(kmt_ref.estimator.NotFittedError, match="This KMeansTransformer instance is not fitted yet"):
        getattr(KMeansTransformer(2), method)(CORNERS)
    assert issubclass(kmt_ref.estimator.NotFittedError, ValueError)
    assert issubclass(kmt_ref.estimator.NotFittedError, AttributeError)


@pytest.mark.parametrize("method", ["predict", "transform", "score"])
def test_not_fitted_with_sklearn(method):
    exceptions = pytest.importorskip("sklearn.exceptions")
    with pytest.raises(exceptions.NotFittedError, match="not fitted yet"):
        getattr(KMeansTransformer(2), method)(CORNERS)


# ---------------------------------------------------------------------------
# scikit-learn: its own conformance suite, check by check, and its tools.
# Skipped when scikit-learn is not installed (it is not a kmt_ref dependency;
# requirements.txt installs it for these tests).
# ---------------------------------------------------------------------------
try:
    from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
except ImportError:
    SklearnKMeansTransformer = None
else:
    class SklearnKMeansTransformer(ClusterMixin, TransformerMixin, BaseEstimator, KMeansTransformer):
        """KMeansTransformer with scikit-learn's own mixins: the thin subclass a scikit-learn
        user would write (TransformerMixin is needed because it has ``transform``).
        Defined at module level so that the pickling checks can find it."""


def _sklearn_checks():
    """(estimator, check) pairs of scikit-learn's check_estimator, as pytest params.

    Two estimators: KMeansTransformer itself (our get_params and tags), and
    SklearnKMeansTransformer (scikit-learn's mixins, which add the clustering checks).
    """
    if SklearnKMeansTransformer is None:
        return [pytest.param(None, None, id="sklearn-not-installed",
                             marks=pytest.mark.skip(reason="scikit-learn is not installed"))]
    from sklearn.utils import estimator_checks

    params = []
    for estimator in (KMeansTransformer(n_clusters=3), SklearnKMeansTransformer(n_clusters=3)):
        with warnings.catch_warnings():  # "does not inherit from BaseEstimator": on purpose
            warnings.simplefilter("ignore")
            if hasattr(estimator_checks, "estimator_checks_generator"):  # scikit-learn >= 1.6
                pairs = list(estimator_checks.estimator_checks_generator(estimator, legacy=True, mark=None))
            else:
                pairs = list(estimator_checks.check_estimator(estimator, generate_only=True))
        for est, check in pairs:
            func = getattr(check, "func", check)
            keywords = getattr(check, "keywords", {}) or {}
            name = func.__name__ + "".join(f"[{k}={v}]" for k, v in keywords.items())
            params.append(pytest.param(est, check, id=f"{type(est).__name__}-{name}"))
    return params


@pytest.mark.parametrize("estimator,check", _sklearn_checks())
def test_sklearn_check_estimator(estimator, check, monkeypatch):
    if "check_array_api_input" in getattr(getattr(check, "func", check), "__name__", ""):
        # scikit-learn skips this NumPy-namespace smoke test unless SCIPY_ARRAY_API
        # is set, a variable it reads when the check runs (scipy reads it only at
        # import, and NumPy arrays do not need it): set it, so the check runs.
        monkeypatch.setenv("SCIPY_ARRAY_API", "1")
        import scipy  # noqa: PLC0415

        if tuple(int(v) for v in scipy.__version__.split(".")[:2]) < (1, 14):
            # scikit-learn's array-API dispatch needs SciPy >= 1.14 (pip pairs numpy 1.x with SciPy 1.13)
            pytest.skip(f"scikit-learn's array API check needs SciPy >= 1.14, found {scipy.__version__}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # checks report advice as warnings; failures raise
        check(estimator)


def test_sklearn_tags_are_those_of_its_mixins():
    base = pytest.importorskip("sklearn.base")
    if not hasattr(base.BaseEstimator, "__sklearn_tags__"):
        pytest.skip("scikit-learn < 1.6 has no __sklearn_tags__")

    class Reference(base.ClusterMixin, base.TransformerMixin, base.BaseEstimator):
        pass

    assert KMeansTransformer(2).__sklearn_tags__() == Reference().__sklearn_tags__()
    assert base.is_clusterer(KMeansTransformer(2)) if hasattr(base, "is_clusterer") else True


def test_sklearn_clone_pipeline_and_grid_search():
    pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    y = np.repeat(np.arange(3), 20)
    X = rng.permutation(np.c_[centers[y] + rng.normal(size=(60, 2)), y])  # shuffled: init="first" works
    X, y = X[:, :2], X[:, 2].astype(int)

    km = KMeansTransformer(3, 5, init="random", random_state=0)
    twin = clone(km)
    assert twin is not km and twin.get_params() == km.get_params() and not hasattr(twin, "labels_")

    pipe = make_pipeline(StandardScaler(), KMeansTransformer(3, 5)).fit(X)
    np.testing.assert_array_equal(pipe.predict(X), pipe[-1].labels_)

    # as a transformer: distances to the centers as features of a classifier
    clf = make_pipeline(KMeansTransformer(3, 5), LogisticRegression()).fit(X, y)
    assert clf.score(X, y) > 0.9

    # score (minus the inertia) ranks the candidates: more clusters, lower inertia
    search = GridSearchCV(KMeansTransformer(2), {"n_clusters": [2, 3], "n_layers": [1, 5]}, cv=3).fit(X)
    assert search.best_params_["n_clusters"] == 3
    assert isinstance(search.best_estimator_, KMeansTransformer)


def test_the_module_does_not_import_sklearn():
    # importing scikit-learn costs about a second; kmt_ref must not pay it
    import subprocess

    code = "import sys, kmt_ref; assert 'sklearn' not in sys.modules, 'kmt_ref imported sklearn'"
    subprocess.run([sys.executable, "-c", code], check=True)
