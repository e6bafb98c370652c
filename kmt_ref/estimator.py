"""A scikit-learn-compatible estimator around the k-means transformer.

This is one of the few places where data arrives as rows ``(n_samples,
n_features)`` (the NumPy / scikit-learn habit): it transposes once, with
:func:`kmt_ref.validation.rows_to_columns`, and everything inside works with
tokens as columns (SPEC §1).

scikit-learn is not a dependency of kmt_ref, and this module never imports it
when it loads (``import sklearn`` costs about a second, several times the
import of kmt_ref itself). :class:`KMeansTransformer` follows scikit-learn's
estimator conventions by itself, so the class is the same with or without
scikit-learn installed:

- ``__init__`` stores its arguments unchanged; :meth:`fit` validates them;
- :meth:`~KMeansTransformer.get_params` / :meth:`~KMeansTransformer.set_params`
  are kmt_ref's own (what :func:`sklearn.base.clone`, pipelines and grid search
  call);
- ``__sklearn_tags__`` (scikit-learn >= 1.6) describes it as a clusterer and a
  transformer, as ``ClusterMixin`` and ``TransformerMixin`` would; it imports
  scikit-learn, which is only ever the caller;
- methods called before :meth:`fit` raise scikit-learn's ``NotFittedError``
  if scikit-learn can be imported, else this module's :class:`NotFittedError`;
  both subclass ``ValueError`` and ``AttributeError``, so ``except ValueError``
  works either way.

What it does not provide: ``set_output``, metadata routing and the HTML
repr of ``BaseEstimator``. The conformance standard is scikit-learn's own
suite, ``sklearn.utils.estimator_checks.check_estimator``; the tests run every
check, one test each, on this class (46 checks with scikit-learn 1.9) and on
the thin subclass a scikit-learn user would write, with scikit-learn's
``ClusterMixin``, ``TransformerMixin`` and ``BaseEstimator`` (50 checks, the
clustering ones included); all pass (tests/test_estimator.py). Without
scikit-learn those tests are skipped and everything else runs.
"""
from __future__ import annotations

import inspect

import numpy as np

from .algorithms.lloyd import kmeans_transformer
from .trace import assign
from .validation import check_choice, check_count, check_gamma, check_random_state, rows_to_columns

__all__ = ["KMeansTransformer", "NotFittedError"]


class NotFittedError(ValueError, AttributeError):
    """A method that needs a fitted estimator was called before ``fit``.

    Raised only when scikit-learn is not installed; otherwise
    ``sklearn.exceptions.NotFittedError`` is raised, which has the same two
    bases (``ValueError`` for the error, ``AttributeError`` for ``hasattr``).
    """


def _not_fitted_error(estimator):
    message = (
        f"This {type(estimator).__name__} instance is not fitted yet. "
        "Call 'fit' with appropriate arguments before using this estimator."
    )
    try:
        from sklearn.exceptions import NotFittedError as error_class  # noqa: PLC0415 (optional)
    except ImportError:
        error_class = NotFittedError
    return error_class(message)


class KMeansTransformer:
    """k-means by the hand-set transformer of Theorem 2.1 (or 2.2), as a scikit-learn estimator.

    Parameters
    ----------
    n_clusters : int, default 8
        k >= 1. The default is ``KMeans``'s: scikit-learn wants every
        constructor argument to have one (``KMeansTransformer()`` must work).
    n_layers : int
        Number of layers T >= 1 (= Lloyd iterations at ``gamma = inf``).
    gamma : float
        Inverse temperature of the assignment block; ``inf`` is exact Lloyd.
    attention : {"euclidean", "dot"}
        Theorem 2.1 or Theorem 2.2.
    init : {"first", "random"} or array_like of shape (n_clusters, n_features)
        ``"first"``: the first k points (the authors' protocol on shuffled data: their
        ``ctasks.py`` and ``numerical_validation.ipynb``);
        ``"random"``: k distinct points drawn with ``random_state``; an array:
        the initial centers as rows.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        Used by ``init="random"`` only (and validated always). An int gives the
        same centers on every fit; a Generator or RandomState instance is
        advanced by each fit (scikit-learn's convention).

    Attributes
    ----------
    cluster_centers_ : ndarray, shape (n_clusters, n_features)
        The centers after the last layer.
    labels_ : ndarray of int, shape (n_samples,)
        The training data assigned to the final ``cluster_centers_`` (ties to
        the lowest index), so ``labels_ == predict(X)``. (The assignment made
        inside the last layer, to the centers entering it, is
        ``trace_.labels[-1]``.)
    inertia_ : float
        ``sum_i ||x_i - c_{labels_i}||^2`` for ``labels_`` and the final centers.
    n_iter_ : int
        Layers applied, always ``n_layers`` (a transformer has no early stop).
    n_features_in_ : int
        d, the number of features seen by :meth:`fit`.
    trace_ : ClusteringTrace
        The full layer-by-layer trace (tokens as columns).

    Notes
    -----
    Layer t assigns each point to its nearest center and moves every center
    to the mean of its points (Lloyd's algorithm; Theorem 2.1). After
    the T layers::

        labels_i = argmin_j ||x_i - c_j^{(T)}||^2        (ties: lowest j)
        inertia  = sum_i ||x_i - c_{labels_i}^{(T)}||^2
        transform(X)[i, j] = ||x_i - c_j^{(T)}||         (not squared, as KMeans)
        score(X) = -sum_i min_j ||x_i - c_j^{(T)}||^2

    The estimator is deterministic for ``init="first"``, an array ``init``,
    or ``init="random"`` with an int ``random_state``.

    Examples
    --------
    >>> import numpy as np
    >>> from kmt_ref.estimator import KMeansTransformer
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [9.0, 9.0], [9.0, 8.0]])
    >>> km = KMeansTransformer(n_clusters=2, n_layers=3).fit(X)
    >>> km.labels_
    array([0, 0, 1, 1])
    >>> km.cluster_centers_
    array([[0. , 0.5],
           [9. , 8.5]])
    >>> km.inertia_
    1.0
    >>> km
    KMeansTransformer(n_clusters=2, n_layers=3)
    """

    _estimator_type = "clusterer"  # what scikit-learn < 1.6 reads instead of tags

    def __init__(self, n_clusters=8, n_layers=10, gamma=np.inf, attention="euclidean", init="first",
                 random_state=None):
        self.n_clusters = n_clusters
        self.n_layers = n_layers
        self.gamma = gamma
        self.attention = attention
        self.init = init
        self.random_state = random_state

    # ------------------------------------------------------------------
    # parameters (scikit-learn's protocol, without scikit-learn)
    # ------------------------------------------------------------------
    @classmethod
    def _param_defaults(cls):
        """{name: default} of ``__init__``'s parameters (``inspect.Parameter.empty`` if none)."""
        params = inspect.signature(cls.__init__).parameters.values()
        return {p.name: p.default for p in params if p.name != "self" and p.kind == p.POSITIONAL_OR_KEYWORD}

    def get_params(self, deep=True):
        """The constructor's parameters as a dict (``deep`` is accepted; no parameter is an estimator)."""
        return {name: getattr(self, name) for name in sorted(self._param_defaults())}

    def set_params(self, **params):
        """Set constructor parameters by name (validated by the next :meth:`fit`); returns self."""
        valid = sorted(self._param_defaults())
        for name in params:
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                    f"Valid parameters are: {valid!r}."
                )
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self):
        def is_default(value, default):
            return value is default or (
                type(value) is type(default) and isinstance(value, (str, int, float)) and value == default
            )

        defaults = self._param_defaults()
        shown = [f"{name}={getattr(self, name)!r}" for name in defaults
                 if not is_default(getattr(self, name), defaults[name])]
        return f"{type(self).__name__}({', '.join(shown)})"

    def __sklearn_tags__(self):
        """Tags for scikit-learn >= 1.6: a clusterer and a transformer (only scikit-learn calls this)."""
        from sklearn.utils import Tags, TargetTags, TransformerTags  # noqa: PLC0415 (the caller's library)

        # as ClusterMixin + TransformerMixin + BaseEstimator; transform returns float64 for any input
        return Tags(estimator_type="clusterer", target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(preserves_dtype=[]))

    # ------------------------------------------------------------------
    # fitting
    # ------------------------------------------------------------------
    def _initial_centers(self, X):  # X: (d, n)
        d, n = X.shape
        k = self.n_clusters
        if k > n:
            raise ValueError(f"n_samples={n} should be >= n_clusters={k}")
        if isinstance(self.init, str):
            check_choice(self.init, "init", ("first", "random"))
            if self.init == "first":
                return X[:, :k]
            if isinstance(self.random_state, np.random.RandomState):
                rng = self.random_state
            else:
                rng = np.random.default_rng(self.random_state)
            return X[:, np.sort(rng.choice(n, k, replace=False))]
        C0 = rows_to_columns(self.init, name="init")  # (d, k)
        if C0.shape != (d, k):
            raise ValueError(
                f"init has shape {(C0.shape[1], C0.shape[0])}, expected (n_clusters, n_features)={(k, d)}"
            )
        return C0

    def fit(self, X, y=None):
        """Cluster ``X`` of shape (n_samples, n_features); returns self.

        ``y`` is ignored (accepted for pipelines, as in scikit-learn).
        """
        check_count(self.n_clusters, "n_clusters", minimum=1)
        check_count(self.n_layers, "n_layers", minimum=1)
        check_gamma(self.gamma, "gamma")
        check_choice(self.attention, "attention", ("euclidean", "dot"))
        check_random_state(self.random_state)
        Xc = rows_to_columns(X, who=type(self).__name__)  # (d, n): the one transpose
        C0 = self._initial_centers(Xc)  # (d, k)
        self.trace_ = kmeans_transformer(Xc, C0, self.n_layers, self.gamma, attention=self.attention)
        C = self.trace_.centers[-1]  # (d, k): the centers after the last layer
        labels, _ = assign(Xc, C)  # (n,): the training data assigned to *those* centers
        diff = Xc - C[:, labels]  # (d, n)
        self.cluster_centers_ = C.T.copy()  # (k, d)
        self.labels_ = labels
        self.inertia_ = float(np.sum(diff * diff))
        self.n_iter_ = int(self.n_layers)
        self.n_features_in_ = Xc.shape[0]
        return self

    def fit_predict(self, X, y=None):
        """``fit(X).labels_``: the training data assigned to the final centers."""
        return self.fit(X).labels_

    def fit_transform(self, X, y=None):
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X)

    # ------------------------------------------------------------------
    # using the fitted centers
    # ------------------------------------------------------------------
    def _fitted_columns(self, X):
        """Check that fit ran and X has its number of features; return X as columns (d, n)."""
        if not hasattr(self, "cluster_centers_"):
            raise _not_fitted_error(self)
        Xc = rows_to_columns(X, who=type(self).__name__)  # (d, n)
        if Xc.shape[0] != self.n_features_in_:
            raise ValueError(
                f"X has {Xc.shape[0]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        return Xc

    def predict(self, X):
        """Nearest fitted center of each row of ``X`` (ties to the lowest index); shape (n_samples,)."""
        Xc = self._fitted_columns(X)
        return assign(Xc, self.cluster_centers_.T)[0]

    def transform(self, X):
        """Euclidean distances ``||x_i - c_j||`` to the centers; shape (n_samples, n_clusters).

        Not squared, as scikit-learn's ``KMeans.transform``. Computed one center
        at a time from the differences (no cancellation), so a point that is
        a center is at distance exactly 0.
        """
        Xc = self._fitted_columns(X)  # (d, n)
        C = self.cluster_centers_  # (k, d)
        return np.stack([np.linalg.norm(Xc - c[:, None], axis=0) for c in C], axis=1)  # (n, k)

    def score(self, X, y=None):
        """Minus the k-means objective of ``X`` for the fitted centers (larger is better, as KMeans)."""
        Xc = self._fitted_columns(X)  # (d, n)
        C = self.cluster_centers_.T  # (d, k)
        diff = Xc - C[:, assign(Xc, C)[0]]  # (d, n)
        return -float(np.sum(diff * diff))
