"""Classical reference algorithms: what each transformer must equal.

These are written plainly and independently of the attention code, so that a
match between the two is evidence, not a tautology.
"""
from __future__ import annotations

import numpy as np

from .frame import Frame, data_frame
from .trace import ClusteringTrace, frame_objective, nearest_center
from .validation import as_centers, as_points, check_choice, check_count

__all__ = ["lloyd", "lloyd_step", "cluster_means", "start_trace", "finish_trace", "EMPTY_POLICIES"]

#: what Lloyd's algorithm does with a cluster that lost all its points
EMPTY_POLICIES = ("keep",)


def cluster_means(X, labels, C_prev):
    """Mean of the points of each cluster; an empty cluster keeps ``C_prev``'s column.

    Parameters
    ----------
    X : ndarray, shape (d, n)
    labels : ndarray of int, shape (n,)
    C_prev : ndarray, shape (d, k)

    Returns
    -------
    C : ndarray, shape (d, k)
    counts : ndarray of int, shape (k,)
    """
    k = C_prev.shape[1]
    counts = np.bincount(labels, minlength=k)  # (k,)
    sums = np.stack([np.bincount(labels, weights=row, minlength=k) for row in X])  # (d, k)
    C = C_prev.copy()
    nonempty = counts > 0
    C[:, nonempty] = sums[:, nonempty] / counts[nonempty]
    return C, counts


def lloyd_step(X, C):
    """One Lloyd iteration: assign to the nearest center, move each center to its mean.

    Returns
    -------
    C_new : ndarray, shape (d, k)
    labels : ndarray of int, shape (n,)
    """
    labels, _ = nearest_center(X, C)
    C_new, _ = cluster_means(X, labels, C)
    return C_new, labels


def lloyd(X, C0, n_iter, empty="keep"):
    r"""Lloyd's algorithm for k-means, with tokens as columns.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column.
    C0 : array_like, shape (d, k)
        Initial centers, one per column (1 <= k <= n).
    n_iter : int
        Number of iterations T >= 0.
    empty : {"keep"}
        Empty-cluster policy: ``"keep"`` leaves the center where it was.

    Returns
    -------
    ClusteringTrace
        ``centers`` (T+1, d, k), ``labels`` (T, n), ``objective`` (T+1,).

    Notes
    -----
    Iteration t (paper §2, eqs. (1)-(2))::

        l_i^{(t)} = argmin_j ||x_i - c_j^{(t)}||^2          (ties: lowest j)
        c_j^{(t+1)} = mean{x_i : l_i^{(t)} = j}             (empty: c_j^{(t)})

    The objective ``sum_i min_j ||x_i - c_j^{(t)}||^2`` never increases.
    Squared distances are ``||x||^2 + ||c||^2 - 2 c.x`` (one matrix product),
    so memory is O(n (d + k)). They are computed in the data frame of X
    (:mod:`kmt_ref.frame`: centered and rescaled by a power of two where the
    data's position or scale needs it, the identity otherwise), so the labels
    do not depend on where the data sit or in what units. Integer and float32
    input is computed in float64.
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty)
    for t in range(n_iter):
        C, labels[t] = lloyd_step(X, C)
        centers[t + 1] = C
    return finish_trace(X, centers, labels, {"empty": empty}, frame)


def start_trace(X, C0, n_iter, empty, use_frame=True):
    """Validate the common arguments of an iterative reference, move them into the data frame, allocate its trace.

    Parameters
    ----------
    use_frame : bool
        ``False`` for algorithms that must not shift the data (spherical
        k-means): the frame is then the identity.

    Returns
    -------
    X : ndarray, shape (d, n) (float64, in the frame); C : ndarray, shape (d, k) (likewise)
    n_iter : int
    centers : ndarray, shape (n_iter+1, d, k), with ``centers[0] = C``
    labels : ndarray of int, shape (n_iter, n), to be filled
    frame : :class:`~kmt_ref.frame.Frame`, to pass to :func:`finish_trace`
    """
    X = as_points(X)
    C = as_centers(C0, X)
    n_iter = check_count(n_iter, "n_iter")
    check_choice(empty, "empty", EMPTY_POLICIES)
    frame = data_frame(X, C) if use_frame else Frame(np.zeros(X.shape[0]), 0)
    X, C = frame.to_frame(X), frame.to_frame(C)
    d, n = X.shape
    k = C.shape[1]
    centers = np.empty((n_iter + 1, d, k))
    centers[0] = C
    labels = np.empty((n_iter, n), dtype=np.intp)
    return X, C, n_iter, centers, labels, frame


def finish_trace(X, centers, labels, info, frame):
    """A :class:`ClusteringTrace` in data units, with the k-means objective of every ``centers[t]``.

    ``X`` and ``centers`` are in ``frame``; the trace's centers and objective
    are read out of it (:meth:`~kmt_ref.frame.Frame.from_frame`).
    """
    J = np.array([frame_objective(X, C) for C in centers])  # (T+1,) in the frame
    return ClusteringTrace(centers=frame.from_frame(centers), labels=labels, objective=frame.objective(J),
                           info=info, log_objective=frame.log_objective(J))
