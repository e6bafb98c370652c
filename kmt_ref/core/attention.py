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
another order of operations; ``kmt_ref.core.blocks.HAND_VJP = False`` lets
autograd differentiate the plain code instead). The gamma = inf paths (hardmax)
use plain NumPy selections; they are only used with hand-set weights.

One block (:func:`attention`, its scores, :class:`FeedForward`) is computed in
:mod:`kmt_ref.core.blocks`, the floor this module and the exact layer
(:mod:`kmt_ref.core.exact.layer`) both stand on; its functions are re-exported
here. Its flag ``HAND_VJP`` is not: :func:`attention` reads
``kmt_ref.core.blocks.HAND_VJP`` at every call, so that is the one to set
(``monkeypatch.setattr(kmt_ref.core.blocks, "HAND_VJP", False)`` in a test); reading or setting
``HAND_VJP`` here raises an ``AttributeError`` that says so.
"""
from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field

import numpy as onp
import autograd.numpy as np
from autograd.tracer import getval

# used here and re-exported: one block is computed in blocks.py
from .blocks import FeedForward, attention, attention_scores, scores_from_projections
from .exact import fast_layer_forward, project

__all__ = [
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


_MOVED = ("HAND_VJP is kept in kmt_ref.core.blocks, which attention() reads at every call: "
          "set kmt_ref.core.blocks.HAND_VJP")


def __getattr__(name):
    if name == "HAND_VJP":  # it moved with the block; a copy here would be a second flag that nothing reads
        raise AttributeError(_MOVED)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _RefusesHandVJP(types.ModuleType):
    """This module, refusing an assignment to ``HAND_VJP`` (which would make a flag that nothing reads).

    It holds no state and forwards nothing: every other attribute is set, read and deleted as usual.
    """

    def __setattr__(self, name, value):
        if name == "HAND_VJP":
            raise AttributeError(_MOVED)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _RefusesHandVJP


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
    Z : ndarray, shape (..., d_emb, q)
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
        Parameter suffix, ``"1"`` ... ``"4"`` for the four blocks of Theorem 2.1's layer.
    keys : {"X", "C", "X+C"}
        Which tokens are keys/values: the point stream, the center stream, or
        both side by side (``[Xbar, Cbar]``, used for the empty-cluster
        default token in the center update).
    score : {"euclidean", "euclidean_direct", "dot"}
        ``"euclidean_direct"``: the same score as ``"euclidean"``, computed from the
        differences of the projected tokens (:func:`kmt_ref.core.blocks.direct_sq_distances`).
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
    The layer of Theorem 2.1, as the authors' code computes it
    (``rithram/kmeans-trf``, ``cnst_model.py``, ``CModel.forward``:
    ``XX = XX + SAX(XX, XX) + CAX(XX, CC)``, then
    ``CC = CC + SAC(CC, CC) + CAC(CC, XX)`` with the updated ``XX``) and as the
    follow-up, "Leaner Transformers Can Easily Learn to Cluster" (arXiv
    2610.09760, its Definition 2.3), writes its layer equation::

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
