r"""The trainable model of the learning experiment (SPEC §6 "Model"): the generic layer with learned weights.

The trainable model is **the same generic layer** as the hand-set k-means
transformer of Theorem 2.1 (:func:`kmt_ref.layer_forward`), with all twelve
Q, K, V learned, with biases::

    Xbar' = Xbar + A(Xbar, Cbar; Q1,K1,V1) + A(Xbar, Xbar; Q2,K2,V2)
    Cbar' = Cbar + A(Cbar, Xbar'; Q3,K3,V3) + A(Cbar, Cbar; Q4,K4,V4)

Euclidean scores divided by ``sqrt(d_emb)``, gamma = 1, softmax in every block,
optional attention dropout (0.01 in training: the authors' ``train.py``
default). Token layout: the authors' (``train.py``) ``Xbar = [X; Y]`` with
``Y = 0`` and ``Cbar = [C; I_k]``
(``embedding="onehot"``, ``d_emb = d + k``, no type-flag row), the d-only
ablation ``Xbar = X``, ``Cbar = C`` (``embedding="none"``, ``d_emb = d``), or
the follow-up's binary codes (arXiv 2610.09760; :mod:`kmt_ref.algorithms.binary`)
``Xbar = [X; 0]``, ``Cbar = [C; B_k]`` (``embedding="binary"``,
``d_emb = d + ceil(log2 k)``).
At d = 32, k = 10: 12 (42^2 + 42) = 21,672 parameters.

This module holds the parameters (:func:`init_params`), the layer description
(:func:`model_layer`), the embedding (:func:`embed_batch`), one application
(:func:`model_step`) and the attention it computes (:func:`attention_maps`).
The loss is in :mod:`kmt_ref.learning.loss`; applying the layer T times with
re-embedding (:func:`~kmt_ref.learning.evaluation.run_model`) in
:mod:`kmt_ref.learning.evaluation`.

autograd rules, followed here, in :mod:`kmt_ref.learning.loss` and
in the generic layer (:mod:`kmt_ref.attention`):

- differentiable code imports ``autograd.numpy as np``; plain NumPy (``onp``)
  only on values outside the gradient path;
- no index assignment, no ``.dot``, no ``float()`` and no ``np.asarray`` on the
  gradient path (``np.matmul``, slicing and ``np.concatenate`` only);
- hard selections (argmin, sort, median) happen outside the gradient: the
  k-means objective used for validation and evaluation is never differentiated;
- subtract the (constant) maximum before ``exp``;
- keep squared distances (no ``sqrt`` at 0).

Training runs in float32 (as the authors' PyTorch code does; the gradient is
checked in float64 by the tests, with the same code). autograd does not
differentiate the blocks' softmax attention operation by operation: each block
is one primitive whose backward pass is derived by hand,
:func:`kmt_ref.core.gradients.softmax_attention` (the derivation is its
module's docstring; tests/core/test_gradients.py checks it against autograd's
own gradient of the plain code).
"""
from __future__ import annotations

import math

import numpy as onp

from .. import Block, Sublayer, layer_forward
from .. import binary_codes, code_length

__all__ = ["EMBEDDINGS", "BLOCKS", "d_emb_of", "init_params", "model_layer", "embed_batch", "model_step",
           "attention_maps"]

#: token layouts: the authors' one-hot scratch rows, the d-only ablation, the follow-up's binary codes
EMBEDDINGS = ("onehot", "none", "binary")

#: the four attention blocks of the layer and their parameter names
BLOCKS = ("1", "2", "3", "4")


def d_emb_of(d, k, embedding):
    """Token width: ``d + k`` (one-hot scratch rows), ``d`` (ablation) or ``d + ceil(log2 k)`` (binary codes)."""
    if embedding == "binary":
        return d + code_length(k)
    return d + k if embedding == "onehot" else d


def init_params(d_emb, rng, dtype="float32"):
    r"""Random Q, K, V (d_emb, d_emb) and biases (d_emb,) for the four blocks.

    Entries are uniform in ``[-1/sqrt(d_emb), 1/sqrt(d_emb)]``, PyTorch's
    default initialisation of ``nn.Linear`` (the authors' model).

    Returns
    -------
    params : dict
        ``Q1, K1, V1, bQ1, bK1, bV1, ..., bV4``; 12 (d_emb^2 + d_emb) numbers.
    """
    bound = 1.0 / math.sqrt(d_emb)
    params = {}
    for b in BLOCKS:
        for m in "QKV":
            params[m + b] = rng.uniform(-bound, bound, (d_emb, d_emb)).astype(dtype)
            params["b" + m + b] = rng.uniform(-bound, bound, d_emb).astype(dtype)
    return params


def model_layer(d_emb, dropout=0.0):
    """The layer description of the trainable model for :func:`layer_forward`.

    Four Euclidean-softmax blocks, gamma = 1, scores divided by ``sqrt(d_emb)``;
    block 3 reads the updated points (keys ``"X"`` in the second sublayer),
    no type-flag row. ``dropout`` is attention dropout (training only).
    """
    s = float(math.sqrt(d_emb))  # a Python float keeps float32 arithmetic float32
    blk = dict(score="euclidean", normalizer="softmax", gamma=1.0, scale=s, dropout=float(dropout))
    return (
        Sublayer("X", (Block("1", keys="C", **blk), Block("2", keys="X", **blk))),
        Sublayer("C", (Block("3", keys="X", **blk), Block("4", keys="C", **blk))),
    )


def embed_batch(X, C, embedding="onehot"):
    """Batched tokens: ``Xbar = [X; 0]`` (B, d+k, n) and ``Cbar = [C; I_k]`` (B, d+k, k).

    With ``embedding="none"`` the tokens are the data and centers themselves;
    with ``embedding="binary"`` the scratch rows are the follow-up's codes,
    ``Xbar = [X; 0]`` (B, d+m, n) and ``Cbar = [C; B_k]`` (B, d+m, k).
    This is the batched form of :class:`kmt_ref.constructions.Embedding` with
    layout ``("x", "y")``; the re-embedding between evaluation steps calls it
    on the new centers (Y reset to 0).
    """
    if embedding == "none":
        return X, C
    B, d, n = X.shape
    k = C.shape[-1]
    codes = binary_codes(k) if embedding == "binary" else onp.eye(k)  # (m, k): B_k, or I_k
    m = codes.shape[0]
    Xbar = onp.concatenate([X, onp.zeros((B, m, n), X.dtype)], axis=1)  # (B, d+m, n)
    Cbar = onp.concatenate([C, onp.broadcast_to(codes.astype(C.dtype), (B, m, k))], axis=1)  # (B, d+m, k)
    return Xbar, Cbar


def model_step(params, X, C, embedding="onehot", dropout=0.0, rng=None):
    """One application of the trainable layer: new centers from (X, C).

    Parameters
    ----------
    params : dict
    X : ndarray, shape (B, d, n)
    C : ndarray, shape (B, d, k)
    embedding : {"onehot", "none", "binary"}
    dropout : float
        Attention dropout (needs ``rng``); 0 at evaluation.
    rng : numpy.random.Generator or None

    Returns
    -------
    C_new : ndarray, shape (B, d, k)
        The data rows of the decoder output ``Cbar'``.
    """
    d = X.shape[-2]
    Xbar, Cbar = embed_batch(X, C, embedding)
    _, Cbar_out = layer_forward(params, Xbar, Cbar, model_layer(Xbar.shape[-2], dropout), rng=rng)
    return Cbar_out[..., :d, :]  # (B, d, k)


def attention_maps(params, X, C0, embedding="onehot"):
    """The four attention matrices of the trained layer on one task (no dropout).

    Parameters
    ----------
    X : ndarray, shape (d, n); C0 : ndarray, shape (d, k)

    Returns
    -------
    dict name -> ndarray (r, q)
        Block 1: (k, n) centers attended by each point; block 2: (n, n);
        block 3: (n, k); block 4: (k, k). Columns are queries.
    """
    p = {key: onp.asarray(v, dtype=onp.float64) for key, v in params.items()}
    Xbar, Cbar = embed_batch(X[None], C0[None], embedding)
    _, _, rec = layer_forward(p, Xbar[0], Cbar[0], model_layer(Xbar.shape[1]), record=True)
    return rec.weights
