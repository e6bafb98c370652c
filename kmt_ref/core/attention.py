"""The generic attention and the generic encoder-decoder layer.

Nothing in this module knows about k-means. The hand-set constructions
(:mod:`kmt_ref.algorithms`) and the trainable
model (:mod:`kmt_ref.learning`) are particular parameter dicts and layer
descriptions for the one forward function here, :func:`layer_forward`.

Tokens are **columns** (SPEC §1): point tokens ``Xbar`` of shape
``(d_emb, n)``, center tokens ``Cbar`` of shape ``(d_emb, k)``; a training batch
adds a leading axis, ``(B, d_emb, n)``.

Attention (SPEC §2)::

    A(Z, Z'; Q, K, V, sigma) = V Z' sigma(S),    S in R^{r x q},
    Euclidean:  S_ji = -gamma ||K z'_j - Q z_i||^2 / scale
    dot:        S_ji =  gamma (K z'_j) . (Q z_i) / scale

``sigma`` normalizes each column of S (over the r keys). The code keeps
``gamma`` inside the normalizer: :func:`attention_scores` returns the raw
score ``S / gamma`` and the normalizer is called as ``sigma(S_raw, gamma)``.

The module is written with ``autograd.numpy`` so that the trainable model is
differentiated through this very code. While autograd traces a softmax block
(training), the block is one primitive with a hand-derived vector-Jacobian
product, :func:`kmt_ref.core.gradients.softmax_attention` (the same numbers in
another order of operations; :data:`HAND_VJP` = False lets autograd
differentiate the plain code below instead). The gamma = inf paths (hardmax)
use plain NumPy selections; they are only used with hand-set weights.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as onp
import autograd.numpy as np
from autograd.tracer import getval, isbox

from ..trace import block_products
from ..validation import check_dropout
from .gradients import dropped_entries, softmax_attention
from .exact import (fast_layer_forward, hard_cross, is_disjoint_uniform, project, same_map, segment_mean,
                    self_attention_limit, used_rows)
from .normalizers import HARD, get_normalizer

#: differentiate a traced softmax block with the hand-derived VJP of :mod:`kmt_ref.core.gradients`;
#: False lets autograd differentiate the plain path below, operation by operation (the tests compare)
HAND_VJP = True

__all__ = [
    "HAND_VJP",
    "Block",
    "Sublayer",
    "FeedForward",
    "LayerRecord",
    "attention_scores",
    "attention",
    "layer_forward",
    "requ",
    "rms_norm",
    "ACTIVATIONS",
]


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
        raise ValueError(f"score={score!r} must be 'euclidean' or 'dot'")
    if scale != 1.0:
        S = S / scale
    return S


def attention_scores(Z, Zk, Q, K, *, score="euclidean", scale=1.0, bQ=None, bK=None):
    r"""Raw attention scores ``S`` (the paper's S divided by gamma).

    Parameters
    ----------
    Z : ndarray, shape (..., d_emb, q)
        Query tokens (columns).
    Zk : ndarray, shape (..., d_emb, r)
        Key tokens (columns).
    Q, K : ndarray, shape (d_k, d_emb)
        Query and key weights. ``bQ``, ``bK`` : optional biases, shape (d_k,).
    score : {"euclidean", "dot"}
    scale : float
        Scores are divided by it (``sqrt(d_emb)`` in the trainable model).

    Returns
    -------
    S : ndarray, shape (..., r, q)
        ``S_ji = -||K z'_j - Q z_i||^2 / scale`` (Euclidean) or
        ``(K z'_j).(Q z_i) / scale`` (dot).
    """
    return scores_from_projections(project(K, bK, Zk), project(Q, bQ, Z), score, scale)


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
    score : {"euclidean", "dot"}
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
        ``Zk`` is ``Z`` (enables the exact O(n) limit for Q = K, hardmax).
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
    which never builds an n x n matrix.
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
    starts = list(range(0, q, chunk_size)) if big else [0]
    outs, Ws, Ss = [], [], []
    for a in starts:
        Zc = Z if len(starts) == 1 else Z[..., a : a + chunk_size]
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
        if is_disjoint_uniform(W):  # e.g. normmax(alpha=inf): a plain mean, summed in key order
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
# The layer: residual sublayers on two token streams
# --------------------------------------------------------------------------
def requ(z):
    """Rectified quadratic unit ``ReQU(z) = max(z, 0)^2`` (Theorem 2.2)."""
    r = np.maximum(z, 0.0)
    return r * r


def relu(z):
    """``max(z, 0)``."""
    return np.maximum(z, 0.0)


#: activation name -> function, for :class:`FeedForward`
ACTIVATIONS = {"requ": requ, "relu": relu}


def rms_norm(Z, gain=None):
    r"""RMSNorm without centering: ``gain * z / sqrt(mean(z^2))`` per column.

    Parameters
    ----------
    Z : ndarray, shape (..., d_emb, m)
    gain : float or None
        ``None`` means ``1/sqrt(d_emb)``.

    Notes
    -----
    With ``gain = 1/sqrt(d_emb)`` this is ``z / ||z||``: the projection onto
    the unit sphere used by spherical k-means (SPEC §5). ``gain=None`` computes
    it in that form, ``z / sqrt(sum(z^2))``, so that it is the very same
    floating-point number as the textbook normalization (the rounded factors
    ``1/sqrt(d_emb)`` and ``sqrt(mean)`` would differ from it in the last
    place). A zero column stays zero (its norm is replaced by 1).
    """
    if gain is None:
        sq = np.sum(Z * Z, axis=-2, keepdims=True)
        return Z / np.sqrt(np.where(sq == 0, 1.0, sq))
    ms = np.mean(Z * Z, axis=-2, keepdims=True)
    rms = np.sqrt(np.where(ms == 0, 1.0, ms))
    return gain * Z / rms


@dataclass(frozen=True)
class Block:
    """One attention block inside a :class:`Sublayer`.

    Parameters are looked up in the parameter dict as ``Q<name>``,
    ``K<name>``, ``V<name>`` and, if present, ``bQ<name>``, ``bK<name>``,
    ``bV<name>``.

    Attributes
    ----------
    name : str
        Parameter suffix, ``"1"`` ... ``"4"`` for the paper's blocks.
    keys : {"X", "C", "X+C"}
        Which tokens are keys/values: the point stream, the center stream, or
        both side by side (``[Xbar, Cbar]``, used for the empty-cluster
        default token in the center update).
    score : {"euclidean", "dot"}
    normalizer : str or callable
    gamma : float
    scale : float
    options : tuple of (str, value) pairs
        Keyword arguments for the normalizer.
    post : callable or None
        Applied to the block's output before it joins the residual stream
        (e.g. RMSNorm for spherical k-means).
    dropout : float
        Attention dropout (training only).
    """

    name: str
    keys: str = "X"
    score: str = "euclidean"
    normalizer: object = "softmax"
    gamma: float = 1.0
    scale: float = 1.0
    options: tuple = ()
    post: object = None
    dropout: float = 0.0


@dataclass(frozen=True)
class Sublayer:
    """Attention blocks run in parallel on one stream and summed into it.

    ``stream'' = stream + sum_b A_b(stream, keys_b)``. The queries are the
    tokens of ``stream`` (``"X"``, the encoder/point stream, or ``"C"``, the
    decoder/center stream); keys are read *after* every earlier sublayer, so the
    decoder sees the updated points (SPEC §3).
    """

    stream: str
    blocks: tuple


@dataclass(frozen=True)
class FeedForward:
    """Residual feed-forward block ``z' = z + W2 act(W1 z + b1) + b2`` on one stream.

    Parameters ``W1``, ``W2`` (and optional ``b1``, ``b2``) are read from the
    parameter dict with the given ``prefix``.
    """

    stream: str
    activation: str = "requ"
    prefix: str = ""


@dataclass
class LayerRecord:
    """Everything one layer computed, for inspection (notebooks, figures).

    Attributes
    ----------
    Xbar_in, Cbar_in : ndarray, shapes (d_emb, n), (d_emb, k)
        Tokens entering the layer.
    Xbar_out, Cbar_out : ndarray
        Tokens leaving the layer.
    weights : dict name -> ndarray (r, q)
        The attention matrix ``sigma(S)`` of each block (columns = queries).
    scores : dict name -> ndarray (r, q) or None
        Raw scores ``S / gamma`` (None where the exact limit path needs none).
    outputs : dict name -> ndarray (d_emb, q)
        Each block's output ``A_b`` (what it adds to the residual stream).
    """

    Xbar_in: onp.ndarray
    Cbar_in: onp.ndarray
    Xbar_out: onp.ndarray = None
    Cbar_out: onp.ndarray = None
    weights: dict = field(default_factory=dict)
    scores: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)


def _get(params, key):
    return params.get(key)


def layer_forward(params, Xbar, Cbar, layer, *, rng=None, record=False, chunk_size=None, overwrite=False,
                  exact=True, memo=None):
    r"""Apply one layer (a sequence of residual sublayers) to the two token streams.

    Parameters
    ----------
    params : dict of str -> ndarray
        ``Q1, K1, V1, ..., Q4, K4, V4`` (shape (d_emb, d_emb) each), optional
        biases ``bQ1`` ..., optional feed-forward ``W1, W2, b1, b2``.
    Xbar : ndarray, shape (..., d_emb, n)
        Point (encoder) tokens.
    Cbar : ndarray, shape (..., d_emb, k)
        Center (decoder) tokens.
    layer : sequence of :class:`Sublayer` / :class:`FeedForward`
    rng : numpy.random.Generator, optional
        For stochastic normalizers and dropout.
    record : bool
        Return a :class:`LayerRecord` with the attention matrices.
    chunk_size : int or None
        Query chunk for dense attention (memory O(chunk_size * r)).
    overwrite : bool
        The arrays ``Xbar``, ``Cbar`` may be overwritten (the residual sums are
        then done in place where the exact path applies).
    exact : bool
        Take :func:`kmt_ref.core.exact.fast_layer_forward` when it applies (a
        hand-set layer with selection weights, at gamma = inf or with softmax
        and linear blocks): the same numbers on plain NumPy, without (r, q)
        matrices at gamma = inf. ``False`` forces the plain path below (the
        tests compare the two).
    memo : :class:`kmt_ref.core.exact.Memo`, optional
        Facts about the token rows that the exact path keeps from layer to
        layer (with ``overwrite=True``); cleared when the plain path runs.

    Returns
    -------
    Xbar_out : ndarray, shape (..., d_emb, n)
    Cbar_out : ndarray, shape (..., d_emb, k)
    rec : LayerRecord (only with ``record=True``)

    Notes
    -----
    Theorem 2.1's layer (as the project brief states it; the authors' ``cnst_model.py``)::

        Xbar' = Xbar + A(Xbar, Cbar; Q1,K1,V1) + A(Xbar, Xbar; Q2,K2,V2)
        Cbar' = Cbar + A(Cbar, Xbar'; Q3,K3,V3) + A(Cbar, Cbar; Q4,K4,V4)

    is ``[Sublayer("X", (Block("1", keys="C"), Block("2", keys="X"))),
    Sublayer("C", (Block("3", keys="X"), Block("4", keys="C")))]``.
    """
    if exact and not record:
        fast = fast_layer_forward(params, Xbar, Cbar, layer, overwrite, chunk_size, memo)
        if fast is not None:
            return fast
    if memo is not None:
        memo.clear()  # the plain path writes tokens the memo knows nothing of
    streams = {"X": Xbar, "C": Cbar}
    rec = LayerRecord(Xbar_in=getval(Xbar), Cbar_in=getval(Cbar)) if record else None
    for sub in layer:
        Z = streams[sub.stream]
        if isinstance(sub, FeedForward):
            p = sub.prefix
            H = ACTIVATIONS[sub.activation](project(params[p + "W1"], _get(params, p + "b1"), Z))
            out = project(params[p + "W2"], _get(params, p + "b2"), H)
            if record:
                rec.outputs[p + "FFN"] = getval(out)
            streams[sub.stream] = Z + out
            continue
        total = Z
        for blk in sub.blocks:
            if blk.keys == "X+C":
                Zk = np.concatenate([streams["X"], streams["C"]], axis=-1)
            else:
                Zk = streams[blk.keys]
            n = blk.name
            res = attention(
                Z,
                Zk,
                params["Q" + n],
                params["K" + n],
                params["V" + n],
                score=blk.score,
                normalizer=blk.normalizer,
                gamma=blk.gamma,
                scale=blk.scale,
                bQ=_get(params, "bQ" + n),
                bK=_get(params, "bK" + n),
                bV=_get(params, "bV" + n),
                options=dict(blk.options),
                self_attention=blk.keys == sub.stream,
                chunk_size=chunk_size,
                dropout=blk.dropout,
                rng=rng,
                return_weights=record,
            )
            if record:
                out, W, S = res
                rec.weights[n], rec.scores[n] = W, S
            else:
                out = res
            if blk.post is not None:
                out = blk.post(out)
            if record:
                rec.outputs[n] = getval(out)
            total = total + out
        streams[sub.stream] = total
    if record:
        rec.Xbar_out, rec.Cbar_out = getval(streams["X"]), getval(streams["C"])
        return streams["X"], streams["C"], rec
    return streams["X"], streams["C"]
