"""A scikit-learn-style estimator around the k-means transformer.

This is one of the few places where data arrives as rows ``(n_samples,
n_features)`` (the NumPy / scikit-learn habit): it transposes once, with
:func:`kmt_ref.validation.rows_to_columns`, and everything inside works with
tokens as columns (SPEC §1).
"""
from __future__ import annotations

import numpy as np

from .constructions import kmeans_transformer
from .trace import assign
from .validation import check_choice, check_count, check_gamma, rows_to_columns

__all__ = ["KMeansTransformer"]


class KMeansTransformer:
    """k-means by the hand-set transformer of Theorem 2.1 (or 2.2), with a ``fit``/``predict`` API.

    Parameters
    ----------
    n_clusters : int
        k >= 1.
    n_layers : int
        Number of layers T (= Lloyd iterations at ``gamma = inf``).
    gamma : float
        Inverse temperature of the assignment block; ``inf`` is exact Lloyd.
    attention : {"euclidean", "dot"}
        Theorem 2.1 or Theorem 2.2.
    init : {"first", "random"} or array_like of shape (n_clusters, n_features)
        ``"first"``: the first k points (the paper's protocol on shuffled data);
        ``"random"``: k distinct points drawn with ``random_state``; an array:
        the initial centers as rows.
    random_state : int or numpy.random.Generator or None
        Used by ``init="random"`` only.

    Attributes
    ----------
    cluster_centers_ : ndarray, shape (n_clusters, n_features)
    labels_ : ndarray of int, shape (n_samples,)
        The training data assigned to the final ``cluster_centers_`` (ties to
        the lowest index), so ``labels_ == predict(X)``. (The assignment made
        inside the last layer, to the centers entering it, is
        ``trace_.labels[-1]``.)
    inertia_ : float
        ``sum_i ||x_i - c_{labels_i}||^2`` for ``labels_`` and the final centers.
    trace_ : ClusteringTrace
        The full layer-by-layer trace (tokens as columns).

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
    """

    def __init__(self, n_clusters, n_layers=10, gamma=np.inf, attention="euclidean", init="first",
                 random_state=None):
        self.n_clusters = n_clusters
        self.n_layers = n_layers
        self.gamma = gamma
        self.attention = attention
        self.init = init
        self.random_state = random_state

    def _initial_centers(self, X):  # X: (d, n)
        d, n = X.shape
        k = self.n_clusters
        if k > n:
            raise ValueError(f"n_samples={n} should be >= n_clusters={k}")
        if isinstance(self.init, str):
            check_choice(self.init, "init", ("first", "random"))
            if self.init == "first":
                return X[:, :k]
            rng = np.random.default_rng(self.random_state)
            return X[:, np.sort(rng.choice(n, k, replace=False))]
        C0 = rows_to_columns(self.init, name="init")  # (d, k)
        if C0.shape != (d, k):
            raise ValueError(
                f"init has shape {(C0.shape[1], C0.shape[0])}, expected (n_clusters, n_features)={(k, d)}"
            )
        return C0

    def fit(self, X):
        """Cluster ``X`` of shape (n_samples, n_features); returns self."""
        check_count(self.n_clusters, "n_clusters", minimum=1)
        check_count(self.n_layers, "n_layers", minimum=1)
        check_gamma(self.gamma, "gamma")
        Xc = rows_to_columns(X)  # (d, n): the one transpose
        C0 = self._initial_centers(Xc)
        self.trace_ = kmeans_transformer(Xc, C0, self.n_layers, self.gamma, attention=self.attention)
        C = self.trace_.centers[-1]  # (d, k): the centers after the last layer
        labels, _ = assign(Xc, C)  # (n,): the training data assigned to *those* centers
        diff = Xc - C[:, labels]  # (d, n)
        self.cluster_centers_ = C.T.copy()  # (k, d)
        self.labels_ = labels
        self.inertia_ = float(np.sum(diff * diff))
        return self

    def predict(self, X):
        """Nearest fitted center of each row of ``X`` (ties to the lowest index)."""
        if not hasattr(self, "cluster_centers_"):
            raise ValueError("this KMeansTransformer is not fitted yet: call fit(X) first")
        Xc = rows_to_columns(X)
        if Xc.shape[0] != self.cluster_centers_.shape[1]:
            raise ValueError(
                f"X has {Xc.shape[0]} features, the fitted centers have {self.cluster_centers_.shape[1]}"
            )
        return assign(Xc, self.cluster_centers_.T)[0]

    def fit_predict(self, X):
        """``fit(X)`` then the labels of the last layer."""
        return self.fit(X).labels_
