"""Classical references for the standard variants: soft k-means and spherical k-means.

Each transformer in :mod:`kmt_ref.standard_variants` must equal one of these.
They are written plainly, as textbook loops, and independently of the
attention code, so that a match between the two is evidence, not a tautology.
Tokens are columns (SPEC §1): data ``X`` (d, n), centers ``C`` (d, k).
"""
from __future__ import annotations

import numpy as np

from .reference import cluster_means, finish_trace, start_trace
from .trace import nearest_center
from .validation import check_gamma

__all__ = ["soft_kmeans", "spherical_kmeans", "unit_columns", "check_beta"]


def check_beta(beta, name="beta"):
    """A finite inverse temperature ``beta > 0`` (soft k-means), as a float.

    ``beta = 0`` (every responsibility 1/k, independent of the data), a
    negative, NaN or infinite ``beta`` (use :func:`kmt_ref.lloyd` for the
    hard limit) raise ``ValueError``; a non-number raises ``TypeError``.
    """
    return check_gamma(beta, name, allow_inf=False, allow_zero=False)


def unit_columns(A, name="X"):
    """Scale every column of A (d, m) to unit Euclidean norm.

    Parameters
    ----------
    A : ndarray, shape (d, m)
        Already validated (finite float64).
    name : str
        Used in the error message.

    Returns
    -------
    U : ndarray, shape (d, m)
        ``A[:, i] / ||A[:, i]||``.

    Raises
    ------
    ValueError
        If a column has zero norm: it has no direction, so its cosine with
        anything is undefined.
    """
    # Each column is first scaled by a power of two (exact) so that its largest
    # entry lies in [1/2, 1): then ||a||^2 can neither overflow (norms ~1e200)
    # nor underflow (norms ~1e-200), and the result is bit-for-bit A / ||A||
    # wherever that is computable directly.
    peak = np.max(np.abs(A), axis=0)  # (m,)
    zero = np.flatnonzero(peak == 0)
    if zero.size:
        i = int(zero[0])
        raise ValueError(
            f"{name}[:, {i}] has zero norm ({name}[:, {i}]={A[:, i].tolist()!r:.80}): spherical k-means "
            f"needs nonzero vectors, whose direction (cosine similarity) is defined; "
            f"{zero.size} such column(s) in total"
        )
    A = np.ldexp(A, -np.frexp(peak)[1])  # (d, m), columns scaled by 2^-e_i
    norms = np.sqrt(np.sum(A * A, axis=0))  # (m,) in [1/2, sqrt(d))
    return A / norms


def soft_kmeans(X, C0, n_iter, beta):
    r"""Soft k-means: responsibilities by a softmax over negative squared distances.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column.
    C0 : array_like, shape (d, k)
        Initial centers, one per column (1 <= k <= n).
    n_iter : int
        Number of iterations T >= 0.
    beta : float
        Inverse temperature, ``0 < beta < inf``.

    Returns
    -------
    ClusteringTrace
        ``centers`` (T+1, d, k); ``labels`` (T, n), the largest responsibility
        of each point (lowest index on ties); ``assignments`` (k, n), the final
        responsibilities ``R``; ``objective`` (T+1,), the (hard) k-means
        objective of each set of centers.

    Notes
    -----
    Iteration t (SPEC §5, the "soft k-means" row)::

        r_ij = exp(-beta ||x_i - c_j||^2) / sum_l exp(-beta ||x_i - c_l||^2)
        c_j' = sum_i r_ij x_i / sum_i r_ij

    The softmax subtracts each point's smallest squared distance first, so no
    ``exp`` overflows and each point's nearest center gets ``exp(0) = 1``
    before normalising, for any ``beta``.

    Policies:

    - *Very large beta*: ``r`` tends to Lloyd's one-hot assignment (but an
      exact tie shares the responsibility equally; Lloyd gives it to the
      lowest index). When ``beta`` times the gap to the nearest center exceeds
      about 745 for every point, ``exp`` underflows and a cluster's total
      responsibility ``sum_i r_ij`` is exactly 0: that cluster **keeps** its
      center, the floating-point form of Lloyd's "keep" policy for an empty
      cluster. (The transformer cannot express this and raises instead, see
      :func:`kmt_ref.standard_variants.soft_kmeans_transformer`.)
    - *Very small beta*: ``r_ij -> 1/k``, so after one step every center is
      (to O(beta)) the mean of all the data.
    - *Ties*: equidistant centers get equal responsibilities; ``labels``
      breaks the tie by the lowest index (``np.argmax``).
    - ``beta <= 0``, NaN or inf: ``ValueError``.
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, "keep")
    beta = check_beta(beta)
    beta_frame = frame.gamma(beta, "beta")  # beta acts on squared data distances
    R = None
    for t in range(n_iter):
        _, D = nearest_center(X, C)  # (k, n) squared distances (in the frame)
        E = np.exp(-beta_frame * (D - np.min(D, axis=0)))  # (k, n), largest entry of a column is 1
        R = E / np.sum(E, axis=0)  # (k, n) responsibilities, columns sum to 1
        labels[t] = np.argmax(R, axis=0)
        mass = np.sum(R, axis=1)  # (k,)
        C = C.copy()
        alive = mass > 0
        C[:, alive] = (X @ R[alive].T) / mass[alive]  # (d, k_alive)
        centers[t + 1] = C
    trace = finish_trace(X, centers, labels, {"beta": beta}, frame)
    trace.assignments = R
    return trace


def spherical_kmeans(X, C0, n_iter):
    r"""Spherical k-means (Dhillon & Modha 2001): cosine assignment, normalized member sums.

    Parameters
    ----------
    X : array_like, shape (d, n)
        Data, one point per column; every column must be nonzero. It is scaled
        to unit norm first (``centers`` and ``objective`` refer to the scaled
        data).
    C0 : array_like, shape (d, k)
        Initial centers, nonzero columns; scaled to unit norm first.
    n_iter : int
        Number of iterations T >= 0.

    Returns
    -------
    ClusteringTrace
        ``centers`` (T+1, d, k) (unit columns, see the zero-sum policy);
        ``labels`` (T, n); ``objective`` (T+1,) the k-means objective of the
        unit data, which for unit centers is ``sum_i (2 - 2 max_j x_i . c_j)``;
        ``info["X_unit"]`` the scaled data (d, n).

    Notes
    -----
    Iteration t, with ``||x_i|| = ||c_j|| = 1`` (SPEC §5, "spherical k-means")::

        l_i = argmax_j  x_i . c_j                    (ties: lowest j)
        m_j = mean{x_i : l_i = j}                    (empty: c_j)
        c_j' = m_j / ||m_j||

    The member mean has the direction of the member sum (Dhillon & Modha's
    concept vector). It is summed in point order and normalized as
    ``m / sqrt(sum(m^2))``, and a kept center is normalized too (it is a unit
    vector already, up to its last bit): the same floating-point steps as the
    transformer's, so that the two agree bit for bit and an exact tie in exact
    arithmetic (all points equal, equal centers) is broken the same way.

    Policies:

    - *Ties*: the lowest index, as in Lloyd.
    - *Empty cluster*: keeps its center (Lloyd's "keep").
    - *Zero member sum* (e.g. the cluster holds x and -x, antipodal points):
      ``m_j = 0`` has no direction; the new center is the **zero vector**
      (the convention of ``sklearn.preprocessing.normalize``), never NaN. A
      zero center then has cosine score 0 with every point, so it takes the
      points that have no positive cosine with any other center. A member
      sum that is zero in exact arithmetic but not in floating point gets the
      direction of its rounding error: that case is ill-conditioned and its
      result is not reproducible across summation orders.
    - *Zero-norm point or initial center*: ``ValueError`` (no direction).
    """
    X, C, n_iter, centers, labels, frame = start_trace(X, C0, n_iter, "keep", use_frame=False)
    X, C = unit_columns(X, "X"), unit_columns(C, "C0")
    centers[0] = C
    for t in range(n_iter):
        cos = C.T @ X  # (k, n) cosine similarities
        lab = np.argmax(cos, axis=0)  # lowest index among maxima
        labels[t] = lab
        M, _ = cluster_means(X, lab, C)  # (d, k) member means; empty: c_j
        norms = np.sqrt(np.sum(M * M, axis=0))  # (k,)
        C = M / np.where(norms == 0, 1.0, norms)  # zero mean -> zero center
        centers[t + 1] = C
    return finish_trace(X, centers, labels, {"X_unit": X}, frame)
