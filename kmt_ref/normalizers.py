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
=================  ==========================================================

``softmax`` and ``linear`` are written with ``autograd.numpy`` and are
differentiable; the hard forms are not (they are used only with hand-set
weights).

The registry :data:`NORMALIZERS` maps a name to a function with the signature
``f(S, gamma=1.0, axis=0, rng=None, **options)``; the generic attention looks
normalizers up there, so a new one becomes available to every block by adding
it to the registry.
"""
from __future__ import annotations

import numpy as onp
import autograd.numpy as np
from autograd.tracer import getval

__all__ = [
    "softmax",
    "hardmax",
    "hardmax_average",
    "linear",
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
        Non-negative, sums to one along ``axis``.

    Notes
    -----
    ``softmax_gamma(s)_j = exp(gamma (s_j - max s)) / sum_l exp(gamma (s_l - max s))``.
    The maximum is subtracted *before* multiplying by ``gamma``, so no product
    ``gamma * s`` is ever formed: for ``gamma`` up to 1e12 no overflow, no NaN,
    and the largest entry has ``exp(0) = 1``. Paper: §2, the softmax of the
    attention score with the temperature ``gamma`` of Theorem 2.1.
    """
    if gamma == onp.inf:
        return hardmax_average(S, axis=axis)
    Smax = onp.max(getval(S), axis=axis, keepdims=True)  # a constant: no gradient
    E = np.exp(gamma * (S - Smax))
    return E / np.sum(E, axis=axis, keepdims=True)


def hardmax(S, gamma=None, axis=0, rng=None):
    """One-hot on the maximum, ties to the lowest index (the gamma = inf limit).

    Parameters
    ----------
    S : ndarray
        Scores; normalized along ``axis``.
    gamma : ignored
        Present so that every normalizer has the same signature.

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
    S = onp.asarray(S)
    idx = onp.expand_dims(onp.argmax(S, axis=axis), axis)
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
    S = onp.asarray(S)
    top = S == onp.max(S, axis=axis, keepdims=True)
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
    """
    total = np.sum(S, axis=axis, keepdims=True)
    safe = np.where(total == 0, 1.0, total)
    return S / safe


#: name -> normalizer function ``f(S, gamma, axis, rng, **options)``
NORMALIZERS = {
    "softmax": softmax,
    "hardmax": hardmax,
    "hardmax_average": hardmax_average,
    "linear": linear,
}

#: normalizers with sigma(s + c) = sigma(s) for a constant c per query.
SHIFT_INVARIANT = {"softmax", "hardmax", "hardmax_average"}

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
