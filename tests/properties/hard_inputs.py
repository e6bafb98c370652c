"""Strategies that build hard inputs on purpose, and exact (rational) judges of near-ties.

Hard inputs: integer grids (ties are common), duplicated points and centers, centers copied from
points or far from the data, clusters that empty on the first step, k = 1 and k = n, d = 1, scales
from 1e-300 to 1e300 and offsets to 1e12, zero extent, signed zeros, Fortran order and strided views.
"""
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

EPS = float(np.finfo(float).eps)


@st.composite
def instances(draw, max_n=12, max_d=4, max_k=5, scales=True, grid_only=False, far=True):
    """``(X, C0)``: data (d, n) and initial centers (d, k), built to be hard."""
    d = draw(st.integers(1, max_d))
    n = draw(st.integers(1, max_n))
    k = draw(st.integers(1, min(n, max_k)))
    kind = "grid" if grid_only else draw(st.sampled_from(["grid", "grid", "normal", "zero_extent", "halves"]))
    if kind == "grid":
        X = np.array(draw(st.lists(st.integers(-3, 3), min_size=d * n, max_size=d * n)), float).reshape(d, n)
    elif kind == "halves":  # dyadic data: exact sums, exact ties of means
        X = np.array(draw(st.lists(st.integers(-8, 8), min_size=d * n, max_size=d * n)), float).reshape(d, n) / 4
    elif kind == "zero_extent":
        X = np.tile(np.array(draw(st.lists(st.integers(-2, 2), min_size=d, max_size=d)), float)[:, None], (1, n))
    else:
        seed = draw(st.integers(0, 2**32 - 1))
        X = np.random.default_rng(seed).normal(size=(d, n))
    if draw(st.booleans()):  # duplicated points
        X[:, draw(st.integers(0, n - 1))] = X[:, 0]
    how = draw(st.sampled_from(["points", "points", "grid", "duplicates", "far"] if far else
                               ["points", "points", "grid", "duplicates"]))
    if how == "points":  # copied from the points (a tie with them)
        C0 = X[:, draw(st.permutations(range(n)))[:k]].copy()
    elif how == "grid":  # anywhere on the grid: some clusters empty on the first step
        C0 = np.array(draw(st.lists(st.integers(-4, 4), min_size=d * k, max_size=d * k)), float).reshape(d, k)
    elif how == "duplicates":
        C0 = np.tile(X[:, [draw(st.integers(0, n - 1))]], (1, k))
    else:  # one center far from the data
        C0 = X[:, draw(st.permutations(range(n)))[:k]].copy()
        C0[:, draw(st.integers(0, k - 1))] = 10.0 ** draw(st.integers(2, 12)) * draw(st.sampled_from([1, -1]))
    if draw(st.booleans()):  # signed zeros
        X = np.where(X == 0, -0.0, X)
        C0 = np.where(C0 == 0, -0.0, C0)
    inst_unscaled = (X.copy(), C0.copy())
    if scales:
        scale = draw(st.sampled_from([1.0, 1.0, 2.0**-600, 2.0**-40, 2.0**40, 2.0**600, 1e-300, 1e300, 3.0]))
        offset = draw(st.sampled_from([0.0, 0.0, 1e3, 1e9, -1e12]))
        if offset and scale < 1e-3 or offset and scale > 1e3:
            offset = 0.0  # an offset swamping the data leaves nothing to cluster
        with np.errstate(over="ignore"):
            X, C0 = X * scale + offset, C0 * scale + offset
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(C0))):  # a far center beyond float64: unscaled
            X, C0 = inst_unscaled
    layout = draw(st.sampled_from(["C", "C", "F", "strided"]))
    if layout == "F":
        X, C0 = np.asfortranarray(X), np.asfortranarray(C0)
    elif layout == "strided":
        X = np.repeat(X, 2, axis=1)[:, ::2]
    return X, C0


def fr(a):
    """Exact rationals of a float array's entries (an object array)."""
    return np.vectorize(Fraction, otypes=[object])(np.asarray(a, float))


def exact_sq_dist(x, c):
    """``||x - c||^2`` in exact arithmetic, for float vectors x and c."""
    return sum(((Fraction(a) - Fraction(b)) ** 2 for a, b in zip(x, c)), Fraction(0))


def first_parting(a, b):
    """The first step t where the label rows differ, or None."""
    for t in range(a.labels.shape[0]):
        if not np.array_equal(a.labels[t], b.labels[t]):
            return t
    return None


def extent(X):
    """The data's extent (largest coordinate range), at least the smallest normal number."""
    return max(float(np.max(np.ptp(np.asarray(X, float), axis=1))), np.finfo(float).tiny)


def assert_near_tie_partings(tr, ref, X, rel):
    """Up to the first step where the labels part, centers agree to ``rel`` times the extent, plus the
    read-out's rounding (2 ulps of the data's largest coordinate: a center computed in a shifted frame is
    read out as ``c~ + s``, rounded at the data's position); there, every point that parts has exactly
    (Fraction) equal distances to its two centers up to ``rel`` of the squared extent (plus that rounding's
    share), at the reference's centers. Returns the step or None."""
    X = np.asarray(X, float)
    t = first_parting(tr, ref)
    stop = tr.centers.shape[0] if t is None else t + 1
    ext = extent(X)
    readout = 2 * EPS * float(np.max(np.abs(X)))
    assert np.max(np.abs(tr.centers[:stop] - ref.centers[:stop])) <= rel * ext + readout, (
        np.max(np.abs(tr.centers[:stop] - ref.centers[:stop])) / ext, X.tolist(), ref.centers[0].tolist())
    if t is not None:
        for i in np.flatnonzero(tr.labels[t] != ref.labels[t]):
            a = exact_sq_dist(X[:, i], ref.centers[t][:, tr.labels[t, i]])
            b = exact_sq_dist(X[:, i], ref.centers[t][:, ref.labels[t, i]])
            assert abs(a - b) <= Fraction(rel * ext**2) + Fraction(4 * readout * ext), (t, i, float(a), float(b))
    return t
