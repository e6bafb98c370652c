"""One block of a layer, computed: attention ``A(Z, Z'; Q, K, V, sigma) = V Z' sigma(S)`` and its scores.

The floor below the layer (:mod:`kmt_ref.core.attention`) and below the exact
layer (:mod:`kmt_ref.core.exact.layer`), which both run blocks with
:func:`attention` and read feed-forward blocks as :class:`FeedForward`; the
layer imports these names from here, the exact layer inside its functions
(this module imports :mod:`kmt_ref.core.exact`). :mod:`kmt_ref.core.attention`
re-exports :func:`attention`, :func:`attention_scores`,
:func:`scores_from_projections`, :class:`FeedForward` and :data:`HAND_VJP`
(:func:`anchored_combination` and :data:`ANCHORED` only live here).

The equation (SPEC §2) is stated above the code, in :func:`attention`; the
code keeps ``gamma`` inside the normalizer (:func:`attention_scores` returns
the raw score ``S / gamma``).

Written with ``autograd.numpy`` so that the trainable model is differentiated
through this very code; a traced softmax block is the primitive
:func:`kmt_ref.core.gradients.softmax_attention` (:data:`HAND_VJP`). The
gamma = inf paths (hardmax) use the plain NumPy shortcuts of
:mod:`kmt_ref.core.exact.limits`; they are only used with hand-set weights.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as onp
import autograd.numpy as np
from autograd.tracer import getval, isbox

from ..trace import block_products, query_chunks
from ..validation import check_dropout
from .exact.limits import (hard_cross, is_disjoint_uniform, project, same_map, segment_mean, self_attention_limit,
                           used_rows)
from .gradients import dropped_entries, softmax_attention
from .normalizers import HARD, get_normalizer

#: differentiate a traced softmax block with the hand-derived VJP of :mod:`kmt_ref.core.gradients`;
#: False lets autograd differentiate the plain path below, operation by operation (the tests compare)
HAND_VJP = True

#: normalizers whose convex combination :func:`attention` takes anchored at a key of the support
#: (:func:`anchored_combination`), uniform weights included: sparsemax (robust k-means' block 3). The
#: alpha = inf normmax keeps the plain mean of :func:`kmt_ref.core.exact.segment_mean`, the arithmetic of
#: its reference (trimmed k-means); softmax and linear keep the product, the arithmetic of the exact layer
ANCHORED = ("sparsemax",)

__all__ = ["HAND_VJP", "ANCHORED", "scores_from_projections", "direct_sq_distances", "attention_scores", "anchored_combination", "attention",
           "FeedForward"]


# --------------------------------------------------------------------------
# Scores and attention
# --------------------------------------------------------------------------
def scores_from_projections(KZk, QZ, score, scale):
    """Raw scores (without gamma) from projected keys (.., dk, r) and queries (.., dk, q).

    For plain 2-D arrays the products are taken by :func:`kmt_ref.trace.block_products`, in the
    column blocks of :func:`kmt_ref.trace.distance_blocks`: a BLAS kernel can round a column of a
    product differently with the number of columns around it, and these blocks make the scores the
    very numbers that :func:`kmt_ref.trace.nearest_labels` and the exact layer compute.
    """
    if score == "euclidean_direct":
        S = -direct_sq_distances(KZk, QZ)
        return S / scale if scale != 1.0 else S
    if QZ.ndim == 2 and KZk.ndim == 2 and not (isbox(KZk) or isbox(QZ)):
        cross = block_products(KZk, QZ)  # (r, q)
    else:
        cross = np.matmul(np.swapaxes(KZk, -1, -2), QZ)  # (..., r, q)
    if score == "dot":
        S = cross
    elif score == "euclidean":
        # ||a - b||^2 = ||a||^2 + ||b||^2 - 2 a.b, with one matrix product (SPEC §2)
        key_sq = np.sum(KZk * KZk, axis=-2)[..., :, None]  # (..., r, 1)
        query_sq = np.sum(QZ * QZ, axis=-2)[..., None, :]  # (..., 1, q)
        S = -(key_sq + query_sq - 2.0 * cross)
    else:
        raise ValueError(f"score={score!r} must be 'euclidean', 'euclidean_direct' or 'dot'")
    if scale != 1.0:
        S = S / scale
    return S


def direct_sq_distances(KZk, QZ):
    """``||k_l - q_j||^2`` (r, q) for keys (m, r) and queries (m, q), from the differences, row by row.

    The squared differences of the rows are added one row at a time, in row order, starting from
    the first: for two tokens that differ only in their first ``d`` rows the result is the sum of
    those ``d`` squares in order, plus exact zeros, the arithmetic of a classical reference that
    computes ``sum_r (a_r - b_r)^2`` over its ``d`` coordinates in that order
    (:func:`kmt_ref.algorithms.sparse_update.sq_dist`). No cancellation, unlike the
    expansion ``||a||^2 + ||b||^2 - 2 a.b``; memory O(r q), time O(m r q) (no matrix product).
    Plain 2-D NumPy arrays (hand-set circuits only).
    """
    m = KZk.shape[0]
    if m == 0:
        return onp.zeros((KZk.shape[1], QZ.shape[1]))
    diff = onp.subtract(KZk[0][:, None], QZ[0][None, :])
    acc = diff * diff  # (r, q)
    for row in range(1, m):
        onp.subtract(KZk[row][:, None], QZ[row][None, :], out=diff)
        onp.multiply(diff, diff, out=diff)
        acc += diff
    return acc


def attention_scores(Z, Zk, Q, K, *, score="euclidean", scale=1.0, bQ=None, bK=None):
    r"""Raw attention scores ``S``, without gamma (the normalizer multiplies them by it).

    Parameters
    ----------
    Z : ndarray, shape (..., d_emb, q)
        Query tokens (columns).
    Zk : ndarray, shape (..., d_emb, r)
        Key tokens (columns).
    Q, K : ndarray, shape (d_k, d_emb)
        Query and key weights. ``bQ``, ``bK`` : optional biases, shape (d_k,).
    score : {"euclidean", "euclidean_direct", "dot"}
    scale : float
        Scores are divided by it (``sqrt(d_emb)`` in the trainable model).

    Returns
    -------
    S : ndarray, shape (..., r, q)
        ``S_ji = -||K z'_j - Q z_i||^2 / scale`` (Euclidean: by the expansion, one matrix
        product; ``"euclidean_direct"``: from the differences, :func:`direct_sq_distances`) or
        ``(K z'_j).(Q z_i) / scale`` (dot).
    """
    return scores_from_projections(project(K, bK, Zk), project(Q, bQ, Z), score, scale)


def anchored_combination(W, VZk, v_rows=slice(None)):
    r"""``V Z' W`` for weights W (r, q) whose columns sum to 1, anchored at each column's largest weight.

    Parameters
    ----------
    W : ndarray, shape (r, q)
        Each column on the simplex (a normalizer's output), plain NumPy.
    VZk : ndarray, shape (d_v, r)
        The values ``V Z'``.
    v_rows : slice or index array
        The rows of ``V`` that are not identically zero (the other output rows are 0).

    Returns
    -------
    out : ndarray, shape (d_v, q)

    Notes
    -----
    For query q with ``a`` its first key of largest weight::

        out_q = v_a + sum_i W_iq (v_i - v_a)
              = sum_i W_iq v_i + (1 - sum_i W_iq) v_a  =  (V Z' W)_q      (sum_i W_iq = 1)

    the same number as ``V Z' W`` in exact arithmetic. In floating point it
    keeps one fact that the product ``V Z' W`` loses: **if every key of
    positive weight carries the value** ``v_a`` **, then** ``out_q = v_a``
    **exactly**. Proof: each difference ``v_i - v_a`` of such a key is an
    exact 0, each term of a key of weight 0 is an exact 0, so the sum is 0 and
    ``v_a + 0 = v_a``. The product instead rounds ``sum_i W_iq v_i``, whose
    weights sum to 1 only to rounding: six keys of value -1 with sparsemax
    weights 1/6 (rounded up) give -1.0000000000000002. A mean of copies of
    one point must be that point, or a center that should coincide with
    another stops tying with it and a later assignment changes (the
    duplicated-centers case of ``tests/cases.py``). The terms are summed key
    by key (``np.bincount``), over the nonzero weights only.
    """
    q = W.shape[1]
    anchor = onp.argmax(W, axis=0)  # (q,): first key of largest weight
    keys, queries = onp.nonzero(W)  # in key order
    w = W[keys, queries]  # (nnz,)
    out = onp.zeros((VZk.shape[0], q))  # (d_v, q)
    for m in onp.arange(VZk.shape[0])[v_rows]:
        va = VZk[m, anchor]  # (q,)
        out[m] = va + onp.bincount(queries, weights=w * (VZk[m, keys] - va[queries]), minlength=q)
    return out


def attention(
    Z,
    Zk,
    Q,
    K,
    V,
    *,
    score="euclidean",
    normalizer="softmax",
    gamma=1.0,
    scale=1.0,
    bQ=None,
    bK=None,
    bV=None,
    options=None,
    self_attention=False,
    chunk_size=None,
    dropout=0.0,
    rng=None,
    return_weights=False,
):
    r"""One attention block ``A(Z, Z'; Q, K, V, sigma) = V Z' sigma(S)``.

    Parameters
    ----------
    Z : ndarray, shape (..., d_emb, q)
        Query tokens.
    Zk : ndarray, shape (..., d_emb, r)
        Key/value tokens.
    Q, K : ndarray, shape (d_k, d_emb); V : ndarray, shape (d_emb, d_emb)
    score : {"euclidean", "euclidean_direct", "dot"}
    normalizer : str or callable
        A name in :data:`kmt_ref.core.normalizers.NORMALIZERS`.
    gamma : float
        Inverse temperature, passed to the normalizer.
    scale : float
        Scores are divided by it.
    bQ, bK, bV : ndarray or None
        Biases.
    options : dict, optional
        Extra keyword arguments for the normalizer (e.g. ``alpha``).
    self_attention : bool
        ``Zk`` is ``Z`` (enables the exact limit for Q = K, hardmax: one
        sort of n numbers, O(n log n), no n x n matrix).
    chunk_size : int or None
        Compute the scores in chunks of this many queries, so that memory is
        O(chunk_size * r) instead of O(q * r).
    dropout : float
        Attention dropout probability, ``0 <= dropout < 1``; ``dropout > 0``
        needs ``rng``.
    rng : numpy.random.Generator or None
    return_weights : bool
        Also return the weights ``sigma(S)`` and raw scores (dense arrays).

    Returns
    -------
    out : ndarray, shape (..., d_emb, q)
    weights, scores : ndarray, shape (..., r, q) (only with ``return_weights``)

    Notes
    -----
    While autograd traces the block (training) with ``normalizer="softmax"``,
    finite gamma and no ``options``, it is computed by the primitive
    :func:`kmt_ref.core.gradients.softmax_attention`, whose backward pass is
    derived by hand; dropout then draws the same masks from ``rng``.
    Hard normalizers (gamma = inf) use exact fast paths: a selection of
    columns (``hardmax``), a mean over the tied maximum set
    (``hardmax_average``), and for Euclidean self-attention with ``Q = K`` the
    duplicate grouping of :func:`kmt_ref.core.exact.self_attention_limit`,
    which never builds an n x n matrix. A sparsemax block (plain 2-D arrays,
    no dropout) sums ``V Z' sigma(S)`` from each query's key of largest weight
    (:func:`anchored_combination`): the same number, except that keys that
    are copies of one value give that value exactly.
    """
    check_dropout(dropout, rng)  # a clear error, not an AttributeError on rng=None
    options = dict(options or {})
    q, r = Z.shape[-1], Zk.shape[-1]
    big = chunk_size and q > chunk_size and r > chunk_size  # only an (r, q) matrix that is large
    if (HAND_VJP and normalizer == "softmax" and score in ("euclidean", "dot") and not options and not return_weights
            and not big and not isbox(gamma) and gamma < onp.inf
            and any(isbox(x) for x in (Z, Zk, Q, K, V, bQ, bK, bV))):
        # training: the same block as one primitive with a hand-derived VJP (kmt_ref.core.gradients)
        shape = onp.broadcast_shapes(onp.shape(getval(Zk))[:-2], onp.shape(getval(Z))[:-2]) + (r, q)
        drop = dropped_entries(rng, shape, dropout)
        return softmax_attention(Z, Zk, Q, K, V, bQ, bK, bV, score, scale, gamma, dropout, drop, {})
    VZk = project(V, bV, Zk)  # (..., d_emb, r)
    hard = isinstance(normalizer, str) and normalizer in HARD
    rows, v_rows = used_rows(Q, K, V, bQ, bK, bV)  # the rows of the weights that can matter
    if self_attention and hard and score == "euclidean" and same_map(Q, K, bQ, bK):
        # gamma = inf self-attention with Q = K: exact, O(n log n), no n x n matrix (kmt_ref.core.exact)
        return self_attention_limit(project(K, bK, Zk, rows), VZk, normalizer, return_weights)

    KZk = project(K, bK, Zk, rows)  # (..., d_used, r)
    sigma = get_normalizer(normalizer)
    starts = query_chunks(q, r, chunk_size) if big else [(0, q)]
    outs, Ws, Ss = [], [], []
    for a, b in starts:
        Zc = Z if len(starts) == 1 else Z[..., a:b]
        S = scores_from_projections(KZk, project(Q, bQ, Zc, rows), score, scale)  # (..., r, qc)
        if hard:  # the exact selection / mean (kmt_ref.core.exact); weights only for the record
            outs.append(hard_cross(S, VZk, normalizer, v_rows))
            if return_weights:
                Ws.append(sigma(S, axis=-2))
                Ss.append(S)
            continue
        W = sigma(S, gamma=gamma, axis=-2, rng=rng, **options)
        if dropout:
            keep = rng.random(getval(W).shape) >= dropout
            W = W * keep / (1.0 - dropout)
        if normalizer in ANCHORED and not dropout and type(W) is onp.ndarray and W.ndim == 2 and VZk.ndim == 2:
            outs.append(anchored_combination(W, VZk, v_rows))  # copies of one value give that value
        elif is_disjoint_uniform(W):  # e.g. normmax(alpha=inf): a plain mean, summed in key order
            outs.append(segment_mean(W > 0, VZk, v_rows))
        else:
            outs.append(np.matmul(VZk, W))
        if return_weights:
            Ws.append(getval(W))
            Ss.append(getval(S))
    out = outs[0] if len(outs) == 1 else np.concatenate(outs, axis=-1)
    if return_weights:
        return out, onp.concatenate(Ws, axis=-1), onp.concatenate(Ss, axis=-1)
    return out


# --------------------------------------------------------------------------
# The feed-forward block (its description; the layer applies it)
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class FeedForward:
    """Residual feed-forward block ``z' = z + W2 act(W1 z + b1) + b2`` on one stream.

    Parameters ``W1``, ``W2`` (and optional ``b1``, ``b2``) are read from the
    parameter dict with the given ``prefix``.
    """

    stream: str
    activation: str = "requ"
    prefix: str = ""
