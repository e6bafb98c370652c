"""The result object shared by every clustering algorithm in kmt_ref."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ClusteringTrace", "kmeans_objective", "assign", "log_objective"]


@dataclass
class ClusteringTrace:
    """What a clustering algorithm (classical or transformer) did, step by step.

    Attributes
    ----------
    centers : ndarray, shape (T+1, d, k)
        ``centers[0]`` are the initial centers, ``centers[t]`` those after step t.
    labels : ndarray of int, shape (T, n)
        ``labels[t]`` is the assignment made in step t+1 (to ``centers[t]``).
        For a transformer: the lowest index of the largest entry of y_i.
    objective : ndarray, shape (T+1,)
        ``sum_i min_j ||x_i - c_j||^2`` for ``centers[t]``.
    assignments : ndarray, shape (k, n) or None
        Final assignment block Y (one-hot, or soft responsibilities).
    one_hot : ndarray of int, shape (T,) or None
        Transformers only: how many columns of Y are exactly one-hot after each layer.
    layers : list of LayerRecord or None
        Transformers with ``record=True``: tokens and attention matrices per layer.
    info : dict
        Anything else an algorithm reports (e.g. the parameters used).
    """

    centers: np.ndarray
    labels: np.ndarray
    objective: np.ndarray
    assignments: np.ndarray = None
    one_hot: np.ndarray = None
    layers: list = None
    info: dict = field(default_factory=dict)

    @property
    def n_steps(self):
        """T, the number of iterations (layers)."""
        return self.labels.shape[0]

    @property
    def log_objective(self):
        """Natural log of :attr:`objective` (the paper's plotted metric)."""
        return log_objective(self.objective)


def assign(X, C):
    """Nearest center of each point, ties to the lowest index.

    Parameters
    ----------
    X : ndarray, shape (d, n)
    C : ndarray, shape (d, k)

    Returns
    -------
    labels : ndarray of int, shape (n,)
    D : ndarray, shape (k, n)
        Squared distances ``||x_i - c_j||^2`` computed as
        ``||x_i||^2 + ||c_j||^2 - 2 c_j . x_i`` (one matrix product).
    """
    D = np.sum(X * X, axis=0)[None, :] + np.sum(C * C, axis=0)[:, None] - 2.0 * (C.T @ X)  # (k, n)
    return np.argmin(D, axis=0), D


def kmeans_objective(X, C):
    """``sum_i min_j ||x_i - c_j||^2`` for X (d, n) and C (d, k).

    The nearest center is found with :func:`assign`; the distance to it is then
    computed directly as ``||x_i - c_{l_i}||^2`` (no cancellation).
    """
    labels, _ = assign(X, C)
    diff = X - C[:, labels]
    return float(np.sum(diff * diff))


def log_objective(obj):
    """Natural log of an objective value or array (``-inf`` at exactly 0)."""
    obj = np.asarray(obj, dtype=float)
    with np.errstate(divide="ignore"):
        return np.log(obj)
