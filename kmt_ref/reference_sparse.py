"""Classical references for the sparse and sampling variants (SPEC §5).

What each transformer of :mod:`kmt_ref.sparse_variants` must equal, written as
plain loops over clusters, independently of the attention code:

- :func:`trimmed_kmeans_attention` -- the trimmed-k-means rule realised by block 3
  with alpha = inf normmax: every center moves to the uniform mean of its ``s*``
  closest members (**(open)**: the project's own construction);
- :func:`trimmed_kmeans` -- the textbook trimmed k-means of Cuesta-Albertos,
  Gordaliza & Matran (1997): a global trimming proportion, concentration steps;
- :func:`robust_kmeans` -- the authors' robust k-means (``rithram/kmeans-trf``):
  Lloyd's assignment, then a sparsemax-weighted mean of each cluster;
- :func:`randomized_kmedoids` -- every center becomes one of its members, drawn
  with probability ``softmax(-gamma ||x_i - mu_j||^2)`` (**(open)**).

All return a :class:`~kmt_ref.trace.ClusteringTrace` like :func:`kmt_ref.lloyd`
(``centers`` (T+1, d, k), ``labels`` (T, n), ``objective`` (T+1,), the plain
k-means objective of all points) and take ``(X, C0, n_iter, ...)`` with tokens as
columns. Empty clusters follow Lloyd's ``"keep"`` policy everywhere: the center
stays where it was. Ties in the assignment go to the lowest center index.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .normalizers import gumbel_noise
from .reference import cluster_means, finish_trace, start_trace
from .trace import nearest_center
from .validation import check_gamma, check_rng

__all__ = [
    "trimmed_kmeans_attention",
    "trimmed_kmeans",
    "trimmed_size",
    "robust_kmeans",
    "randomized_kmedoids",
]


def _sq_dist(X, c):
    """``||x_i - c||^2`` for the columns of X (d, m), computed directly."""
    diff = X - c[:, None]
    return np.sum(diff * diff, axis=0)  # (m,)


def _assign_then_update(X, C, centers, labels, update, per_step=None):
    """Lloyd's assignment, then ``c_j <- update(t, j, members, c_j)`` for every non-empty cluster.

    Fills ``centers[1:]`` and ``labels`` in place. An empty cluster keeps its
    center (the ``"keep"`` policy). ``per_step(t)``, if given, runs once per
    step after the assignment (e.g. to draw that step's random numbers).
    """
    k = C.shape[1]
    for t in range(labels.shape[0]):
        labels[t], _ = nearest_center(X, C)  # ties: lowest index
        if per_step is not None:
            per_step(t)
        C_new = C.copy()
        for j in range(k):
            members = np.flatnonzero(labels[t] == j)
            if members.size:
                C_new[:, j] = update(t, j, members, C[:, j])
        C = C_new
        centers[t + 1] = C


# --------------------------------------------------------------------------
# Trimmed k-means, attention form (SPEC §5, "(open)")
# --------------------------------------------------------------------------
def _best_prefix(z_desc):
    """Smallest s maximising (S_s - 1)/s for scores sorted in descending order."""
    values = (np.cumsum(z_desc) - 1.0) / np.arange(1, z_desc.size + 1)
    return int(np.argmax(values)) + 1  # argmax: first (smallest) maximiser


def trimmed_kmeans_attention(X, C0, n_iter, gamma2, empty="keep"):
    r"""Trimmed k-means as realised by normmax attention: each center keeps its ``s*`` closest members.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column.
    C0 : array_like, shape (d, k)
        Initial centers, one per column.
    n_iter : int
        Number of iterations T >= 0.
    gamma2 : float
        ``0 <= gamma2 < inf``; sets the trimming level (larger trims more).
    empty : {"keep"}
        An empty cluster keeps its center.

    Returns
    -------
    ClusteringTrace
        ``labels[t]`` is Lloyd's assignment of step t+1 (every point has a
        label; trimming only decides who moves the center). ``info["kept"]``
        (T, n) bool: the points that entered some center's mean.

    Notes
    -----
    **(open)**: the project's own rule (SPEC §5), the classical reading of
    block 3 with alpha = inf normmax over ``-gamma1 ||e_j - y_i||^2 -
    gamma2 ||c_j - x_i||^2``. Step t::

        l_i = argmin_j ||x_i - c_j||^2                         (ties: lowest j)
        z_i = -gamma2 ||x_i - c_j||^2 for the members i of cluster j,
              sorted z_(1) >= z_(2) >= ...,  S_s = z_(1) + ... + z_(s)
        s*  = smallest argmax_s (S_s - 1) / s
        c_j <- mean of the s* members with the largest z       (empty: c_j)

    ``(S_s - 1)/s`` is the alpha = inf normmax closed form (SPEC §2). A member
    is dropped when it is farther than the kept ones by a margin of order
    ``1/gamma2`` in squared distance: ``gamma2 = 0`` keeps every member
    (Lloyd), ``gamma2 -> inf`` keeps only the closest member. Equal distances
    are kept or dropped together; a singleton cluster moves onto its point.
    Distances are computed directly as ``||x_i - c_j||^2``.
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty)
    gamma2 = check_gamma(gamma2, "gamma2", allow_inf=False)
    g = frame.gamma(gamma2, "gamma2")  # acts on squared data distances
    kept = np.zeros(labels.shape, dtype=bool)

    def update(t, j, members, c):
        z = -g * _sq_dist(X[:, members], c)  # (m,)
        order = np.argsort(-z, kind="stable")
        chosen = np.sort(members[order[:_best_prefix(z[order])]])  # the s* best-scored members
        kept[t, chosen] = True
        # their mean, summed in point order as cluster_means (and Lloyd) does
        return cluster_means(X[:, chosen], np.zeros(chosen.size, dtype=np.intp), c[:, None])[0][:, 0]

    _assign_then_update(X, C, centers, labels, update)
    return finish_trace(X, centers, labels, {"gamma2": gamma2, "empty": empty, "kept": kept}, frame)


# --------------------------------------------------------------------------
# Trimmed k-means, Cuesta-Albertos, Gordaliza & Matran (1997)
# --------------------------------------------------------------------------
def trimmed_size(n, alpha):
    """``h = ceil((1 - alpha) n)``, the number of points trimmed k-means keeps.

    ``(1 - alpha) n`` is rounded to 9 decimals before the ceiling, so that
    floating-point noise (``(1 - 0.7) * 10 = 3.0000000000000004``) does not add
    a point. Always ``1 <= h <= n``.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"alpha must be a real number in [0, 1), got {alpha!r} ({type(alpha).__name__})")
    alpha = float(alpha)
    if not 0.0 <= alpha < 1.0:  # also rejects NaN
        raise ValueError(f"trimming proportion alpha={alpha!r} should be in [0, 1)")
    return min(n, max(1, math.ceil(round((1.0 - alpha) * n, 9))))


def trimmed_kmeans(X, C0, n_iter, alpha, empty="keep"):
    r"""Trimmed k-means (Cuesta-Albertos, Gordaliza & Matran 1997) by concentration steps.

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_iter : int
        Number of concentration steps T >= 0.
    alpha : float
        Trimming proportion, ``0 <= alpha < 1``; ``h = ceil((1 - alpha) n)``
        points are kept (:func:`trimmed_size`). ``alpha = 0`` is Lloyd.
    empty : {"keep"}

    Returns
    -------
    ClusteringTrace
        ``labels[t]``: the nearest center of every point, ``-1`` for the
        ``n - h`` trimmed points. ``objective`` is the plain k-means objective
        of all points (as for every trace); ``info["trimmed_objective"]`` (T+1,)
        is the trimmed objective, the sum over the ``h`` closest points.

    Notes
    -----
    The estimator minimises ``sum_{i in H} min_j ||x_i - c_j||^2`` over centers
    and subsets ``H`` of size ``h``. One concentration step (their §3; the
    "C-step" of Rousseeuw & Van Driessen's FAST-MCD)::

        D_i = min_j ||x_i - c_j||^2,   H = the h points with the smallest D_i
        l_i = argmin_j ||x_i - c_j||^2 for i in H              (ties: lowest j)
        c_j <- mean{x_i : i in H, l_i = j}                     (empty: c_j)

    Ties in ``D`` at the cut are broken by the lowest point index (a stable
    sort). The trimmed objective never increases.
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty)
    h = trimmed_size(X.shape[1], alpha)

    def nearest(C):
        lab, _ = nearest_center(X, C)  # ties: lowest index
        return lab, np.sum((X - C[:, lab]) ** 2, axis=0)  # (n,) D_i, computed directly

    def trimmed_objective(C):
        return float(np.sum(np.sort(nearest(C)[1])[:h]))

    trimmed_obj = [trimmed_objective(C)]
    for t in range(n_iter):
        lab, D = nearest(C)
        H = np.sort(np.argsort(D, kind="stable")[:h])  # the h closest, in point order
        labels[t] = -1
        labels[t, H] = lab[H]
        C, _ = cluster_means(X[:, H], lab[H], C)  # empty: keep
        centers[t + 1] = C
        trimmed_obj.append(trimmed_objective(C))
    info = {"alpha": float(alpha), "h": h, "empty": empty,
            "trimmed_objective": frame.objective(np.array(trimmed_obj))}
    return finish_trace(X, centers, labels, info, frame)


# --------------------------------------------------------------------------
# Robust k-means (the authors' rule)
# --------------------------------------------------------------------------
def _sparsemax_plain(z):
    """Sparsemax of a 1-D vector by Martins & Astudillo's support test (an independent form)."""
    z_desc = np.sort(z)[::-1]
    csum = np.cumsum(z_desc)
    s = np.arange(1, z.size + 1)
    support = 1.0 + s * z_desc > csum  # true on a prefix
    k_z = int(s[support][-1])
    tau = (csum[k_z - 1] - 1.0) / k_z
    return np.maximum(z - tau, 0.0)


def robust_kmeans(X, C0, n_iter, gamma=0.01, empty="keep"):
    r"""Robust k-means of the authors' code: Lloyd's assignment, sparsemax-weighted centers.

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_iter : int
    gamma : float
        ``0 <= gamma < inf``; the authors' default is 0.01. ``gamma = 0``
        gives equal weights: Lloyd.
    empty : {"keep"}

    Returns
    -------
    ClusteringTrace

    Notes
    -----
    SPEC §5 (the authors' rule; ``rithram/kmeans-trf``)::

        l_i = argmin_j ||x_i - c_j||^2                          (ties: lowest j)
        p   = sparsemax over the members S_j of  -gamma ||x_i - c_j||^2 / sqrt(d)
        c_j <- sum_{i in S_j} p_i x_i                           (empty: c_j)

    Sparsemax (Martins & Astudillo 2016) gives far members weight exactly 0
    once their score is more than the threshold below the best: outliers
    stop pulling the center. Equal distances get equal weights; a singleton
    cluster moves onto its point. The module containing the authors' rule
    was not among the files of ``rithram/kmeans-trf`` we could read; this
    follows SPEC §5's statement of it.
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty)
    gamma = check_gamma(gamma, "gamma", allow_inf=False)
    g = frame.gamma(gamma)  # acts on squared data distances
    d = X.shape[0]

    def update(t, j, members, c):
        p = _sparsemax_plain(-g * _sq_dist(X[:, members], c) / np.sqrt(d))  # (m,)
        return X[:, members] @ p / np.sum(p)

    _assign_then_update(X, C, centers, labels, update)
    return finish_trace(X, centers, labels, {"gamma": gamma, "empty": empty}, frame)


# --------------------------------------------------------------------------
# Randomized k-medoids (SPEC §5, "(open)")
# --------------------------------------------------------------------------
def randomized_kmedoids(X, C0, n_iter, gamma, rng, empty="keep"):
    r"""Randomized k-medoids: every center becomes a member drawn with probability softmax(-gamma ||x_i - mu_j||^2).

    Parameters
    ----------
    X : array_like, shape (d, n)
    C0 : array_like, shape (d, k)
    n_iter : int
    gamma : float
        ``0 <= gamma < inf``. ``0``: a uniformly random member; large: the
        member closest to the mean (a deterministic medoid-like choice).
    rng : numpy.random.Generator
        The only source of randomness. Passing a Generator in the same state
        to :func:`kmt_ref.sparse_variants.randomized_kmedoids_transformer` gives
        the identical trace.
    empty : {"keep"}

    Returns
    -------
    ClusteringTrace
        ``info["medoids"]`` (T, k) int: the index of the point each center
        became at each step, ``-1`` for a kept (empty) center.

    Notes
    -----
    **(open)**: the project's own construction (SPEC §5). Step t::

        l_i  = argmin_j ||x_i - c_j||^2                        (ties: lowest j)
        mu_j = mean{x_i : l_i = j}
        c_j <- x_{i*},  i* ~ softmax_{i in S_j}(-gamma ||x_i - mu_j||^2)   (empty: c_j)

    The draw is the Gumbel-max trick: ``i* = argmax_{i in S_j}
    (-gamma ||x_i - mu_j||^2 + g_ij)`` with standard Gumbel ``g`` from
    :func:`kmt_ref.normalizers.gumbel_noise` (ties: lowest index). To share
    one random stream with the transformer, each step draws the noise array
    the transformer's block 3 draws, one variable per (key, center) pair with
    the keys ``[x_1 .. x_n, c_1 .. c_k]``: shape (n + k, k), C order; only the
    rows of the members are used.
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, empty)
    gamma = check_gamma(gamma, "gamma", allow_inf=False)
    rng = check_rng(rng)
    g = frame.gamma(gamma)  # acts on squared data distances
    n = X.shape[1]
    k = C.shape[1]
    medoids = np.full((n_iter, k), -1, dtype=np.intp)
    noise = {}

    def draw(t):
        noise["G"] = gumbel_noise(rng, (n + k, k))  # the transformer's (keys, queries) noise

    def update(t, j, members, c):
        mu = np.mean(X[:, members], axis=1)
        logits = -g * _sq_dist(X[:, members], mu) + noise["G"][members, j]
        medoids[t, j] = members[int(np.argmax(logits))]  # Gumbel-max draw; ties: lowest index
        return X[:, medoids[t, j]]

    _assign_then_update(X, C, centers, labels, update, per_step=draw)
    return finish_trace(X, centers, labels, {"gamma": gamma, "empty": empty, "medoids": medoids}, frame)
