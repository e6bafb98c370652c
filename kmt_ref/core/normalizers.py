"""Attention normalizers: maps from a column of scores to the probability simplex.

Every normalizer here takes a score array ``S`` and normalizes along ``axis``
(default ``0``, the *key* axis of the scores ``S`` in R^{r x q}: each column
belongs to one query and its weights sum to one). The attention code calls them
with ``axis=-2`` so that a leading batch axis ``(B, r, q)`` works unchanged.

SPEC.md §2 fixes the definitions:

=================  ==========================================================
``softmax``        ``exp(gamma * (s - max s)) / sum(...)``; ``gamma = inf``
                   is its limit, the *averaging* hardmax.
``hardmax``        gamma = inf with ties to the **lowest** key index (the same
                   rule as ``np.argmin`` in Lloyd's algorithm).
``hardmax_average`` gamma = inf with weight spread uniformly over tied maxima
                   (the gamma -> inf limit of softmax).
``linear``         normalized linear attention ``s / sum(s)`` for s >= 0.
``sparsemax``      Euclidean projection of ``gamma * s`` onto the simplex
                   (Martins & Astudillo 2016), sort-based.
``normmax``        alpha-normmax of ``gamma * s`` (Santos et al. 2024, the
                   ``entmax`` package's definition): bisection for finite
                   ``alpha > 1``, closed form for ``alpha = inf`` (at ties,
                   the alpha -> inf limit: :mod:`kmt_ref.core.sparse`).
``gumbel``         Gumbel-softmax of the logits ``gamma * s`` driven by a
                   ``numpy.random.Generator``; ``hard=True`` is the one-hot
                   Gumbel-max sample. Its temperature is the parameter
                   ``tau`` (a name kept for compatibility); the symbol τ
                   means the simplex threshold, and the Gumbel
                   temperature has no symbol.
=================  ==========================================================

``sparsemax`` and ``normmax`` live in :mod:`kmt_ref.core.sparse` with their
proofs and are re-exported here.

How ``gamma`` enters: every normalizer here sees the scores ``gamma * s``
(the attention code passes raw scores and ``gamma`` separately). For the
three sparse/stochastic ones ``gamma = inf`` is the limit ``gamma -> inf``:
:func:`hardmax_average` for ``sparsemax`` and ``normmax`` (their support
shrinks to the maximum set); for ``gumbel`` only the maxima keep a finite
logit, so ``hard=True`` is a uniform random pick among the maxima, while the
relaxed sample (``hard=False``) is ``softmax(g / tau)`` (the temperature
``tau``) over the maxima's noise ``g``: random weights on the maximum set,
neither a pick nor uniform.

``softmax`` and ``linear`` are written with ``autograd.numpy`` and are
differentiable; the hard forms, ``sparsemax``, ``normmax`` and ``gumbel`` are
plain NumPy (they are used only with hand-set weights).

What a legitimate score is (checks in :mod:`kmt_ref.validation`):

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


import numpy as onp
import autograd.numpy as np
from autograd.tracer import getval, isbox

from ..validation import as_scores, check_finite, check_gamma, check_nonnegative_scores, check_score_max
from .sparse import _as_float_scores, _average_of_maxima, _scaled_shifted, normmax, simplex_threshold, sparsemax

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
    and the largest entry has ``exp(0) = 1``. This is the softmax of the
    attention scores with inverse temperature ``gamma`` as the authors' code
    applies it (``cnst_model.py``: ``F.softmax(self.gamma * sqdist)``).
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
    W : ndarray, same shape as ``S``; ``1/t`` on the ``t`` tied maxima, 0 elsewhere.

    Notes
    -----
    ``lim_{gamma->inf} softmax(gamma s) = 1[s = max s] / #{l : s_l = max s}``:
    this is the hardmax of Theorem 2.1's block 3. It differs from
    :func:`hardmax` exactly when the maximum is attained more than once.
    Block 3 of Theorem 2.1 needs this form: all members of a cluster tie at
    score 0 and must share the weight equally, which gives their mean.
    """
    if gamma is not None:
        check_gamma(getval(gamma))
    return _average_of_maxima(as_scores(getval(S), axis, who="hardmax_average"), axis, "hardmax_average")


def linear(S, gamma=None, axis=0, rng=None):
    """Normalized linear attention ``w = s / sum(s)`` for non-negative scores.

    Returns
    -------
    W : ndarray, same shape as ``S``.

    Notes
    -----
    The authors' center update (block 3; their ``cnst_model.py``, ``ldp=True``) uses this form with
    scores ``e_j . y_i``: when block 1 writes one-hot y (gamma = inf) they are
    1 for members and 0 otherwise, and block 3 gives the exact member mean
    (it has no gamma of its own); with block 1 at a finite gamma, y is soft
    and block 3 gives the y-weighted mean ``sum_i y_ij x_i / sum_i y_ij``.
    A slice that sums to zero (a cluster with no member) has no
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
    ``u = v / 2^53`` with ``v`` uniform on the integers ``1 .. 2^53 - 1``
    (``rng.integers``): every ``u`` is exactly representable and lies strictly
    inside (0, 1), so ``log u < 0`` and ``-log u > 0``; neither logarithm can
    see 0. (``rng.random()`` can return 0, and ``1 - rng.random()`` can
    return 1.) The grid has spacing 2^-53, which is the resolution of
    ``rng.random()`` itself.
    """
    if not isinstance(rng, onp.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {rng!r} ({type(rng).__name__})")
    v = rng.integers(1, _U_STEPS, size=shape)  # 1 .. 2^53 - 1
    U = v / _U_STEPS
    return -onp.log(-onp.log(U))


def gumbel(S, gamma=1.0, axis=0, rng=None, hard=False, tau=1.0, noise=None):
    r"""Gumbel-softmax of the logits ``gamma * s``; ``hard=True`` samples the Gumbel-max one-hot.

    Parameters
    ----------
    S : ndarray, shape (..., r, q) (or any shape)
        Scores; normalized along ``axis``.
    gamma : float
        ``0 <= gamma <= inf``: logits ``gamma * s``. ``gamma = inf``: the
        limit, in which only the maximal scores keep a finite logit (logit 0
        plus noise): with ``hard=True`` the noise breaks ties, a uniform pick
        among the maxima; with ``hard=False`` the weights are
        ``softmax(g / tau)`` over the maxima (the temperature ``tau``), random
        and not uniform.
    axis : int
    rng : numpy.random.Generator
        Required (unless ``noise`` is given). One standard Gumbel variable is
        drawn per entry of ``S``, in C order (:func:`gumbel_noise`), on every
        call, including ``gamma = inf``.
    hard : bool
        ``True``: one-hot on ``argmax(gamma s + g)`` (ties to the lowest
        index), a sample from ``softmax(gamma s)``. ``False``: the relaxed
        sample ``softmax((gamma s + g) / tau)``, with the temperature ``tau``.
    tau : float
        The temperature of the relaxed sample (``> 0``; ignored when
        ``hard``); not the simplex threshold tau of :mod:`kmt_ref.core.sparse`.
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
    the argmax by ``softmax(. / tau)``, with the temperature ``tau``. Shift
    invariant for a fixed noise draw.
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

#: normalizers whose output is a 0/1 selection or a uniform average over the maximum set: the
#: attention code has exact fast paths for them (:mod:`kmt_ref.core.exact`): a column selection or a
#: mean over the tied maxima, and for Euclidean self-attention with Q = K a grouping of identical
#: keys (one sort of n numbers: O(n log n), no n x n matrix)
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
