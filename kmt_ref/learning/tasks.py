"""Clustering tasks for learning the algorithm (SPEC §6).

A *task* is a data set ``X`` (d, n) and initial centers ``C0`` (d, k). The
training distribution of the authors' experiment (their ``ctasks.py`` with the
flags of their ``expt-run.sh``: ``--em --es``, ``SCALE=0.1``):

1. draw k means ``mu_1 .. mu_k`` uniformly in ``[0, 1]^d``;
2. draw n points from the equal-weight mixture, each point
   ``x = mu_z + noise`` with ``z`` uniform on ``{1..k}`` and isotropic noise of
   scale 0.1 (``family="normal"``: Gaussian with standard deviation 0.1);
3. min-max scale each dimension (row of ``X``) to ``[0, 1]``;
4. shuffle the points (columns);
5. the initial centers are the first k points, i.e. a uniformly random
   k-subset of the data (or k-means++ seeding, ``init="kmeans++"``).

The other families (evaluation out of distribution; the authors' ``ctasks.py``) use
the same location ``mu_z`` and scale 0.1 in the parameterisation of
``torch.distributions`` that the authors' code uses:

=============  ===============================================  ==========================
family         sample                                           NumPy call
=============  ===============================================  ==========================
``normal``     ``mu + 0.1 N(0, 1)``                              ``rng.normal(mu, s)``
``cauchy``     ``mu + 0.1 Cauchy(0, 1)``                         ``mu + s * standard_cauchy``
``gumbel``     ``mu + 0.1 Gumbel(0, 1)``                         ``rng.gumbel(mu, s)``
``laplace``    ``mu + 0.1 Laplace(0, 1)``                        ``rng.laplace(mu, s)``
``lognormal``  ``exp(mu + 0.1 N(0, 1))``                         ``rng.lognormal(mu, s)``
=============  ===============================================  ==========================

Tokens are columns (SPEC §1): a batch is ``X`` (B, d, n), ``C0`` (B, d, k).
Randomness comes only from the ``numpy.random.Generator`` passed in.

Degenerate cases (policy): the mixture labels are drawn independently, so a
component may receive no point (harmless: the data set simply has fewer
visible clusters). A dimension whose values are all equal (possible only for
n = 1) is mapped to 0 instead of dividing by zero. ``k = n`` makes the initial
centers a permutation of the data; ``k = 1`` is allowed.
"""
from __future__ import annotations

import numpy as np

from ..data import minmax_scale
from ..trace import assign
from ..validation import as_points, check_choice, check_count, check_enough_points, check_positive, check_rng

__all__ = ["FAMILIES", "INITS", "sample_task", "sample_tasks", "kmeans_plus_plus", "minmax_scale"]

#: noise families; "normal" is the training distribution
FAMILIES = ("normal", "cauchy", "gumbel", "laplace", "lognormal")

#: initial-center schemes
INITS = ("random", "kmeans++")


def _noise(rng, family, loc, scale):
    """Points of one family around the locations ``loc`` (d, n)."""
    if family == "normal":
        return rng.normal(loc, scale)
    if family == "cauchy":
        return loc + scale * rng.standard_cauchy(loc.shape)
    if family == "gumbel":
        return rng.gumbel(loc, scale)
    if family == "laplace":
        return rng.laplace(loc, scale)
    return rng.lognormal(loc, scale)  # lognormal: exp(N(loc, scale^2))


def kmeans_plus_plus(X, k, rng):
    r"""k-means++ seeding (Arthur & Vassilvitskii 2007): k initial centers.

    Parameters
    ----------
    X : array_like, shape (d, n)
    k : int, 1 <= k <= n
    rng : numpy.random.Generator

    Returns
    -------
    C0 : ndarray, shape (d, k)
        Columns are data points.

    Notes
    -----
    The first center is a uniform random point; each next one is point i
    with probability ``D(x_i)^2 / sum_l D(x_l)^2``, D the distance to the
    nearest center chosen so far. If every remaining distance is 0 (fewer
    than k distinct points) the next center is drawn uniformly among the
    points not yet chosen (policy).
    """
    X = as_points(X)
    k = check_count(k, "k", minimum=1)
    check_rng(rng)
    d, n = X.shape
    check_enough_points(n, k)
    chosen = [int(rng.integers(n))]
    D = assign(X, X[:, chosen])[1][0]  # (n,)
    D = np.maximum(D, 0.0)
    for _ in range(1, k):
        total = D.sum()
        if total > 0:
            i = int(rng.choice(n, p=D / total))
        else:
            free = np.setdiff1d(np.arange(n), chosen)
            i = int(rng.choice(free))
        chosen.append(i)
        D = np.minimum(D, np.maximum(assign(X, X[:, [i]])[1][0], 0.0))
    return X[:, chosen].copy()


def sample_task(rng, n=512, d=32, k=10, family="normal", scale=0.1, init="random"):
    r"""One clustering task of SPEC §6.

    Parameters
    ----------
    rng : numpy.random.Generator
    n, d, k : int
        Points, dimensions, clusters (1 <= k <= n).
    family : {"normal", "cauchy", "gumbel", "laplace", "lognormal"}
    scale : float
        Noise scale (0.1 in the authors' runs: ``SCALE=0.1`` in their ``expt-run.sh``).
    init : {"random", "kmeans++"}
        ``"random"``: the first k points after the shuffle (a random k-subset).

    Returns
    -------
    X : ndarray, shape (d, n)
        Min-max scaled to [0, 1] per dimension, shuffled.
    C0 : ndarray, shape (d, k)

    Notes
    -----
    ``mu_j ~ U[0,1]^d``, ``z_i ~ U{1..k}``, ``x_i = mu_{z_i} + 0.1 eps_i``
    (the authors' task generator, ctasks.py, with equal mixture
    weights and equal per-dimension scale).
    """
    X, C0 = sample_tasks(rng, 1, n, d, k, family, scale, init)
    return X[0], C0[0]


def sample_tasks(rng, batch, n=512, d=32, k=10, family="normal", scale=0.1, init="random"):
    """A batch of independent tasks (see :func:`sample_task`).

    Returns
    -------
    X : ndarray, shape (batch, d, n)
    C0 : ndarray, shape (batch, d, k)
    """
    check_rng(rng)
    batch = check_count(batch, "batch", minimum=1)
    n = check_count(n, "n", minimum=1)
    d = check_count(d, "d", minimum=1)
    k = check_count(k, "k", minimum=1)
    check_enough_points(n, k)
    check_choice(family, "family", FAMILIES)
    check_choice(init, "init", INITS)
    scale = check_positive(scale, "scale")
    X = np.empty((batch, d, n))
    C0 = np.empty((batch, d, k))
    for b in range(batch):
        means = rng.random((d, k))  # (d, k), uniform in [0, 1]^d
        z = rng.integers(k, size=n)  # equal mixture weights
        Xb = minmax_scale(_noise(rng, family, means[:, z], scale))  # (d, n)
        Xb = Xb[:, rng.permutation(n)]
        X[b] = Xb
        C0[b] = Xb[:, :k] if init == "random" else kmeans_plus_plus(Xb, k, rng)
    return X, C0
