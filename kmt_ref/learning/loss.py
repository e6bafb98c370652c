r"""The training objective of the learning experiment (SPEC §6 "Loss") and the k-means objectives it is judged by.

The loss is the smoothed upper bound of the k-means objective::

    L = sum_i sum_j softmax_j(-lambda ||x_i - c_j||^2) ||x_i - c_j||^2
      >= sum_i min_j ||x_i - c_j||^2,          lambda = 10, mean over the batch,

on the centers after one layer (:func:`batch_loss`, differentiated by autograd
under the rules stated in :mod:`kmt_ref.learning.model`). The hard objective
``sum_i min_j ||x_i - c_j||^2`` of the model (:func:`batch_objective`) and of
Lloyd's algorithm (:func:`lloyd_batch`) is never differentiated: validation and
evaluation use it.
"""
from __future__ import annotations

import numpy as onp
import autograd.numpy as np
from autograd.tracer import getval

from .. import kmeans_objective, lloyd
from .model import model_step

__all__ = ["soft_kmeans_loss", "batch_loss", "batch_objective", "lloyd_batch"]


def soft_kmeans_loss(X, C, lam=10.0):
    r"""The smoothed upper bound of the k-means objective, per task.

    Parameters
    ----------
    X : ndarray, shape (B, d, n)
    C : ndarray, shape (B, d, k)
    lam : float
        Inverse temperature lambda (10 in the authors' runs, ``LI=10.0`` in their
        ``expts.md``; ``train.py``'s default is 1).

    Returns
    -------
    L : ndarray, shape (B,)

    Notes
    -----
    ``L = sum_i sum_j softmax_j(-lam D_ji) D_ji`` with ``D_ji = ||x_i - c_j||^2``
    (SPEC §6; the authors' losses.py). Each inner sum is a convex
    combination of the ``D_ji`` over j, so it is ``>= min_j D_ji``: L upper
    bounds the k-means objective and tends to it as lam -> inf.
    """
    x_sq = np.sum(X * X, axis=-2)[..., None, :]  # (B, 1, n)
    c_sq = np.sum(C * C, axis=-2)[..., :, None]  # (B, k, 1)
    D = x_sq + c_sq - 2.0 * np.matmul(np.swapaxes(C, -1, -2), X)  # (B, k, n)
    S = -lam * D
    E = np.exp(S - onp.max(getval(S), axis=-2, keepdims=True))
    W = E / np.sum(E, axis=-2, keepdims=True)  # (B, k, n)
    return np.sum(W * D, axis=(-2, -1))


def batch_loss(params, X, C0, config, rng=None):
    """Mean smoothed loss over a batch after one layer (the training objective)."""
    C1 = model_step(params, X, C0, config.embedding, config.dropout, rng)
    return np.mean(soft_kmeans_loss(X, C1, config.loss_lambda))


def batch_objective(X, C):
    """Hard k-means objective ``sum_i min_j ||x_i - c_j||^2`` per task, shape (B,).

    Computed in float64 with :func:`kmt_ref.trace.kmeans_objective` (nearest
    center by the expanded formula, then the direct squared distance).
    """
    X = onp.asarray(X, dtype=onp.float64)
    C = onp.asarray(C, dtype=onp.float64)
    return onp.array([kmeans_objective(X[b], C[b]) for b in range(X.shape[0])])


def lloyd_batch(X, C0, n_iter):
    """Lloyd's objective after 0..n_iter iterations per task, shape (B, n_iter+1)."""
    return onp.stack([lloyd(X[b], C0[b], n_iter).objective for b in range(X.shape[0])])
