r"""The sparse normalizers: sparsemax and alpha-normmax, their threshold, and the proofs.

Split out of :mod:`kmt_ref.core.normalizers` (which re-exports every public
name here and keeps them in its registry) so that the proofs can sit beside
the code. Definitions (SPEC §2): sparsemax is the Euclidean projection onto
the simplex (Martins & Astudillo 2016); alpha-normmax is the ``entmax``
package's ``normmax_bisect`` (Santos et al. 2024), with ``alpha = inf`` in
closed form. Notation here: ``z`` the (already ``gamma``-scaled) scores of one
query, ``z_(1) >= z_(2) >= ...`` sorted, ``z_{1:s} = z_(1) + ... + z_(s)`` the
partial sums (``S`` is only ever the score array), ``tau`` the simplex threshold. (The module docstring of
:mod:`kmt_ref.core.normalizers` has the table of every normalizer.)
"""
from __future__ import annotations

import numbers

import numpy as onp

from ..validation import as_scores, check_gamma, check_score_max

__all__ = ["sparsemax", "normmax", "simplex_threshold", "infinity_normmax_support"]


def _average_of_maxima(S, axis, who):
    """:func:`hardmax_average` of a checked ndarray ``S`` (the score values are checked here)."""
    M = onp.max(S, axis=axis, keepdims=True)
    check_score_max(M, S, axis, who=who)
    top = S == M
    return top / onp.sum(top, axis=axis, keepdims=True)



def _check_alpha(alpha):
    """``alpha`` of normmax: a real number > 1, or ``inf``."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"alpha must be a real number > 1 (or inf), got {alpha!r} ({type(alpha).__name__})")
    alpha = float(alpha)
    if onp.isnan(alpha) or alpha <= 1.0:
        raise ValueError(f"alpha={alpha!r} should be > 1 (alpha = 1 would be softmax; use normalizer='softmax')")
    return alpha


def _as_float_scores(S, axis, who):
    """Checked scores as a float64 ndarray (the values are checked by the caller)."""
    return onp.asarray(as_scores(S, axis, who=who), dtype=float)


def _scaled_shifted(S, gamma, axis, who):
    """``gamma * (s - max s)`` along ``axis`` of float scores: every entry <= 0, the maxima exactly 0.

    The maximum is subtracted before the product, so no ``gamma * s`` is ever
    formed (no overflow for gamma up to 1e12 and scores of any size). Checks
    the score values (a -inf mask stays -inf, also at ``gamma = 0``).
    """
    M = onp.max(S, axis=axis, keepdims=True)
    check_score_max(M, S, axis, who=who)
    Z = S - M
    if gamma != 1.0:
        with onp.errstate(over="ignore", invalid="ignore"):  # gamma * z = -inf only far below the maximum
            Z = gamma * Z
        if gamma == 0:
            Z[onp.isnan(Z)] = -onp.inf  # 0 * (-inf): a masked score stays masked
    return Z


def simplex_threshold(Z, axis=0):
    r"""The threshold ``tau`` of the Euclidean projection of ``z`` onto the simplex.

    Parameters
    ----------
    Z : ndarray
        Scores; the threshold is computed along ``axis``.
    axis : int

    Returns
    -------
    tau : ndarray, the shape of ``Z`` with ``axis`` kept as length 1.

    Notes
    -----
    With ``z_(1) >= z_(2) >= ...`` sorted and ``z_{1:s} = z_(1) + ... + z_(s)``,
    ``tau = max_s (z_{1:s} - 1) / s`` (Held, Wolfe & Crowder 1974; the same number
    as Martins & Astudillo's ``(z_{1:k(z)} - 1) / k(z)``). It is the sparsemax
    threshold, ``sparsemax(z) = [z - tau]_+``, and the alpha = inf normmax
    keeps ``{i : z_i >= tau}`` (or the maximum alone: :func:`normmax`).
    ``max z - 1 <= tau < max z``, so the support is never empty. Entries with
    equal scores are always on the same side of ``tau``.

    *Proof that this is the threshold.* The projection of ``z`` onto the
    simplex is ``p = [z - t]_+`` for the ``t`` with ``phi(t) = 0``,
    ``phi(t) = sum_i [z_i - t]_+ - 1`` (the KKT conditions of
    ``min ||p - z||^2`` over ``p >= 0, sum p = 1``: ``p_i = z_i - t`` where
    ``p_i > 0`` and ``z_i <= t`` where ``p_i = 0``). A sum of positive parts
    is the largest sum over a subset, and the best subset of each size is a
    top set, so ``phi(t) = max_{s >= 0} (z_{1:s} - s t) - 1`` (``z_{1:0} = 0``).
    Hence ``phi(t) = 0`` iff ``z_{1:s} - 1 <= s t`` for every ``s >= 1`` with
    equality for some ``s``, i.e. ``t = max_s (z_{1:s} - 1)/s``. The bounds:
    ``s = 1`` gives ``tau >= z_(1) - 1``; each ``(z_{1:s} - 1)/s`` is below the
    mean ``z_{1:s} / s <= z_(1)``.
    """
    Zs = -onp.sort(-Z, axis=axis)  # descending along axis
    csum = onp.cumsum(Zs, axis=axis)
    shape = [1] * Z.ndim
    shape[axis] = Z.shape[axis]
    s = onp.arange(1, Z.shape[axis] + 1).reshape(shape)
    return onp.max((csum - 1.0) / s, axis=axis, keepdims=True)


def sparsemax(S, gamma=1.0, axis=0, rng=None):
    r"""Sparsemax (Martins & Astudillo 2016): projection of ``gamma * s`` onto the simplex.

    Parameters
    ----------
    S : ndarray, shape (..., r, q) (or any shape)
        Scores; normalized along ``axis``.
    gamma : float
        ``0 <= gamma <= inf``; the projected vector is ``gamma * s``.
        ``gamma = 0`` gives the uniform distribution, ``gamma = inf`` its
        limit :func:`hardmax_average` (uniform on the maxima).
    axis : int
    rng : ignored

    Returns
    -------
    W : ndarray, same shape as ``S``
        ``W = argmin_{p in simplex} ||p - gamma s||^2``: non-negative, sums to
        one along ``axis``, usually with exact zeros.

    Notes
    -----
    Sort-based algorithm (Martins & Astudillo 2016, Alg. 1):
    ``sparsemax(z)_i = [z_i - tau(z)]_+`` with ``tau`` from
    :func:`simplex_threshold`. Golden values (SPEC §2):
    ``[0, .25, .5, .75, 1] -> [0, 0, 1/12, 1/3, 7/12]``,
    ``[1, 1, 0] -> [.5, .5, 0]``, ``[3, 1, 0] -> [1, 0, 0]``.
    Shift invariant; ties get equal weight; length 1 gives ``[1]``.
    Used by robust k-means (SPEC §5).
    """
    gamma = check_gamma(gamma)
    S = _as_float_scores(S, axis, "sparsemax")
    if gamma == onp.inf:
        return _average_of_maxima(S, axis, "sparsemax")
    Z = _scaled_shifted(S, gamma, axis, "sparsemax")
    W = onp.maximum(Z - simplex_threshold(Z, axis), 0.0)
    return W / onp.sum(W, axis=axis, keepdims=True)  # exact sum 1 (it is 1 up to rounding)


def _normmax_bisect(Z, alpha, axis, max_iter=200):
    """Finite-alpha normmax of Z (max along axis is 0) by bisection on tau."""
    r = Z.shape[axis]
    # tau_lo: q_max = 1, sum q^alpha >= 1;  tau_hi: every q <= 1/r, sum q^alpha <= 1
    tau_lo = onp.full(onp.max(Z, axis=axis, keepdims=True).shape, -1.0)
    tau_hi = onp.full(tau_lo.shape, -((1.0 / r) ** (alpha - 1.0)))
    power = alpha / (alpha - 1.0)  # q^alpha = [z - tau]_+^(alpha / (alpha - 1))
    for _ in range(max_iter):
        mid = 0.5 * (tau_lo + tau_hi)
        if onp.all((mid == tau_lo) | (mid == tau_hi)):
            break  # the interval is one ulp wide everywhere
        f = onp.sum(onp.maximum(Z - mid, 0.0) ** power, axis=axis, keepdims=True) - 1.0
        up = f >= 0
        tau_lo = onp.where(up, mid, tau_lo)
        tau_hi = onp.where(up, tau_hi, mid)
    Q = onp.maximum(Z - tau_lo, 0.0) ** (1.0 / (alpha - 1.0))  # tau_lo < 0 = max z: q_max > 0
    return Q / onp.sum(Q, axis=axis, keepdims=True)


def infinity_normmax_support(Z, axis=0):
    """The support of alpha = inf normmax of the scores ``Z`` (no ``gamma``): bool, the shape of ``Z``.

    ``{i : z_i >= tau}`` if ``tau > max z - 1``, else ``{i : z_i > tau}`` (then
    the maximum alone), ``tau`` from :func:`simplex_threshold`: the
    alpha -> inf limit of the finite-alpha normmax (:func:`normmax`, Proof 2).
    ``Z`` must have a finite maximum along ``axis``.
    """
    tau = simplex_threshold(Z, axis)
    at_tau = (Z == tau) & (tau > onp.max(Z, axis=axis, keepdims=True) - 1.0)
    return (Z > tau) | at_tau  # contains every maximum (max z > tau)


def normmax(S, gamma=1.0, axis=0, rng=None, alpha=2.0):
    r"""alpha-normmax (Santos et al. 2024) of ``gamma * s``, the ``entmax`` package's definition.

    Parameters
    ----------
    S : ndarray, shape (..., r, q) (or any shape)
        Scores; normalized along ``axis``.
    gamma : float
        ``0 <= gamma <= inf``; the map is applied to ``gamma * s``.
        ``gamma = inf`` gives the limit :func:`hardmax_average`.
    axis : int
    rng : ignored
    alpha : float
        ``alpha > 1``, or ``inf`` (the closed form). ``alpha <= 1`` raises
        ``ValueError``.

    Returns
    -------
    W : ndarray, same shape as ``S``; on the simplex along ``axis``.

    Notes
    -----
    ``normmax_alpha(z) = argmax_{p in simplex} <p, z> - ||p||_alpha``.

    *Finite alpha* (as ``entmax.normmax_bisect``): the optimality conditions
    give ``p = q / sum(q)`` with ``q_i = [z_i - tau]_+^{1/(alpha-1)}`` and
    ``sum_i q_i^alpha = 1``; ``tau`` is found by bisection on
    ``[max z - 1, max z - (1/r)^{alpha-1}]`` until the bracket is one ulp wide
    (at most 200 halvings).

    *alpha = inf*, the closed form. ``||p||_inf = max_i p_i``; with
    ``tau = max_s (z_{1:s} - 1)/s`` (:func:`simplex_threshold`) this function
    returns the uniform distribution on ``{i : z_i >= tau}`` when
    ``tau > max z - 1``, and the one-hot on the maximum when
    ``tau = max z - 1`` (a unique maximum at least 1 above every other score).
    That is the limit of the finite-alpha solutions as ``alpha -> inf``,
    proved below; it is the **largest** maximiser ``s*`` of
    ``(z_{1:s} - 1)/s``, except that a maximiser ``s* = 1`` wins.

    *Proof 1: the alpha = inf optimum is uniform on a top set.* Fix
    ``p_max = max_i p_i`` in ``[1/r, 1]``. The best ``<p, z>`` with every
    ``p_i <= p_max`` fills the largest scores with ``p_max``: for
    ``1/(s+1) <= p_max <= 1/s`` it is ``p_max z_{1:s} + (1 - s p_max) z_(s+1)``, so the
    objective ``<p, z> - p_max`` is linear in ``p_max`` on each such interval and its
    maximum is at an end ``p_max = 1/s``, where ``p`` is uniform on the top ``s``
    and the value is ``(z_{1:s} - 1)/s``. So the optimal value is ``tau`` and
    every maximiser ``s*`` gives an optimum (ties between ``s`` make the
    optimum non-unique: the segment between them is optimal too).

    *Proof 2: the limit alpha -> inf.* Put ``b = 1/(alpha - 1) -> 0``,
    ``A = {z_i > tau}``, ``B = {z_i = tau}``, ``a_i = z_i - tau`` on ``A``
    (``sum_A a_i = 1`` by Proof of :func:`simplex_threshold`). The finite
    solution is ``q_i = [z_i - t]_+^b`` with ``f(t) = sum_i [z_i - t]_+^{1+b} = 1``
    (``f`` strictly decreasing where positive), ``p = q / sum q``.
    (i) ``|A| = 1``: ``a_1 = 1`` and ``f(tau) = 1``, so ``t = tau`` at every
    alpha, ``q_B = 0^b = 0``: the one-hot, for every ``alpha``.
    (ii) ``|A| >= 2``: every ``a_i < 1``, so ``f(tau) = sum_A a_i^{1+b} < 1``
    and ``t < tau``; put ``e = tau - t``. Upper bound: ``1 = f(t) >=
    sum_A (a_i + e) a_i^b >= (1 + |A| e) min_A a_i^b``, so ``e -> 0``. Lower
    bound: ``1 - f(tau) = sum_A a_i (1 - a_i^b) >= b sum_A a_i^{1+b} log(1/a_i)``
    (as ``1 - x^b >= x^b log(1/x^b)``), which is ``>= b H / 2`` for large alpha
    (``H = -sum_A a_i log a_i > 0``), while ``|f'| <= 3 r`` near ``tau``; so
    ``e >= b H / (6 r)``. Then
    ``q_i = (a_i + e)^b -> 1`` on ``A``, ``q_i = e^b -> 1`` on ``B``
    (``b log e -> 0``), and ``q_i = 0`` below ``tau`` once ``e`` is small: the
    limit is uniform on ``A ∪ B = {z_i >= tau}``. For ``z = [1, .8, .4]``
    (``s = 2`` and ``s = 3`` tie) that is ``[1/3, 1/3, 1/3]``, which the
    bisection approaches (``alpha = 1e7``: within 5e-7); for ``[1, 0, 0]``
    (``s = 1, 2, 3`` tie) it is ``[1, 0, 0]`` at every alpha.

    In floating point, "``z_i = tau``" is decided on the shifted scores
    ``gamma (s - max s)`` and their computed ``tau`` (so an exact tie of the
    real numbers can round either way); equal scores are always kept or
    dropped together.

    Golden values (``entmax``'s own test, SPEC §2): ``z = [0, .25, .5, .75, 1]``;
    alpha = 2 -> ``[0, .0239, .1746, .3254, .4761]``; alpha = 1000 ->
    ``[0, 0, .3330, .3334, .3336]``; alpha = inf -> ``[0, 0, 1/3, 1/3, 1/3]``.
    Shift invariant. Used by trimmed k-means (SPEC §5): with alpha = inf a
    center keeps the uniform mean of its ``s*`` best-scored members.
    """
    alpha = _check_alpha(alpha)
    gamma = check_gamma(gamma)
    S = _as_float_scores(S, axis, "normmax")
    if gamma == onp.inf:
        return _average_of_maxima(S, axis, "normmax")
    Z = _scaled_shifted(S, gamma, axis, "normmax")
    if alpha == onp.inf:
        keep = infinity_normmax_support(Z, axis)
        return keep / onp.sum(keep, axis=axis, keepdims=True)
    return _normmax_bisect(Z, alpha, axis)
