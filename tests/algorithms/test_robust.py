"""Robust k-means (kmt_ref/algorithms/robust.py): the sparsemax circuit equals the authors' rule.
"""
import numpy as np
import pytest
from cases import degenerate_cases

from kmt_ref.algorithms import (
    robust_kmeans,
    robust_kmeans_transformer,
)

C_TOY = np.array([[0.0]])



def test_robust_toy():
    X = np.array([[0.0, 1.0]])
    # gamma = .5: z = [0, -.5], tau = -.75, p = [.75, .25]
    for fn in (robust_kmeans, robust_kmeans_transformer):
        np.testing.assert_allclose(fn(X, C_TOY, 1, 0.5).centers[1], [[0.25]], atol=1e-15)
        # gamma = 1: z = [0, -1], tau = -1: the far point gets weight exactly 0
        np.testing.assert_allclose(fn(X, C_TOY, 1, 1.0).centers[1], [[0.0]], atol=0)


# --------------------------------------------------------------------------
# the authors' rule, transcribed independently from their code
# --------------------------------------------------------------------------
def _authors_rkm_centers(X, C0, n_iter, inv_temp=0.01):
    """A NumPy transcription of ``utils.rkm_iters`` in ``rithram/kmeans-trf`` (read, not copied).

    Their loop, per iteration (rows are points there; columns here): squared distances to the
    centers, ``sqd, assign = min over centers``; for each non-empty cluster the new center is
    ``sparsemax(-inv_temp * sqd[members] / sqrt(d)) @ X[members]`` (``entmax.sparsemax``); an
    empty cluster becomes NaN and is then replaced by a random data point. This transcription
    stops at an empty cluster (the cases below have none): there kmt_ref keeps the center instead.
    Sparsemax is computed here by bisection on the threshold, a third independent form.
    """
    d = X.shape[0]
    C = C0.copy()
    out = [C.copy()]
    for _ in range(n_iter):
        sqdist = ((X[:, :, None] - C[:, None, :]) ** 2).sum(axis=0)  # (n, k)
        assign = sqdist.argmin(axis=1)
        sqd = sqdist[np.arange(X.shape[1]), assign]
        new = np.empty_like(C)
        for j in range(C.shape[1]):
            members = assign == j
            assert members.any(), "the authors re-seed an empty cluster at random; not compared"
            z = -inv_temp * sqd[members] / np.sqrt(d)
            lo, hi = z.max() - 1.0, z.max()
            for _ in range(200):  # sum [z - t]_+ = 1, decreasing in t
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if np.maximum(z - mid, 0.0).sum() >= 1.0 else (lo, mid)
            p = np.maximum(z - lo, 0.0)
            new[:, j] = X[:, members] @ (p / p.sum())
        C = new
        out.append(C.copy())
    return np.array(out)


def test_robust_matches_the_authors_rkm_iters_transcribed():
    """kmt_ref's robust rule is the authors' utils.rkm_iters (same assignment, same sparsemax of
    -gamma ||x - c||^2 / sqrt(d) over the members, the weighted sum as the center); they differ only
    for an empty cluster (theirs: a random point; ours: keep). Agreement to rounding (1e-12) on
    data with outliers, at their default gamma = 0.01 and at gammas that trim."""
    rng = np.random.default_rng(7)
    d, k = 3, 3
    means = np.array([[0.0, 0.0, 0.0], [6.0, 0.0, 0.0], [0.0, 6.0, 0.0]]).T
    X = np.concatenate([means[:, [j]] + rng.normal(size=(d, 40)) for j in range(k)], axis=1)
    X = np.concatenate([X, rng.uniform(-30, 30, size=(d, 6))], axis=1)  # outliers
    C0 = X[:, [0, 40, 80]] + 0.5
    for gamma in (0.01, 1.0, 5.0):
        ours = robust_kmeans(X, C0, 5, gamma).centers
        theirs = _authors_rkm_centers(X, C0, 5, gamma)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12 * np.abs(X).max(), err_msg=f"gamma={gamma}")
    # at gamma = 5 sparsemax really drops members: the centers are not Lloyd's means
    from kmt_ref.algorithms.lloyd import lloyd
    assert not np.allclose(robust_kmeans(X, C0, 1, 5.0).centers[1], lloyd(X, C0, 1).centers[1])


# --------------------------------------------------------------------------
# duplicated initial centers: a center pulled back onto copies of one point must land on it exactly
# --------------------------------------------------------------------------
def test_robust_duplicated_centers_hand_computed():
    """Three copies of the center -1; six points at -1, three at 1. The first copy takes every point
    (ties: lowest index); at gamma = 0.7 the points at 1 score -2.8 and get weight 0, so the center
    stays on the six points at -1, exactly: the copies still tie with it and keep no points."""
    X = np.array([[-1.0] * 6 + [1.0] * 3])
    C0 = np.array([[-1.0, -1.0, -1.0]])
    for fn in (robust_kmeans, robust_kmeans_transformer):
        tr = fn(X, C0, 3, 0.7)
        np.testing.assert_array_equal(tr.labels, 0, err_msg=fn.__name__)
        np.testing.assert_array_equal(tr.centers, -1.0, err_msg=fn.__name__)


def _duplicated_center_instances(count=40, seed=98):
    """Repeated points (half of them on a dyadic grid) with initial centers drawn from them, two copies each."""
    out = []
    for s in range(count):
        rng = np.random.default_rng([seed, s])
        d, n, k = int(rng.integers(1, 4)), int(rng.integers(8, 200)), int(rng.integers(2, 6))
        base = rng.normal(size=(d, max(1, n // 3)))
        if s % 2:
            base = np.round(base * 4) / 4
        X = base[:, rng.integers(0, base.shape[1], n)]
        idx = rng.integers(0, n, k)
        idx[1] = idx[0]
        out.append((f"dup{s}", X, X[:, idx].copy()))
    return out


@pytest.mark.parametrize("gamma", [0.0, 0.7, 5.0])
def test_robust_whole_trajectory_equals_reference_with_duplicated_centers(gamma):
    """Whole trajectories (not one step from the circuit's own centers): the labels are equal at every
    layer, so no tie between copies of a center was decided by the last bit on one side only."""
    for name, X, C0 in degenerate_cases() + _duplicated_center_instances():
        tr, ref = robust_kmeans_transformer(X, C0, 4, gamma), robust_kmeans(X, C0, 4, gamma)
        np.testing.assert_array_equal(tr.labels, ref.labels, err_msg=f"{name}, gamma={gamma}")
        scale = max(1.0, float(np.abs(X).max()))
        np.testing.assert_allclose(tr.centers, ref.centers, rtol=0, atol=1e-10 * scale, err_msg=name)


@pytest.mark.parametrize("far, gamma", [(1e4, 5.0), (1e5, 0.01), (1e8, 1.0)])
def test_robust_far_empty_center_keeps_the_circuit_close(far, gamma):
    """A far initial center that stays empty does not enter the penalties, whose rounding would swamp the
    members' scores: the circuit stays within 1e-10 of the data's extent (1)."""
    X, C0 = np.array([[0.0, 0.1, 0.7, 1.0]]), np.array([[0.5, far]])
    ref, tr = robust_kmeans(X, C0, 3, gamma), robust_kmeans_transformer(X, C0, 3, gamma)
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_allclose(tr.centers, ref.centers, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(tr.centers[:, 0, 1], far)


def test_robust_reference_far_center_with_members():
    """Scores of size 1e16: the reference's support test on shifted scores keeps the best member."""
    for fn in (robust_kmeans, robust_kmeans_transformer):
        np.testing.assert_array_equal(fn([[0.0, 1.0]], [[1e8]], 1, 1.0).centers[1], [[1.0]], err_msg=fn.__name__)


def test_robust_far_center_with_members_does_not_cost_later_layers():
    """The far initial center's members set D^2 = 1e8; the member scores carry no rounding of the penalties."""
    X, C0 = np.array([[0.12573022, -0.13210486]]), np.array([[1e4]])
    ref, tr = robust_kmeans(X, C0, 3, 0.7), robust_kmeans_transformer(X, C0, 3, 0.7)
    np.testing.assert_array_equal(tr.labels, ref.labels)
    np.testing.assert_allclose(tr.centers, ref.centers, rtol=0, atol=1e-15)
