r"""The optimiser of the learning experiment (SPEC §6 "Optimiser"): Adam, and the learning rate halved on a plateau.

Adam with learning rate 0.01 (the authors' ``expts.md``, ``LR=0.01``; PyTorch's
defaults otherwise, no clipping); the rate is halved at the 6th evaluation in a
row without improvement (patience 5, the authors' ``expt-run.sh``; :class:`Plateau`).
Both work on plain dicts of arrays (the HIPS/autograd examples' habit).
"""
from __future__ import annotations

import math

import numpy as onp

__all__ = ["Adam", "Plateau"]


class Adam:
    r"""Adam (Kingma & Ba 2015) on a dict of arrays, with PyTorch's defaults.

    ``m <- b1 m + (1-b1) g``, ``v <- b2 v + (1-b2) g^2``,
    ``p <- p - lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)``;
    ``b1 = 0.9``, ``b2 = 0.999``, ``eps = 1e-8``. No gradient clipping.
    """

    def __init__(self, params, lr, b1=0.9, b2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.t = 0
        self.m = {key: onp.zeros_like(v) for key, v in params.items()}
        self.v = {key: onp.zeros_like(v) for key, v in params.items()}

    def step(self, params, grads):
        """Return the updated parameter dict (the input is not modified)."""
        self.t += 1
        c1 = 1.0 - self.b1 ** self.t
        c2 = 1.0 - self.b2 ** self.t
        new = {}
        for key, p in params.items():
            g = grads[key]
            self.m[key] = self.b1 * self.m[key] + (1.0 - self.b1) * g
            self.v[key] = self.b2 * self.v[key] + (1.0 - self.b2) * g * g
            upd = (self.m[key] / c1) / (onp.sqrt(self.v[key] / c2) + self.eps)
            new[key] = (p - self.lr * upd).astype(p.dtype)
        return new


class Plateau:
    """Learning-rate decay on a plateau (PyTorch ``ReduceLROnPlateau``: mode "min", relative threshold, no cooldown).

    :meth:`step` takes one validation score per evaluation. A score *improves*
    if ``score < best * (1 - threshold)`` (``threshold = 1e-4``); it then
    becomes ``best`` and the count ``bad`` of evaluations without improvement
    is reset to 0. Otherwise ``bad`` grows by 1, and when ``bad > patience``
    the rate is multiplied by ``factor`` and ``bad`` restarts at 0. So with
    ``patience = 5`` and ``factor = 0.5`` (the authors' ``expt-run.sh``) the
    rate is halved at the 6th evaluation in a row without improvement, and
    again at the 12th if none of them improves.
    :func:`~kmt_ref.learning.training.train` passes every validation score
    except the one at step 0.
    """

    def __init__(self, factor=0.5, patience=5, threshold=1e-4):
        self.factor, self.patience, self.threshold = factor, patience, threshold
        self.best = math.inf
        self.bad = 0

    def step(self, score, lr):
        """Record one validation score; return the (possibly reduced) learning rate."""
        if score < self.best * (1.0 - self.threshold):
            self.best = score
            self.bad = 0
        else:
            self.bad += 1
        if self.bad > self.patience:
            self.bad = 0
            return lr * self.factor
        return lr
