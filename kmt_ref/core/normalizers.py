"""Attention normalizers: maps from a column of scores to the probability simplex.

Every normalizer here takes a score array ``S`` and normalizes along ``axis``
(default ``0``, the *key* axis of the paper's ``S`` in R^{r x q}: each column
belongs to one query and its weights sum to one). The attention code calls them
with ``axis=-2`` so that a leading batch axis ``(B, r, q)`` works unchanged.

SPEC.md §2 fixes the definitions:

=================  ==========================================================
``softmax``        ``exp(gamma * (s - max s)) / sum(...)``; ``gamma = inf``
                   is its limit, the *averaging* hardmax.
``hardmax``        gamma = inf with ties to the **lowest** key index (the same
                   rule as ``np.argmin`` in Lloyd's algorithm).
``hardmax_average`` gamma = inf with weight spread uniformly over tied maxima
                   (the form the paper's theory uses).
``linear``         normalized linear attention ``s / sum(s)`` for s >= 0.
``sparsemax``      Euclidean projection of ``gamma * s`` onto the simplex
                   (Martins & Astudillo 2016), sort-based.
``normmax``        alpha-normmax of ``gamma * s`` (Santos et al. 2024, the
                   ``entmax`` package's definition): bisection for finite
                   ``alpha > 1``, closed form for ``alpha = inf``.
``gumbel``         Gumbel-softmax of the logits ``gamma * s`` driven by a
                   ``numpy.random.Generator``; ``hard=True`` is the one-hot
                   Gumbel-max sample.
=================  ==========================================================

How ``gamma`` enters: every normalizer here sees the scores ``gamma * s``
(the attention code passes raw scores and ``gamma`` separately). For the
three sparse/stochastic ones ``gamma = inf`` is the limit ``gamma -> inf``:
:func:`hardmax_average` for ``sparsemax`` and ``normmax`` (their support
shrinks to the maximum set), a uniform random pick among the maxima for
``gumbel``.

``softmax`` and ``linear`` are written with ``autograd.numpy`` and are
differentiable; the hard forms, ``sparsemax``, ``normmax`` and ``gumbel`` are
plain NumPy (they are used only with hand-set weights).

What a legitimate score is (issue 8; checks in :mod:`kmt_ref.validation`):

* a real number, or ``-inf``: a *mask*, weight exactly 0, at every ``gamma``
  (``gamma = 0`` is the uniform distribution over the unmasked keys). Every
  slice along ``axis`` needs at least one finite score; ``NaN`` and ``+inf``
  are never scores. ``linear`` needs finite scores ``>= 0``;
* an int or float array with at least one key along ``axis``; bool, complex
  and strings are refused with a ``TypeError``;
* ``gamma``: a real number ``0 <= gamma <= inf`` (``hardmax``,
  ``hardmax_average`` and ``linear`` ignore it but still refuse a bad one).

The score checks cost O(number of queries), not a pass over ``S``: they
inspect the per-slice maximum the normalizer computes anyway (NumPy's max
propagates NaN). While autograd traces ``S`` (training), the values are not
checked: there the training loop's own check reports a non-finite loss with
the step and the last checkpoint (``TrainingDiverged``), and the weights flow
through unchanged.

The registry :data:`NORMALIZERS` maps a name to a function with the signature
``f(S, gamma=1.0, axis=0, rng=None, **options)``; the generic attention looks
normalizers up there, so a new one becomes available to every block by adding
it to the registry.
"""
from __future__ import annotations

import numbers

import numpy as onp
import autograd.numpy as np
from autograd.tracer import getval, isbox

from ..validation import as_scores, check_finite, check_gamma, check_nonnegative_scores, check_score_max

__all__ = [
    "softmax",
    "hardmax",
    "hardmax_average",
    "linear",
    "sparsemax",
    "normmax",
    "gumbel",
    "gumbel_noise",
    "simplex_threshold",
    "GUMBEL_RANGE",
    "NORMALIZERS",
    "SHIFT_INVARIANT",
    "get_normalizer",
]


def softmax(S, gamma=1.0, axis=0, rng=None):
    r"""Numerically stable softmax with inverse temperature ``gamma``.

    Parameters
    ----------
    S : ndarray, shape (..., r, q) (or any shape)
        Scores; normalized along ``axis``.
    gamma : float
        Inverse temperature, ``0 <= gamma <= inf``. ``gamma = inf`` returns the
        limit, :func:`hardmax_average`.
    axis : int
        The axis that is normalized (the keys).

    Returns
    -------
    W : ndarray, same shape as ``S``
        Non-negative, sums to one along ``axis``. A ``-inf`` score gets
        weight 0 (a mask), also at ``gamma = 0``.

    Raises
    ------
    ValueError, TypeError
        See the module docstring: a NaN or +inf score, an all ``-inf``
        slice, no keys, a bad ``gamma`` or ``axis``. The score values are not
        checked while autograd traces ``S``.

    Notes
    -----
    ``softmax_gamma(s)_j = exp(gamma (s_j - max s)) / sum_l exp(gamma (s_l - max s))``.
    The maximum is subtracted *before* multiplying by ``gamma``, so no product
    ``gamma * s`` is ever formed: for ``gamma`` up to 1e12 no overflow, no NaN,
    and the largest entry has ``exp(0) = 1``. Paper: §2, the softmax of the
    attention score with the temperature ``gamma`` of Theorem 2.1.
    """
    g = check_gamma(getval(gamma))  # gamma itself (maybe traced) is what enters the product
    traced = isbox(S)
    Sv = as_scores(getval(S), axis, who="softmax")
    if g == onp.inf:
        return _average_of_maxima(Sv, axis, "softmax")
    Smax = onp.max(Sv, axis=axis, keepdims=True)  # a constant: no gradient
    if not traced:
        check_score_max(Smax, Sv, axis, who="softmax")
        S = Sv
    with onp.errstate(over="ignore"):  # gamma * (s - max) = -inf far below the maximum: weight 0
        if g == 0 and onp.isneginf(Sv).any():  # 0 * (-inf) is NaN; a mask stays a mask
            with onp.errstate(invalid="ignore"):
                E = np.exp(np.where(Sv == -onp.inf, -onp.inf, gamma * (S - Smax)))
        else:
            E = np.exp(gamma * (S - Smax))
    return E / np.sum(E, axis=axis, keepdims=True)


def hardmax(S, gamma=None, axis=0, rng=None):
    """One-hot on the maximum, ties to the lowest index (the gamma = inf limit).

    Parameters
    ----------
    S : ndarray
        Scores; normalized along ``axis``.
    gamma : None or float, ignored
        Present so that every normalizer has the same signature; a value
        that is not a valid gamma (NaN, negative, not a number) is refused.

    Returns
    -------
    W : ndarray, same shape as ``S``, entries 0 or 1, one 1 per slice along ``axis``.

    Notes
    -----
    ``W_j = 1`` for ``j = min argmax_l s_l``. This equals the limit of softmax
    only when the maximum is unique; on ties softmax tends to
    :func:`hardmax_average` instead. The project uses this form where Lloyd's
    algorithm breaks ties by ``np.argmin`` (block 1 of Theorem 2.1, SPEC §3).
    """
    if gamma is not None:
        check_gamma(getval(gamma))
    S = as_scores(getval(S), axis, who="hardmax")
    idx = onp.expand_dims(onp.argmax(S, axis=axis), axis)  # argmax stops at a NaN: it is seen here
    check_score_max(onp.take_along_axis(S, idx, axis=axis), S, axis, who="hardmax")
    W = onp.zeros(S.shape)
    onp.put_along_axis(W, idx, 1.0, axis=axis)
    return W


def hardmax_average(S, gamma=None, axis=0, rng=None):
    """Uniform weight over all maxima (the limit of softmax as gamma -> inf).

    Returns
    -------
    W : ndarray, same shape as ``S``; ``1/m`` on the ``m`` tied maxima, 0 elsewhere.

    Notes
    -----
    ``lim_{gamma->inf} softmax(gamma s) = 1[s = max s] / #{l : s_l = max s}``:
    this is the hardmax the paper's theory uses. It differs from
    :func:`hardmax` exactly when the maximum is attained more than once.
    Block 3 of Theorem 2.1 needs this form: all members of a cluster tie at
    score 0 and must share the weight equally, which gives their mean.
    """
    if gamma is not None:
        check_gamma(getval(gamma))
    return _average_of_maxima(as_scores(getval(S), axis, who="hardmax_average"), axis, "hardmax_average")


def _average_of_maxima(S, axis, who):
    """:func:`hardmax_average` of a checked ndarray ``S`` (the score values are checked here)."""
    M = onp.max(S, axis=axis, keepdims=True)
    check_score_max(M, S, axis, who=who)
    top = S == M
    return top / onp.sum(top, axis=axis, keepdims=True)


def linear(S, gamma=None, axis=0, rng=None):
    """Normalized linear attention ``w = s / sum(s)`` for non-negative scores.

    Returns
    -------
    W : ndarray, same shape as ``S``.

    Notes
    -----
    The paper's own center update (block 3 of Theorem 2.1) uses this form with
    scores ``e_j . y_i`` (1 for members, 0 otherwise): it gives the exact mean
    at any gamma. A slice that sums to zero (a cluster with no member) has no
    defined weights; it yields all-zero weights here, and
    :func:`kmt_ref.kmeans_transformer` reports that case as an error instead of
    returning a wrong center. Not shift invariant, unlike the other normalizers.
    Scores must be finite and ``>= 0`` (``-inf`` is no mask here: a negative
    score would put the weights off the simplex); ``gamma`` is ignored.
    """
    if gamma is not None:
        check_gamma(getval(gamma))
    Sv = as_scores(getval(S), axis, who="linear")
    if not isbox(S):
        S = Sv
    with onp.errstate(over="ignore"):  # an overflowing sum is refused with a clear error below
        total = np.sum(S, axis=axis, keepdims=True)
    if S is Sv:  # values are checked off the autograd tape only (module docstring)
        check_nonnegative_scores(Sv, total, who="linear")
    safe = np.where(total == 0, 1.0, total)
    return S / safe


# --------------------------------------------------------------------------
# Sparse normalizers: sparsemax and alpha-normmax (SPEC §2)
# --------------------------------------------------------------------------
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
    With ``z_(1) >= z_(2) >= ...`` sorted and ``S_s = z_(1) + ... + z_(s)``,
    ``tau = max_s (S_s - 1) / s`` (Held, Wolfe & Crowder 1974; the same number
    as Martins & Astudillo's ``(S_{k(z)} - 1) / k(z)``). It is the sparsemax
    threshold, ``sparsemax(z) = [z - tau]_+``, and the alpha = inf normmax
    keeps exactly ``{i : z_i > tau}``. ``max z - 1 <= tau < max z``, so the
    support is never empty. Entries with equal scores are always on the same
    side of ``tau``.
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

    *alpha = inf*: ``<p, z> - max_i p_i`` is maximised by the uniform
    distribution on the ``s*`` largest scores, ``s* = argmax_s (S_s - 1)/s``
    (``S_s`` the sum of the ``s`` largest). When several ``s`` attain the
    maximum the optimum is not unique; this function returns the **smallest**
    ``s*``, which is the limit of the finite-alpha solutions as
    ``alpha -> inf`` (the entries left out sit exactly at the threshold). It is
    computed as the uniform distribution on ``{i : z_i > tau}``, ``tau`` from
    :func:`simplex_threshold` (the same support as sparsemax), so equal scores
    are always kept or dropped together.

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
        keep = Z > simplex_threshold(Z, axis)  # contains every maximum (z = 0 > tau)
        return keep / onp.sum(keep, axis=axis, keepdims=True)
    return _normmax_bisect(Z, alpha, axis)


# --------------------------------------------------------------------------
# Gumbel-softmax attention (randomized k-medoids, SPEC §5)
# --------------------------------------------------------------------------
_U_STEPS = 2**53

#: (min, max) of the Gumbel noise that :func:`gumbel_noise` can return:
#: ``-log(-log u)`` for ``u`` in ``[2^-53, 1 - 2^-53]``.
GUMBEL_RANGE = (
    float(-onp.log(-onp.log(1.0 / _U_STEPS))),
    float(-onp.log(-onp.log1p(-1.0 / _U_STEPS))),
)


def gumbel_noise(rng, shape):
    r"""Standard Gumbel noise ``g = -log(-log u)`` that never evaluates ``log(0)``.

    Parameters
    ----------
    rng : numpy.random.Generator
    shape : tuple of int

    Returns
    -------
    G : ndarray of float, ``shape``; every entry in :data:`GUMBEL_RANGE`
        (about ``[-3.60, 36.74]``).

    Notes
    -----
    ``u = m / 2^53`` with ``m`` uniform on the integers ``1 .. 2^53 - 1``
    (``rng.integers``): every ``u`` is exactly representable and lies strictly
    inside (0, 1), so ``log u < 0`` and ``-log u > 0``; neither logarithm can
    see 0. (``rng.random()`` can return 0, and ``1 - rng.random()`` can
    return 1.) The grid has spacing 2^-53, which is the resolution of
    ``rng.random()`` itself.
    """
    if not isinstance(rng, onp.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {rng!r} ({type(rng).__name__})")
    m = rng.integers(1, _U_STEPS, size=shape)  # 1 .. 2^53 - 1
    U = m / _U_STEPS
    return -onp.log(-onp.log(U))


def gumbel(S, gamma=1.0, axis=0, rng=None, hard=False, tau=1.0, noise=None):
    r"""Gumbel-softmax of the logits ``gamma * s``; ``hard=True`` samples the Gumbel-max one-hot.

    Parameters
    ----------
    S : ndarray, shape (..., r, q) (or any shape)
        Scores; normalized along ``axis``.
    gamma : float
        ``0 <= gamma <= inf``: logits ``gamma * s``. ``gamma = inf``: the
        limit, in which only the maximal scores keep a finite logit (ties are
        then broken by the noise: a uniform pick among the maxima).
    axis : int
    rng : numpy.random.Generator
        Required (unless ``noise`` is given). One standard Gumbel variable is
        drawn per entry of ``S``, in C order (:func:`gumbel_noise`), on every
        call, including ``gamma = inf``.
    hard : bool
        ``True``: one-hot on ``argmax(gamma s + g)`` (ties to the lowest
        index), a sample from ``softmax(gamma s)``. ``False``: the relaxed
        sample ``softmax((gamma s + g) / tau)``.
    tau : float
        Temperature of the relaxed sample (``> 0``; ignored when ``hard``).
    noise : ndarray, shape of ``S``, optional
        Use this noise instead of drawing it (for tests: ``noise = 0`` turns the
        sampler into a deterministic argmax).

    Returns
    -------
    W : ndarray, same shape as ``S``; one-hot (``hard``) or on the simplex.

    Notes
    -----
    Gumbel-max trick (Gumbel 1954; Maddison et al. 2014):
    ``P[argmax_i (z_i + g_i) = j] = softmax(z)_j`` for i.i.d. standard Gumbel
    ``g_i``. Gumbel-softmax (Jang et al. 2017; Maddison et al. 2017) replaces
    the argmax by ``softmax(./tau)``. Shift invariant for a fixed noise draw.
    """
    gamma = check_gamma(gamma)
    S = _as_float_scores(S, axis, "gumbel")
    if noise is None:
        if rng is None:
            raise ValueError("normalizer 'gumbel' needs rng (a numpy.random.Generator); got rng=None")
        G = gumbel_noise(rng, S.shape)
    else:
        G = check_finite(noise, "noise")
        if G.shape != S.shape:
            raise ValueError(f"noise has shape {G.shape}, should be S.shape={S.shape}")
    if gamma == onp.inf:
        M = onp.max(S, axis=axis, keepdims=True)
        check_score_max(M, S, axis, who="gumbel")
        L = onp.where(S == M, 0.0, -onp.inf)
    else:
        L = _scaled_shifted(S, gamma, axis, "gumbel")
    L = L + G  # the maxima of S stay finite, so every slice has a finite maximum
    if hard:
        idx = onp.expand_dims(onp.argmax(L, axis=axis), axis)
        W = onp.zeros(S.shape)
        onp.put_along_axis(W, idx, 1.0, axis=axis)
        return W
    tau = check_gamma(tau, "tau", allow_inf=False, allow_zero=False)
    E = onp.exp((L - onp.max(L, axis=axis, keepdims=True)) / tau)
    return E / onp.sum(E, axis=axis, keepdims=True)


#: name -> normalizer function ``f(S, gamma, axis, rng, **options)``
NORMALIZERS = {
    "softmax": softmax,
    "hardmax": hardmax,
    "hardmax_average": hardmax_average,
    "linear": linear,
    "sparsemax": sparsemax,
    "normmax": normmax,
    "gumbel": gumbel,
}

#: normalizers with sigma(s + c) = sigma(s) for a constant c per query.
SHIFT_INVARIANT = {"softmax", "hardmax", "hardmax_average", "sparsemax", "normmax", "gumbel"}

#: normalizers whose output is a 0/1 selection or a uniform average over the
#: maximum set: the attention code has exact, O(n) fast paths for them.
HARD = {"hardmax", "hardmax_average"}


def get_normalizer(name):
    """Look up a normalizer by name (or pass a callable through)."""
    if callable(name):
        return name
    try:
        return NORMALIZERS[name]
    except KeyError:
        raise ValueError(
            f"normalizer={name!r} is not one of {sorted(NORMALIZERS)}"
        ) from None
