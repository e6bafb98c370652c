"""Built-in, seeded data: the paper's numerical-validation set and a small toy.

Tokens are columns (SPEC §1): every function returns data ``X`` of shape
(d, n) and initial centers ``C0`` of shape (d, k).

How the data are made (SPEC §3, "the paper's validation")
-----------------------------------------------------------
k means are drawn uniformly in [0, 1]^d; each gets the same number of points,
drawn from an isotropic Gaussian of standard deviation ``std`` around it; the
points are min-max scaled to [0, 1] in every dimension, **shuffled**, and the
initial centers are the first k (shuffled) points.

The shuffle follows the authors' task generator (``rithram/kmeans-trf``,
``ctasks.py``, ``ClusteringTasks.sample_task``: it scales to [0, 1]^d, then
permutes the samples and takes the first k as the initial centers). Their
validation script itself is not public; without a shuffle the "first 5
points" would all come from the first cluster, so shuffling is the only
reading under which "first 5 points" is a random initialisation. Unlike
``sample_task``, which draws cluster sizes from a multinomial, the
validation set has exactly ``n_per_cluster`` points per cluster
("5 x 2,000 points", SPEC §3).
"""
from __future__ import annotations

import numbers

import numpy as np

from .validation import check_count, check_positive, check_rng

__all__ = ["gaussian_blobs", "validation_data", "toy_data", "blobs_with_outliers", "minmax_scale", "VALIDATION_SEED"]

#: the seed ``python -m kmt_ref demo`` uses by default
VALIDATION_SEED = 0


def _check_seed(seed, name="seed"):
    """A non-negative integer seed (Python or NumPy int) or a ``numpy.random.Generator``."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"{name} must be a non-negative integer seed or a numpy.random.Generator, "
            f"got {seed!r} ({type(seed).__name__})"
        )
    return np.random.default_rng(check_count(seed, name))


def minmax_scale(X):
    """Scale each dimension (row) of X (..., d, n) to [0, 1] over the points.

    A constant row maps to 0 (policy: no division by zero).
    """
    lo = X.min(axis=-1, keepdims=True)
    span = X.max(axis=-1, keepdims=True) - lo
    return (X - lo) / np.where(span > 0, span, 1.0)


def gaussian_blobs(k, d, n_per_cluster, std=0.1, rng=0):
    r"""Equal-size isotropic Gaussian clusters, min-max scaled and shuffled.

    Parameters
    ----------
    k : int
        Number of clusters (and of initial centers), ``1 <= k <= k * n_per_cluster``.
    d : int
        Dimension, ``d >= 1``.
    n_per_cluster : int
        Points per cluster, ``>= 1``; ``n = k * n_per_cluster``.
    std : float
        Standard deviation of every coordinate around its cluster mean
        (before the min-max scaling), finite and ``> 0``; any real type
        (``np.float32(0.1)`` too; bools, strings and NaN are refused).
    rng : int or numpy.random.Generator
        Seed (a non-negative int, Python or NumPy) or generator.

    Returns
    -------
    X : ndarray, shape (d, n)
        Points as columns, each coordinate scaled to [0, 1] (a dimension with
        zero range, e.g. ``n = 1``, is left at 0).
    C0 : ndarray, shape (d, k)
        The first k columns of the shuffled ``X`` (a copy).
    truth : ndarray of int, shape (n,)
        The cluster each point was drawn from.

    Notes
    -----
    ``mu_j ~ U[0,1]^d``, ``x = mu_j + std * z`` with ``z ~ N(0, I_d)``, then
    ``x <- (x - min) / (max - min)`` per dimension, then a random permutation
    of the n columns (SPEC §3 and §6; the authors' ``ctasks.py``).
    """
    k = check_count(k, "k", minimum=1)
    d = check_count(d, "d", minimum=1)
    n_per_cluster = check_count(n_per_cluster, "n_per_cluster", minimum=1)
    std = check_positive(std, "std")
    rng = _check_seed(rng)  # errors say "seed" (tests/test_demo_and_plots.py pins "seed=-1")
    means = rng.uniform(0.0, 1.0, size=(d, k))  # (d, k)
    truth = np.repeat(np.arange(k), n_per_cluster)  # (n,)
    X = minmax_scale(means[:, truth] + std * rng.standard_normal((d, truth.size)))  # (d, n)
    order = rng.permutation(truth.size)
    X, truth = X[:, order], truth[order]
    return X, X[:, :k].copy(), truth


def validation_data(seed=VALIDATION_SEED):
    """The paper's numerical-validation data (SPEC §3): d = 2, n = 10,000, k = 5.

    Parameters
    ----------
    seed : int or numpy.random.Generator
        Default 0 (:data:`VALIDATION_SEED`), the data of ``python -m kmt_ref demo``.

    Returns
    -------
    X : ndarray, shape (2, 10000)
        5 x 2,000 points, std 0.1 around means uniform in [0, 1]^2, min-max
        scaled to [0, 1], shuffled.
    C0 : ndarray, shape (2, 5)
        The first 5 (shuffled) points: the initial centers.

    Notes
    -----
    The paper's figure (numerical validation, D-F) uses this recipe with its
    own random draw, which is not published; the numbers of
    ``python -m kmt_ref demo`` therefore differ from the paper's in detail
    (see the module docstring for the shuffle).
    """
    X, C0, _ = gaussian_blobs(k=5, d=2, n_per_cluster=2000, std=0.1, rng=_check_seed(seed))
    return X, C0


def toy_data(seed=19, k=3, n_per_cluster=8):
    """A small 2-D example for notebooks and figures (same recipe, std 0.1).

    Parameters
    ----------
    seed : int or numpy.random.Generator
        Default 19: three clusters of 8 where two initial centers start in
        the same cluster and Lloyd's algorithm needs two steps to separate them.
    k : int
        Clusters and initial centers (default 3).
    n_per_cluster : int
        Points per cluster (default 8, so n = 24: every attention matrix fits
        on a screen).

    Returns
    -------
    X : ndarray, shape (2, k * n_per_cluster)
    C0 : ndarray, shape (2, k)
        The first k (shuffled) points.
    """
    X, C0, _ = gaussian_blobs(k=k, d=2, n_per_cluster=n_per_cluster, std=0.1, rng=_check_seed(seed))
    return X, C0


def blobs_with_outliers(k=3, n_per_cluster=30, n_outliers=4, std=0.05, outlier_distance=1.5, rng=None):
    r"""2-D Gaussian blobs in the unit square plus a few far outliers.

    Parameters
    ----------
    k, n_per_cluster : int
    n_outliers : int
        Points placed at ``outlier_distance`` from the center of the square
        (0.5, 0.5), at random angles.
    std : float
    outlier_distance : float
    rng : numpy.random.Generator

    Returns
    -------
    X : ndarray, shape (2, n), ``n = k n_per_cluster + n_outliers``; the outliers are the last columns.
    C0 : ndarray, shape (2, k): ``k`` data points, one from each blob (the first point of each).
    is_outlier : ndarray of bool, shape (n,)
    """
    rng = check_rng(rng)
    k = check_count(k, "k", minimum=1)
    n_per_cluster = check_count(n_per_cluster, "n_per_cluster", minimum=1)
    n_outliers = check_count(n_outliers, "n_outliers")
    means = 0.15 + 0.7 * rng.uniform(size=(2, k))  # (2, k)
    X_in = np.repeat(means, n_per_cluster, axis=1) + std * rng.standard_normal((2, k * n_per_cluster))
    angle = rng.uniform(0, 2 * np.pi, n_outliers)
    X_out = 0.5 + outlier_distance * np.stack([np.cos(angle), np.sin(angle)])  # (2, n_outliers)
    X = np.concatenate([X_in, X_out], axis=1)
    C0 = X_in[:, ::n_per_cluster].copy()  # (2, k)
    is_outlier = np.arange(X.shape[1]) >= k * n_per_cluster
    return X, C0, is_outlier
